"""Reads of the cabling app, always scoped to what the user may see: cables and their ends, the ports
with their cable and far end (the device page's ports panel, the trace, the API), the fabric figures,
the floor's progress, scans, fabric plans and label sheet exports.

Cables come in two shapes:
- model instances with their ends prefetched, for the list and detail pages (a page of 50);
- `CableRow`s built from ONE flat `values()` query over cables and their ends, for the exports, which
  must stay fast and small at 30,000 cables (no model instances, no per-row queries).

An end's tag is the planner's (cabling.planner.labels.place_tag, the one place the format is written):
`rack-U-device-port`, with U the device's TOP unit (two digits), where the cable leaves it:
`A01-U37-gpu-001-ib0`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from itertools import groupby

from django.core.paginator import Page, Paginator
from django.db.models import Count, F, FilteredRelation, Max, Prefetch, Q, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from inventory.choices import DeviceRole, DeviceStatus
from inventory.models import Device, Optic, Port, Rack
from projects.access import Capability, projects_where, scope_to_user
from projects.models import Project

from .choices import PHYSICAL_CABLE_STATUSES, CableStatus, FabricState, ScanAction, ScanResult, Side
from .codes import cable_end_code
from .filters import CableFilterSet
from .models import Cable, CableEnd, FabricPlan, LabelSheetExport, ScanEvent
from .planner.labels import place_tag

EXPORT_CHUNK = 2000  # rows fetched per round trip when streaming an export
RECENT_PLANS = 20  # plans listed on the plan page
RECENT_EXPORTS = 50  # label sheet exports listed on their page

# Tiers of the fabric view, bottom to top. Anything that is not a switch is a node.
NODE, LEAF, SPINE, SUPER_SPINE = "node", "leaf", "spine", "super_spine"
TIERS = (NODE, LEAF, SPINE, SUPER_SPINE)
TIER_OF_ROLE = {
    DeviceRole.LEAF: LEAF,
    DeviceRole.MGMT_SWITCH: LEAF,  # a management switch is the leaf of its (oob/in-band) network
    DeviceRole.SPINE: SPINE,
    DeviceRole.SUPER_SPINE: SUPER_SPINE,
}
SWITCH_ROLES = tuple(TIER_OF_ROLE)


def tier_of(role: str) -> str:
    return TIER_OF_ROLE.get(role, NODE)


def top_unit(position_u: int | None, height_u: int | None) -> int | None:
    if position_u is None:
        return None
    return position_u + max(height_u or 0, 1) - 1


# --- Pages -------------------------------------------------------------------------------------


def cable_list(*, user, project: Project | None = None) -> QuerySet[Cable]:
    cables = scope_to_user(Cable.objects.all(), user)
    if project is not None:
        cables = cables.filter(project=project)
    return cables.order_by("label", "pk")


def _ends_for_pages() -> QuerySet[CableEnd]:
    return CableEnd.objects.select_related(
        "port__device__rack", "port__device__hardware_model", "port__optic", "port__parent__optic", "confirmed_by",
    ).order_by("side", "position")


def cable_list_with_ends(*, user, project: Project) -> QuerySet[Cable]:
    """Cables with their ends, each end with port, device, rack, model and installed optic (2 queries)."""
    return cable_list(user=user, project=project).prefetch_related(
        Prefetch("ends", queryset=_ends_for_pages(), to_attr="end_list")
    )


def cable_detail(*, user, project: Project, pk: int) -> Cable:
    return get_object_or_404(cable_list_with_ends(user=user, project=project).select_related("verified_by"), pk=pk)


def page_end_tag(end: CableEnd) -> str:
    """The tag of an end loaded by `cable_list_with_ends` (no query)."""
    device = end.port.device
    top = top_unit(device.position_u, device.hardware_model.height_u)
    return place_tag(rack=device.rack.name if device.rack else None, top_u=top, device=device.name,
                     port=end.port.name)


# --- Ports with their cable and far end ---------------------------------------------------------

PORTS_PER_PAGE = 16  # physical ports per page of a device's ports panel, each with its lanes (a leaf: 80 rows)
MAX_PORT_QUERY = 100  # a port name longer than this is not one

# One end of a cable as the pages and the API name it, read with values(): no model instance per end.
_END_VIEW_FIELDS = {
    "end_cable": F("cable_id"),
    "end_label": F("cable__label"),
    "end_side": F("side"),
    "end_position": F("position"),
    "end_port_id": F("port_id"),
    "end_port": F("port__name"),
    "end_lane": F("port__lane"),
    "end_plane": F("port__plane"),
    "end_device_id": F("port__device_id"),
    "end_device": F("port__device__name"),
    "end_rack": F("port__device__rack__name"),
    "end_position_u": F("port__device__position_u"),
    "end_height_u": F("port__device__hardware_model__height_u"),
    # The transceiver serving the end: in its port, or in the cage of the port a lane belongs to.
    "end_optic": Coalesce("port__optic__serial", "port__parent__optic__serial"),
    "end_confirmed_at": F("confirmed_at"),
}


@dataclass(frozen=True, slots=True)
class EndView:
    id: int
    cable_id: int
    side: str
    position: int
    port_id: int
    port: str
    lane: int | None
    plane: int | None
    device_id: int
    device: str
    rack: str
    top_u: int | None
    optic: str  # serial of the optic seated for it ("" when none is)
    confirmed_at: datetime | None
    label: str  # the cable's
    b_ends: int  # how many B ends the cable has (a breakout: several)

    @property
    def leg(self) -> str:
        """A, B, or B1, B2... on a breakout (position 0 is B1), as the end's label prints it."""
        return self.code.rsplit("/", 1)[1]

    @property
    def code(self) -> str:
        """The end code its label holds: C00417/A, C00417/B, C00417/B2."""
        return cable_end_code(self.label, self.side, self.position, b_ends=self.b_ends)

    @property
    def tag(self) -> str:
        return place_tag(rack=self.rack or None, top_u=self.top_u, device=self.device, port=self.port)


