"""The fabric view in summary form, as a reportlab Drawing: the acceptance report's chart "cabling.fabric"
(registered by cabling.report_sections, drawn by delivery's renderers at render time).

It draws the same picture as the fabric page (fabric_svg), smaller: one panel per network and plane (planes
whose figures are the same share a panel), each with its tiers bottom (nodes) to top (super-spines) as
boxes with their counts, and a connector per tier pair with its link count, split lengthwise by the links'
state in the latest fabric comparison. Its input is the chart's data, plain numbers and labels frozen in the
report's snapshot (cabling.report_sections.fabric_chart_data), so the number of shapes depends on the
number of networks, planes and tiers, never on the number of servers or cables.
"""

from __future__ import annotations

import math

from reportlab.graphics.shapes import Drawing, Group, Line, Rect, String
from reportlab.lib import colors
from reportlab.pdfbase.pdfmetrics import stringWidth

from ..choices import FabricState
from .fabric_svg import FABRIC_STATES, STATE_COLOURS

FONT, BOLD = "Helvetica", "Helvetica-Bold"
PANEL_MIN_WIDTH = 150  # narrower than this, the tier captions no longer fit: fewer panels per line
LEGEND_HEIGHT = 16
PAD = 4
BOX_FILL, BOX_STROKE, UNKNOWN_COLOUR, PROBLEM_COLOUR = "#eef3f8", "#334455", "#9aa3b1", "#8b1a1a"
MIN_FONT, MAX_FONT = 5.0, 9.0


