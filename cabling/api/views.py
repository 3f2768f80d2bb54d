"""The cabling API's routes (`register`): fabric plans here; the floor's cables (cables.py), scans
(scans.py), search (search.py) in their own modules, swaps in cabling.swaps.api.

Fabric plan endpoints. POST /api/fabric-plans/preview/ plans a spec for a project and answers with
the figures and the diff (400 naming the spec field when it cannot be planned); POST
/api/fabric-plans/{id}/apply/ confirms it and queues the apply (202); GET lists and reads plans; the
plan's progress is also at the one job status endpoint, /api/jobs/cabling.fabricplan/{id}/.
Managers only: outsiders get 404, other members 403 (projects.access). The services' refusals reach
the client through the one exception handler (core.api.exceptions), in the one error shape."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from cabling.swaps.api import SwapViewSet
from projects.access import Capability, can, project_to_write, projects_where, scope_to_user

from ..choices import FabricPlanSource
from ..models import FabricPlan
from ..selectors import fabric_plans_managed
from ..services import fabric_plan_confirm, fabric_plan_preview
from .cables import CableViewSet
from .scans import ScanViewSet
from .search import SearchViewSet
from .serializers import (
    FabricPlanApplySerializer,
    FabricPlanListSerializer,
    FabricPlanPreviewSerializer,
    FabricPlanSerializer,
)

NOT_A_MANAGER = "Only the project's managers may plan its fabric."
PLANNING = Capability.MANAGE_PROJECT  # to read plans and to write them


def _must_manage(user, project) -> None:
    if not can(user, PLANNING, project):
        raise PermissionDenied(NOT_A_MANAGER)


class FabricPlanViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = FabricPlanSerializer
    permission_classes = [permissions.IsAuthenticated]
    # What reading and writing need, as the checks below enforce it (the access matrix holds the viewset
    # to it): managers only, both.
    required_capability = write_capability = PLANNING
    queryset = FabricPlan.objects.none()  # for the schema; get_queryset scopes

    def get_serializer_class(self):
        if self.action == "list":
            return FabricPlanListSerializer
        if self.action == "preview":
            return FabricPlanPreviewSerializer
        if self.action == "apply":
            return FabricPlanApplySerializer
        return FabricPlanSerializer

    def get_queryset(self):
        if self.action == "list":
            return fabric_plans_managed(user=self.request.user).defer("spec_text", "diff", "errors", "log")
        return scope_to_user(FabricPlan.objects.select_related("project", "requested_by", "confirmed_by"),
                             self.request.user)

    def list(self, request, *args, **kwargs):
        if not projects_where(request.user, PLANNING).exists():
            raise PermissionDenied(NOT_A_MANAGER)
        return super().list(request, *args, **kwargs)

    def get_object(self):
        row = super().get_object()  # 404 outside the user's projects
        _must_manage(self.request.user, row.project)
        return row

    @extend_schema(request=FabricPlanPreviewSerializer, responses={201: FabricPlanSerializer})
    @action(detail=False, methods=["post"])
    def preview(self, request):
        """Plan the spec for the project and diff it against the project; nothing is applied."""
        # The project first (404 outside it, 403 for a member who does not manage it), then the spec.
        code = request.data.get("project") if isinstance(request.data, dict) else None
        project = project_to_write(request.user, code, PLANNING, NOT_A_MANAGER)
        data = FabricPlanPreviewSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = project or project_to_write(request.user, data.validated_data["project"], PLANNING, NOT_A_MANAGER)
        row = fabric_plan_preview(project=project, user=request.user, spec_text=data.validated_data["spec"],
                                  source=FabricPlanSource.API)
        return Response(FabricPlanSerializer(row).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=FabricPlanApplySerializer, responses={202: FabricPlanSerializer})
    @action(detail=True, methods=["post"])
    def apply(self, request, pk=None):
        """Confirm a previewed plan: its apply is queued (poll the plan until `finished`)."""
        row = self.get_object()
        data = FabricPlanApplySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fabric_plan_confirm(fabric_plan=row, user=request.user, keep_installed=data.validated_data["keep_installed"])
        row.refresh_from_db()
        return Response(FabricPlanSerializer(row).data, status=status.HTTP_202_ACCEPTED)


def register(router) -> None:
    router.register("fabric-plans", FabricPlanViewSet, basename="fabric-plan")
    router.register("cables", CableViewSet, basename="cable")
    router.register("scans", ScanViewSet, basename="scan")
    router.register("search", SearchViewSet, basename="search")
    router.register("swaps", SwapViewSet, basename="swap")
