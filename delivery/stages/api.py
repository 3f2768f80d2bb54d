"""The stages API (registered by `register`, from bringup/api_urls.py):
GET /api/stages/ (?project=CODE, ?status=, ?key=; paged, in each project's order) and
/api/stages/<id>/: each stage with its gate as last computed, its waivers and checklist. POST on a stage,
each calling one workflow service (delivery.stages.services), managers only: start/ ({runner}), skip/
({reason}), complete/, waive/ ({reason, items | all_items}). POST /api/stages/recompute/ ({project}) asks
for the project's gates again (managers). POST /api/checklist-items/<id>/confirm/ confirms one checklist
item (technicians and managers); GET /api/checklist-items/<id>/ reads it.

Outsiders get 404 for every object and a list without the project's rows; a write naming a project they
cannot see answers as one naming no project at all (projects.access.project_to_write). A service's refusal
is a 400 in the one error shape, naming its field (core.api.exceptions); a role's, a 403."""

from __future__ import annotations

import django_filters
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, permissions, serializers, viewsets
from rest_framework import status as http
from rest_framework.decorators import action
from rest_framework.response import Response

from core.api.fields import TextField, named_enum_field
from core.api.serializers import validated_body
from core.api.views import project_code_in_body
from core.filters import FilterSet
from delivery.choices import StageStatus, StageWork
from delivery.models import ChecklistItem, Stage, Waiver
from delivery.stages import services
from delivery.stages.selectors import checklist_items_visible, stages_visible
from delivery.stages.work import STAGE_RUNNERS
from projects.access import Capability, project_to_write
from projects.api.fields import PersonField
from projects.api.permissions import ProjectRolePermission

StageStatusField = named_enum_field(StageStatus)
StageWorkField = named_enum_field(StageWork)
MAX_WAIVED_ITEMS = 100  # a gate lists at most ten; room for a script that sends what it read, and no more
REF_LENGTH = 300
CODE_LENGTH = 50
NOT_A_MANAGER = "Only the project's managers may do this to a stage."


class StageFilterSet(FilterSet):
    # A code, not a model choice: a choice field would read the table and tell an outsider the project exists.
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    status = django_filters.ChoiceFilter(choices=StageStatus.choices)
    key = django_filters.CharFilter(field_name="key", label="Stage key (site_readiness, racking, ...)")

    class Meta:
        model = Stage
        fields = ["project", "status", "key"]


class GateItemSerializer(serializers.Serializer):
    """One item a stage's gate misses, as the gate stored it."""

    label = serializers.CharField(read_only=True)
    reason = serializers.CharField(read_only=True)
    ref = serializers.CharField(read_only=True, help_text='What a waiver names it by: "cabling.cable:42".')
    url = serializers.CharField(read_only=True, help_text="The page of the object, where there is one.")


class ChecklistItemSerializer(serializers.ModelSerializer):
    confirmed_by = PersonField()

    class Meta:
        model = ChecklistItem
        fields = ["id", "stage", "text", "order", "confirmed_at", "confirmed_by"]
        read_only_fields = fields


class WaiverSerializer(serializers.ModelSerializer):
    items = serializers.ListField(child=serializers.CharField(), read_only=True,
                                 help_text="Refs of the gate items it covers.")
    recorded_by = PersonField()

    class Meta:
        model = Waiver
        fields = ["id", "items", "all_items", "missing_count", "reason", "recorded_by", "recorded_at"]
        read_only_fields = fields


class StageJobSerializer(serializers.Serializer):
    """A job row the stage's start started (a check run): poll its status URL for its progress."""

    type = serializers.CharField(help_text='The job row\'s kind: "validation.checkrun".')
    id = serializers.IntegerField()
    status_url = serializers.CharField(help_text="GET it: the job's status and progress.")