def _end_view(row: dict, b_ends: int) -> EndView:
    return EndView(
        id=row["id"], cable_id=row["end_cable"], side=row["end_side"], position=row["end_position"],
        port_id=row["end_port_id"], port=row["end_port"], lane=row["end_lane"], plane=row["end_plane"],
        device_id=row["end_device_id"], device=row["end_device"], rack=row["end_rack"] or "",
        top_u=top_unit(row["end_position_u"], row["end_height_u"]), optic=row["end_optic"] or "",
        confirmed_at=row["end_confirmed_at"], label=row["end_label"], b_ends=b_ends,
    )


@dataclass(frozen=True, slots=True)
class Connection:
    """What a port is cabled to: its own end of the cable, the cable, and the ends at the other side of it
    (every B end seen from A; the A end seen from a B end). `via_parent`: the cable sits on the lane's
    physical port; `breakout_leg`: that cable breaks out from there and `far` holds this lane's leg."""

    end: EndView
    cable: Cable
    far: tuple[EndView, ...]
    via_parent: bool = False
    breakout_leg: bool = False

    @property
    def shown_on_lane(self) -> bool:
        """Worth a lane's row: its own cable, or its leg of a breakout from its physical port (a whole-port
        cable says nothing more about one lane than its port's row does)."""
        return not self.via_parent or self.breakout_leg


def _legs_of_lane(lane: Port, legs: tuple[EndView, ...]) -> tuple[EndView, ...]:
    """The breakout leg a lane's traffic takes: the leg in the lane's plane, else the leg at the lane's
    position (the planner lays legs out in lane order); none when the breakout does not carry the lane."""
    by_plane = tuple(end for end in legs if lane.plane is not None and end.plane == lane.plane)
    return by_plane or tuple(end for end in legs if end.position == lane.lane)


def port_connections(ports: Iterable[Port]) -> dict[int, Connection]:
    """The connection of each port that has one (a lane without a cable of its own takes its physical
    port's): two queries for any number of ports, whatever their cables. The ports must be scoped."""
    ports = list(ports)
    wanted = {port.pk for port in ports} | {port.parent_id for port in ports if port.parent_id}
    if not wanted:
        return {}
    own = {end.port_id: end for end in CableEnd.objects.filter(port_id__in=wanted).select_related("cable")}
    ends: dict[int, list[EndView]] = {}
    if own:
        rows = CableEnd.objects.filter(cable_id__in={end.cable_id for end in own.values()}).values(
            "id", **_END_VIEW_FIELDS).order_by("end_cable", "end_side", "end_position")
        for cable_id, group in groupby(rows, key=lambda row: row["end_cable"]):
            group = list(group)
            b_ends = sum(row["end_side"] == Side.B for row in group)
            ends[cable_id] = [_end_view(row, b_ends) for row in group]
    connections: dict[int, Connection] = {}
    for port in ports:
        end, via_parent = own.get(port.pk), False
        if end is None and port.parent_id in own:
            end, via_parent = own[port.parent_id], True
        if end is None:
            continue
        cable_ends = ends.get(end.cable_id, [])
        near = next(view for view in cable_ends if view.id == end.pk)
        far = tuple(view for view in cable_ends if (view.side == Side.A) != (end.side == Side.A))
        breakout = via_parent and end.side == Side.A and len(far) > 1
        if breakout:
            far = _legs_of_lane(port, far)
            if not far:
                continue  # a lane the breakout does not carry
        connections[port.pk] = Connection(end=near, cable=end.cable, far=far, via_parent=via_parent,
                                          breakout_leg=breakout)
    return connections


