"""The acceptance report's API (registered in bringup/api_urls.py):

- GET /api/report-versions/ (?project=CODE, ?signed=true, ?state=issued) and /api/report-versions/<id>/:
  versions with their state, progress, figures, files (size, SHA-256, download URL) and the customer's decision;
- POST /api/report-versions/ {"project": CODE}: request a version (managers); 202 with the row and its job
  status URL (/api/jobs/delivery.reportversion/<id>/), rendered by a task. After an acceptance it is an
  as-built addendum to the accepted version (400 when nothing changed since);
- POST /api/report-versions/<id>/issue/: a manager issues a rendered draft for acceptance (400 naming each stage
  whose gate fails with no waiver covering it; an issued version nobody decided on is superseded);
- POST /api/report-versions/<id>/sign/ {"name", "title", "statement"?, "decision"?, "comments"?}: the customer
  accepts an issued version, plainly or with exceptions (a member with the customer role only; managers and
  staff are refused, in words; 400 for a version not issued, naming why);
- POST /api/report-versions/<id>/reject/ {"name", "title", "comments"}: the customer rejects an issued version;
- GET /api/report-versions/<id>/files/<kind>/: a file (pdf, summary_pdf, xlsx, signed_pdf, signed_xlsx) as an
  attachment; 404 when not rendered;
- POST /api/report-versions/verify/ with {"project": CODE, "sha256": "..."} or a multipart `file`: which
  version and file it is (any member: the customer checks what they were sent).

Outsiders get 404 for every version and project, as for everything else (projects.access)."""

from __future__ import annotations

import django_filters
from django.db.models import Q
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, status
from rest_framework.decorators import action
from rest_framework.response import Response

from core.api.views import project_code_in_body
from core.filters import FilterSet
from delivery.choices import ACCEPTED_REPORT_STATES, ReportState
from delivery.models import (
    CONTENT_TYPES,
    FILE_KINDS,
    PDF_CONTENT_TYPE,
    XLSX_CONTENT_TYPE,
    FileKind,
    ReportVersion,
)
from delivery.reports.sections import acceptance_statement_default
from delivery.reports.selectors import report_versions_visible
from delivery.reports.serializers import (
    ReportRejectSerializer,
    ReportSignSerializer,
    ReportVerifyHashSerializer,
    ReportVerifyResultSerializer,
    ReportVerifySerializer,
    ReportVersionRequestSerializer,
    ReportVersionSerializer,
)
from delivery.reports.services import (
    file_sha256,
    report_hash_match,
    report_version_issue,
    report_version_reject,
    report_version_request,
    report_version_sign,
    sha256_normalised,
)
from projects.access import Capability, project_to_write, visible_projects
from projects.api.permissions import ProjectScopedViewSet

NOT_ALLOWED = "Only the project's managers may request a version of the acceptance report."


class ReportVersionFilterSet(FilterSet):
    # A code, not a model choice: a choice field would read the table and tell an outsider the project exists.
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    signed = django_filters.BooleanFilter(method="filter_signed", label="Accepted and signed by the customer")
    state = django_filters.ChoiceFilter(choices=ReportState.choices, label="State")

    class Meta:
        model = ReportVersion
        fields = ["project", "signed", "state"]

    def filter_signed(self, queryset, name, value):
        if value is None:
            return queryset
        accepted = Q(state__in=ACCEPTED_REPORT_STATES)
        return queryset.filter(accepted) if value else queryset.exclude(accepted)


# A body the parsers cannot take (no or an unknown content type) is a 415 before the view runs.
UNSUPPORTED = OpenApiResponse(OpenApiTypes.OBJECT, description="Unsupported media type: send JSON or a form.")


