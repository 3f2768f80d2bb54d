"""Port traces and connections, NetBox-style: where a port's cable goes.

- `GET /api/traces/<port id>/`: the trace of one port: the port, then each cable leaving it (its own, its
  lanes' own, or, for a lane of a breakout's whole-port end, its physical port's) with the cable's far
  ends: a GPU port with a breakout cable reaches every leaf lane of it.
- `GET /api/traces/?project=CODE&device=<id>&cable=<label>`: every cabled port the user may see, each
  with its cable and far ends (device, port, lane, plane, rack, U, end tag, the optic seated): the cable
  ends' list, a port per end, in cursor pages in port id order (core.api.pagination.BigListPagination).

Scoped like everything else (projects.access): a port outside the user's projects is a 404 and never
listed. Read-only; a constant number of queries per page or trace (cabling.selectors.port_connections).
"""

from __future__ import annotations

import re

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, permissions, serializers, viewsets
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from core.api.pagination import BigListPagination
from inventory.models import Port
from projects.access import scope_to_user

from ..choices import CableStatus, FabricState
from ..selectors import port_connections, port_trace
from .serializers import CableStatusField, FabricStateField  # one enum component each in the schema

MAX_FILTER = 120  # a project code or a cable label longer than this is not one
ID = re.compile(r"[0-9]{1,12}")  # ASCII digits, few: int() of anything else is refused, never a 500


class TraceEndSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The cable end's id.")
    side = serializers.CharField(help_text="A or B.")
    position = serializers.IntegerField(help_text="Leg of a breakout's B side, from 0.")
    leg = serializers.CharField(help_text="A, B, or B1, B2... on a breakout, as the end's label prints it.")
    code = serializers.CharField(help_text="The end code its label holds: C00417/A, C00417/B2.")
    rack = serializers.CharField()
    top_u = serializers.IntegerField(allow_null=True, help_text="The device's top rack unit.")
    device = serializers.CharField()
    device_id = serializers.IntegerField()
    port = serializers.CharField()
    port_id = serializers.IntegerField()
    lane = serializers.IntegerField(allow_null=True, help_text="Lane number when the end is on a breakout lane.")
    plane = serializers.IntegerField(allow_null=True)
    tag = serializers.CharField(help_text="The end tag printed under the label: rack-U-device-port.")
    optic = serializers.CharField(help_text="Serial of the optic seated for this end (in its port or its cage).")
    confirmed_at = serializers.DateTimeField(allow_null=True, help_text="When a scan confirmed the end.")


class TraceCableSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    label = serializers.CharField()
    status = CableStatusField(choices=CableStatus.choices)
    network = serializers.CharField()
    plane = serializers.IntegerField(allow_null=True)
    cable_type = serializers.CharField()
    length_m = serializers.DecimalField(max_digits=6, decimal_places=1)
    fabric_state = FabricStateField(choices=FabricState.choices, allow_blank=True,
                                    help_text="Latest fabric comparison; blank: never seen.")


class ConnectionSerializer(serializers.Serializer):
    end = TraceEndSerializer(help_text="The cable's end on this port (or on its physical port, via_parent).")
    cable = TraceCableSerializer()
    far_ends = TraceEndSerializer(source="far", many=True, help_text="Every end on the other side of the cable.")
    via_parent = serializers.BooleanField(
        help_text="The cable sits on the lane's physical port (a breakout's A end): far_ends is this lane's leg.")


class TracePortSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    device = serializers.CharField(source="device.name")
    device_id = serializers.IntegerField()
    name = serializers.CharField()
    lane = serializers.IntegerField(allow_null=True)
    plane = serializers.IntegerField(allow_null=True)
    parent_id = serializers.IntegerField(allow_null=True, help_text="The physical port of a lane.")
    status = serializers.CharField()


class PortConnectionSerializer(TracePortSerializer):
    connection = ConnectionSerializer(allow_null=True)


class TraceSegmentSerializer(serializers.Serializer):
    from_port = TracePortSerializer(source="port", help_text="Where the cable leaves.")
    end = TraceEndSerializer(source="connection.end")
    cable = TraceCableSerializer(source="connection.cable")
    far_ends = TraceEndSerializer(source="connection.far", many=True)
    via_parent = serializers.BooleanField(source="connection.via_parent")


class TraceSerializer(serializers.Serializer):
    port = TracePortSerializer()
    segments = TraceSegmentSerializer(many=True)


@extend_schema_view(
    list=extend_schema(
        summary="Cabled ports with their cable and far ends",
        parameters=[
            OpenApiParameter("project", OpenApiTypes.STR, description="Project code."),
            OpenApiParameter("device", OpenApiTypes.INT, description="Device id."),
            OpenApiParameter("cable", OpenApiTypes.STR, description="Cable label (exact)."),
        ],
        responses=PortConnectionSerializer(many=True),
    ),
    retrieve=extend_schema(summary="Trace a port through its cable(s) to every far end", responses=TraceSerializer),
)
class PortTraceViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    permission_classes = [permissions.IsAuthenticated]
    serializer_class = PortConnectionSerializer
    queryset = Port.objects.none()  # for the schema; get_queryset scopes
    filter_backends: list = []  # the filters below are read by hand, bounded
    pagination_class = BigListPagination

    def get_queryset(self) -> QuerySet[Port]:
        ports = scope_to_user(Port.objects.filter(cable_end__isnull=False), self.request.user, "device__project")
        params = self.request.query_params
        project, device, cable = (params.get(name, "") for name in ("project", "device", "cable"))
        for name, value in (("project", project), ("cable", cable)):
            if len(value) > MAX_FILTER:
                raise ValidationError({name: [f"{len(value):,} characters: too long to name anything."]})
            if "\x00" in value:  # PostgreSQL refuses NUL in any text: a 500 if it reached the query
                raise ValidationError({name: ["A NUL character (\\x00) names nothing."]})
        if project:
            ports = ports.filter(device__project__code=project)
        if device:
            if not ID.fullmatch(device):
                raise ValidationError({"device": ["A device id is a number."]})
            ports = ports.filter(device_id=int(device))
        if cable:
            ports = ports.filter(cable_end__cable__label=cable)
        return ports.select_related("device").order_by("id")  # the cursor's order

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        connections = port_connections(page)
        for port in page:
            port.connection = connections.get(port.pk)
        return self.get_paginated_response(PortConnectionSerializer(page, many=True).data)

    def retrieve(self, request, *args, **kwargs):
        pk = str(kwargs.get("pk", ""))
        if not ID.fullmatch(pk):  # a path naming no port: what any other detail route answers
            raise NotFound("No port has this id.")
        return Response(TraceSerializer(port_trace(user=request.user, pk=int(pk))).data)


def register(router) -> None:
    """Add this module's viewsets to the one API router (bringup/api_urls.py)."""
    router.register("traces", PortTraceViewSet, basename="port-trace")
