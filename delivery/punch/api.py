"""The punch list API (registered by `register`, from bringup/api_urls.py):
GET /api/punch-items/ (filters: project, status, severity, assignee, customer_visible,
object_kind, object_id, q; paged, newest first) and /api/punch-items/<id>/; POST opens one
(punch.punch_item_open), PUT/PATCH edits it (punch_item_update), POST <id>/status/ moves it
(punch_item_set_status, with a note). Technicians and managers write; only managers close as won't fix or
show an item to the customer (the services say so). A customer reads the customer-visible items only,
without their internal fields, and writes nothing.

Outsiders get 404 for every object and a list without the project's rows; a write naming a project they
cannot see answers as one naming no project at all (projects.access.project_to_write). A service's refusal
is a 400 in the one error shape, naming its field (core.api.exceptions); a role's, a 403."""

from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, serializers, viewsets
from rest_framework import status as http
from rest_framework.decorators import action
from rest_framework.response import Response

from core.api.fields import TextField, named_enum_field
from core.api.serializers import validated_body
from core.api.views import project_code_in_body
from core.filters import INT64_MAX, IdFilter
from delivery.choices import PunchObjectKind, PunchSeverity, PunchSource, PunchStatus
from delivery.models import PunchItem
from delivery.punch import services as punch
from delivery.punch.selectors import PunchItemFilterSet, punch_items_visible, punch_object_label
from projects.access import Capability, project_to_write
from projects.api.fields import PersonField, UsernameField
from projects.api.permissions import ProjectRolePermission
from projects.choices import Role

PunchStatusField = named_enum_field(PunchStatus)
PunchSeverityField = named_enum_field(PunchSeverity)
PunchObjectKindField = named_enum_field(PunchObjectKind)
PunchSourceField = named_enum_field(PunchSource)
# What a project's customers never read of a punch item: how the team describes and tracks the fault.
INTERNAL_PUNCH_FIELDS = ("description", "fingerprint", "evidence_at", "evidence_note", "passing_since")
INTERNAL_HELP = "Not shown to the project's customers (absent from their answers)."
CODE_LENGTH = 50
NOT_A_WORKER = "Your role in this project does not allow opening punch items."


class PunchItemApiFilterSet(PunchItemFilterSet):
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    object_kind = django_filters.ChoiceFilter(choices=PunchObjectKind.choices, label="Kind of object it concerns")
    object_id = IdFilter(field_name="object_id", label="Id of the object it concerns (with object_kind)")

    class Meta(PunchItemFilterSet.Meta):
        fields = ["project", *PunchItemFilterSet.Meta.fields, "object_kind", "object_id"]