class ReportVersionViewSet(ProjectScopedViewSet):
    """Versions of the acceptance report in the user's projects, newest first."""

    queryset = ReportVersion.objects.none()  # for the schema; get_queryset scopes
    serializer_class = ReportVersionSerializer
    filterset_class = ReportVersionFilterSet
    write_capability = Capability.MANAGE_PROJECT
    http_method_names = ["get", "post", "head", "options"]

    def get_queryset(self):
        return report_versions_visible(self.request.user)

    def get_permissions(self):
        # create: the project is in the payload (404 for a project the user cannot see before a 403 for a role);
        # sign, reject and verify: customers act there, and the services say who may.
        if self.action in ("create", "sign", "reject", "verify"):
            return [permissions.IsAuthenticated()]
        return super().get_permissions()

    def _read_back(self, version: ReportVersion) -> dict:
        row = report_versions_visible(self.request.user).get(pk=version.pk)
        return ReportVersionSerializer(row, context=self.get_serializer_context()).data

    @extend_schema(request=ReportVersionRequestSerializer, responses={202: ReportVersionSerializer, 415: UNSUPPORTED})
    def create(self, request, *args, **kwargs):
        """Request a new version: numbered after the last, a draft rendered by a worker; poll `status_url`. After
        an acceptance the new version is an as-built addendum to the accepted one (refused when nothing changed
        since the acceptance)."""
        project = project_to_write(request.user, project_code_in_body(request), self.write_capability, NOT_ALLOWED)
        ReportVersionRequestSerializer(data=request.data).is_valid(raise_exception=True)  # no project: stops here
        version = report_version_request(project=project, user=request.user)
        return Response(self._read_back(version), status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={200: ReportVersionSerializer, 415: UNSUPPORTED})
    @action(detail=True, methods=["post"])
    def issue(self, request, pk=None):
        """A manager issues this rendered draft for acceptance: the customer may then accept or reject it.
        Refused (400) while a stage before acceptance has a failing gate that no waiver covers, each named with
        what is left. An issued version the customer has not decided on is superseded by this one."""
        version = self.get_object()  # 404 outside the user's projects, 403 for a role that does not manage
        report_version_issue(version=version, user=request.user)
        return Response(self._read_back(version))

    @extend_schema(request=ReportSignSerializer, responses={200: ReportVersionSerializer, 415: UNSUPPORTED})
    @action(detail=True, methods=["post"])
    def sign(self, request, pk=None):
        """The customer accepts this issued version, signing it: a member with the customer role, once per
        project. `decision` accepted_with_exceptions records every open punch item and waiver in the signature
        and on the signed copy (plain `accepted` is refused while there are some). The acceptance stage then
        completes, and the signed copies are rendered (the signature's `status_url`). A version not issued
        (a draft, superseded, rejected) answers 400 saying why."""
        version = self.get_object()  # 404 outside the user's projects
        data = ReportSignSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        statement = data.validated_data.get("statement") or acceptance_statement_default(version.project)
        report_version_sign(version=version, user=request.user, name=data.validated_data["name"],
                            title=data.validated_data["title"], statement=statement,
                            decision=data.validated_data["decision"],
                            comments=data.validated_data.get("comments", ""))
        return Response(self._read_back(version))

    @extend_schema(request=ReportRejectSerializer, responses={200: ReportVersionSerializer, 415: UNSUPPORTED})
    @action(detail=True, methods=["post"])
    def reject(self, request, pk=None):
        """The customer rejects this issued version with comments (required): acceptance stays open, the
        managers are told, and they may issue the next version."""
        version = self.get_object()
        data = ReportRejectSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report_version_reject(version=version, user=request.user, name=data.validated_data["name"],
                              title=data.validated_data["title"], comments=data.validated_data["comments"])
        return Response(self._read_back(version))

    @extend_schema(
        parameters=[OpenApiParameter("kind", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(FileKind.values),
                                     description="Which file.")],
        responses={(200, PDF_CONTENT_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="The file."),
                   (200, XLSX_CONTENT_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="The file.")},
    )
    @action(detail=True, methods=["get"], url_path=r"files/(?P<kind>[a-z_]+)", url_name="file")
    def file(self, request, pk=None, kind=None):
        """One file of the version as an attachment, named <CODE>-acceptance-v<N>[-summary|-signed].pdf/.xlsx;
        404 while it is not rendered."""
        version = self.get_object()
        if kind not in FILE_KINDS or not version.has_file(kind):
            raise Http404("This file of the version is not rendered.")
        try:
            handle = version.file_of(kind).open("rb")
        except FileNotFoundError:  # recorded but gone from storage (restored database, lost volume)
            raise Http404("This file of the version is missing from storage.") from None
        return FileResponse(handle, as_attachment=True, filename=version.file_name(kind),
                            content_type=CONTENT_TYPES[kind])

    @extend_schema(request={"multipart/form-data": ReportVerifySerializer,
                            "application/json": ReportVerifyHashSerializer},
                   responses={200: ReportVerifyResultSerializer, 415: UNSUPPORTED})
    @action(detail=False, methods=["post"])
    def verify(self, request):
        """Which version of the project's report a file is, and which file (original or signed copy), with the
        signature where signed: send the file (multipart `file`) or its `sha256`. An empty `matches`: the file
        is none of them (changed, or from elsewhere)."""
        code = project_code_in_body(request)
        project = get_object_or_404(visible_projects(request.user), code=code) if isinstance(code, str) else None
        data = ReportVerifySerializer(data=request.data)
        data.is_valid(raise_exception=True)  # no project: stops here
        upload = data.validated_data.get("file")
        if upload is not None:
            with upload:
                digest = file_sha256(upload)
        else:
            digest = sha256_normalised(data.validated_data["sha256"])
        matches = report_hash_match(project=project, sha256=digest)
        return Response(ReportVerifyResultSerializer({"sha256": digest, "matched": bool(matches),
                                                      "matches": matches}).data)


def register(router) -> None:
    router.register("report-versions", ReportVersionViewSet, basename="report-version")
