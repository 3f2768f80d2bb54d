"""The cabling's section of the acceptance report (projects.reports), registered in CablingConfig.ready():
"Topology and cable plan".

- Facts: cables per status, and how the verified ones were verified.
- The fabric drawing: a chart of kind "cabling.fabric" whose data are the fabric view's figures per
  network and plane (tiers, switch counts, link counts per fabric state), drawn at render time by
  cabling.exports.fabric_drawing.
- Per network and plane: the links by cable status, then a table of its switches with their links by
  cable status, those with faulty or unverified links first.
- The cables not verified yet (faulty first), when there are any, then the full cable map in label order:
  A end, B end(s) (a breakout's legs joined with ", "), type, length, status, and when, by whom and how it
  was verified: "scan" (a technician scanned every end: Cable.verified_at/verified_by, set by
  cabling.services.scans), "fabric" (the latest topology comparison saw the link ok: fabric_state "ok", dated by the
  comparison that first verified it, fabric_verified_at), "both", or "" for a cable that is not verified.

Like a gate, the provider is handed a project and reads it whole: delivery checks who may read the report.
Tables stream: each one's rows come from one query read in chunks while the snapshot is written, so the
number of queries and the memory held do not grow with the number of cables.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from itertools import groupby

from django.db.models import BooleanField, Case, Count, ExpressionWrapper, F, IntegerField, Q, QuerySet, Value, When

from inventory.choices import Network
from inventory.models import Device
from projects.reports import Chart, Column, Facts, Section, Table, register_report_chart, register_report_section

from .choices import CableStatus, CableType, FabricState, Side
from .exports.fabric_drawing import fabric_drawing
from .exports.fabric_svg import FABRIC_STATES, NOUNS, FabricView, fabric_views_of, plural
from .models import Cable
from .selectors import SWITCH_ROLES, TIERS, report_fabric_links, tier_of

KEY, TITLE, ORDER = "topology", "Topology and cable plan", 40
CHART_KIND = "cabling.fabric"
CHUNK = 2000  # rows fetched per round trip while a table streams

SCAN, FABRIC, BOTH = "scan", "fabric", "both"  # how a cable was verified (the cable map's "How" column)
STATUS_ORDER = (CableStatus.PLANNED, CableStatus.INSTALLED, CableStatus.VERIFIED, CableStatus.FAULTY)
STATUS_LABELS = dict(CableStatus.choices)
FABRIC_LABELS = {**dict(FabricState.choices), "": "Not compared yet"}
# Short enough for a table column; a type added later shows its label.
TYPE_NAMES = {CableType.DAC: "DAC", CableType.ACC: "ACC/AEC", CableType.AOC: "AOC", CableType.FIBER: "Fiber",
              CableType.CAT6: "Cat6"}
TYPE_LABELS = {value: TYPE_NAMES.get(value, label) for value, label in CableType.choices}
NETWORK_LABELS = dict(Network.choices)
NETWORK_NAMES = {Network.COMPUTE: "Compute", Network.STORAGE: "Storage", Network.INBAND: "In-band",
                 Network.OOB: "Out-of-band"}  # a drawing's titles: a network added later shows its label

COUNT_COLUMNS = [
    Column("links", "Links", kind="int", width=7),
    Column("planned", "Planned", kind="int", width=7),
    Column("installed", "Installed", kind="int", width=7),
    Column("verified", "Verified", kind="int", width=7),
    Column("faulty", "Faulty", kind="int", width=7),
]
PLANE_COLUMNS = [
    Column("network", "Network", width=16), Column("plane", "Plane", width=10),
    Column("tiers", "Tiers", width=30), Column("switches", "Switches", kind="int", width=7), *COUNT_COLUMNS,
]
SWITCH_COLUMNS = [
    Column("switch", "Switch", width=16), Column("tier", "Tier", width=9), Column("rack", "Rack", width=8),
    Column("model", "Model", width=16), *COUNT_COLUMNS,
]
NOT_VERIFIED_COLUMNS = [
    Column("label", "Label", width=12), Column("a_end", "A end", width=18), Column("b_end", "B end", width=24),
    Column("status", "Status", width=8), Column("fabric", "Fabric comparison", width=12),
    Column("why", "Why", width=30),
]
CABLE_COLUMNS = [
    Column("label", "Label", width=12), Column("a_end", "A end", width=18), Column("b_end", "B end", width=24),
    Column("type", "Type", width=6), Column("length", "Length", unit="m", kind="float", width=6),
    Column("status", "Status", width=8), Column("verified_at", "Verified", kind="datetime", width=14),
    Column("verified_by", "By", width=14), Column("how", "How", width=6),
]


def topology_section(project) -> Section | None:
    """The section, or None for a project without cables. About a dozen queries whatever its size."""
    counts = _cable_counts(project)
    if not counts["cables"]:
        return None
    links = report_fabric_links(project=project)
    views = fabric_views_of(links)
    by_plane, by_switch = _link_status_counts(links)
    blocks: list = [
        _facts(counts),
        Chart(kind=CHART_KIND, title="Fabric", data=fabric_chart_data(views),
              caption="Per network and plane: the tiers with their device counts and the links between them, "
                      "coloured by what the latest fabric comparison saw."),
        _planes_table(views, by_plane),
        *_switch_tables(project, views, by_switch),
    ]
    not_verified = counts["cables"] - counts[CableStatus.VERIFIED]
    if not_verified:
        blocks.append(Table(
            key="cables_not_verified", title="Cables not verified yet", columns=NOT_VERIFIED_COLUMNS,
            rows=_not_verified_rows(project), row_count=not_verified,
            note="Faulty first, then installed, then planned; each in label order.",
        ))
    blocks.append(Table(
        key="cables", title="Cable map", columns=CABLE_COLUMNS, rows=_cable_map_rows(project),
        row_count=counts["cables"],
        note="How: scan (every end scanned where the plan says), fabric (the latest fabric comparison saw the "
             "link as planned), both. A breakout cable lists its B ends in leg order.",
    ))
    return Section(title=TITLE, blocks=blocks)


# --- Counts ------------------------------------------------------------------------------------


def _verified(how: str) -> Q:
    scanned, seen = Q(verified_at__isnull=False), Q(fabric_state=FabricState.OK)
    only = {SCAN: scanned & ~seen, FABRIC: seen & ~scanned, BOTH: scanned & seen}[how]
    return Q(status=CableStatus.VERIFIED) & only


def _cable_counts(project) -> dict:
    """Cables, per status, and the verified ones per way of verifying: one aggregate query."""
    return Cable.objects.filter(project=project).aggregate(
        cables=Count("pk"),
        **{status: Count("pk", filter=Q(status=status)) for status in STATUS_ORDER},
        **{f"by_{how}": Count("pk", filter=_verified(how)) for how in (SCAN, FABRIC, BOTH)},
    )


def _facts(counts: dict) -> Facts:
    return Facts(title="Cables", items=[
        ("Cables", counts["cables"]),
        *[(STATUS_LABELS[status], counts[status]) for status in STATUS_ORDER],
        ("Verified by a scan of every end", counts[f"by_{SCAN}"]),
        ("Verified by the fabric comparison", counts[f"by_{FABRIC}"]),
        ("Verified by both", counts[f"by_{BOTH}"]),
    ])


_COUNTED = ("links", *(str(status) for status in STATUS_ORDER))  # a link count, then one per cable status


def _status_counts() -> dict:
    """Links per cable status (a link is a B end: a breakout cable's legs are several links)."""
    return {"links": Count("pk"),
            **{str(status): Count("pk", filter=Q(cable__status=status)) for status in STATUS_ORDER}}


def _link_status_counts(links: QuerySet) -> tuple[dict, dict]:
    """Links per cable status by (network, plane), and by (network, plane, switch) for each switch at either
    end of a link (with its role): two aggregate queries, one row per device and plane at the switch side
    (every link counts once there, so the planes' totals are their sums) and one per switch and plane at
    the other."""
    by_plane: dict[tuple, dict] = defaultdict(lambda: dict.fromkeys(_COUNTED, 0))
    by_switch: dict[tuple, dict] = {}

    def add(into: dict, row: dict) -> None:
        for name in _COUNTED:
            into[name] += row[name]

    def switch(key: tuple, role: str) -> dict:
        return by_switch.setdefault(key, {"role": role, "b_side": False, **dict.fromkeys(_COUNTED, 0)})

    b_side = links.values("net", "link_plane", "b_role", "b_device").annotate(**_status_counts()).order_by()
    for row in b_side:
        add(by_plane[(row["net"], row["link_plane"])], row)
        if row["b_role"] in SWITCH_ROLES:
            counts = switch((row["net"], row["link_plane"], row["b_device"]), row["b_role"])
            add(counts, row)
            counts["b_side"] = True
    a_side = (links.filter(a_role__in=SWITCH_ROLES).values("net", "link_plane", "a_role", "a_device")
              .annotate(**_status_counts()).order_by())
    for row in a_side:
        add(switch((row["net"], row["link_plane"], row["a_device"]), row["a_role"]), row)
    return by_plane, by_switch


def _counts_of(row: dict | None) -> list[int]:
    return [row[name] if row else 0 for name in _COUNTED]


# --- Per network and plane ------------------------------------------------------------------------


def network_name(network: str) -> str:
    """'Compute' for 'Compute (training fabric)': short enough for a panel's title."""
    return NETWORK_NAMES.get(network) or NETWORK_LABELS.get(network, network)


def _tiers_text(view: FabricView) -> str:
    return " · ".join(plural(count, tier) for tier, count in reversed(view.tier_counts))


def _switch_count(view: FabricView) -> int:
    return sum(count for tier, count in view.tier_counts if tier != "node")


def _planes_table(views: list[FabricView], by_plane: dict) -> Table:
    rows = [
        [NETWORK_LABELS.get(view.network, view.network), view.plane_label, _tiers_text(view), _switch_count(view),
         *_counts_of(by_plane.get((view.network, view.plane)))]
        for view in views
    ]
    return Table(key="planes", title="Networks and planes", columns=PLANE_COLUMNS, rows=rows, row_count=len(rows),
                 note="A link is one end of a cable on the switch side: a breakout cable counts once per leg.")


def _natural(name: str) -> list:
    """gpu-2 before gpu-10 (ASCII digit runs compared as numbers)."""
    return [int(part) if i % 2 else part for i, part in enumerate(re.split(r"([0-9]+)", name))]


def _switch_tables(project, views: list[FabricView], by_switch: dict) -> list[Table]:
    """One table per network and plane: its switches (a switch of a network is one that links of that
    network reach on their switch side, as in the fabric view), those with faulty then unverified links
    first, then top tier first and by name."""
    switches = {(net, device) for (net, _, device), row in by_switch.items() if row["b_side"]}
    places = _switch_places(project)
    per_view: dict[tuple, list] = defaultdict(list)
    for (net, plane, device), row in by_switch.items():
        if (net, device) in switches:  # not one that only plugs its management port into this network
            per_view[(net, plane)].append((device, tier_of(row["role"] or ""), _counts_of(row)))
    tables = []
    for view in views:
        found = per_view.get((view.network, view.plane))
        if not found:
            continue
        found.sort(key=_needs_attention_first)
        rows = [[device, NOUNS[tier][0], *places.get(device, ("", "")), *counts] for device, tier, counts in found]
        tables.append(Table(
            key=f"switches_{view.network}_{view.plane_param}",
            title=_switches_title(view),
            columns=SWITCH_COLUMNS, rows=rows, row_count=len(rows), summary_rows=20,
            note="Switches with faulty links first, then those with links not verified yet.",
        ))
    return tables


def _switches_title(view: FabricView) -> str:
    """"Compute plane 0 switches", "Out-of-band switches" (planes shared): short, without the punctuation
    after which a spreadsheet's sheet name is cut, so that each table keeps a sheet name of its own."""
    plane = "" if view.plane is None else f" plane {view.plane}"
    return f"{network_name(view.network)}{plane} switches"


def _needs_attention_first(switch: tuple[str, str, list[int]]) -> tuple:
    device, tier, counts = switch
    figures = dict(zip(_COUNTED, counts, strict=True))
    not_verified = figures["links"] - figures[CableStatus.VERIFIED]
    return -figures[CableStatus.FAULTY], -not_verified, -TIERS.index(tier), _natural(device)


def _switch_places(project) -> dict[str, tuple[str, str]]:
    """Rack and model of every switch of the project, by name: one query (a few hundred rows)."""
    rows = (Device.objects.filter(project=project, role__in=SWITCH_ROLES)
            .values_list("name", "rack__name", "hardware_model__vendor", "hardware_model__model"))
    return {name: (rack or "", f"{vendor} {model}") for name, rack, vendor, model in rows}


# --- The fabric chart ------------------------------------------------------------------------------


def _plane_span(planes: list[int | None]) -> str:
    """'plane 0', 'planes 0–7' (a run), 'planes 0, 2, 5', or 'planes shared'."""
    if planes == [None]:
        return "planes shared"
    numbers = sorted(p for p in planes if p is not None)
    if len(numbers) == 1:
        return f"plane {numbers[0]}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"planes {numbers[0]}–{numbers[-1]}"
    return "planes " + ", ".join(map(str, numbers))


def _view_figures(view: FabricView) -> dict:
    tiers = []
    for tier, count in view.tier_counts:
        label = plural(count, tier)
        if tier == "node" and view.units:
            label += f" in {len(view.units)} unit{'s' if len(view.units) != 1 else ''}"
        tiers.append({"tier": tier, "count": count, "label": label})
    links = [{"lower": link.lower, "upper": link.upper, "links": link.links, "cables": link.cables,
              "states": {state: n for state, _, n in link.state_counts if n}} for link in view.links]
    return {"tiers": tiers, "links": links}


def fabric_chart_data(views: list[FabricView]) -> dict:
    """The fabric view's figures as the chart's data: plain numbers and labels, one entry per network and
    plane, planes of a network with the very same figures (states included) sharing one entry. Tiers are
    listed bottom to top."""
    merged: dict[tuple, dict] = {}
    planes: dict[tuple, list] = defaultdict(list)
    for view in views:
        figures = _view_figures(view)
        key = (view.network, repr(figures))
        merged.setdefault(key, {"network": view.network, **figures})
        planes[key].append(view.plane)
    entries = []
    for key, entry in merged.items():
        entry["planes"] = planes[key]
        entry["title"] = f"{network_name(entry['network'])} · {_plane_span(planes[key])}"
        entries.append(entry)
    return {"states": [[state, label] for state, label, _ in FABRIC_STATES], "views": entries}


# --- Cable rows -------------------------------------------------------------------------------------


def _end_text(device: str | None, port: str | None) -> str:
    return f"{device}:{port}"


def _with_ends(cables: QuerySet[Cable], fields: tuple[str, ...], order: tuple[str, ...]) -> Iterator[tuple]:
    """(cable values, A end, B ends) per cable of `cables`, in `order`, from ONE query over the cables LEFT
    JOINed to their ends, read in chunks: a breakout cable's legs are consecutive rows, grouped here."""
    flat = cables.values_list("pk", *fields, "ends__side", "ends__port__device__name", "ends__port__name").order_by(
        *order, "pk", "ends__side", "ends__position")
    width = len(fields) + 1
    for _, group in groupby(flat.iterator(chunk_size=CHUNK), key=lambda row: row[0]):
        a_ends, b_ends, values = [], [], None
        for row in group:
            values = row[1:width]
            side, device, port = row[width:]
            if side is not None:  # a cable without ends still gives one row, without an end
                (a_ends if side == Side.A else b_ends).append(_end_text(device, port))
        yield values, ", ".join(a_ends), ", ".join(b_ends)


CABLE_MAP_FIELDS = ("label", "cable_type", "length_m", "status", "scanned", "fabric_state", "shown_at",
                    "verified_by__first_name", "verified_by__last_name", "verified_by__username",
                    "removed_from_plan")
REMOVED_NOTE = " (removed from the plan: to take out)"


def how_verified(*, status: str, scanned: bool, seen_ok: bool) -> str:
    """scan, fabric, both, or "" (not verified, or verified by neither, which only a hand edit can do)."""
    if status != CableStatus.VERIFIED:
        return ""
    if scanned and seen_ok:
        return BOTH
    return SCAN if scanned else FABRIC if seen_ok else ""


def _person(first: str | None, last: str | None, username: str | None) -> str:
    """As User.get_full_name() or the username, from the joined columns."""
    return f"{first or ''} {last or ''}".strip() or (username or "")


def _cable_map_rows(project) -> Iterator[list]:
    verified = Q(status=CableStatus.VERIFIED)
    cables = Cable.objects.filter(project=project).annotate(
        scanned=ExpressionWrapper(Q(verified_at__isnull=False), output_field=BooleanField()),
        # When it was verified, chosen in the query: one timestamp per row to read, not two (reading
        # timestamps is most of the time the cable map takes). A scan names a person and a moment; the
        # fabric's word only a moment, the comparison's.
        shown_at=Case(When(verified & Q(verified_at__isnull=False), then=F("verified_at")),
                      When(verified & Q(fabric_state=FabricState.OK), then=F("fabric_verified_at")), default=None),
    )
    for values, a_end, b_end in _with_ends(cables, CABLE_MAP_FIELDS, ("label",)):
        label, cable_type, length, status, scanned, fabric_state, at, first, last, username, removed = values
        how = how_verified(status=status, scanned=scanned, seen_ok=fabric_state == FabricState.OK)
        by = _person(first, last, username) if how in (SCAN, BOTH) else ""
        # Still in the room but no longer planned (the cover counts planned cables only): said so on its row.
        shown_status = STATUS_LABELS.get(status, status) + (REMOVED_NOTE if removed else "")
        yield [label, a_end, b_end, TYPE_LABELS.get(cable_type, cable_type), float(length), shown_status, at, by, how]


NOT_VERIFIED_FIELDS = ("label", "status", "fabric_state", "status_cause")


def _not_verified_rows(project) -> Iterator[list]:
    attention = Case(When(status=CableStatus.FAULTY, then=Value(0)), When(status=CableStatus.INSTALLED, then=Value(1)),
                     default=Value(2), output_field=IntegerField())
    cables = Cable.objects.filter(project=project).exclude(status=CableStatus.VERIFIED).annotate(attention=attention)
    for values, a_end, b_end in _with_ends(cables, NOT_VERIFIED_FIELDS, ("attention", "label")):
        label, status, fabric_state, cause = values
        yield [label, a_end, b_end, STATUS_LABELS.get(status, status), FABRIC_LABELS.get(fabric_state, fabric_state),
               cause]


def register() -> None:
    register_report_section(KEY, topology_section, order=ORDER, title=TITLE)
    register_report_chart(CHART_KIND, fabric_drawing)

