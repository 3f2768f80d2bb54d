"""POST /api/uploads/ for nodes (and scripts) sending a tool's output; GET lists and reads uploads.

Three ways to send, all with `Authorization: Token <key>` (or a session):
  - multipart: fields project, host, optional tool, and the file in `file`;
  - JSON: {"project", "host", "tool", "text"};
  - the raw output as the body with Content-Type text/plain, and project, host, tool in the query string:
    curl -H "Authorization: Token $KEY" -H "Content-Type: text/plain" --data-binary @mlxlink.txt \
         "https://bringup.example/api/uploads/?project=ACME-72&host=$(hostname -s)"
The answer is the upload (201), queued for parsing: GET it (or its page) for the results or the error. Outsiders get
404 for the project, members who may not run checks 403, a bad field 400 naming it.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import mixins, parsers, serializers, status, viewsets
from rest_framework.response import Response

from core.api.parsers import BoundedJSONParser, BoundedMultiPartParser, BoundedRawParser
from core.choices import JobStatus
from projects.access import Capability, project_to_write, scope_to_user
from projects.api.node_tokens import UserOrNodeToken
from projects.choices import NodeScope

from ..choices import UploadSource
from ..models import ToolUpload
from .services import UPLOAD_TOOLS, tool_upload_create

TOOL_FIELD_CHOICES = ["auto", *UPLOAD_TOOLS]
NOT_ALLOWED = "Your role in this project does not allow uploading tool outputs."


class PlainTextParser(BoundedRawParser):
    """The body exactly as sent (the stored file must be what the tool printed), as a file: copied to disk
    in chunks past a small size, refused (413) past UPLOAD_MAX_BYTES before the rest is read."""

    media_type = "text/plain"


class ToolUploadResultSerializer(serializers.Serializer):
    target_key = serializers.CharField()
    port = serializers.CharField(allow_null=True)
    verdict = serializers.CharField()
    reasons = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))


class ToolUploadSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.code", read_only=True)
    device = serializers.CharField(source="device.name", read_only=True, allow_null=True)
    uploaded_by = serializers.CharField(source="requested_by.username", read_only=True, allow_null=True)
    # Plain strings in the schema: other endpoints' `status` and `source` enums hold other values.
    status = serializers.CharField(
        read_only=True, help_text=f"One of: {', '.join(JobStatus.values)} (done: parsed and filed)."
    )
    status_label = serializers.CharField(read_only=True)
    error = serializers.CharField(read_only=True, help_text="Why the file could not be read (with its line).")
    source = serializers.CharField(read_only=True, help_text=f"One of: {', '.join(UploadSource.values)}.")
    url = serializers.SerializerMethodField()

    class Meta:
        model = ToolUpload
        fields = [
            "id", "url", "project", "host", "device", "original_name", "size_bytes", "tool_requested", "tool",
            "source", "status", "status_label", "error", "error_line", "result_count", "counts", "run", "uploaded_by",
            "created_at", "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, upload) -> str:
        path = reverse("uploads:detail", args=[upload.project.code, upload.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path


class ToolUploadDetailSerializer(ToolUploadSerializer):
    results = serializers.SerializerMethodField()

    class Meta(ToolUploadSerializer.Meta):
        fields = [*ToolUploadSerializer.Meta.fields, "results"]
        read_only_fields = fields

    @extend_schema_field(ToolUploadResultSerializer(many=True))
    def get_results(self, upload) -> list[dict]:
        if upload.run_id is None:
            return []
        rows = upload.run.results.select_related("port").only("target_key", "port__name", "verdict", "reasons")
        return [
            {"target_key": r.target_key, "port": r.port.name if r.port else None, "verdict": r.verdict,
             "reasons": r.reasons}
            for r in rows.order_by("id")
        ]


class ToolUploadCreateSerializer(serializers.Serializer):
    project = serializers.CharField(help_text="The project code.")
    host = serializers.CharField(max_length=200, help_text="The node the output was captured on.")
    tool = serializers.ChoiceField(choices=TOOL_FIELD_CHOICES, default="auto", required=False)
    file = serializers.FileField(required=False, help_text="The output as a file (multipart).")
    text = serializers.CharField(required=False, trim_whitespace=False, help_text="The output as text (JSON).")


def _is_raw_body(request) -> bool:
    return request.content_type.split(";")[0].strip().lower() == PlainTextParser.media_type


def _content(request, fields) -> tuple[bytes, str | None]:
    """The output's bytes and file name, from the raw body, the multipart file or the JSON text."""
    if _is_raw_body(request):
        body = request.data  # the spooled file; DRF skips parsing an empty body
        if not hasattr(body, "read"):
            return b"", None
        with body:  # bounded by the parser: at most UPLOAD_MAX_BYTES
            return body.read(), None
    if fields.get("file") is not None:
        upload = fields["file"]
        return upload.read(), upload.name
    if fields.get("text"):
        return fields["text"].encode("utf-8"), None
    raise ValidationError({"file": "Send the output as `file` (multipart), `text` (JSON) or a text/plain body."})


class ToolUploadViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    # People, or a node token with the uploads scope (create only); create checks the project (404) and role (403).
    permission_classes = [UserOrNodeToken.for_scope(NodeScope.UPLOADS, actions=["create"])]
    write_capability = Capability.RUN_CHECKS
    parser_classes = [BoundedJSONParser, BoundedMultiPartParser, parsers.FormParser, PlainTextParser]
    queryset = ToolUpload.objects.none()  # for the schema; get_queryset scopes
    filterset_fields = ["status", "tool", "host"]

    def get_queryset(self):
        uploads = scope_to_user(ToolUpload.objects.all(), self.request.user)
        project = self.request.query_params.get("project") if self.action == "list" else None
        if project:
            uploads = uploads.filter(project__code=project)
        related = ["project", "device", "requested_by"] + (["run"] if self.action != "list" else [])
        return uploads.select_related(*related).order_by("-created_at", "-id")

    def get_serializer_class(self):
        return ToolUploadSerializer if self.action == "list" else ToolUploadDetailSerializer

    @extend_schema(
        request={
            "multipart/form-data": ToolUploadCreateSerializer,
            "application/json": ToolUploadCreateSerializer,
            "text/plain": OpenApiTypes.STR,
        },
        parameters=[
            OpenApiParameter("project", str, description="Project code (text/plain bodies only)."),
            OpenApiParameter("host", str, description="Host name (text/plain bodies only)."),
            OpenApiParameter("tool", str, enum=TOOL_FIELD_CHOICES, description="Tool (text/plain bodies only)."),
        ],
        responses={201: ToolUploadDetailSerializer},
    )
    def create(self, request, *args, **kwargs):
        """Send one tool output; it is kept as sent and parsed into check results."""
        fields = ToolUploadCreateSerializer(data=request.query_params if _is_raw_body(request) else request.data)
        code = fields.initial_data.get("project") if hasattr(fields.initial_data, "get") else None
        project = project_to_write(request.user, code, self.write_capability, NOT_ALLOWED)
        fields.is_valid(raise_exception=True)  # without a project code it stops here
        if project is None:  # a code sent as a JSON number (0, 12): the text the serializer read from it
            project = project_to_write(request.user, fields.validated_data["project"], self.write_capability,
                                       NOT_ALLOWED)
        data, filename = _content(request, fields.validated_data)
        upload = tool_upload_create(  # a refusal answers 400 naming the field (core.api.exceptions)
            project=project,
            user=request.user,
            host=fields.validated_data["host"],
            data=data,
            filename=filename,
            tool=fields.validated_data.get("tool"),
            source=UploadSource.API,
        )
        upload = self.get_queryset().get(pk=upload.pk)  # parsed already when tasks run eagerly
        body = ToolUploadDetailSerializer(upload, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})