def device_planes(*, device: Device) -> list[int]:
    """The planes the device's ports and lanes are in, in order (one query; none for a device outside planes)."""
    # order_by: the model's ordering would otherwise join the DISTINCT and repeat every plane per port
    return list(Port.objects.filter(device=device, plane__isnull=False).order_by("plane")
                .values_list("plane", flat=True).distinct())


def device_ports_page(*, user, device: Device, number=None, query: str = "", plane: int | None = None) -> Page:
    """One page of a device's physical ports (found by name, or by the name of one of their lanes, when
    `query` is given; only those in `plane`, or with a lane in it, when a plane is given), each with its
    lanes under it (`lane_list`: only the plane's when a plane is given) and every port and lane with its
    `connection` (None when uncabled): five queries for a 2-port server or a 721-port leaf."""
    ports = scope_to_user(Port.objects.filter(device=device, parent__isnull=True), user, "device__project")
    query = (query or "").strip()[:MAX_PORT_QUERY]
    if query:
        ports = ports.filter(Q(name__istartswith=query) | Q(lanes__name__istartswith=query)).distinct()
    if plane is not None:
        ports = ports.filter(Q(plane=plane) | Q(lanes__plane=plane)).distinct()
    page = Paginator(ports.select_related("optic", "nic").order_by("id"), PORTS_PER_PAGE).get_page(number)
    physical = list(page.object_list)
    lanes = Port.objects.filter(parent__in=[port.pk for port in physical])
    if plane is not None:
        lanes = lanes.filter(plane=plane)
    lanes = list(lanes.select_related("optic").order_by("parent_id", "lane", "id")) if physical else []
    connections = port_connections([*physical, *lanes])
    lanes_of: dict[int, list[Port]] = {}
    for lane in lanes:
        lane.connection = connections.get(lane.pk)
        lanes_of.setdefault(lane.parent_id, []).append(lane)
    for port in physical:
        port.connection = connections.get(port.pk)
        port.lane_list = lanes_of.get(port.pk, [])
    page.object_list = physical
    return page


@dataclass(frozen=True, slots=True)
class TraceSegment:
    port: Port  # where the cable leaves: the traced port, one of its lanes, or the physical port of a lane
    connection: Connection


@dataclass(frozen=True)
class Trace:
    """From one port through its cable(s) to every far end: a GPU port with a breakout cable reaches every
    leaf lane of it; a port whose lanes are cabled one by one has one segment per lane."""

    port: Port
    segments: list[TraceSegment]

    @property
    def far_ends(self) -> list[EndView]:
        return [end for segment in self.segments for end in segment.connection.far]


def port_trace(*, user, pk: int, project: Project | None = None) -> Trace:
    """The trace of a port the user may see (404 otherwise): at most four queries."""
    ports = scope_to_user(Port.objects.all(), user, "device__project")
    if project is not None:
        ports = ports.filter(device__project=project)
    port = get_object_or_404(ports.select_related("device__rack", "device__hardware_model", "parent", "optic"), pk=pk)
    lanes = [] if port.parent_id else list(port.lanes.select_related("optic").order_by("lane", "id"))
    connections = port_connections([port, *lanes])
    segments = []
    if port.pk in connections:
        via = connections[port.pk].via_parent
        segments.append(TraceSegment(port=port.parent if via else port, connection=connections[port.pk]))
    segments += [TraceSegment(port=lane, connection=connections[lane.pk]) for lane in lanes
                 if lane.pk in connections and not connections[lane.pk].via_parent]
    return Trace(port=port, segments=segments)


# --- Export rows -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EndRow:
    side: str
    position: int
    rack: str
    top_u: int | None
    device: str
    device_role: str
    device_model: str  # "vendor model"
    device_part: str  # the hardware model's part number
    port: str
    lane: int | None
    plane: int | None
    optic_part: str  # the transceiver this end needs (the cable's optic_part_a or optic_part_b)
    optic_count: int = 1  # transceivers it accounts for: 0 when another end of its twin-port cage counts it

    @property
    def leg(self) -> str:
        """A, or B1, B2... for the legs of the far side (position 0 is B1)."""
        return Side.A if self.side == Side.A else f"B{self.position + 1}"

    @property
    def tag(self) -> str:
        return place_tag(rack=self.rack, top_u=self.top_u, device=self.device, port=self.port)


