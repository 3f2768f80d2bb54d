"""Input and output of the stages and punch list API. Outputs name a project by code and people by
username; inputs are checked for type and size here, and for every rule of the workflow by the service
each endpoint calls (delivery.roof.services, delivery.roof.punch), whose refusals name their field."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import named_enum_field
from core.filters import INT64_MAX
from delivery.api.fields import UsernameField
from delivery.choices import Role

from .. import punch, services
from ..choices import PunchObjectKind, PunchSeverity, PunchSource, PunchStatus, StageStatus, StageWork
from ..models import ChecklistItem, PunchItem, Stage, Waiver
from ..work import STAGE_RUNNERS

StageStatusField = named_enum_field(StageStatus)
StageWorkField = named_enum_field(StageWork)
PunchStatusField = named_enum_field(PunchStatus)
PunchSeverityField = named_enum_field(PunchSeverity)
PunchObjectKindField = named_enum_field(PunchObjectKind)
PunchSourceField = named_enum_field(PunchSource)

MAX_WAIVED_ITEMS = 100  # a gate lists at most ten; room for a script that sends what it read, and no more
REF_LENGTH = 300
CODE_LENGTH = 50
# What a project's customers never read of a punch item: how the team describes and tracks the fault.
INTERNAL_PUNCH_FIELDS = ("description", "fingerprint", "evidence_at", "evidence_note", "passing_since")
INTERNAL_HELP = "Not shown to the project's customers (absent from their answers)."


class TextField(serializers.CharField):
    """Text and nothing else: a number, list or object where text belongs is a 400 naming the field, not
    coerced to its string. A NUL byte is refused by CharField itself."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class PersonField(serializers.SlugRelatedField):
    """A person as their username (null when nobody: the system, or an account since deleted)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", "A username; null: nobody (or the system).")
        super().__init__(slug_field="username", read_only=True, **kwargs)


# --- stages --------------------------------------------------------------------------------------------------


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


# --- punch list ----------------------------------------------------------------------------------------------


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

