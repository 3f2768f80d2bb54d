"""Input and output of the check-run endpoints. Outputs name a project by code, people by username and
inventory rows by name; the list of results leaves out the raw output, which a single result carries."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import named_enum_field
from core.choices import JobStatus

from ..choices import EXECUTING_RUNNERS, CheckKind, ResultStatus, RunnerKind, Verdict
from ..kinds import STARTABLE_CHECK_KINDS
from ..models import CheckResult, CheckRun

CheckKindField = named_enum_field(CheckKind)
RunnerKindField = named_enum_field(RunnerKind)
JobStatusField = named_enum_field(JobStatus)
ResultStatusField = named_enum_field(ResultStatus)
VerdictField = named_enum_field(Verdict)


class CheckRunSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="code", read_only=True)
    kind = CheckKindField(choices=CheckKind.choices, read_only=True)
    kind_label = serializers.CharField(source="get_kind_display", read_only=True)
    runner = RunnerKindField(choices=RunnerKind.choices, read_only=True)
    status = JobStatusField(choices=JobStatus.choices, read_only=True)
    status_label = serializers.CharField(read_only=True)
    total = serializers.IntegerField(source="progress_total", read_only=True, help_text="Targets of the run.")
    done = serializers.IntegerField(
        source="progress_done", read_only=True, help_text="Targets measured, errored or cancelled."
    )
    percent = serializers.IntegerField(source="progress_percent", read_only=True)
    finished = serializers.BooleanField(source="is_finished", read_only=True)
    passed = serializers.IntegerField(read_only=True, help_text="Results with verdict pass.")
    warned = serializers.IntegerField(read_only=True, help_text="Results with verdict warn.")
    failed = serializers.IntegerField(read_only=True, help_text="Results with verdict fail.")
    errored = serializers.IntegerField(read_only=True, help_text="Results that could not be measured.")
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = CheckRun
        fields = [
            "id", "project", "kind", "kind_label", "runner", "status", "status_label", "total", "done", "percent",
            "finished", "passed", "warned", "failed", "errored", "requested_by", "parent", "created_at",
            "started_at", "finished_at",
        ]
        read_only_fields = fields


class CheckRunDetailSerializer(CheckRunSerializer):
    class Meta(CheckRunSerializer.Meta):
        fields = [*CheckRunSerializer.Meta.fields, "options", "log"]
        read_only_fields = fields


class CheckRunStartSerializer(serializers.Serializer):
    project = serializers.CharField(help_text="Code of the project whose GPU nodes are checked.")
    kind = CheckKindField(choices=[(k.value, k.label) for k in STARTABLE_CHECK_KINDS])
    runner = RunnerKindField(choices=[(r.value, r.label) for r in EXECUTING_RUNNERS], default=RunnerKind.SIMULATED)
    options = serializers.JSONField(
        default=dict,
        help_text='Kind-specific settings, e.g. {"seed": 1} for the simulated runner, {"launcher": "srun"} '
        "for NCCL.",
    )

    def validate_options(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("Expected an object of option: value.")
        return value


class CheckResultSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="run.project.code", read_only=True)
    kind = CheckKindField(source="run.kind", choices=CheckKind.choices, read_only=True)
    status = ResultStatusField(choices=ResultStatus.choices, read_only=True)
    verdict = VerdictField(choices=Verdict.choices, read_only=True, allow_blank=True)
    device = serializers.SlugRelatedField(slug_field="name", read_only=True)
    peer_device = serializers.SlugRelatedField(slug_field="name", read_only=True)
    port = serializers.SlugRelatedField(slug_field="name", read_only=True)
    peer_port = serializers.SlugRelatedField(slug_field="name", read_only=True)
    cable = serializers.SlugRelatedField(slug_field="label", read_only=True)
    optic = serializers.SlugRelatedField(slug_field="serial", read_only=True)
    reasons = serializers.JSONField(read_only=True, help_text='[{"level": "fail", "text": "..."}]')
    metrics = serializers.JSONField(read_only=True, help_text="What the parser read, as parse_output --json.")

    class Meta:
        model = CheckResult
        fields = [
            "id", "run", "project", "kind", "target_key", "round", "status", "verdict", "reasons", "metrics",
            "host", "device", "port", "port_id", "peer_device", "peer_port", "peer_port_id", "cable", "cable_id",
            "optic", "attempt", "started_at", "finished_at",
        ]
        read_only_fields = fields


class CheckResultDetailSerializer(CheckResultSerializer):
    class Meta(CheckResultSerializer.Meta):
        fields = [*CheckResultSerializer.Meta.fields, "command", "exit_code", "raw_output", "stderr"]
        read_only_fields = fields