@dataclass(slots=True)
class CableRow:
    pk: int
    label: str
    network: str
    plane: int | None
    cable_type: str
    length_m: Decimal
    speed_gbps: int
    part_number: str
    status: str
    a: EndRow | None = None
    b: list[EndRow] = field(default_factory=list)

    @property
    def ends(self) -> list[EndRow]:
        return ([self.a] if self.a else []) + self.b

    def far_ends(self, end: EndRow) -> list[EndRow]:
        return self.b if end.side == Side.A else ([self.a] if self.a else [])


_CABLE_FIELDS = ("pk", "label", "network", "plane", "cable_type", "length_m", "speed_gbps", "part_number", "status",
                 "optic_part_a", "optic_part_b")
_END_FIELDS = {  # prefixed: a values() alias may not shadow a Cable field (plane, status)
    "end_side": "ends__side",
    "end_position": "ends__position",
    "end_rack": "ends__port__device__rack__name",
    "end_position_u": "ends__port__device__position_u",
    "end_height_u": "ends__port__device__hardware_model__height_u",
    "end_device": "ends__port__device__name",
    "end_role": "ends__port__device__role",
    "end_vendor": "ends__port__device__hardware_model__vendor",
    "end_model": "ends__port__device__hardware_model__model",
    "end_part": "ends__port__device__hardware_model__part_number",
    "end_port": "ends__port__name",
    "end_lane": "ends__port__lane",
    "end_plane": "ends__port__plane",
    "end_optic_count": "ends__optic_count",
}


def cable_rows(cables: QuerySet[Cable]) -> Iterator[CableRow]:
    """Every cable of the (already scoped and filtered) queryset with all its ends, in label order, from
    one query streamed in chunks: one flat row per end (a cable without ends still gives one row)."""
    flat = (
        cables.order_by()
        .values(*_CABLE_FIELDS, **{name: F(path) for name, path in _END_FIELDS.items()})
        .order_by("label", "pk", "end_side", "end_position")
    )
    for _, group in groupby(flat.iterator(chunk_size=EXPORT_CHUNK), key=lambda r: r["pk"]):
        rows = list(group)
        first = rows[0]
        cable = CableRow(**{name: first[name] for name in _CABLE_FIELDS[:9]})
        for r in rows:
            if r["end_side"] is None:
                continue  # the LEFT JOIN row of a cable without ends
            end = _end_row(r)
            if end.side == Side.A:
                cable.a = end
            else:
                cable.b.append(end)
        yield cable


def _end_row(r: dict) -> EndRow:
    return EndRow(
        side=r["end_side"], position=r["end_position"], rack=r["end_rack"] or "",
        top_u=top_unit(r["end_position_u"], r["end_height_u"]), device=r["end_device"], device_role=r["end_role"],
        device_model=f"{r['end_vendor']} {r['end_model']}", device_part=r["end_part"], port=r["end_port"],
        lane=r["end_lane"], plane=r["end_plane"],
        optic_part=r["optic_part_a"] if r["end_side"] == Side.A else r["optic_part_b"],
        optic_count=r["end_optic_count"],
    )


def widest_breakout(cables: QuerySet[Cable]) -> int:
    """The most B ends any cable of the queryset has (1 without breakouts, 0 without ends)."""
    legs = (
        CableEnd.objects.filter(cable__in=cables.order_by().values("pk"), side=Side.B)
        .values("cable")
        .annotate(legs=Count("pk"))
    )
    return legs.aggregate(widest=Max("legs"))["widest"] or 0


def end_count(cables: QuerySet[Cable], *, rack: str | None = None) -> int:
    """How many ends (labels) the queryset's cables have, only those in `rack` when given: one query."""
    ends = CableEnd.objects.filter(cable__in=cables.order_by().values("pk"))
    if rack:
        ends = ends.filter(port__device__rack__name=rack)
    return ends.count()


# --- Fabric figures ----------------------------------------------------------------------------


def fabric_links(*, user, project: Project, network: str | None = None) -> QuerySet[CableEnd]:
    """One row per link: each B end of a cable, joined to its cable's A end (device, role) and annotated
    with the link's plane (the B port's, else the cable's, else the A port's: a node lane knows its plane)
    and the cable's state in the latest fabric comparison (blank: never seen). The A end is a JOIN, not a
    subquery per row: the figures aggregate over every link of a 24,576-cable fabric."""
    return _links_of(scope_to_user(CableEnd.objects.all(), user, "cable__project"), project, network)


