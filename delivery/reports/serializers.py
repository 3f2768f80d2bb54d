"""The acceptance report's API shapes: a version with its state, files and the customer's decision, the
requests to sign (accept) and to reject, and the check of a file (or a SHA-256) against the versions."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.choices import JobStatus
from delivery.choices import ACCEPTING_DECISIONS, ReportDecision, ReportState
from delivery.models import FILE_KINDS, FileKind, ReportSignature, ReportVersion
from delivery.reports.services import COMMENTS_LENGTH, NAME_LENGTH, STATEMENT_LENGTH, TITLE_LENGTH, Match

# Plain strings in the schema, their values in the help text: other endpoints' `status` and `kind` enums
# hold other values, and drf-spectacular would warn about the clash.
STATUS_HELP = f"One of: {', '.join(JobStatus.values)}."
KIND_HELP = f"One of: {', '.join(FileKind.values)}."
STATE_HELP = (f"One of: {', '.join(ReportState.values)}. draft: not issued (an as-built addendum stays one); issued: "
              "waits for the customer's decision; superseded: a later version was issued in its place.")
DECISION_HELP = f"One of: {', '.join(ReportDecision.values)}."


def _absolute(context: dict, path: str) -> str:
    request = context.get("request")
    return request.build_absolute_uri(path) if request else path


def job_status_path(job) -> str:
    return reverse("api-job-status", kwargs={"job_type": job.job_type, "pk": job.pk})


def file_path(version: ReportVersion, kind: str) -> str:
    return reverse("report-version-file", kwargs={"pk": version.pk, "kind": kind})


class ReportFileSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text=KIND_HELP)
    label = serializers.CharField()
    name = serializers.CharField(help_text="The file name it downloads as.")
    size = serializers.IntegerField(help_text="In bytes.")
    sha256 = serializers.CharField()
    url = serializers.URLField(help_text="GET it: the file, as an attachment.")


class ReportSignatureSerializer(serializers.ModelSerializer):
    signed_by = serializers.CharField(source="signed_by.username", read_only=True)
    decision = serializers.CharField(read_only=True, help_text=DECISION_HELP)
    exceptions = serializers.DictField(read_only=True, help_text=(
        'Accepted with exceptions: {"punch_items": [{"id", "title", "severity", "status", "object", ...}] (the open '
        'ones shown to the customer), "internal_punch_items": <how many internal ones were open>, "waivers": '
        '[{"stage", "items", "reason", "recorded_by", "recorded_at"}]}, as they stood when signed; {} otherwise.'
    ))
    status = serializers.CharField(read_only=True, help_text=f"Of the signed copies' rendering. {STATUS_HELP}")
    status_url = serializers.SerializerMethodField()

    class Meta:
        model = ReportSignature
        fields = ["decision", "name", "title", "statement", "comments", "exceptions", "signed_at", "signed_by",
                  "snapshot_sha256", "pdf_sha256", "summary_pdf_sha256", "xlsx_sha256", "status", "status_url"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.URI)
    def get_status_url(self, signature: ReportSignature) -> str:
        return _absolute(self.context, job_status_path(signature))


class ReportVersionSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.code", read_only=True)
    requested_by = serializers.CharField(source="requested_by.username", read_only=True, allow_null=True)
    status = serializers.CharField(read_only=True, help_text=f"{STATUS_HELP} done: rendered.")
    status_label = serializers.CharField(read_only=True)
    status_url = serializers.SerializerMethodField()
    percent = serializers.IntegerField(source="progress_percent", read_only=True)
    figures = serializers.DictField(read_only=True, help_text=(
        'From the snapshot: "pass", "warn", "fail", "error" (latest results), "open_punch_items", "waivers", '
        '"verdict" (ready or not_ready), "rows" (table rows in the report).'
    ))
    files = serializers.SerializerMethodField()
    state = serializers.CharField(read_only=True, help_text=STATE_HELP)
    state_label = serializers.CharField(read_only=True)
    issued_by = serializers.CharField(source="issued_by.username", read_only=True, allow_null=True)
    superseded_by = serializers.IntegerField(source="superseded_by.number", read_only=True, allow_null=True,
                                             help_text="The number of the version issued in its place.")
    addendum_to = serializers.IntegerField(source="addendum_to.number", read_only=True, allow_null=True,
                                           help_text="An as-built addendum: the number of the accepted version.")
    signature = serializers.SerializerMethodField()

    class Meta:
        model = ReportVersion
        fields = ["id", "project", "number", "report_id", "state", "state_label", "issued_at", "issued_by",
                  "superseded_at", "superseded_by", "addendum_to", "status", "status_label", "status_url",
                  "progress_step", "progress_done", "progress_total", "percent", "errors", "requested_by",
                  "created_at", "started_at", "finished_at", "generated_at", "snapshot_sha256", "figures", "files",
                  "signature"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.URI)
    def get_status_url(self, version: ReportVersion) -> str:
        return _absolute(self.context, job_status_path(version))

    @extend_schema_field(ReportFileSerializer(many=True))
    def get_files(self, version: ReportVersion) -> list[dict]:
        return [{"kind": kind, "label": FileKind(kind).label, "name": version.file_name(kind),
                 "size": version.size_of(kind), "sha256": version.sha256_of(kind),
                 "url": _absolute(self.context, file_path(version, kind))}
                for kind in FILE_KINDS if version.has_file(kind)]

    @extend_schema_field(ReportSignatureSerializer(allow_null=True))
    def get_signature(self, version: ReportVersion) -> dict | None:
        signature = version.signature_or_none
        return ReportSignatureSerializer(signature, context=self.context).data if signature else None


class ReportVersionRequestSerializer(serializers.Serializer):
    project = serializers.CharField(help_text="The project code.")


class ReportSignSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=NAME_LENGTH, help_text="Your name as it should appear on the report.")
    title = serializers.CharField(max_length=TITLE_LENGTH, help_text="Your position at the customer.")
    statement = serializers.CharField(max_length=STATEMENT_LENGTH, required=False, help_text=(
        "What you sign; by default the statement printed on the report's sign-off page."
    ))
    decision = serializers.ChoiceField(
        choices=sorted(ACCEPTING_DECISIONS), default=ReportDecision.ACCEPTED, help_text=(
            "accepted (refused while a punch item is open or a waiver recorded) or accepted_with_exceptions "
            "(they are then listed in the signature and on the signed copy)."
        ))
    comments = serializers.CharField(max_length=COMMENTS_LENGTH, required=False, allow_blank=True,
                                     help_text="Your comments, on the exceptions for instance.")


class ReportRejectSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=NAME_LENGTH, help_text="Your name as it should appear on the report.")
    title = serializers.CharField(max_length=TITLE_LENGTH, help_text="Your position at the customer.")
    comments = serializers.CharField(max_length=COMMENTS_LENGTH, help_text="Why you reject this version.")


class ReportVerifySerializer(serializers.Serializer):
    project = serializers.CharField(help_text="The project code.")
    sha256 = serializers.CharField(required=False, max_length=200, help_text="The file's SHA-256 (64 hex digits).")
    file = serializers.FileField(required=False, help_text="The file itself (multipart), hashed on the server.")

    def validate(self, attrs):
        if bool(attrs.get("sha256")) == bool(attrs.get("file")):
            raise serializers.ValidationError("Send the file, or its SHA-256: one of the two.")
        return attrs


class ReportVerifyHashSerializer(serializers.Serializer):
    """The JSON form of a check (documentation: the view reads ReportVerifySerializer)."""

    project = serializers.CharField(help_text="The project code.")
    sha256 = serializers.CharField(max_length=200, help_text="The file's SHA-256 (64 hex digits).")


class ReportMatchSerializer(serializers.Serializer):
    version = serializers.IntegerField(source="version.pk", help_text="The version's id.")
    number = serializers.IntegerField()
    report_id = serializers.UUIDField(source="version.report_id")
    kind = serializers.CharField(help_text=KIND_HELP)
    kind_label = serializers.CharField()
    is_signed_copy = serializers.BooleanField()
    signed = serializers.SerializerMethodField(help_text="Whether the version is accepted, signed by the customer.")
    signed_at = serializers.DateTimeField(allow_null=True, help_text="When the customer decided on it.")
    signed_by_name = serializers.SerializerMethodField()
    decision = serializers.SerializerMethodField(help_text=f"{DECISION_HELP} Blank: not decided on.")

    def get_signed(self, match: Match) -> bool:
        return match.signature is not None and match.signature.is_acceptance

    def get_signed_by_name(self, match: Match) -> str:
        return match.signature.name if match.signature else ""

    def get_decision(self, match: Match) -> str:
        return match.signature.decision if match.signature else ""


class ReportVerifyResultSerializer(serializers.Serializer):
    sha256 = serializers.CharField()
    matched = serializers.BooleanField(help_text="Whether the file is one of the project's report files.")
    matches = ReportMatchSerializer(many=True)
