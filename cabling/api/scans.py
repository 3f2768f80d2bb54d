"""POST /api/scans/: every scan, from the floor page, its offline queue, a script or a scanner app, through
cabling.services.scan_record. 201 with the recorded event; 200 with the same answer and `"replayed": true`
when its idempotency key was recorded before (once, however many replays race). GET /api/scans/ lists the
scans newest first (filters: project, user, action, result, cable, device), GET /api/scans/<id>/ reads one.

Scans write: technicians and managers (EDIT_INVENTORY); a customer gets 403, someone outside the project
404 (the project is checked before the rest of the payload is read). Bad input is a 400 in the one error
shape (core.api.exceptions), never a 500."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.response import Response

from core.api.pagination import BigListPagination
from inventory.models import Optic, Port
from projects.access import Capability, project_to_write

from ..models import Cable, ScanEvent
from ..scan_selectors import scan_list, scan_list_rows
from ..services import ScanOutcome, scan_record
from ..sql import cable_ends_with_places, device_with_place
from .filters import ScanEventFilterSet
from .serializers import ScanEventSerializer, ScanInputSerializer

SCANNING = Capability.EDIT_INVENTORY
NOT_ALLOWED = "Only the project's technicians and managers scan."


class ScanPagination(BigListPagination):
    """Newest first, by cursor: a page costs the same at the millionth scan as at the first."""

    ordering = ("-created_at", "-id")
    page_size = 50


def scan_answer(outcome: ScanOutcome) -> Response:
    """The event as every scan answer shows it. A new event carries the rows the scan read and wrote, as
    they are now, so little or nothing is read again; a replay reads its event back."""
    event = scan_list_rows().get(pk=outcome.event.pk) if outcome.replayed else completed(outcome.event)
    body = ScanEventSerializer(event, context={"replayed": outcome.replayed}).data
    return Response(body, status=status.HTTP_200_OK if outcome.replayed else status.HTTP_201_CREATED)


def completed(event: ScanEvent) -> ScanEvent:
    """Load what the answer shows and the scan did not already hold (a lookup's device, port or cable)."""

    def holds(relation: str, *inner: str) -> bool:
        if not getattr(ScanEvent, relation).is_cached(event):
            return False
        obj = getattr(event, relation)
        return all(getattr(type(obj), name).is_cached(obj) for name in inner)

    if event.device_id and not holds("device", "hardware_model"):
        event.device = device_with_place(device_id=event.device_id)  # written out, as the scan's reads
    if event.optic_id and not holds("optic", "port"):
        event.optic = Optic.objects.select_related("port__device", "installed_by").get(pk=event.optic_id)
    if event.port_id and not holds("port", "device"):
        event.port = Port.objects.select_related("device").get(pk=event.port_id)
    if event.cable_id and not (holds("cable") and hasattr(event.cable, "end_list")):
        if not holds("cable"):
            event.cable = Cable.objects.get(pk=event.cable_id)
        event.cable.end_list = cable_ends_with_places(cable_id=event.cable_id)
    return event


def where_fields(data: dict) -> dict:
    """The validated fields scan_record takes besides project, action and code."""
    names = ("idempotency_key", "scanned_at", "source", "rack", "position_u", "port", "port_code", "end")
    return {name: data[name] for name in names if name in data}


class ScanViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = ScanEventSerializer
    # Reads are scoped by the queryset; the one write, create, is checked by project_to_write in the
    # payload's project (404 outside it, 403 for a role that may not scan), before anything else is read.
    permission_classes = [permissions.IsAuthenticated]
    filterset_class = ScanEventFilterSet
    pagination_class = ScanPagination
    project_path = "project"
    write_capability = SCANNING
    queryset = ScanEvent.objects.none()  # for the schema; get_queryset scopes

    def get_queryset(self):
        return scan_list(user=self.request.user)

    def get_serializer_class(self):
        return ScanInputSerializer if self.action == "create" else ScanEventSerializer

    @extend_schema(
        request=ScanInputSerializer,
        responses={
            201: OpenApiResponse(ScanEventSerializer, description="Recorded (accepted, found, refused or conflict: "
                                 "see result and reason)."),
            200: OpenApiResponse(ScanEventSerializer, description="Recorded before under this idempotency key: the "
                                 "first answer, with replayed true."),
        },
    )
    def create(self, request, *args, **kwargs):
        """Record one scan: look a code up, rack a device, seat an optic or confirm a cable end."""
        # The project first (404 outside it, 403 for a customer), then the rest of the payload.
        code = request.data.get("project") if isinstance(request.data, dict) else None
        project = project_to_write(request.user, code, SCANNING, NOT_ALLOWED)
        given = ScanInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        project = project or project_to_write(request.user, data["project"], SCANNING, NOT_ALLOWED)
        outcome = scan_record(user=request.user, project=project, action=data["action"], code=data["code"],
                              **where_fields(data))
        return scan_answer(outcome)