def report_fabric_links(*, project: Project, network: str | None = None) -> QuerySet[CableEnd]:
    """The links of `fabric_links` for the acceptance report (cabling.report_sections), whose provider is
    handed the project alone: delivery has already checked who may read the report."""
    return _links_of(CableEnd.objects.all(), project, network)


def _links_of(ends: QuerySet[CableEnd], project: Project, network: str | None) -> QuerySet[CableEnd]:
    links = ends.filter(cable__project=project, side=Side.B)
    if network:
        links = links.filter(cable__network=network)
    return links.annotate(
        a_end=FilteredRelation("cable__ends", condition=Q(cable__ends__side=Side.A, cable__ends__position=0)),
    ).annotate(
        net=F("cable__network"),
        link_plane=Coalesce("port__plane", "cable__plane", "a_end__port__plane"),
        state=F("cable__fabric_state"),
        a_device=F("a_end__port__device__name"),
        a_role=F("a_end__port__device__role"),
        b_device=F("port__device__name"),
        b_role=F("port__device__role"),
    )


# The columns of one link as `fabric_link_rows` reads them for the acceptance report.
FABRIC_LINK_COLUMNS = ("cable_id", "net", "state", "link_plane", "a_role", "a_device", "b_role", "b_device")

# A link as the fabric view folds it: (cable id, network, state, plane, A device key, B device key), with
# the devices' (name, role) by key beside the links (the page keys by id, the report by name).
FabricLinks = tuple[list[tuple], dict]


def fabric_link_rows(links: QuerySet[CableEnd]) -> FabricLinks:
    """The links of `report_fabric_links` (the acceptance report's path), keyed by device name: one query."""
    rows = links.values_list(*FABRIC_LINK_COLUMNS).order_by()
    devices: dict[str, tuple[str, str]] = {}
    folded = []
    for cable_id, net, state, plane, a_role, a_device, b_role, b_device in rows:
        if a_device is not None:
            devices[a_device] = (a_device, a_role)
        devices[b_device] = (b_device, b_role)
        folded.append((cable_id, net, state, plane, a_device, b_device))
    return folded, devices


def fabric_end_rows(*, user, project: Project, network: str | None = None) -> FabricLinks:
    """The links of the fabric view, keyed by device id, from TWO queries whatever the size of the fabric:
    every end of the project's cables with its port's device and plane (one join of the ends, their cables
    and their ports), and the project's devices (name and role); each B end (a link) is paired with its
    cable's A end here, not in SQL.

    Why: every figure of the view (links and cables per tier pair and state, devices per tier, the
    node-leaf pairs the units come from) needs each link with both ends' devices, and that join is the cost
    (24,576 cables, 57,344 ends, 103,168 ports). Five grouped queries made it five times; the pairs alone
    are a row per node link, so grouping saves no rows; joining each B end to its cable's A end in SQL
    reads the ports twice and cost a third more than reading each end once and pairing them here."""
    ends = scope_to_user(CableEnd.objects.filter(cable__project=project), user, "cable__project")
    if network:
        ends = ends.filter(cable__network=network)
    rows = list(ends.values_list("cable_id", "side", "position", "port__device_id", "port__plane", "cable__network",
                                 "cable__plane", "cable__fabric_state").order_by())
    visible = scope_to_user(Device.objects.filter(project=project), user)  # the house rule: every read scoped
    devices = {pk: (name, role) for pk, name, role in visible.values_list("pk", "name", "role").order_by()}
    a_ends = {row[0]: (row[3], row[4]) for row in rows if row[1] == Side.A and row[2] == 0}
    no_end = (None, None)
    links = []
    for cable_id, side, _, device_id, plane, net, cable_plane, state in rows:
        if side == Side.B:
            a_device, a_plane = a_ends.get(cable_id, no_end)
            if plane is None:  # the B port's plane, else the cable's, else the A port's (a node lane knows it)
                plane = cable_plane if cable_plane is not None else a_plane
            links.append((cable_id, net, state, plane, a_device, device_id))
    return links, devices


# --- A cable's scans and status changes ---------------------------------------------------------

SCANS_PER_PAGE = 25


def cable_scans(*, user, cable: Cable) -> QuerySet[ScanEvent]:
    """Every scan that concerns the cable, newest first, with who scanned and where (one query a page)."""
    scans = scope_to_user(ScanEvent.objects.filter(cable=cable), user)
    return scans.select_related("user", "port__device", "cable_end").order_by("-created_at", "-id")


