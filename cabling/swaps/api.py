"""Swaps and RMA over the API, through cabling.services.swaps:

- GET /api/swaps/ (filters: project, kind, rma_state, rma_open, optic, cable, q; paged) and /api/swaps/<id>/;
- POST /api/swaps/ {project, optic | cable, new_serial, reason, old_serial?, rma_case?, rma_state?}: an optic
  (seated in a port) or a cable replaced, 201 with the swap;
- PATCH /api/swaps/<id>/ {rma_case?, rma_state?}: the RMA moving on (a field left out keeps its value).

Technicians and managers only (EDIT_INVENTORY), reads included: a customer gets 403, someone outside the
project 404 (a create's project is checked before the rest of its payload). Refusals are 400s naming the
field, in the one error shape (core.api.exceptions)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.exceptions import PermissionDenied
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from cabling.choices import RmaState, SwapKind
from cabling.models import Swap
from cabling.selectors import cable_list
from cabling.swaps.filters import SwapFilterSet
from cabling.swaps.selectors import SWAP_RELATIONS, swap_list
from cabling.swaps.services import cable_swap, optic_swap, swap_rma_update
from core.api.fields import named_enum_field
from inventory.selectors import optic_list
from projects.access import Capability, can, project_to_write, projects_where, scope_to_user

SWAPPING = Capability.EDIT_INVENTORY
NOT_ALLOWED = "Only the project's technicians and managers see and record swaps."

RmaStateField = named_enum_field(RmaState)
SwapKindField = named_enum_field(SwapKind)


class SwapSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="code", read_only=True)
    kind = SwapKindField(choices=SwapKind.choices, read_only=True)
    rma_state = RmaStateField(choices=RmaState.choices, read_only=True)
    port_name = serializers.SerializerMethodField(help_text="device:port of an optic swap.")
    cable_label = serializers.CharField(source="cable.label", read_only=True, allow_null=True, default=None)
    recorded_by = serializers.SlugRelatedField(slug_field="username", read_only=True, help_text="Who recorded it.")

    class Meta:
        model = Swap
        fields = ["id", "project", "kind", "optic", "new_optic", "port", "port_name", "cable", "cable_label",
                  "old_serial", "new_serial", "reason", "rma_case", "rma_state", "rma_updated_at", "recorded_by",
                  "recorded_at"]
        read_only_fields = fields

    def get_port_name(self, swap) -> str | None:
        return f"{swap.port.device.name}:{swap.port.name}" if swap.port_id else None


class SwapInputSerializer(serializers.Serializer):
    project = serializers.CharField(max_length=50, help_text="Code of the project.")
    optic = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1,
                                     help_text="The optic replaced (seated in a port).")
    cable = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1, help_text="The cable replaced.")
    new_serial = serializers.CharField(max_length=100, help_text="The serial of the part going in.")
    old_serial = serializers.CharField(
        max_length=100, required=False, allow_blank=True, default="",
        help_text="A cable swap: the serial of the cable taken out, if none was recorded.",
    )
    reason = serializers.CharField(max_length=2000, help_text="Why it was replaced.")
    rma_case = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    rma_state = RmaStateField(choices=RmaState.choices, required=False, default=RmaState.NONE)

    def validate(self, data):
        if ("optic" in data) == ("cable" in data):
            raise serializers.ValidationError({"optic": "Name the optic or the cable replaced (one of them)."})
        if "optic" in data and data.get("old_serial"):
            raise serializers.ValidationError({"old_serial": "An optic's serial is known: leave old_serial out."})
        return data


class SwapRmaSerializer(serializers.Serializer):
    rma_case = serializers.CharField(max_length=100, required=False, allow_blank=True)
    rma_state = RmaStateField(choices=RmaState.choices, required=False)


class SwapPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class SwapViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = SwapSerializer
    permission_classes = [permissions.IsAuthenticated]
    filterset_class = SwapFilterSet
    pagination_class = SwapPagination
    http_method_names = ["get", "post", "patch", "head", "options"]
    # Reading and writing both need it (the access matrix holds the viewset to it).
    required_capability = write_capability = SWAPPING
    queryset = Swap.objects.none()  # for the schema; get_queryset scopes

    def get_serializer_class(self):
        return {"create": SwapInputSerializer, "partial_update": SwapRmaSerializer}.get(self.action, SwapSerializer)

    def get_queryset(self):
        if self.action == "list":
            return swap_list(user=self.request.user)
        # Every project of the user's: a customer's swap is then a 403, not a 404 (they are a member).
        return scope_to_user(Swap.objects.select_related(*SWAP_RELATIONS), self.request.user)

    def list(self, request, *args, **kwargs):
        if not projects_where(request.user, SWAPPING).exists():
            raise PermissionDenied(NOT_ALLOWED)
        return super().list(request, *args, **kwargs)

    def get_object(self):
        swap = super().get_object()  # 404 outside the user's projects
        if not can(self.request.user, SWAPPING, swap.project_id):
            raise PermissionDenied(NOT_ALLOWED)
        return swap

    @extend_schema(request=SwapInputSerializer, responses={201: SwapSerializer})
    def create(self, request, *args, **kwargs):
        """Record a swap: an optic (seated in a port) or a cable replaced."""
        code = request.data.get("project") if isinstance(request.data, dict) else None
        project = project_to_write(request.user, code, SWAPPING, NOT_ALLOWED)
        given = SwapInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        project = project or project_to_write(request.user, data["project"], SWAPPING, NOT_ALLOWED)
        del data["project"]
        if "optic" in data:
            optic = optic_list(user=request.user, project=project).filter(pk=data.pop("optic")).first()
            if optic is None:
                raise serializers.ValidationError({"optic": "No such optic in this project."})
            data.pop("old_serial", None)
            swap = optic_swap(optic=optic, user=request.user, **data)
        else:
            cable = cable_list(user=request.user, project=project).filter(pk=data.pop("cable")).first()
            if cable is None:
                raise serializers.ValidationError({"cable": "No such cable in this project."})
            swap = cable_swap(cable=cable, user=request.user, **data)
        return Response(SwapSerializer(self.get_queryset().get(pk=swap.pk)).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=SwapRmaSerializer, responses={200: SwapSerializer})
    def partial_update(self, request, *args, **kwargs):
        """The RMA moving on: its case number and state (a field left out keeps its value)."""
        swap = self.get_object()
        given = SwapRmaSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        swap_rma_update(swap=swap, user=request.user, rma_case=data.get("rma_case", swap.rma_case),
                        rma_state=data.get("rma_state", swap.rma_state))
        return Response(SwapSerializer(self.get_queryset().get(pk=swap.pk)).data)
