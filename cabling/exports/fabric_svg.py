"""The cabling's drawings: the fabric view and the floor's rack heat map.

The fabric view: per network and plane, the tiers (nodes in their scalable units, leaves, spines,
super-spines) and the link counts between tiers, from what the database tracks, each connector coloured
by the links' state in the latest fabric comparison (Cable.fabric_state: ok, missing, miswired,
degraded; unknown until a comparison sees the cable).

Figures come from two queries (selectors.fabric_end_rows: every cable end with its port's device and
plane, and the project's devices, paired into links in Python) folded here in one pass: links and cables
per tier pair and state, devices per tier, and the node-leaf pairs the units are found from. A switch
counts as a switch only in the networks whose links end on it (its management port in the out-of-band
network makes it a node there). A scalable
unit is not stored anywhere: it is found as a connected group of nodes and leaves (rail i of every
server of a unit lands on leaf i of that unit, so each unit's servers and leaves form one group; a
fabric that is not rail-optimized is one unit). A link is one B end of a cable (a breakout cable is
several links); its plane is the B port's, else the cable's, else the A port's. Links whose plane is
unknown (planes sharing the switches, as in the 4-plane XDR design) are shown as "planes shared".

The rack heat map (the progress page): one cell per rack, by row and position, coloured by how far the
rack is in one stage of the work (racked, optics seated, cables installed or verified), outlined red
where a cable failed.

The SVGs are built by hand (small, styled by the page, with data- attributes tests and scripts can read).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from django.db.models import QuerySet

from projects.models import Project

from ..choices import FabricState
from ..models import CableEnd
from ..selectors import (
    LEAF,
    NODE,
    SPINE,
    SUPER_SPINE,
    TIERS,
    fabric_end_rows,
    fabric_link_rows,
    tier_of,
)

SVG_CONTENT_TYPE = "image/svg+xml"
UNKNOWN = "unknown"  # a link no fabric comparison has seen (Cable.fabric_state blank)
# The fabric states in legend order, with their label and colour (bringup.css has the same colours).
FABRIC_STATES = (
    (FabricState.OK.value, "Seen ok", "#2e7d32"),
    (FabricState.MISSING.value, "Missing", "#c62828"),
    (FabricState.MISWIRED.value, "Miswired", "#8e24aa"),
    (FabricState.DEGRADED.value, "Degraded", "#ef8f00"),
    (UNKNOWN, "Not compared yet", "#9aa3b1"),
)
STATE_COLOURS = {state: colour for state, _, colour in FABRIC_STATES}
NOUNS = {
    NODE: ("node", "nodes"),
    LEAF: ("leaf", "leaves"),
    SPINE: ("spine", "spines"),
    SUPER_SPINE: ("super-spine", "super-spines"),
}
MAX_UNITS_DRAWN = 16  # more units than this are summarised in one box


def plural(count: int, tier: str) -> str:
    one, many = NOUNS[tier]
    return f"{count:,} {one if count == 1 else many}"


def counted(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _natural(name: str) -> list:
    """gpu-2 before gpu-10. re.split with a group alternates text and digit runs, so the odd parts are
    the ASCII digit runs (never "²", which isdigit() accepts and int() refuses) and ints meet ints."""
    return [int(part) if i % 2 else part for i, part in enumerate(re.split(r"([0-9]+)", name))]


@dataclass(frozen=True)
class Unit:
    first_node: str
    nodes: int
    leaves: int


@dataclass(frozen=True)
class TierLink:
    lower: str
    upper: str
    links: int
    cables: int
    states: dict[str, int] = field(default_factory=dict)  # links per fabric state (FABRIC_STATES order)

    @property
    def state_counts(self) -> list[tuple[str, str, int]]:
        """(state, label, links) for every state, in legend order."""
        return [(state, label, self.states.get(state, 0)) for state, label, _ in FABRIC_STATES]


@dataclass
class FabricView:
    """One network and plane."""

    network: str
    plane: int | None
    devices: dict[str, int] = field(default_factory=dict)  # tier -> device count
    units: list[Unit] = field(default_factory=list)
    links: list[TierLink] = field(default_factory=list)

    @property
    def tiers(self) -> list[str]:
        """Tiers present, bottom to top."""
        return [tier for tier in TIERS if self.devices.get(tier)]

    @property
    def tier_counts(self) -> list[tuple[str, int]]:
        return [(tier, self.devices[tier]) for tier in self.tiers]

    @property
    def plane_label(self) -> str:
        return "planes shared" if self.plane is None else f"plane {self.plane}"

    @property
    def plane_param(self) -> str:
        return "shared" if self.plane is None else str(self.plane)

    @property
    def total_links(self) -> int:
        return sum(link.links for link in self.links)


def _units(pairs: set[tuple[str, str]]) -> list[Unit]:
    """Connected groups of the node-leaf graph, ordered by their first node: the leaves each node reaches
    are joined (union-find over leaves; the nodes of a rail-optimized unit all reach the same leaves, so a
    unit's leaf set is joined once however many nodes it has), and a node belongs to its leaves' group."""
    leaves_of: dict[str, set[str]] = defaultdict(set)
    for node, leaf in pairs:
        leaves_of[node].add(leaf)
    parent: dict[str, str] = {}

    def root(leaf: str) -> str:
        while parent.setdefault(leaf, leaf) != leaf:
            parent[leaf] = parent[parent[leaf]]
            leaf = parent[leaf]
        return leaf

    for leaves in {frozenset(leaves) for leaves in leaves_of.values()}:
        first, *rest = leaves
        joined = root(first)
        for leaf in rest:
            other = root(leaf)
            if other != joined:
                parent[other] = joined
    members: dict[str, tuple[list[str], set[str]]] = defaultdict(lambda: ([], set()))
    for node, leaves in leaves_of.items():
        nodes, unit_leaves = members[root(next(iter(leaves)))]
        nodes.append(node)
        unit_leaves |= leaves
    units = [Unit(first_node=min(nodes, key=_natural), nodes=len(nodes), leaves=len(leaves))
             for nodes, leaves in members.values()]
    return sorted(units, key=lambda unit: _natural(unit.first_node))


def _plane_key(key: tuple[str, int | None]) -> tuple:
    network, plane = key
    return network, -1 if plane is None else plane


def fabric_views(*, user, project: Project, network: str | None = None) -> list[FabricView]:
    """Every (network, plane) with at least one link, in network then plane order (shared planes first):
    two queries whatever the size of the fabric (selectors.fabric_end_rows), then one pass."""
    return fabric_views_of_links(*fabric_end_rows(user=user, project=project, network=network))


def fabric_views_of(links: QuerySet[CableEnd]) -> list[FabricView]:
    """The views of `links` (selectors.report_fabric_links, for the acceptance report): one query."""
    return fabric_views_of_links(*fabric_link_rows(links))


def fabric_views_of_links(links: list[tuple], devices: dict) -> list[FabricView]:
    """Fold the links (selectors.FabricLinks: cable, network, state, plane, A device, B device) in one pass:
    links per tier pair and state, distinct cables per tier pair, the devices of each tier, the node-leaf
    pairs. A switch is a switch of a network only where links of that network end on it on the B side (a
    switch takes its links from the tier below); elsewhere it is a node, e.g. a compute leaf whose
    management port plugs into the out-of-band network."""
    tier = {key: tier_of(role or "") for key, (_, role) in devices.items()}
    switches = {(net, b) for _, net, _, _, _, b in links if tier.get(b, NODE) != NODE}
    ordered = {(a, b): tuple(sorted((a, b), key=TIERS.index)) for a in TIERS for b in TIERS}
    link_counts: dict[tuple, int] = defaultdict(int)  # (net, plane, lower, upper, state) -> links
    cables: dict[tuple, set[int]] = defaultdict(set)  # (net, plane, lower, upper) -> distinct cables
    placed: set[tuple] = set()  # (net, plane, tier, device)
    unit_pairs: dict[tuple, set[tuple]] = defaultdict(set)  # (net, plane) -> (node, leaf)
    for cable_id, net, state, plane, a, b in links:
        a_tier = tier.get(a, NODE)
        if a_tier != NODE and (net, a) not in switches:
            a_tier = NODE  # a switch plugging a port into a network it is no switch of
        b_tier = tier.get(b, NODE)
        lower, upper = ordered[(a_tier, b_tier)]
        link_counts[(net, plane, lower, upper, state)] += 1
        cables[(net, plane, lower, upper)].add(cable_id)
        placed.add((net, plane, a_tier, a))
        placed.add((net, plane, b_tier, b))
        if b_tier == LEAF and a_tier == NODE and a is not None:
            unit_pairs[(net, plane)].add((a, b))
    return _tally(link_counts, cables, placed, unit_pairs, devices)


def _tally(link_counts: dict, cables: dict, placed: set, unit_pairs: dict, devices: dict) -> list[FabricView]:
    """What the fold gathered, as the views: counts per tier pair, devices per tier, units by name."""
    pairs: dict[tuple, _PairCounts] = defaultdict(_PairCounts)
    for (net, plane, lower, upper, state), count in link_counts.items():
        counts = pairs[(net, plane, lower, upper)]
        counts.links += count
        counts.states[state or UNKNOWN] += count
    for key, ids in cables.items():
        pairs[key].cables = len(ids)
    tier_devices: dict[tuple, int] = defaultdict(int)
    for net, plane, device_tier, device in placed:
        if device in devices:
            tier_devices[(net, plane, device_tier)] += 1
    named_pairs = {key: {(devices[a][0], devices[b][0]) for a, b in node_leaf if a in devices and b in devices}
                   for key, node_leaf in unit_pairs.items()}
    return _views(pairs, tier_devices, named_pairs)


@dataclass
class _PairCounts:
    """What one (network, plane, lower tier, upper tier) adds up while the links are folded."""

    links: int = 0
    cables: int = 0  # distinct: a breakout's legs are one cable
    states: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def _views(pairs: dict, tier_devices: dict, unit_pairs: dict) -> list[FabricView]:
    """The folded counts as one FabricView per (network, plane), in network then plane order."""
    views: dict[tuple[str, int | None], FabricView] = {}

    def view(net: str, plane: int | None) -> FabricView:
        return views.setdefault((net, plane), FabricView(network=net, plane=plane))

    for (net, plane, lower, upper), counts in pairs.items():
        view(net, plane).links.append(TierLink(lower=lower, upper=upper, links=counts.links,
                                               cables=counts.cables, states=dict(counts.states)))
    for (net, plane, tier), count in tier_devices.items():
        view(net, plane).devices[tier] = count
    for key, node_leaf in unit_pairs.items():
        view(*key).units = _units(node_leaf)
    for v in views.values():
        v.links.sort(key=lambda link: (TIERS.index(link.lower), TIERS.index(link.upper)))
    return [views[key] for key in sorted(views, key=_plane_key)]


# --- SVG ---------------------------------------------------------------------------------------

WIDTH = 760
LEFT = 130  # tier boxes start here; the tier names sit left of it
BOX_H, NODE_BOX_H, GAP = 44, 72, 64


def _attrs(**values) -> str:
    """SVG attributes from keywords: class_ -> class, text_anchor -> text-anchor, data_links -> data-links."""
    return " ".join(f"{name.rstrip('_').replace('_', '-')}={quoteattr(str(value))}" for name, value in values.items())


def _text(x: float, y: float, content: str, **extra) -> str:
    return f"<text {_attrs(x=round(x, 1), y=round(y, 1), **extra)}>{escape(content)}</text>"


def _unit_boxes(units: list[Unit], top: float) -> list[str]:
    shown = units if len(units) <= MAX_UNITS_DRAWN else units[: MAX_UNITS_DRAWN - 1]
    slots = len(shown) + (len(units) > len(shown))
    inner = WIDTH - 20 - LEFT - 16
    width = inner / max(slots, 1)
    parts = []
    for i, unit in enumerate(shown):
        x = LEFT + 8 + i * width
        parts.append(
            f'<g {_attrs(class_="unit", data_nodes=unit.nodes, data_leaves=unit.leaves)}>'
            f'<rect {_attrs(x=round(x + 2, 1), y=top + 30, width=round(width - 4, 1), height=32, rx=3)}/>'
            + _text(x + width / 2, top + 44, f"SU{i + 1}", text_anchor="middle")
            + _text(x + width / 2, top + 57, f"{unit.nodes}", text_anchor="middle", class_="small")
            + "</g>"
        )
    if len(units) > len(shown):
        rest = units[len(shown):]
        x = LEFT + 8 + len(shown) * width
        box = _attrs(x=round(x + 2, 1), y=top + 30, width=round(width - 4, 1), height=32)
        parts.append(
            f'<g class="unit more"><rect {box}/>'
            + _text(x + width / 2, top + 50, f"+{len(rest)}", text_anchor="middle")
            + "</g>"
        )
    return parts


def fabric_svg(view: FabricView) -> str:
    """Tiers top (super-spines) to bottom (nodes), a box each, and one connector per tier pair with its
    link count."""
    tiers = list(reversed(view.tiers))
    tops: dict[str, float] = {}
    y = 40.0
    for tier in tiers:
        tops[tier] = y
        y += (NODE_BOX_H if tier == NODE else BOX_H) + GAP
    height = y - GAP + 20 + LEGEND_H
    title = f"{view.network} · {view.plane_label}"
    root = _attrs(class_="fabric-svg", width=WIDTH, height=round(height), viewBox=f"0 0 {WIDTH} {round(height)}",
                  data_network=view.network, data_plane=view.plane_param)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" {root}>',
        f"<title>{escape(title)}</title>",
        # Scoped to the class: an SVG inlined in a page shares the page's style sheet.
        "<style>svg.fabric-svg{font:12px sans-serif}.fabric-svg rect{fill:#eef3f8;stroke:#345;stroke-width:1}"
        ".fabric-svg .unit rect{fill:#fff}.fabric-svg line{stroke:#789;stroke-width:2}"
        ".fabric-svg .skip line{stroke-dasharray:4 3}.fabric-svg .small{font-size:12px}"
        ".fabric-svg .count{font-weight:bold}.fabric-svg .state line{stroke-dasharray:none;stroke-width:6}</style>",
        _text(10, 22, title, class_="count"),
    ]
    # Connectors first, so the boxes are drawn over their ends.
    pairs = [link for link in view.links if link.lower in tops and link.upper in tops]
    for i, link in enumerate(pairs):
        upper_bottom = tops[link.upper] + BOX_H
        lower_top = tops[link.lower]
        adjacent = abs(tiers.index(link.lower) - tiers.index(link.upper)) == 1
        x = LEFT + (WIDTH - 20 - LEFT) * (i + 1) / (len(pairs) + 1)
        classes = "link" if adjacent else "link skip"
        group = _attrs(class_=classes, data_lower=link.lower, data_upper=link.upper, data_links=link.links,
                       data_cables=link.cables)
        problems = [f"{n:,} {label.lower()}" for state, label, n in link.state_counts if n and state != FabricState.OK]
        parts.append(
            f"<g {group}>"
            f'<line {_attrs(x1=round(x, 1), y1=upper_bottom, x2=round(x, 1), y2=lower_top)}/>'
            + "".join(_state_segments(link, x, upper_bottom, lower_top))
            + _text(x + 8, (upper_bottom + lower_top) / 2 + 4, counted(link.links, "link"), class_="count")
            + _text(x + 8, (upper_bottom + lower_top) / 2 + 17, counted(link.cables, "cable"), class_="small")
            + (_text(x + 8, (upper_bottom + lower_top) / 2 + 30, ", ".join(problems), class_="small")
               if problems else "")
            + "</g>"
        )
    for tier in tiers:
        top, count = tops[tier], view.devices[tier]
        box_h = NODE_BOX_H if tier == NODE else BOX_H
        caption = plural(count, tier)
        if tier == NODE and view.units:
            caption += f" in {len(view.units)} unit{'s' if len(view.units) != 1 else ''}"
        parts.append(f'<g {_attrs(class_="tier", data_tier=tier, data_count=count)}>')
        parts.append(f'<rect {_attrs(x=LEFT, y=top, width=WIDTH - 20 - LEFT, height=box_h, rx=6)}/>')
        parts.append(_text(10, top + 18, NOUNS[tier][1].capitalize()))
        parts.append(_text(LEFT + 10, top + 18, caption, class_="count"))
        if tier == NODE:
            parts.extend(_unit_boxes(view.units, top))
        parts.append("</g>")
    parts.extend(_legend(height - LEGEND_H + 6))
    parts.append("</svg>")
    return "\n".join(parts)


LEGEND_H = 28


def _state_segments(link: TierLink, x: float, top: float, bottom: float) -> list[str]:
    """The connector split lengthwise by the share of its links in each fabric state, ok at the top."""
    parts, y, span = [], top, bottom - top
    for state, _, count in link.state_counts:
        if not count:
            continue
        length = span * count / max(link.links, 1)
        line = _attrs(x1=round(x, 1), y1=round(y, 1), x2=round(x, 1), y2=round(y + length, 1),
                      style=f"stroke:{STATE_COLOURS[state]}")
        parts.append(f'<g {_attrs(class_="state", data_state=state, data_links=count)}><line {line}/></g>')
        y += length
    return parts


def _legend(top: float) -> list[str]:
    parts, x = ['<g class="legend">'], 10.0
    for state, label, colour in FABRIC_STATES:
        swatch = _attrs(x=x, y=round(top, 1), width=14, height=14, style=f"fill:{colour};stroke:none", data_state=state)
        parts.append(f"<rect {swatch}/>")
        parts.append(_text(x + 19, top + 11, label))
        x += 28 + 7 * len(label)
    parts.append("</g>")
    return parts


# --- The rack heat map (progress page) ----------------------------------------------------------

CELL_W, CELL_H, CELL_GAP, ROW_LABEL_W = 64, 48, 6, 36
# Shades of green from "not started" to "done", by the share of the stage done (bringup.css's legend).
HEAT_STEPS = ((0, "#eef1f5", "none"), (1, "#d9f0d3", "1–24 %"), (25, "#a6d96a", "25–49 %"),
              (50, "#66bd63", "50–74 %"), (75, "#1a9850", "75–99 %"), (100, "#00682f", "done"))
HEAT_NOTHING = "#ffffff"  # a rack with nothing to do in this stage


def heat_colour(percent: int | None) -> str:
    if percent is None:
        return HEAT_NOTHING
    return [colour for floor, colour, _ in HEAT_STEPS if percent >= floor][-1]


def rack_heatmap_svg(racks, *, stage: str, rack_url) -> str:
    """One cell per rack (`selectors.RackProgress`), a line per row of the hall in position order, filled by
    the share of `stage` done in the rack, outlined red where a cable failed; each cell links to its rack
    (`rack_url(pk)`). Scales to the page: the progress table below lists the same racks as 44 px rows."""
    rows: dict[str, list] = defaultdict(list)
    for rack in racks:
        rows[rack.row].append(rack)
    ordered = sorted(rows, key=_natural)
    columns = max((len(line) for line in rows.values()), default=0)
    width = ROW_LABEL_W + columns * (CELL_W + CELL_GAP) + CELL_GAP
    height = max(len(ordered), 1) * (CELL_H + CELL_GAP) + CELL_GAP
    root = _attrs(class_="heatmap-svg", width=width, height=height, viewBox=f"0 0 {width} {height}", role="img",
                  data_stage=stage)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" {root}>',
        f"<title>Racks by {escape(stage)}</title>",
        "<style>svg.heatmap-svg{font:12px sans-serif}.heatmap-svg rect{stroke:#8891a0;stroke-width:1}"
        ".heatmap-svg .failed rect{stroke:#c62828;stroke-width:4}.heatmap-svg .dark text{fill:#fff}"
        ".heatmap-svg .row-label{font-weight:bold}</style>",
    ]
    for r, row in enumerate(ordered):
        y = CELL_GAP + r * (CELL_H + CELL_GAP)
        parts.append(_text(6, y + CELL_H / 2 + 4, row, class_="row-label"))
        for c, rack in enumerate(sorted(rows[row], key=lambda rack: (rack.position, _natural(rack.name)))):
            x = ROW_LABEL_W + CELL_GAP + c * (CELL_W + CELL_GAP)
            percent = rack.percent(stage)
            done, total = rack.done_of(stage)
            classes = " ".join(filter(None, ["rack", "failed" if rack.failed else "",
                                             "dark" if percent is not None and percent >= 50 else ""]))
            cell = _attrs(class_=classes, data_rack=rack.name, data_done=done, data_total=total,
                          data_failed=rack.failed)
            caption = "—" if percent is None else f"{percent}%"
            tip = f"{rack.name}: {done:,} of {total:,} {STAGE_NOUNS.get(stage, stage)}" + (
                f", {rack.failed:,} failed" if rack.failed else "")
            parts.append(
                f'<a href={quoteattr(rack_url(rack.pk))}><g {cell}><title>{escape(tip)}</title>'
                f'<rect {_attrs(x=x, y=y, width=CELL_W, height=CELL_H, rx=4, style=f"fill:{heat_colour(percent)}")}/>'
                + _text(x + CELL_W / 2, y + 19, rack.name, text_anchor="middle")
                + _text(x + CELL_W / 2, y + 36, caption, text_anchor="middle", class_="count")
                + "</g></a>"
            )
    parts.append("</svg>")
    return "\n".join(parts)


STAGE_NOUNS = {"racked": "devices racked", "optics": "optics seated", "installed": "cable ends installed",
               "verified": "cable ends verified"}