@dataclass(frozen=True, slots=True)
class StatusChange:
    when: datetime
    who: str
    old: str  # "" when the cable was created in this status
    new: str
    cause: str


def cable_status_changes(*, cable: Cable, limit: int = 100) -> list[StatusChange]:
    """The cable's status changes, newest first, each with its cause (the status_cause written with it),
    from its history rows: one query for the newest `limit` records."""
    records = list(
        cable.history.order_by("-history_date", "-history_id")
        .values("history_date", "history_type", "status", "status_cause", "history_user__username")[: limit + 1]
    )
    labels = dict(CableStatus.choices)
    changes = []
    for newer, older in zip(records, [*records[1:], None], strict=True):
        if older is None and len(records) > limit:
            break  # the oldest record fetched only to diff the one before it
        if older is not None and older["status"] == newer["status"]:
            continue
        changes.append(StatusChange(
            when=newer["history_date"], who=newer["history_user__username"] or "",
            old=labels.get(older["status"], older["status"]) if older else "",
            new=labels.get(newer["status"], newer["status"]), cause=newer["status_cause"],
        ))
    return changes


# --- The floor's progress ----------------------------------------------------------------------

RACKED_STATUSES = (DeviceStatus.RACKED, DeviceStatus.POWERED, DeviceStatus.READY)
RECENT_SCANS = 20
# Stages of the floor, in the order the work happens: what the heat map can colour racks by.
STAGES = {
    "racked": "Devices racked",
    "optics": "Optics seated",
    "installed": "Cables installed",
    "verified": "Cables verified",
}


def _percent(done: int, total: int) -> int | None:
    return None if not total else int(done * 100 / total)


@dataclass
class Progress:
    """Counts of one rack, one network and plane, or the whole project. In a rack, cables are counted by
    their ends in it (a cable between two racks counts in both); elsewhere, once."""

    devices: int = 0
    racked: int = 0
    optics_needed: int = 0  # transceivers the cables' plan calls for
    optics_seated: int = 0
    cables: int = 0
    installed: int = 0  # physically in place: installed, verified or faulty
    verified: int = 0
    failed: int = 0  # faulty
    fabric_ok: int = 0  # seen ok by the latest fabric comparison

    def add(self, other: Progress) -> None:
        """Add the counts of `other` (a rack's or a plane's own fields, such as its name, stay)."""
        self.add_counts(**{name: getattr(other, name) for name in COUNTED})

    def add_counts(self, **counts: int) -> None:
        """Add counts named as the fields, such as a row of a grouped query (no Progress made for each of
        the hundreds of rows a large project's floor has)."""
        for name, n in counts.items():
            setattr(self, name, getattr(self, name) + n)

    def done_of(self, stage: str) -> tuple[int, int]:
        return {
            "racked": (self.racked, self.devices),
            "optics": (self.optics_seated, self.optics_needed),
            "installed": (self.installed, self.cables),
            "verified": (self.verified, self.cables),
        }[stage]

    def percent(self, stage: str) -> int | None:
        return _percent(*self.done_of(stage))

    @property
    def stages(self) -> list[tuple[str, str, int, int, int | None]]:
        """(stage, label, done, total, percent) in the order the work happens."""
        return [(stage, label, *self.done_of(stage), self.percent(stage)) for stage, label in STAGES.items()]


COUNTED = tuple(Progress.__dataclass_fields__)


@dataclass
class RackProgress(Progress):
    pk: int = 0
    name: str = ""
    row: str = ""
    position: int = 0


@dataclass
class PlaneProgress(Progress):
    network: str = ""
    plane: int | None = None


@dataclass
class FloorProgress:
    racks: list[RackProgress]
    planes: list[PlaneProgress]
    total: Progress


def _cable_counts(prefix: str = "") -> dict:
    status = f"{prefix}status"
    return dict(
        installed=Count("pk", filter=Q(**{f"{status}__in": PHYSICAL_CABLE_STATUSES})),
        verified=Count("pk", filter=Q(**{status: CableStatus.VERIFIED})),
        failed=Count("pk", filter=Q(**{status: CableStatus.FAULTY})),
        fabric_ok=Count("pk", filter=Q(**{f"{prefix}fabric_state": FabricState.OK})),
    )