def fabric_drawing(data: dict, *, width: float, height: float) -> Drawing:
    """Panels in a grid filling `width` x `height` points, the state legend along the bottom."""
    drawing = Drawing(width, height)
    views = data.get("views") or []
    if not views:
        drawing.add(String(width / 2, height / 2, "No cables in the plan yet.", fontName=FONT, fontSize=MAX_FONT,
                           textAnchor="middle"))
        return drawing
    columns = max(1, min(len(views), int(width // PANEL_MIN_WIDTH)))
    rows = math.ceil(len(views) / columns)
    panel_w, panel_h = width / columns, (height - LEGEND_HEIGHT) / rows
    for index, view in enumerate(views):
        row, column = divmod(index, columns)
        bottom = height - (row + 1) * panel_h
        drawing.add(_panel(view, column * panel_w, bottom, panel_w, panel_h))
    drawing.add(_legend(data.get("states") or [[state, label] for state, label, _ in FABRIC_STATES], width))
    return drawing


def _fitted(text: str, font: str, size: float, room: float) -> str:
    """`text` cut with an ellipsis so that it fits `room` points."""
    if stringWidth(text, font, size) <= room:
        return text
    while text and stringWidth(text + "…", font, size) > room:
        text = text[:-1]
    return text + "…"


def _panel(view: dict, left: float, bottom: float, width: float, height: float) -> Group:
    tiers = view.get("tiers") or []
    size = max(MIN_FONT, min(MAX_FONT, height / 16, width / 20))
    group = Group()
    title_y = bottom + height - PAD - size
    group.add(String(left + PAD, title_y, _fitted(view.get("title", ""), BOLD, size, width - 2 * PAD),
                     fontName=BOLD, fontSize=size))
    if not tiers:
        return group
    # Boxes top (highest tier) to bottom, gaps as tall as a box: the connectors and their counts go there.
    room = title_y - PAD - (bottom + PAD)
    box_h = min(room / (2 * len(tiers) - 1), 3 * size)
    gap = (room - box_h * len(tiers)) / max(len(tiers) - 1, 1)
    box_left, box_w = left + PAD, width - 2 * PAD
    box_bottom: dict[str, float] = {}
    for position, tier in enumerate(reversed(tiers)):
        box_bottom[tier["tier"]] = title_y - PAD - box_h - position * (box_h + gap)
    links = [link for link in view.get("links") or [] if link["lower"] in box_bottom and link["upper"] in box_bottom]
    # Links skipping a tier pass beside the labels of the gaps they cross: rightmost, out of their way.
    order = [tier["tier"] for tier in tiers]
    links.sort(key=lambda link: abs(order.index(link["upper"]) - order.index(link["lower"])) > 1)
    line_w = max(2.0, size / 2)
    # (x, top, bottom, link) of each connector, evenly spaced across the boxes.
    placed = [(box_left + box_w * (number + 1) / (len(links) + 1), box_bottom[link["upper"]],
               box_bottom[link["lower"]] + box_h, link) for number, link in enumerate(links)]
    for x, top, low, link in placed:  # connectors first: the boxes are drawn over their ends
        _connector(group, link, x, top, low, line_w)
    for tier in tiers:
        y = box_bottom[tier["tier"]]
        group.add(Rect(box_left, y, box_w, box_h, rx=2, ry=2, fillColor=colors.HexColor(BOX_FILL),
                       strokeColor=colors.HexColor(BOX_STROKE), strokeWidth=0.6))
        caption = _fitted(tier.get("label", ""), FONT, size, box_w - 2 * PAD)
        group.add(String(box_left + box_w / 2, y + (box_h - size) / 2 + size * 0.2, caption, fontName=FONT,
                         fontSize=size, textAnchor="middle"))
    for x, top, _, link in placed:
        # Between the connectors that pass beside the label (a link skipping a tier crosses the gap below).
        label_low = top - size * 2.6
        beside = [other for other, other_top, other_low, _ in placed
                  if other != x and other_low <= top and other_top >= label_low]
        limits = (max([o for o in beside if o < x], default=box_left), min([o for o in beside if o > x],
                                                                             default=box_left + box_w))
        _counts(group, link, x, top, size, line_w, limits)
    return group


def _connector(group: Group, link: dict, x: float, top: float, low: float, line_w: float) -> None:
    """A line from the upper tier's box down to the lower one's, split lengthwise by the share of its links
    in each fabric state (ok at the top)."""
    total = max(int(link.get("links") or 0), 1)
    states = link.get("states") or {}
    y = top
    ordered = [state for state, _, _ in FABRIC_STATES] + sorted(set(states) - set(STATE_COLOURS))
    for state in ordered:
        count = int(states.get(state) or 0)
        if not count:
            continue
        length = min((top - low) * count / total, y - low)  # states adding up to more than the links: cut
        group.add(Line(x, y, x, y - length, strokeWidth=line_w,
                       strokeColor=colors.HexColor(STATE_COLOURS.get(state, UNKNOWN_COLOUR))))
        y -= length
    if y > low:  # links with no state in the data: the rest of the line is grey
        group.add(Line(x, y, x, low, strokeWidth=line_w, strokeColor=colors.HexColor(UNKNOWN_COLOUR)))


def _counts(group: Group, link: dict, x: float, top: float, size: float, line_w: float,
            limits: tuple[float, float]) -> None:
    """The link count just under the upper box, and the links not seen ok in words (a handful of missing
    links out of 8,192 is a hairline on the connector), right of the connector, or left of it where the
    right has no room, cut to fit between its neighbours."""
    links = int(link.get("links") or 0)
    states = link.get("states") or {}
    count_text = f"{links:,} link{'' if links == 1 else 's'}"
    problems = ", ".join(f"{int(states[state]):,} {label.lower()}" for state, label, _ in FABRIC_STATES
                         if state != FabricState.OK and states.get(state))
    small = size * 0.85
    needed = max(stringWidth(count_text, BOLD, size), stringWidth(problems, FONT, small))
    offset = line_w / 2 + 2
    right_room, left_room = limits[1] - x - 2 * offset, x - limits[0] - 2 * offset
    on_right = right_room >= needed or right_room >= left_room
    room = right_room if on_right else left_room
    at, anchor = (x + offset, "start") if on_right else (x - offset, "end")
    group.add(String(at, top - size * 1.2, _fitted(count_text, BOLD, size, room), fontName=BOLD, fontSize=size,
                     textAnchor=anchor))
    if problems:
        group.add(String(at, top - size * 2.3, _fitted(problems, FONT, small, room), fontName=FONT, fontSize=small,
                         textAnchor=anchor, fillColor=colors.HexColor(PROBLEM_COLOUR)))


def _legend(states: list, width: float) -> Group:
    group, x, size = Group(), PAD, 7.0
    for state, label in states:
        swatch = colors.HexColor(STATE_COLOURS.get(state, UNKNOWN_COLOUR))
        group.add(Rect(x, 3, 9, 9, fillColor=swatch, strokeColor=None))
        group.add(String(x + 12, 4.5, label, fontName=FONT, fontSize=size))
        x += 12 + stringWidth(label, FONT, size) + 10
        if x > width:
            break
    return group