class StageSerializer(serializers.ModelSerializer):
    """A stage with its gate as last computed (never computed: gate_passed null), its waivers and checklist."""

    project = serializers.SlugRelatedField(slug_field="code", read_only=True)
    depends_on = serializers.ListField(child=serializers.CharField(), read_only=True,
                                      help_text="Keys of the stages it waits for.")
    work = StageWorkField(choices=StageWork.choices, read_only=True, allow_blank=True,
                          help_text="What starting it starts (blank: nothing, the work is on the floor).")
    status = StageStatusField(choices=StageStatus.choices, read_only=True)
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    started_by = PersonField()
    completed_by = PersonField()
    gate_passed = serializers.BooleanField(read_only=True, allow_null=True,
                                           help_text="As last computed; null: never computed yet.")
    gate_missing = GateItemSerializer(many=True, read_only=True,
                                      help_text="Up to ten of the items it misses; gate_missing_count counts all.")
    waivers_cover_gate = serializers.SerializerMethodField(
        help_text="Whether the gate passes, or its waivers cover every item it misses (the stage may complete "
        "once its dependencies are done or skipped)."
    )
    waivers = WaiverSerializer(many=True, read_only=True)
    checklist = ChecklistItemSerializer(many=True, read_only=True)
    jobs = serializers.SerializerMethodField(help_text="The work its start started, oldest first.")

    class Meta:
        model = Stage
        fields = [
            "id", "project", "key", "title", "order", "depends_on", "work", "status", "status_label",
            "status_reason", "skipped_reason", "started_at", "started_by", "completed_at", "completed_by",
            "gate_key", "gate_passed", "gate_missing_count", "gate_missing", "gate_summary", "gate_computed_at",
            "waivers_cover_gate", "waivers", "checklist", "jobs",
        ]
        read_only_fields = fields

    @extend_schema_field(StageJobSerializer(many=True))
    def get_jobs(self, stage: Stage) -> list[dict]:
        # From the ids the stage keeps: no query (the status endpoint scopes each job when it is read).
        return [{"type": job_type, "id": pk,
                 "status_url": reverse("api-job-status", kwargs={"job_type": job_type, "pk": pk})}
                for job_type, pk in stage.jobs or []]

    def get_waivers_cover_gate(self, stage: Stage) -> bool:
        # The prefetched waivers: no query per stage.
        return bool(stage.gate_passed is not None and services.waivers_cover(stage, list(stage.waivers.all())))


class StageStartSerializer(serializers.Serializer):
    runner = TextField(required=False, max_length=20, default=STAGE_RUNNERS[0],
                       help_text=f"How the stage's work reaches the nodes: {', '.join(STAGE_RUNNERS)}.")


class StageSkipSerializer(serializers.Serializer):
    reason = TextField(max_length=services.REASON_LENGTH, help_text="Why the stage is skipped.")


class StageWaiveSerializer(serializers.Serializer):
    reason = TextField(max_length=services.WAIVER_REASON_LENGTH, help_text="Why these items may be waived.")
    items = serializers.ListField(
        child=TextField(max_length=REF_LENGTH), required=False, max_length=MAX_WAIVED_ITEMS,
        help_text="Refs of the gate's missing items to waive (gate_missing[].ref).",
    )
    all_items = serializers.BooleanField(required=False, default=False,
                                         help_text="Waive every item the gate misses as it stands.")


class RecomputeRequestSerializer(serializers.Serializer):
    project = TextField(max_length=CODE_LENGTH, help_text="The project code.")


class RecomputeAnswerSerializer(serializers.Serializer):
    queued = serializers.BooleanField(help_text="Whether this request queued a recompute.")
    detail = serializers.CharField(help_text="What happens next, in words.")
    computed_at = serializers.DateTimeField(allow_null=True, help_text="When the gates were last computed.")


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
        data = validated_body(StageStartSerializer, request)
        services.stage_start(stage=stage, user=request.user, runner=data["runner"])
        return self._answer(stage)

    @extend_schema(request=StageSkipSerializer, responses={200: StageSerializer})
    @action(detail=True, methods=["post"])
    def skip(self, request, pk=None):
        """Skip the stage, with the reason; the stages after it may then start."""
        stage = self.get_object()
        data = validated_body(StageSkipSerializer, request)
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
        data = validated_body(StageWaiveSerializer, request)
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
        project = project_to_write(request.user, project_code_in_body(request), self.write_capability, NOT_A_MANAGER)
        validated_body(RecomputeRequestSerializer, request)  # no project code: stops here
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


def register(router) -> None:
    router.register("stages", StageViewSet, basename="stage")
    router.register("checklist-items", ChecklistItemViewSet, basename="checklist-item")