def _optic_counts(project: Project) -> dict:
    """Over cable ends: the transceivers their cable's plan calls for at that end (optic_count: a cage's
    transceiver is counted on one of the ends sharing it), and those seated (in the port, or in the cage
    of the port a lane belongs to).

    Seated is membership in the set of the project's occupied ports (an optic sits in a port of its own
    project: Optic.clean), which PostgreSQL hashes once, not a join of every end's port's parent port and
    both their optics (a quarter of the floor's time on the 1,024-server project). The tests run cheapest
    first: an end counting no transceiver adds nothing, and most ends are on lanes, whose cage holds it."""
    needs = Q(optic_count__gt=0) & (
        Q(side=Side.A, cable__optic_part_a__gt="") | Q(side=Side.B, cable__optic_part_b__gt=""))
    occupied = Optic.objects.filter(project=project, port__isnull=False).values("port_id")
    seated = Q(port__parent_id__in=occupied) | Q(port_id__in=occupied)
    return dict(
        optics_needed=Coalesce(Sum("optic_count", filter=needs), 0),
        optics_seated=Coalesce(Sum("optic_count", filter=needs & seated), 0),
    )


def floor_progress(*, user, project: Project, network: str | None = None) -> FloorProgress:
    """Racked devices, seated optics and installed, verified and failed cables per rack, per network and
    plane, and in all: four aggregate queries, whatever the size of the project."""
    racks = scope_to_user(Rack.objects.filter(project=project), user)
    devices = scope_to_user(Device.objects.filter(project=project), user)
    cables = scope_to_user(Cable.objects.filter(project=project), user)
    ends = scope_to_user(CableEnd.objects.filter(cable__project=project), user, "cable__project")
    if network:
        cables, ends = cables.filter(network=network), ends.filter(cable__network=network)
        devices = devices.filter(pk__in=Port.objects.filter(network=network).values("device_id"))

    by_rack = {row["pk"]: RackProgress(**row) for row in racks.values("pk", "name", "row", "position").order_by(
        "row", "position", "name")}
    unracked = Progress()  # devices without a rack: counted in the total only
    for row in devices.order_by().values("rack_id").annotate(
            devices=Count("pk"), racked=Count("pk", filter=Q(status__in=RACKED_STATUSES))):
        by_rack.get(row.pop("rack_id"), unracked).add_counts(**row)
    planes: dict[tuple[str, int | None], PlaneProgress] = {}
    for row in cables.order_by().values("network", "plane").annotate(cables=Count("pk"), **_cable_counts()):
        planes[(row["network"], row["plane"])] = PlaneProgress(**row)
    # One pass over the cable ends for both the racks (cables counted by their ends there) and the planes'
    # optics (cables are counted once, above).
    for row in ends.order_by().values(rack_id=F("port__device__rack"), network=F("cable__network"),
                                      plane=F("cable__plane")).annotate(
            cables=Count("pk"), **_cable_counts("cable__"), **_optic_counts(project)):
        rack_id, key = row.pop("rack_id"), (row.pop("network"), row.pop("plane"))
        if rack_id in by_rack:
            by_rack[rack_id].add_counts(**row)
        planes.setdefault(key, PlaneProgress(network=key[0], plane=key[1])).add_counts(
            optics_needed=row["optics_needed"], optics_seated=row["optics_seated"])
    total = Progress(devices=unracked.devices, racked=unracked.racked)
    for rack in by_rack.values():
        total.add_counts(devices=rack.devices, racked=rack.racked)
    for plane in planes.values():
        total.add_counts(optics_needed=plane.optics_needed, optics_seated=plane.optics_seated, cables=plane.cables,
                         installed=plane.installed, verified=plane.verified, failed=plane.failed,
                         fabric_ok=plane.fabric_ok)
    order = {value: i for i, value in enumerate(dict(Cable._meta.get_field("network").choices))}
    ordered = sorted(planes.values(), key=lambda p: (order.get(p.network, 99), -1 if p.plane is None else p.plane))
    return FloorProgress(racks=list(by_rack.values()), planes=ordered, total=total)


def recent_scans(*, user, project: Project, limit: int = RECENT_SCANS) -> list[ScanEvent]:
    scans = scope_to_user(ScanEvent.objects.filter(project=project), user)
    return list(scans.select_related("user", "device", "optic", "port__device", "cable").order_by(
        "-created_at", "-id")[:limit])


@dataclass
class TechnicianDay:
    user_id: int
    username: str
    name: str
    scans: int = 0
    racked: int = 0  # devices racked by scan
    optics: int = 0  # optics seated by scan
    ends: int = 0  # cable ends confirmed by scan
    verified: int = 0  # cables whose last end they confirmed
    refused: int = 0  # scans refused or in conflict: what went wrong
    last: datetime | None = None


