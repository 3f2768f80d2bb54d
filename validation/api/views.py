"""Check-run endpoints. GET /api/check-runs/ and /api/check-results/ list (filtered by the same FilterSets as
the pages, a constant number of queries; the results in cursor pages, core.api.pagination) and read;
POST /api/check-runs/ starts a run (services.check_run_start: 201, or 400 naming the field: a service's
refusal rises to the one exception handler, core.api.exceptions); POST /api/check-runs/{id}/cancel/ and
/api/check-runs/{id}/rerun-failed/ stop a run or repeat its failures. Outsiders get 404 (the querysets and
the project lookup are scoped by projects.access); customers 403 on every write (Capability.RUN_CHECKS)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import permissions, status
from rest_framework.decorators import action
from rest_framework.response import Response

from core.api.pagination import BigListPagination
from projects.access import Capability, project_to_write
from projects.api.permissions import ProjectScopedViewSet

from .. import selectors, services
from ..filters import CheckResultFilterSet, CheckRunFilterSet
from ..models import CheckResult, CheckRun
from .serializers import (
    CheckResultDetailSerializer,
    CheckResultSerializer,
    CheckRunDetailSerializer,
    CheckRunSerializer,
    CheckRunStartSerializer,
)

NOT_ALLOWED = "Your role in this project does not allow running checks."


class CheckRunViewSet(ProjectScopedViewSet):
    """Check runs of the user's projects, newest first, with their progress and verdict counts."""

    queryset = CheckRun.objects.none()  # for the schema; get_queryset scopes
    filterset_class = CheckRunFilterSet
    write_capability = Capability.RUN_CHECKS
    http_method_names = ["get", "post", "head", "options"]

    def get_queryset(self):
        if self.action == "list":
            return selectors.check_run_list_light(user=self.request.user)
        return selectors.check_run_list(user=self.request.user)

    def get_serializer_class(self):
        if self.action == "create":
            return CheckRunStartSerializer
        return CheckRunSerializer if self.action == "list" else CheckRunDetailSerializer

    def get_permissions(self):
        if self.action == "create":
            # The project is in the payload: create() answers 404 for a project the user cannot see
            # before it answers 403 for a role, so an outsider learns nothing.
            return [permissions.IsAuthenticated()]
        return super().get_permissions()

    @extend_schema(request=CheckRunStartSerializer, responses={201: CheckRunDetailSerializer})
    def create(self, request, *args, **kwargs):
        """Start a run: one pending result per target, executed by the workers (eagerly without a broker)."""
        code = request.data.get("project") if hasattr(request.data, "get") else None
        project = project_to_write(request.user, code, self.write_capability, NOT_ALLOWED)
        data = CheckRunStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)  # without a project code it stops here
        run = services.check_run_start(
            project=project,
            kind=data.validated_data["kind"],
            runner=data.validated_data["runner"],
            options=data.validated_data["options"],
            requested_by=request.user,
        )
        return Response(CheckRunDetailSerializer(self._read_back(run)).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: CheckRunDetailSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop scheduling: targets not yet started are cancelled; running ones finish and are kept."""
        run = self.get_object()  # 404 outside the user's projects, 403 without RUN_CHECKS
        services.check_run_cancel(run=run, user=request.user)
        return Response(CheckRunDetailSerializer(self._read_back(run)).data)

    @extend_schema(request=None, responses={201: CheckRunDetailSerializer})
    @action(detail=True, methods=["post"], url_path="rerun-failed")
    def rerun_failed(self, request, pk=None):
        """A new run (child of this one) that repeats only the targets that failed or could not be measured."""
        run = self.get_object()
        child = services.check_run_rerun_failed(run=run, requested_by=request.user)
        return Response(CheckRunDetailSerializer(self._read_back(child)).data, status=status.HTTP_201_CREATED)

    def _read_back(self, run: CheckRun) -> CheckRun:
        """The row as a read shows it (progress and verdict counts), after the service changed it."""
        return selectors.check_run_list(user=self.request.user).get(pk=run.pk)


class CheckResultViewSet(ProjectScopedViewSet):
    """One row per target of a run: verdict, reasons, parsed metrics, what it concerns. Filter by project,
    run, kind, verdict, status, network, plane, rack, device, port or cable."""

    queryset = CheckResult.objects.none()
    filterset_class = CheckResultFilterSet
    # Half a million results for one 1,024-node matrix run: numbered pages would COUNT them all and walk an
    # OFFSET; a cursor in id order costs the same at any depth (`next` until null, no total).
    pagination_class = BigListPagination
    project_path = "run__project"
    write_capability = Capability.RUN_CHECKS
    http_method_names = ["get", "head", "options"]

    def get_queryset(self):
        results = selectors.check_result_list_visible(user=self.request.user)
        if self.action == "retrieve":
            return results.defer(None).select_related("run__project")
        return results

    def get_serializer_class(self):
        return CheckResultSerializer if self.action == "list" else CheckResultDetailSerializer


def register(router) -> None:
    router.register("check-runs", CheckRunViewSet, basename="check-run")
    router.register("check-results", CheckResultViewSet, basename="check-result")
