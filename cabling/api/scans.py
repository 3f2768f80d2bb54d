"""POST /api/scans/: every scan, from the floor page, its offline queue, a script or a scanner app, through
cabling.services.scan_record. 201 with the recorded event; 200 with the same answer and `"replayed": true`
when its idempotency key was recorded before (once, however many replays race). GET /api/scans/ lists the
scans newest first (filters: project, user, action, result, cable, device), GET /api/scans/<id>/ reads one.

The answer to a scan about a cable also says what the floor does next with it, as it stands now (`next`):
the end to confirm next and where (rack, top U, device, port, the port's label to scan), every end still
to confirm (A, then B, or B1, B2, ... of a breakout), and who verified the cable and when. The floor page
shows only that, whatever it showed before.

Scans write: technicians and managers (EDIT_INVENTORY); a customer gets 403, someone outside the project
404 (the project is checked before the rest of the payload is read). Bad input is a 400 in the one error
shape (core.api.exceptions), never a 500."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.response import Response

from core.api.pagination import BigListPagination
from inventory.models import Optic, Port
from projects.access import Capability, project_to_write

from ..models import Cable, ScanEvent
from ..scan_selectors import scan_list, scan_list_rows
from ..services import ScanOutcome, scan_record
from ..services.scans import cable_verification, end_expected, ends_to_confirm
from ..sql import cable_ends_with_places, device_with_place
from .filters import ScanEventFilterSet
from .serializers import ScanEventSerializer, ScanInputSerializer

SCANNING = Capability.EDIT_INVENTORY
NOT_ALLOWED = "Only the project's technicians and managers scan."


class ScanPagination(BigListPagination):
    """Newest first, by cursor: a page costs the same at the millionth scan as at the first."""

    ordering = ("-created_at", "-id")
    page_size = 50


# --- what a scan answers: the event, and the next step on the floor ----------------------------------------

_DATETIME = serializers.DateTimeField()
NEXT_END_FIELDS = ("id", "code", "side", "position", "rack", "top_u", "device", "device_id", "port", "port_id",
                   "lane", "plane")


class ScanNextEndSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField(help_text="The end's label: C00417/A, C00417/B, C00417/B2.")
    leg = serializers.CharField(help_text="A, B, or B1, B2, ... on a breakout.")
    side = serializers.CharField()
    position = serializers.IntegerField(help_text="Leg of a breakout, from 0.")
    rack = serializers.CharField(allow_null=True)
    top_u = serializers.IntegerField(allow_null=True)
    device = serializers.CharField()
    device_id = serializers.IntegerField()
    port = serializers.CharField()
    port_id = serializers.IntegerField()
    port_code = serializers.CharField(help_text="The port's label, to scan there: device:port.")
    lane = serializers.IntegerField(allow_null=True)
    plane = serializers.IntegerField(allow_null=True)


class CableVerificationSerializer(serializers.Serializer):
    how = serializers.CharField(help_text="scan (every end confirmed by scan) or fabric (its link seen ok).")
    by = serializers.CharField(allow_null=True, help_text="Username of who confirmed the last end (scan).")
    by_name = serializers.CharField(allow_null=True, help_text="Their name, as the floor shows it (scan).")
    at = serializers.DateTimeField(allow_null=True)


class ScanNextSerializer(serializers.Serializer):
    cable = serializers.CharField(help_text="The cable's label.")
    expected = ScanNextEndSerializer(
        allow_null=True, help_text="The end to confirm next: the one the scan was about while it is still to "
        "confirm, else the first end still to confirm (A, then B or B1, B2, ...); null when none is.")
    left = ScanNextEndSerializer(many=True, help_text="Every end still to confirm, in that order.")
    verified = CableVerificationSerializer(allow_null=True, help_text="Who verified the cable and when; null "
                                           "while it is not verified.")


class ScanAnswerSerializer(ScanEventSerializer):
    """A scan's answer: the event, and what the floor does next with the cable it was about."""

    next = ScanNextSerializer(allow_null=True, help_text="The cable's next step, as it stands after this scan "
                              "(null: the scan was about no cable).")

    def to_representation(self, instance):
        body = super().to_representation(instance)
        body["next"] = next_payload(instance, body["cable"]) if instance.cable_id else None
        return body


def next_payload(event: ScanEvent, shown: dict) -> dict:
    """The next step on the floor with the event's cable (its ends loaded, `shown` as the answer shows
    it): which end to confirm next and where, every end still to confirm, and who verified it and when."""
    cable = event.cable
    ends = cable.end_list
    by_id = {end["id"]: end for end in shown["ends"]}

    def step(end) -> dict:
        place = by_id[end.pk]
        return {**{name: place[name] for name in NEXT_END_FIELDS}, "leg": place["code"].rpartition("/")[2],
                "port_code": f"{place['device']}:{place['port']}"}

    left = [step(end) for end in ends_to_confirm(cable, ends)]
    expected = end_expected(cable, ends, named_id=event.cable_end_id)
    return {
        "cable": cable.label,
        "expected": next(s for s in left if s["id"] == expected.pk) if expected else None,
        "left": left,
        "verified": verification_payload(cable),
    }


def verification_payload(cable: Cable) -> dict | None:
    verified = cable_verification(cable)
    if verified is None:
        return None
    return {"how": verified.how, "by": verified.by.get_username() if verified.by else None,
            "by_name": verified.by_name, "at": _DATETIME.to_representation(verified.at) if verified.at else None}


def scan_answer(outcome: ScanOutcome, answer: type[ScanEventSerializer] = ScanEventSerializer) -> Response:
    """The event as every scan answer shows it (`answer`: ScanAnswerSerializer adds the cable's next step). A
    new event carries the rows the scan read and wrote, as they are now, so little or nothing is read again;
    a replay reads its event back (and its cable as it is now)."""
    event = scan_list_rows().get(pk=outcome.event.pk) if outcome.replayed else completed(outcome.event)
    body = answer(event, context={"replayed": outcome.replayed}).data
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
            201: OpenApiResponse(ScanAnswerSerializer, description="Recorded (accepted, found, refused or conflict: "
                                 "see result and reason), with the cable's next step."),
            200: OpenApiResponse(ScanAnswerSerializer, description="Recorded before under this idempotency key: the "
                                 "first answer, with replayed true (the next step as it stands now)."),
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
        return scan_answer(outcome, ScanAnswerSerializer)