def work_since(*, user, project: Project, since: datetime) -> list[TechnicianDay]:
    """What each person did on the floor since `since`, from their scans and the cables they verified:
    two grouped queries, busiest first."""
    scans = scope_to_user(ScanEvent.objects.filter(project=project, created_at__gte=since, user__isnull=False), user)
    accepted = Q(result=ScanResult.ACCEPTED)
    people: dict[int, TechnicianDay] = {}
    for row in scans.order_by().values("user_id", "user__username", "user__first_name", "user__last_name").annotate(
        scans=Count("pk"),
        racked=Count("pk", filter=accepted & Q(action=ScanAction.RACK)),
        optics=Count("pk", filter=accepted & Q(action=ScanAction.OPTIC)),
        ends=Count("pk", filter=accepted & Q(action=ScanAction.CABLE_END)),
        refused=Count("pk", filter=Q(result__in=[ScanResult.REFUSED, ScanResult.CONFLICT])),
        last=Max("created_at"),
    ):
        name = f"{row['user__first_name']} {row['user__last_name']}".strip()
        people[row["user_id"]] = TechnicianDay(
            user_id=row["user_id"], username=row["user__username"], name=name, scans=row["scans"],
            racked=row["racked"], optics=row["optics"], ends=row["ends"], refused=row["refused"], last=row["last"])
    verified = scope_to_user(Cable.objects.filter(project=project, verified_at__gte=since,
                                                  verified_by__isnull=False), user)
    for row in verified.order_by().values("verified_by", "verified_by__username").annotate(n=Count("pk")):
        person = people.setdefault(row["verified_by"], TechnicianDay(
            user_id=row["verified_by"], username=row["verified_by__username"], name=""))
        person.verified = row["n"]
    return sorted(people.values(), key=lambda p: (-p.scans, -p.verified, p.username))


# --- Fabric plans ------------------------------------------------------------------------------


def fabric_plan_list(*, user, project: Project) -> QuerySet[FabricPlan]:
    """The project's plans, newest first, without the heavy columns (spec text, stored diff)."""
    plans = scope_to_user(FabricPlan.objects.filter(project=project), user)
    return plans.select_related("requested_by", "confirmed_by").defer("spec_text", "diff", "errors", "log").order_by(
        "-created_at", "-id"
    )


def fabric_plan_detail(*, user, project: Project, pk: int) -> FabricPlan:
    plans = scope_to_user(FabricPlan.objects.filter(project=project), user)
    return get_object_or_404(plans.select_related("project", "requested_by", "confirmed_by"), pk=pk)


def fabric_plans_managed(*, user) -> QuerySet[FabricPlan]:
    """Plans of the projects the user manages (staff: every project), for the API."""
    managed = projects_where(user, Capability.MANAGE_PROJECT)
    plans = FabricPlan.objects.select_related("project", "requested_by", "confirmed_by")
    return plans.filter(project__in=managed).order_by("-created_at", "-id")


# --- Label sheet exports -----------------------------------------------------------------------


def label_export_list(*, user, project: Project) -> QuerySet[LabelSheetExport]:
    """The project's label sheet exports, newest first, with who asked (one query)."""
    exports = scope_to_user(LabelSheetExport.objects.filter(project=project), user)
    return exports.select_related("project", "requested_by").defer("log").order_by("-created_at", "-id")


def label_export_detail(*, user, project: Project, pk: int) -> LabelSheetExport:
    exports = scope_to_user(LabelSheetExport.objects.filter(project=project), user)
    return get_object_or_404(exports.select_related("project"), pk=pk)


def label_export_cables(*, export: LabelSheetExport) -> QuerySet[Cable]:
    """The cables an export prints, for its task (which acts for the export's project): every cable of
    the project, those of its network, or those with an end in its rack (the list's own filters)."""
    wanted = {name: value for name, value in (("network", export.network), ("rack", export.rack)) if value}
    filters = CableFilterSet(wanted, queryset=Cable.objects.filter(project=export.project_id))
    if not filters.is_valid():
        raise ValueError(f"label export {export.pk}: {filters.errors.as_text()}")
    return filters.qs


__all__ = [
    "CableRow",
    "EndRow",
    "RECENT_EXPORTS",
    "RECENT_PLANS",
    "cable_detail",
    "cable_list",
    "cable_list_with_ends",
    "cable_rows",
    "end_count",
    "FABRIC_LINK_COLUMNS",
    "FabricLinks",
    "fabric_end_rows",
    "fabric_link_rows",
    "fabric_links",
    "fabric_plan_detail",
    "fabric_plan_list",
    "fabric_plans_managed",
    "label_export_cables",
    "label_export_detail",
    "label_export_list",
    "page_end_tag",
    "tier_of",
    "top_unit",
    "widest_breakout",
]
