"""Input and output of the fabric plan endpoints."""

from __future__ import annotations

import yaml
from rest_framework import serializers

from core.choices import JobStatus

from ..models import FabricPlan


class FabricPlanSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="code", read_only=True)
    created_by = serializers.SlugRelatedField(
        source="requested_by", slug_field="username", read_only=True, help_text="Who submitted the spec."
    )
    confirmed_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    finished = serializers.BooleanField(
        source="is_settled", read_only=True,
        help_text="Nothing more happens without someone acting (a preview to confirm, applied, or failed).",
    )
    # Plain text in the schema: an enum named after "status" would collide with the other apps' statuses.
    status = serializers.CharField(
        read_only=True,
        help_text="One of: " + ", ".join(JobStatus.values) + " (waiting: a preview to confirm; done: applied)",
    )

    class Meta:
        model = FabricPlan
        fields = [
            "id", "project", "name", "source", "status", "finished", "keep_installed", "summary", "diff", "errors",
            "progress_done", "progress_total", "progress_step", "created_by", "created_at", "confirmed_by",
            "confirmed_at", "applied_at", "finished_at", "spec_text",
        ]
        read_only_fields = fields


class FabricPlanListSerializer(FabricPlanSerializer):
    """The list leaves out the heavy columns (spec text, stored diff)."""

    class Meta(FabricPlanSerializer.Meta):
        fields = [f for f in FabricPlanSerializer.Meta.fields if f not in ("spec_text", "diff", "errors")]
        read_only_fields = fields


class FabricPlanPreviewSerializer(serializers.Serializer):
    project = serializers.CharField(help_text="Code of the project to plan for.")
    spec = serializers.JSONField(
        help_text="The cluster spec: YAML (or JSON) text, or the spec itself as a JSON object."
    )

    def validate_spec(self, value) -> str:
        if isinstance(value, str):
            if not value.strip():
                raise serializers.ValidationError("spec: required")
            return value
        if isinstance(value, dict):
            return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)
        raise serializers.ValidationError("spec: expected YAML text or a mapping of fields")


class FabricPlanApplySerializer(serializers.Serializer):
    keep_installed = serializers.BooleanField(
        default=False,
        help_text="Keep (flagged) installed cables and switches in place that the plan drops, instead of refusing.",
    )
