"""The stages and punch list API (registered by `register`, from bringup/api_urls.py).

Stages: GET /api/stages/ (?project=CODE, ?status=, ?key=; paged, in each project's order) and
/api/stages/<id>/: each stage with its gate as last computed, its waivers and checklist. POST on a stage,
each calling one workflow service (delivery.roof.services), managers only: start/ ({runner}), skip/
({reason}), complete/, waive/ ({reason, items | all_items}). POST /api/stages/recompute/ ({project}) asks
for the project's gates again (managers). POST /api/checklist-items/<id>/confirm/ confirms one checklist
item (technicians and managers); GET /api/checklist-items/<id>/ reads it.

Punch list: GET /api/punch-items/ (filters: project, status, severity, assignee, customer_visible,
object_kind, object_id, q; paged, newest first) and /api/punch-items/<id>/; POST opens one
(punch.punch_item_open), PUT/PATCH edits it (punch_item_update), POST <id>/status/ moves it
(punch_item_set_status, with a note). Technicians and managers write; only managers close as won't fix or
show an item to the customer (the services say so). A customer reads the customer-visible items only,
without their internal fields, and writes nothing.

Outsiders get 404 for every object and a list without the project's rows; a write naming a project they
cannot see answers as one naming no project at all (delivery.access.project_to_write). A service's refusal
is a 400 in the one error shape, naming its field (core.api.exceptions); a role's, a 403."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, viewsets
from rest_framework import status as http
from rest_framework.decorators import action
from rest_framework.response import Response

from delivery.access import Capability, project_to_write
from delivery.api.permissions import ProjectRolePermission

from .. import punch, services
from ..choices import PunchObjectKind, PunchSeverity
from ..models import ChecklistItem, PunchItem, Stage
from ..punch_selectors import punch_object_label
from .filters import PunchItemApiFilterSet, StageFilterSet
from .selectors import checklist_items_visible, punch_items_visible, stages_visible
from .serializers import (
    ChecklistItemSerializer,
    PunchItemCreateSerializer,
    PunchItemSerializer,
    PunchItemWriteSerializer,
    PunchStatusChangeSerializer,
    RecomputeAnswerSerializer,
    RecomputeRequestSerializer,
    StageSerializer,
    StageSkipSerializer,
    StageStartSerializer,
    StageWaiveSerializer,
)

NOT_A_MANAGER = "Only the project's managers may do this to a stage."
NOT_A_WORKER = "Your role in this project does not allow opening punch items."


def _project_code(request):
    """The project code a write names in its body (None when the body is not an object)."""
    return request.data.get("project") if hasattr(request.data, "get") else None


def _given(serializer_class, request, **kwargs) -> dict:
    """The request's body checked by `serializer_class`: its validated data, or a 400 naming the fields."""
    given = serializer_class(data=request.data, **kwargs)
    given.is_valid(raise_exception=True)
    return given.validated_data


# --- stages --------------------------------------------------------------------------------------------------


class StageViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The stages of the user's projects, each project's in order, with their gates as last computed."""

    serializer_class = StageSerializer
    permission_classes = [permissions.IsAuthenticated, ProjectRolePermission]
    filterset_class = StageFilterSet
    project_path = "project"
    # What the actions need (each service checks it too): start, skip, complete, waive, recompute.
    write_capability = Capability.MANAGE_PROJECT
    queryset = Stage.objects.none()  # for the schema; get_queryset scopes

    def get_queryset(self):
        return stages_visible(user=self.request.user)

    def get_serializer_class(self):
        # What each action takes (the browsable API's forms); every answer is a StageSerializer.
        inputs = {"start": StageStartSerializer, "skip": StageSkipSerializer, "waive": StageWaiveSerializer,
                  "recompute": RecomputeRequestSerializer}
        return inputs.get(self.action, StageSerializer)

    def _answer(self, stage: Stage, status: int = http.HTTP_200_OK) -> Response:
        """The stage as a read shows it, after the service changed it."""
        row = stages_visible(user=self.request.user).get(pk=stage.pk)
        return Response(StageSerializer(row, context=self.get_serializer_context()).data, status=status)

    @extend_schema(request=StageStartSerializer, responses={200: StageSerializer})
    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        """Start the stage (its dependencies done or skipped) and the work it starts, if any."""
        stage = self.get_object()  # 404 outside the user's projects, 403 for a member who does not manage it
        data = _given(StageStartSerializer, request)
        services.stage_start(stage=stage, user=request.user, runner=data["runner"])
        return self._answer(stage)

    @extend_schema(request=StageSkipSerializer, responses={200: StageSerializer})
    @action(detail=True, methods=["post"])
    def skip(self, request, pk=None):
        """Skip the stage, with the reason; the stages after it may then start."""
        stage = self.get_object()
        data = _given(StageSkipSerializer, request)
        services.stage_skip(stage=stage, user=request.user, reason=data["reason"])
        return self._answer(stage)

    @extend_schema(request=None, responses={200: StageSerializer})
    @action(detail=True, methods=["post"])
    def complete(self, request, pk=None):
        """Complete the stage: refused (400, with the items its gate misses) unless its gate as last computed
        passes or waivers cover every missing item."""
        stage = self.get_object()
        services.stage_complete(stage=stage, user=request.user)
        return self._answer(stage)

    @extend_schema(request=StageWaiveSerializer, responses={201: StageSerializer})
    @action(detail=True, methods=["post"])
    def waive(self, request, pk=None):
        """Record a waiver of some of the gate's missing items (by ref) or all of them, with the reason. The
        answer is the stage with its waivers."""
        stage = self.get_object()
        data = _given(StageWaiveSerializer, request)
        services.waiver_record(stage=stage, user=request.user, reason=data["reason"], items=data.get("items", []),
                               all_items=data["all_items"])
        return self._answer(stage, http.HTTP_201_CREATED)

    @extend_schema(request=RecomputeRequestSerializer, responses={202: RecomputeAnswerSerializer})
    @action(detail=False, methods=["post"])
    def recompute(self, request):
        """Ask for the project's gates to be computed again (after a change no service reports, such as a
        rack's power budget). At most one recompute is queued per project: `queued` false when one already
        was, or when the project has no stages."""
        # The project first (404 outside it, 403 for a member who does not manage it), then the rest.
        project = project_to_write(request.user, _project_code(request), self.write_capability, NOT_A_MANAGER)
        _given(RecomputeRequestSerializer, request)  # no project code: stops here
        queued = services.gates_recompute_request(project_id=project.pk)
        if queued:
            detail = "The gates are being recomputed."
        elif project.stages.exists():
            detail = "A recompute is already queued."
        else:
            detail = "The project has no stages yet."
        answer = {"queued": queued, "detail": detail, "computed_at": services.last_gate_computation(project)}
        return Response(RecomputeAnswerSerializer(answer).data, status=http.HTTP_202_ACCEPTED)


class ChecklistItemViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """One checklist item of a stage (network configuration, custom stages), confirmed by hand."""

    serializer_class = ChecklistItemSerializer
    permission_classes = [permissions.IsAuthenticated, ProjectRolePermission]
    project_path = "stage__project"
    write_capability = Capability.RUN_CHECKS  # technicians and managers confirm
    queryset = ChecklistItem.objects.none()

    def get_queryset(self):
        return checklist_items_visible(user=self.request.user)

    @extend_schema(request=None, responses={200: ChecklistItemSerializer})
    @action(detail=True, methods=["post"])
    def confirm(self, request, pk=None):
        """Confirm the item, as you, now; once (a second confirmation is refused, naming who was first)."""
        item = self.get_object()
        services.checklist_item_confirm(item=item, user=request.user)
        return Response(ChecklistItemSerializer(self.get_queryset().get(pk=item.pk)).data)


# --- punch list ----------------------------------------------------------------------------------------------


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
        project = project_to_write(request.user, _project_code(request), self.write_capability, NOT_A_WORKER)
        data = _given(PunchItemCreateSerializer, request)  # no project code: stops here
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
        data = _given(PunchItemWriteSerializer, request, partial=kwargs.get("partial", False))
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
        data = _given(PunchStatusChangeSerializer, request)
        punch.punch_item_set_status(item=item, user=request.user, status=data["status"], note=data.get("note", ""))
        return self._answer(item)


def register(router) -> None:
    router.register("stages", StageViewSet, basename="stage")
    router.register("checklist-items", ChecklistItemViewSet, basename="checklist-item")
    router.register("punch-items", PunchItemViewSet, basename="punch-item")
