"""Reads of the cabling app, always scoped to what the user may see: cables and their ends, the fabric
figures, fabric plans and label sheet exports.

Cables come in two shapes:
- model instances with their ends prefetched, for the list and detail pages (a page of 50);
- `CableRow`s built from ONE flat `values()` query over cables and their ends, for the exports, which
  must stay fast and small at 30,000 cables (no model instances, no per-row queries).

An end's tag is the planner's (cabling.planner.labels.place_tag, the one place the format is written):
`rack-U-device-port`, with U the device's TOP unit (two digits), where the cable leaves it:
`A01-U37-gpu-001-ib0`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import groupby

from django.db.models import Count, F, Max, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from delivery.access import Capability, projects_where, scope_to_user
from delivery.models import Project
from inventory.choices import DeviceRole

from .choices import Side
from .filters import CableFilterSet
from .models import Cable, CableEnd, FabricPlan, LabelSheetExport
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
        "port__device__rack", "port__device__hardware_model", "port__optic"
    ).order_by("side", "position")


def cable_list_with_ends(*, user, project: Project) -> QuerySet[Cable]:
    """Cables with their ends, each end with port, device, rack, model and installed optic (2 queries)."""
    return cable_list(user=user, project=project).prefetch_related(
        Prefetch("ends", queryset=_ends_for_pages(), to_attr="end_list")
    )


def cable_detail(*, user, project: Project, pk: int) -> Cable:
    return get_object_or_404(cable_list_with_ends(user=user, project=project), pk=pk)


def page_end_tag(end: CableEnd) -> str:
    """The tag of an end loaded by `cable_list_with_ends` (no query)."""
    device = end.port.device
    top = top_unit(device.position_u, device.hardware_model.height_u)
    return place_tag(rack=device.rack.name if device.rack else None, top_u=top, device=device.name,
                     port=end.port.name)


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


def _a_end(column: str) -> Subquery:
    return Subquery(
        CableEnd.objects.filter(cable=OuterRef("cable"), side=Side.A).order_by("position").values(column)[:1]
    )


def fabric_links(*, user, project: Project, network: str | None = None) -> QuerySet[CableEnd]:
    """One row per link: each B end of a cable, annotated with its cable's A end (device, role) and the
    link's plane: the B port's plane, else the cable's, else the A port's (a node lane knows its plane)."""
    links = scope_to_user(CableEnd.objects.all(), user, "cable__project").filter(cable__project=project, side=Side.B)
    if network:
        links = links.filter(cable__network=network)
    return links.annotate(
        net=F("cable__network"),
        link_plane=Coalesce("port__plane", "cable__plane", _a_end("port__plane")),
        a_device=_a_end("port__device__name"),
        a_role=_a_end("port__device__role"),
        b_device=F("port__device__name"),
        b_role=F("port__device__role"),
    )


def _from_switches() -> Q:
    return Q(a_role__in=SWITCH_ROLES)


def fabric_link_counts(links: QuerySet[CableEnd]) -> list[dict]:
    """Links and cables per (network, plane, A role, B role), and for links FROM a switch also per A device
    (whether that switch is a switch of this network or just plugs its management port in is decided by
    the caller): two aggregate queries, a few hundred rows at the largest reference fabric."""
    counts = dict(links=Count("pk"), cables=Count("cable", distinct=True))
    grouping = ("net", "link_plane", "a_role", "b_role")
    from_nodes = links.filter(~_from_switches() | Q(a_role__isnull=True)).values(*grouping).annotate(**counts)
    from_switches = links.filter(_from_switches()).values(*grouping, "a_device").annotate(**counts)
    return [{"a_device": None, **row} for row in from_nodes.order_by()] + list(from_switches.order_by())


def fabric_devices(links: QuerySet[CableEnd]) -> tuple[set, set]:
    """(network, plane, role, device) of the devices at the A ends and at the B ends of the links: two
    DISTINCT queries, one row per device and plane."""
    a_side = links.values_list("net", "link_plane", "a_role", "a_device").distinct().order_by()
    b_side = links.values_list("net", "link_plane", "b_role", "b_device").distinct().order_by()
    return set(a_side), set(b_side)


def fabric_leaf_pairs(links: QuerySet[CableEnd]) -> set[tuple[str, int | None, str, str]]:
    """(network, plane, A device, leaf) of every link into a leaf-tier switch, from which the view finds
    the scalable units: one DISTINCT query (about one row per node port and plane)."""
    pairs = links.filter(b_role__in=[r for r in SWITCH_ROLES if tier_of(r) == LEAF])
    return set(pairs.values_list("net", "link_plane", "a_device", "b_device").distinct().order_by())


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
    "fabric_devices",
    "fabric_link_counts",
    "fabric_links",
    "fabric_leaf_pairs",
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
