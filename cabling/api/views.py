"""Fabric plan endpoints. POST /api/fabric-plans/preview/ plans a spec for a project and answers with
the figures and the diff (400 naming the spec field when it cannot be planned); POST
/api/fabric-plans/{id}/apply/ confirms it and queues the apply (202); GET lists and reads plans.
Managers only: outsiders get 404, other members 403 (delivery.access)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.response import Response

from delivery.access import Capability, can, projects_where, scope_to_user, visible_projects

from ..choices import FabricPlanSource
from ..models import FabricPlan
from ..plan_selectors import fabric_plans_managed
from ..services import fabric_plan_confirm, fabric_plan_preview
from .serializers import (
    FabricPlanApplySerializer,
    FabricPlanListSerializer,
    FabricPlanPreviewSerializer,
    FabricPlanSerializer,
)

NOT_A_MANAGER = "Only the project's managers may plan its fabric."


def _must_manage(user, project) -> None:
    if not can(user, Capability.MANAGE_PROJECT, project):
        raise PermissionDenied(NOT_A_MANAGER)


class FabricPlanViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = FabricPlanSerializer
    permission_classes = [permissions.IsAuthenticated]
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
            return fabric_plans_managed(user=self.request.user).defer("spec_text", "diff", "errors")
        return scope_to_user(FabricPlan.objects.select_related("project", "created_by", "confirmed_by"),
                             self.request.user)

    def list(self, request, *args, **kwargs):
        if not projects_where(request.user, Capability.MANAGE_PROJECT).exists():
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
        data = FabricPlanPreviewSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = get_object_or_404(visible_projects(request.user), code=data.validated_data["project"])
        _must_manage(request.user, project)
        try:
            row = fabric_plan_preview(project=project, user=request.user, spec_text=data.validated_data["spec"],
                                      source=FabricPlanSource.API)
        except ValidationError as exc:
            raise ApiValidationError({"spec": exc.messages}) from exc
        return Response(FabricPlanSerializer(row).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=FabricPlanApplySerializer, responses={202: FabricPlanSerializer})
    @action(detail=True, methods=["post"])
    def apply(self, request, pk=None):
        """Confirm a previewed plan: its apply is queued (poll the plan until `finished`)."""
        row = self.get_object()
        data = FabricPlanApplySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            fabric_plan_confirm(fabric_plan=row, user=request.user,
                                keep_installed=data.validated_data["keep_installed"])
        except ValidationError as exc:
            detail = exc.message_dict if hasattr(exc, "error_dict") else {"status": exc.messages}
            raise ApiValidationError(detail) from exc
        row.refresh_from_db()
        return Response(FabricPlanSerializer(row).data, status=status.HTTP_202_ACCEPTED)


def register(router) -> None:
    router.register("fabric-plans", FabricPlanViewSet, basename="fabric-plan")
