"""GET /api/cables/ (filters: project, network, plane, status, rack, device, label, q; cursor pages in id order,
`?page_size=` up to 500: core.api.pagination) and
/api/cables/<id>/: each cable with its ends, each end with its rack, U, device, port, lane, plane, the
optic in its port, who confirmed it, and its far ends. Actions: POST /api/cables/<id>/scan/ (a cable_end
scan of this cable: the same payload and answer as POST /api/scans/) and POST /api/cables/<id>/status/
({status: planned|installed|faulty, reason}; never verified: that is what scans and the fabric say).
Writes need EDIT_INVENTORY (technicians and managers)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core.api.pagination import BigListPagination
from projects.access import Capability
from projects.api.permissions import ProjectRolePermission

from ..choices import ScanAction
from ..models import Cable
from ..scan_selectors import cable_list_for_api
from ..services import cable_status_set, scan_record
from .filters import CableApiFilterSet
from .scans import scan_answer, where_fields
from .serializers import CableScanInputSerializer, CableSerializer, CableStatusInputSerializer, ScanEventSerializer


class CableViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = CableSerializer
    permission_classes = [permissions.IsAuthenticated, ProjectRolePermission]
    filterset_class = CableApiFilterSet
    pagination_class = BigListPagination
    project_path = "project"
    write_capability = Capability.EDIT_INVENTORY
    queryset = Cable.objects.none()  # for the schema; get_queryset scopes

    def get_queryset(self):
        return cable_list_for_api(user=self.request.user).select_related("project")

    def get_serializer_class(self):
        inputs = {"scan": CableScanInputSerializer, "status": CableStatusInputSerializer}
        return inputs.get(self.action, CableSerializer)

    @extend_schema(
        request=CableScanInputSerializer,
        responses={201: ScanEventSerializer, 200: OpenApiResponse(ScanEventSerializer, description="A replay.")},
    )
    @action(detail=True, methods=["post"])
    def scan(self, request, pk=None):
        """Confirm an end of this cable where you are (port or port_code): a cable_end scan."""
        cable = self.get_object()  # 404 outside the user's projects, 403 for a customer
        given = CableScanInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        outcome = scan_record(user=request.user, project=cable.project, action=ScanAction.CABLE_END,
                              code=data.get("code") or cable.label, cable=cable, **where_fields(data))
        return scan_answer(outcome)

    @extend_schema(request=CableStatusInputSerializer, responses={200: CableSerializer})
    @action(detail=True, methods=["post"])
    def status(self, request, pk=None):
        """Set the cable's status by hand (planned, installed, faulty), with the reason."""
        cable = self.get_object()
        given = CableStatusInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        cable_status_set(cables=[cable], status=given.validated_data["status"], user=request.user,
                         reason=given.validated_data.get("reason", ""))
        return Response(CableSerializer(self.get_queryset().get(pk=cable.pk)).data)