class PunchItemSerializer(serializers.ModelSerializer):
    """A punch item as its readers see it: a customer gets the customer-visible items only, without the
    internal fields (INTERNAL_PUNCH_FIELDS), which the schema therefore marks optional."""

    id = serializers.IntegerField(read_only=True)
    project = serializers.CharField(source="project.code", read_only=True)
    title = serializers.CharField(read_only=True)
    severity = PunchSeverityField(choices=PunchSeverity.choices, read_only=True)
    status = PunchStatusField(choices=PunchStatus.choices, read_only=True)
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    assignee = PersonField()
    due_date = serializers.DateField(read_only=True, allow_null=True)
    customer_visible = serializers.BooleanField(read_only=True)
    object_kind = PunchObjectKindField(choices=PunchObjectKind.choices, read_only=True, allow_blank=True)
    object_id = serializers.IntegerField(read_only=True, allow_null=True)
    object_label = serializers.CharField(read_only=True)
    object_url = serializers.CharField(read_only=True, help_text="The object's page (blank: none).")
    source = PunchSourceField(choices=PunchSource.choices, read_only=True)
    opened_by = PersonField(help_text="Null for an item opened from the evidence.")
    opened_at = serializers.DateTimeField(read_only=True)
    fixed_by = PersonField()
    fixed_at = serializers.DateTimeField(read_only=True, allow_null=True)
    resolution_note = serializers.CharField(read_only=True)
    wont_fix_reason = serializers.CharField(read_only=True)
    verified_by = PersonField(help_text="Null on a verified item: verified by a passing re-check.")
    verified_at = serializers.DateTimeField(read_only=True, allow_null=True)
    # Output only, yet not read_only: the schema then leaves them out of `required` (customers never get them).
    description = serializers.CharField(required=False, help_text=INTERNAL_HELP)
    fingerprint = serializers.CharField(required=False,
                                        help_text=f"The fault an auto-opened item tracks. {INTERNAL_HELP}")
    evidence_at = serializers.DateTimeField(required=False, allow_null=True, help_text=INTERNAL_HELP)
    evidence_note = serializers.CharField(required=False, help_text=f"What the latest evidence said. {INTERNAL_HELP}")
    passing_since = serializers.DateTimeField(
        required=False, allow_null=True,
        help_text=f"An item not yet marked fixed whose object passes again: since when. {INTERNAL_HELP}",
    )

    class Meta:
        model = PunchItem
        fields = [
            "id", "project", "title", "severity", "status", "status_label", "assignee", "due_date",
            "customer_visible", "object_kind", "object_id", "object_label", "object_url", "source", "opened_by",
            "opened_at", "fixed_by", "fixed_at", "resolution_note", "wont_fix_reason", "verified_by",
            "verified_at", *INTERNAL_PUNCH_FIELDS,
        ]

    def to_representation(self, item):
        data = super().to_representation(item)
        if getattr(item, "viewer_role", None) == Role.CUSTOMER:
            for name in INTERNAL_PUNCH_FIELDS:
                data.pop(name, None)
        return data


class PunchItemWriteSerializer(serializers.Serializer):
    """What a technician or manager sets on an item (the service checks the rules: title, assignee's role,
    who shows an item to the customer). On an edit, a field left out keeps its value."""

    title = TextField(max_length=punch.TITLE_LENGTH)
    severity = PunchSeverityField(choices=PunchSeverity.choices, required=False,
                                  help_text="Default on a new item: major; on an edit: unchanged.")
    description = TextField(required=False, allow_blank=True, max_length=punch.REASON_LENGTH * 5)
    assignee = UsernameField(required=False, allow_null=True,
                             help_text="Username of a technician or manager of the project; null: nobody.")
    due_date = serializers.DateField(required=False, allow_null=True)
    customer_visible = serializers.BooleanField(required=False,
                                                help_text="Shown to the project's customers (managers only).")


class PunchItemCreateSerializer(PunchItemWriteSerializer):
    project = TextField(max_length=CODE_LENGTH, help_text="The project code.")
    object_kind = PunchObjectKindField(choices=PunchObjectKind.choices, required=False, allow_blank=True,
                                       help_text="What the item concerns (with object_id); blank: nothing.")
    object_id = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=INT64_MAX,
                                         help_text="The id of that object, in the project.")

    def validate(self, attrs):
        kind, object_id = attrs.get("object_kind") or "", attrs.get("object_id")
        if kind and object_id is None:
            raise serializers.ValidationError({"object_id": "Give the id of the object the item concerns."})
        if object_id is not None and not kind:
            raise serializers.ValidationError({"object_kind": "Say what kind of object object_id is."})
        return attrs


class PunchStatusChangeSerializer(serializers.Serializer):
    status = PunchStatusField(choices=PunchStatus.choices,
                              help_text="open, in_progress, fixed or wont_fix (managers, with the reason in note). "
                              "Never verified: a later passing check of the object verifies a fixed item.")
    note = TextField(required=False, allow_blank=True, max_length=punch.REASON_LENGTH,
                     help_text="What was done (fixed), or why it will not be (wont_fix, required).")


class PunchItemViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
                       mixins.UpdateModelMixin, viewsets.GenericViewSet):
    """The punch items of the user's projects that they may see, newest first."""

    serializer_class = PunchItemSerializer
    permission_classes = [permissions.IsAuthenticated, ProjectRolePermission]
    filterset_class = PunchItemApiFilterSet
    project_path = "project"
    write_capability = Capability.RUN_CHECKS  # won't fix and customer visibility: managers (the services)
    queryset = PunchItem.objects.none()
    http_method_names = ["get", "post", "put", "patch", "head", "options"]  # an item is closed, never deleted

    def get_queryset(self):
        return punch_items_visible(user=self.request.user).order_by("-opened_at", "-id")

    def get_serializer_class(self):
        # What each write takes (the browsable API's forms); every answer is a PunchItemSerializer.
        inputs = {"create": PunchItemCreateSerializer, "update": PunchItemWriteSerializer,
                  "partial_update": PunchItemWriteSerializer, "set_status": PunchStatusChangeSerializer}
        return inputs.get(self.action, PunchItemSerializer)

    def get_permissions(self):
        if self.action == "create":
            # The project is in the payload: create() answers 404 for a project the user cannot see before
            # it answers 403 for a role, so an outsider learns nothing.
            return [permissions.IsAuthenticated()]
        return super().get_permissions()

    def _answer(self, item: PunchItem, status: int = http.HTTP_200_OK) -> Response:
        row = self.get_queryset().get(pk=item.pk)
        return Response(PunchItemSerializer(row, context=self.get_serializer_context()).data, status=status)

    @extend_schema(request=PunchItemCreateSerializer, responses={201: PunchItemSerializer})
    def create(self, request, *args, **kwargs):
        """Open an item by hand, on an object of the project (object_kind and object_id) or on none."""
        project = project_to_write(request.user, project_code_in_body(request), self.write_capability, NOT_A_WORKER)
        data = validated_body(PunchItemCreateSerializer, request)  # no project code: stops here
        kind, object_id = data.get("object_kind") or "", data.get("object_id")
        label = ""
        if kind:
            label = punch_object_label(project=project, kind=kind, object_id=object_id)
            if label is None:  # another project's id names nothing here
                noun = PunchObjectKind(kind).label.lower()
                raise ValidationError({"object_id": f"No {noun} #{object_id} in this project."})
        item = punch.punch_item_open(
            project=project, user=request.user, title=data["title"],
            severity=data.get("severity", PunchSeverity.MAJOR), description=data.get("description", ""),
            object_kind=kind, object_id=object_id if kind else None, object_label=label,
            assignee=data.get("assignee"), due_date=data.get("due_date"),
            customer_visible=data.get("customer_visible", False),
        )
        return self._answer(item, http.HTTP_201_CREATED)

    @extend_schema(request=PunchItemWriteSerializer, responses={200: PunchItemSerializer})
    def update(self, request, *args, **kwargs):
        """Edit the item's title, severity, description, assignee, due date (and, managers, whether the
        customer sees it). PUT needs the title; PATCH takes any of them. A field left out keeps its value."""
        item = self.get_object()  # 404 outside the user's projects, 403 for a customer
        data = validated_body(PunchItemWriteSerializer, request, partial=kwargs.get("partial", False))
        punch.punch_item_update(
            item=item, user=request.user, title=data.get("title", item.title),
            severity=data.get("severity", item.severity), description=data.get("description", item.description),
            assignee=data["assignee"] if "assignee" in data else item.assignee,
            due_date=data["due_date"] if "due_date" in data else item.due_date,
            customer_visible=data.get("customer_visible"),
        )
        return self._answer(item)

    @extend_schema(request=PunchItemWriteSerializer, responses={200: PunchItemSerializer})
    def partial_update(self, request, *args, **kwargs):
        return super().partial_update(request, *args, **kwargs)

    @extend_schema(request=PunchStatusChangeSerializer, responses={200: PunchItemSerializer})
    @action(detail=True, methods=["post"], url_path="status", url_name="status")
    def set_status(self, request, pk=None):
        """Move the item: open, in progress, fixed (what was done in the note) or won't fix (managers, the
        reason in the note). Never verified by hand: the next passing check of its object verifies it."""
        item = self.get_object()
        data = validated_body(PunchStatusChangeSerializer, request)
        punch.punch_item_set_status(item=item, user=request.user, status=data["status"], note=data.get("note", ""))
        return self._answer(item)


def register(router) -> None:
    router.register("punch-items", PunchItemViewSet, basename="punch-item")
