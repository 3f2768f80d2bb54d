"""Charts of the validation pages: reportlab.graphics drawings rendered to SVG that a page inlines.

Pure functions of plain numbers (no Django, no models): selectors turn results into figures, these turn
figures into pictures, and the page prints the same figures as a table beside the picture.

Every mark a reader or a test may look for carries a class and its figure as data- attributes (reportlab
passes a shape's `_svgAttrs` through to the SVG element): bars and heatmap cells (`bar`, `cell`), plotted
points (`point`), axis ticks (`tick`, centred on the value's position) and threshold lines (`threshold`,
drawn as thin rectangles because reportlab's lines cannot carry attributes). reportlab draws with the
origin at the bottom left and flips the whole picture once, so a larger y attribute is higher up.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from io import BytesIO
from xml.sax.saxutils import escape

from PIL import Image
from reportlab.graphics import renderSVG
from reportlab.graphics.shapes import Drawing, Group, PolyLine, Rect, String
from reportlab.lib import colors
from reportlab.pdfbase.pdfmetrics import stringWidth

from .criteria import fmt_bytes, fmt_num, fmt_sci

SVG_CONTENT_TYPE = "image/svg+xml"

# The page's palette (static/css/bringup.css), so a chart's red is the badge's red.
PASS_COLOUR = "#2e7d32"
WARN_COLOUR = "#b26a00"
FAIL_COLOUR = "#c62828"
BAR_COLOUR = "#1f5fbf"
AXIS_COLOUR = "#5b6677"
GRID_COLOUR = "#d8dce3"
MISSING_COLOUR = "#c9ced6"
HEAT_LOW = "#e8f0fe"  # the slowest pair of a matrix
HEAT_HIGH = "#1f5fbf"  # the fastest
LEVEL_COLOURS = {"pass": PASS_COLOUR, "warn": WARN_COLOUR, "fail": FAIL_COLOUR, "error": AXIS_COLOUR}
# Series colours stay clear of the threshold colours, so a line is never mistaken for a limit.
SERIES_COLOURS = (BAR_COLOUR, "#7b1fa2", "#00838f", "#6d4c41", AXIS_COLOUR)

FONT = "Helvetica"
FONT_SIZE = 12  # legible on a tablet at arm's length: no chart text is smaller (pages draw at 1 unit = 1 px)
CHAR_WIDTH = 0.6 * FONT_SIZE  # about the width of a Helvetica character, for the room a label needs
BER_FLOOR = 1e-20  # BERs below this (mlxlink prints 1.5e-254 for "none") sit on the axis floor
THRESHOLD_WIDTH = 1.5


# ---------------------------------------------------------------------------------------------------
# Scales and ticks


@dataclass(frozen=True)
class Scale:
    """Maps a value in [lo, hi] onto [start, end] of the drawing, linearly or by its logarithm. Values
    outside the range are clamped to it, so an outlier sits on the edge instead of off the picture."""

    lo: float
    hi: float
    start: float
    end: float
    log: bool = False

    def at(self, value: float) -> float:
        value = min(max(value, self.lo), self.hi)
        if self.log:
            lo, hi, value = math.log10(self.lo), math.log10(self.hi), math.log10(value)
        else:
            lo, hi = self.lo, self.hi
        if hi == lo:
            return (self.start + self.end) / 2
        return self.start + (value - lo) / (hi - lo) * (self.end - self.start)


def nice_step(span: float, count: int = 5) -> float:
    """A 1, 2 or 5 times a power of ten step that cuts `span` into about `count` parts."""
    if span <= 0:
        return 1.0
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def linear_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    step = nice_step(hi - lo, count)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, value = [], first
    while value <= hi + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def decade_ticks(lo: float, hi: float) -> list[float]:
    return [10.0**k for k in range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9) + 1)]


def nice_ceiling(value: float) -> float:
    """The first tick of a 5-part axis at or above `value`."""
    step = nice_step(value)
    return math.ceil(value / step - 1e-9) * step


# ---------------------------------------------------------------------------------------------------
# Drawing helpers


def _colour(hex_colour: str):
    return colors.HexColor(hex_colour)


def _data(value: float | int | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _tagged(shape, css_class: str, **data):
    """Give a shape a class and data- attributes in the SVG (data_x -> data-x)."""
    attrs = {"class": css_class}
    attrs.update({"data-" + key.replace("_", "-"): _data(value) for key, value in data.items()})
    shape._svgAttrs = attrs
    return shape


def _box(x: float, y: float, width: float, height: float, fill: str, css_class: str, *, href: str = "",
         href_title: str = "", **data) -> Rect:
    """A filled mark; with `href`, reportlab wraps it in an SVG link (<a xlink:href>) a reader can follow."""
    rect = Rect(x, y, width, height, fillColor=_colour(fill), strokeColor=None, strokeWidth=0)
    if href:  # renderSVG reads these; reportlab's attribute check does not know them, hence __dict__
        rect.__dict__.update(hrefURL=href, hrefTitle=href_title)
    return _tagged(rect, css_class, **data)


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """The width `text` takes in the charts' font: legends are laid out by it, not by a guess per character,
    so a figure's unit is never cut ("472.4 Gb/")."""
    return stringWidth(text, FONT, size)


def _heat_scale(drawing, x: float, y: float, lo: float, hi: float, unit: str, *, step: float = 8) -> float:
    """The low figure, a ramp of ten colours and the high figure in one row from (x, y); returns where it ends."""
    low_text, high_text = f"{fmt_num(lo, 1)} {unit}", f"{fmt_num(hi, 1)} {unit}"
    drawing.add(_text(x, y, low_text))
    ramp = x + text_width(low_text) + 6
    for number in range(10):
        drawing.add(Rect(ramp + number * step, y - 1, step, 9, strokeColor=None,
                         fillColor=_colour(heat_colour(lo + (hi - lo) * number / 9, lo=lo, hi=hi))))
    high_x = ramp + 10 * step + 6
    drawing.add(_text(high_x, y, high_text))
    return high_x + text_width(high_text)


def heat_scale_width(lo: float, hi: float, unit: str, *, step: float = 8) -> float:
    """How wide _heat_scale's row is."""
    return text_width(f"{fmt_num(lo, 1)} {unit}") + 6 + 10 * step + 6 + text_width(f"{fmt_num(hi, 1)} {unit}")


def _text(x: float, y: float, text: str, *, anchor: str = "start", size: float = FONT_SIZE, fill=AXIS_COLOUR):
    return String(x, y, text, fontName=FONT, fontSize=size, fillColor=_colour(fill), textAnchor=anchor)


def _vertical_text(x: float, y: float, text: str, *, size: float = FONT_SIZE) -> Group:
    """Text read bottom to top, its end at (x, y): for crowded x-axis labels."""
    group = Group(_text(0, 0, text, anchor="end", size=size))
    group.transform = (0, 1, -1, 0, x, y)
    return group


def _hline(drawing: Drawing, x1: float, x2: float, y: float, css_class: str, colour: str, **data) -> None:
    drawing.add(_box(x1, y - THRESHOLD_WIDTH / 2, x2 - x1, THRESHOLD_WIDTH, colour, css_class, **data))


def _vline(drawing: Drawing, x: float, y1: float, y2: float, css_class: str, colour: str, **data) -> None:
    drawing.add(_box(x - THRESHOLD_WIDTH / 2, y1, THRESHOLD_WIDTH, y2 - y1, colour, css_class, **data))


@dataclass(frozen=True)
class Plot:
    """The plotting area inside a drawing (margins hold the axes' labels)."""

    left: float
    bottom: float
    right: float
    top: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.top - self.bottom


def _frame(drawing: Drawing, plot: Plot) -> None:
    drawing.add(Rect(plot.left, plot.bottom, plot.width, plot.height, fillColor=None,
                     strokeColor=_colour(GRID_COLOUR), strokeWidth=1))


def _x_ticks(drawing, plot: Plot, scale: Scale, ticks: Sequence[float], label: Callable[[float], str]) -> None:
    for value in ticks:
        x = scale.at(value)
        drawing.add(_box(x - 0.5, plot.bottom - 4, 1, 4, AXIS_COLOUR, "tick", axis="x", value=value))
        drawing.add(_text(x, plot.bottom - 14, label(value), anchor="middle"))


def _y_ticks(
    drawing, plot: Plot, scale: Scale, ticks: Sequence[float], label: Callable[[float], str], grid: bool = True
) -> None:
    for value in ticks:
        y = scale.at(value)
        if grid:
            drawing.add(Rect(plot.left, y - 0.25, plot.width, 0.5, fillColor=_colour(GRID_COLOUR), strokeColor=None))
        drawing.add(_box(plot.left - 4, y - 0.5, 4, 1, AXIS_COLOUR, "tick", axis="y", value=value))
        drawing.add(_text(plot.left - 6, y - 3, label(value), anchor="end"))


def _axis_titles(drawing, plot: Plot, x_title: str, y_title: str) -> None:
    if x_title:
        drawing.add(_text((plot.left + plot.right) / 2, 6, x_title, anchor="middle"))
    if y_title:
        drawing.add(_text(plot.left, plot.top + 8, y_title))


def _legend(drawing, x: float, y: float, entries: Sequence[tuple[str, str]]) -> None:
    """Swatches and names in one row from (x, y), right to left so the row ends at x."""
    for name, colour in reversed(entries):
        width = 12 + text_width(name)
        x -= width
        drawing.add(Rect(x, y, 8, 8, fillColor=_colour(colour), strokeColor=None))
        drawing.add(_text(x + 11, y + 1, name))
        x -= 8


_XML_HEADER = re.compile(r"^.*?(?=<svg)", re.S)


def render(drawing: Drawing, *, title: str, description: str = "", css_class: str = "") -> str:
    """The drawing as an <svg> element to inline in a page: no XML prologue, a real <title> and <desc>,
    and no fixed ids, so several charts can share a page."""
    svg = renderSVG.drawToString(
        drawing,
        useClip=True,  # a clip attribute instead of a clipPath with id="clip" that every chart would share
        svgAttrs={"class": f"chart {css_class}".strip(), "role": "img"},
    )
    svg = _XML_HEADER.sub("", svg, count=1)
    svg = svg.replace("<title>...</title>", f"<title>{escape(title)}</title>", 1)
    svg = svg.replace("<desc>...</desc>", f"<desc>{escape(description or title)}</desc>", 1)
    return svg.replace(' id="group"', "", 1)


# ---------------------------------------------------------------------------------------------------
# Bandwidth histogram against line rate


@dataclass(frozen=True)
class Bin:
    lo: float
    hi: float
    count: int


@dataclass(frozen=True)
class Threshold:
    value: float
    level: str  # "fail", "warn" or "line" (a reference such as the line rate)
    label: str


THRESHOLD_COLOURS = {"fail": FAIL_COLOUR, "warn": WARN_COLOUR, "line": AXIS_COLOUR}


def histogram(values: Sequence[float], *, lo: float, hi: float, bins: int) -> list[Bin]:
    """Counts of `values` in `bins` equal bins over [lo, hi); values outside land in the end bins."""
    width = (hi - lo) / bins
    counts = [0] * bins
    for value in values:
        index = min(max(int((value - lo) // width), 0), bins - 1)
        counts[index] += 1
    return [Bin(lo + i * width, lo + (i + 1) * width, counts[i]) for i in range(bins)]


def bandwidth_bins(values: Sequence[float], *, line_rate: float, bin_gbps: float | None = None) -> list[Bin]:
    """Bins from 0 to the line rate (or the fastest value, if beyond): 40 of them unless told."""
    top = max([line_rate, *values]) if values else line_rate
    width = bin_gbps or nice_step(top, 40)
    return histogram(values, lo=0.0, hi=math.ceil(top / width) * width, bins=max(1, math.ceil(top / width)))


def histogram_svg(
    bins: Sequence[Bin],
    *,
    thresholds: Sequence[Threshold] = (),
    title: str,
    x_title: str = "Gb/s",
    width: float = 720,
    height: float = 260,
) -> str:
    drawing = histogram_drawing(bins, thresholds=thresholds, x_title=x_title, width=width, height=height)
    return render(drawing, title=title, css_class="histogram")


def histogram_drawing(
    bins: Sequence[Bin],
    *,
    thresholds: Sequence[Threshold] = (),
    x_title: str = "Gb/s",
    y_title: str = "targets",
    width: float = 720,
    height: float = 260,
) -> Drawing:
    """Counts per bin as bars on a linear axis, with threshold lines (fail, warn, line rate) across it."""
    drawing = Drawing(width, height)
    plot = Plot(left=44, bottom=34, right=width - 12, top=height - 34)
    lo, hi = bins[0].lo, bins[-1].hi
    x = Scale(lo, hi, plot.left, plot.right)
    y_top = nice_ceiling(max(b.count for b in bins) or 1)
    y = Scale(0, y_top, plot.bottom, plot.top)
    _frame(drawing, plot)
    _y_ticks(drawing, plot, y, [t for t in linear_ticks(0, y_top) if t == int(t)], lambda v: f"{v:.0f}")
    _x_ticks(drawing, plot, x, linear_ticks(lo, hi, 8), lambda v: fmt_num(v))
    for b in bins:
        if b.count:
            left, right = x.at(b.lo), x.at(b.hi)
            drawing.add(_box(left + 0.5, plot.bottom, max(right - left - 1, 0.5), y.at(b.count) - plot.bottom,
                             BAR_COLOUR, "bar", lo=b.lo, hi=b.hi, count=b.count))
    for t in thresholds:
        _vline(drawing, x.at(t.value), plot.bottom, plot.top, "threshold", THRESHOLD_COLOURS[t.level],
               level=t.level, value=t.value)
    _axis_titles(drawing, plot, x_title, y_title)
    _legend(drawing, plot.right, plot.top + 6,
            [("measured", BAR_COLOUR)] + [(t.label, THRESHOLD_COLOURS[t.level]) for t in thresholds])
    return drawing


# ---------------------------------------------------------------------------------------------------
# Bandwidth matrix heatmap


def _blend(low: str, high: str, fraction: float) -> str:
    a, b = _colour(low), _colour(high)
    fraction = min(max(fraction, 0.0), 1.0)
    mixed = [ca + (cb - ca) * fraction for ca, cb in ((a.red, b.red), (a.green, b.green), (a.blue, b.blue))]
    return "#" + "".join(f"{round(c * 255):02x}" for c in mixed)


def heat_colour(value: float, *, lo: float, hi: float) -> str:
    return _blend(HEAT_LOW, HEAT_HIGH, (value - lo) / (hi - lo) if hi > lo else 1.0)


def heatmap_svg(
    nodes: Sequence[str],
    cells: Mapping[tuple[str, str], float | None],
    *,
    flags: Mapping[tuple[str, str], str] | None = None,
    links: Mapping[tuple[str, str], str] | None = None,
    title: str,
    unit: str = "Gb/s",
) -> str:
    return render(heatmap_drawing(nodes, cells, flags=flags, links=links, unit=unit), title=title,
                  css_class="heatmap")


def heatmap_drawing(
    nodes: Sequence[str],
    cells: Mapping[tuple[str, str], float | None],
    *,
    flags: Mapping[tuple[str, str], str] | None = None,
    links: Mapping[tuple[str, str], str] | None = None,
    unit: str = "Gb/s",
) -> Drawing:
    """Node x node, one cell per measured pair in the lower triangle (row below column in `nodes`
    order; a pair given either way round lands in the same cell). A cell's colour runs from light (the
    slowest pair) to dark (the fastest); flagged pairs (`flags`: pair -> "fail" or "warn") are filled
    with the level's colour instead, and unmeasured pairs (value None) grey. A cell with a link (`links`:
    pair -> URL) leads to it. Names are written at FONT_SIZE, every n-th one when the cells are smaller."""
    flags, links = flags or {}, links or {}
    index = {name: i for i, name in enumerate(nodes)}
    count = len(nodes)
    cell = min(28.0, max(8.0, 720.0 / max(count, 1)))
    label_room = 6 + CHAR_WIDTH * max((len(n) for n in nodes), default=4)
    grid = cell * count
    width, height = max(label_room + grid + 16, 480), label_room + grid + 54
    drawing = Drawing(width, height)
    top = label_room + grid  # rows run down from here; columns run right from label_room
    known = [v for v in cells.values() if v is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 1.0)
    for pair, value in cells.items():
        a, b = pair
        if a not in index or b not in index or a == b:
            continue
        row, col = max(index[a], index[b]), min(index[a], index[b])
        level = flags.get(pair) or flags.get((b, a))
        if level in LEVEL_COLOURS and level != "pass":
            fill = LEVEL_COLOURS[level]
        elif value is None:
            fill = MISSING_COLOUR
        else:
            fill = heat_colour(value, lo=lo, hi=hi)
        drawing.add(_box(label_room + col * cell, top - (row + 1) * cell, cell - 0.5, cell - 0.5, fill, "cell",
                         href=links.get(pair) or links.get((b, a)) or "", href_title=f"{a} ~ {b}",
                         row=nodes[row], col=nodes[col], value=value, flag=level or ""))
    every = max(1, math.ceil((FONT_SIZE + 1) / cell))
    for i in range(0, count, every):
        name = nodes[i]
        drawing.add(_text(label_room - 3, top - (i + 0.5) * cell - FONT_SIZE / 3, name, anchor="end"))
        drawing.add(_vertical_text(label_room + (i + 0.5) * cell + FONT_SIZE / 3, label_room - 3, name))
    legend_y = height - 14
    _heat_scale(drawing, label_room, legend_y, lo, hi, unit)
    _legend(drawing, width - 8, legend_y - 18, [("flagged: fail", FAIL_COLOUR),
                                                ("flagged: slow or uneven", WARN_COLOUR),
                                                ("not measured", MISSING_COLOUR)])
    return drawing


# ---------------------------------------------------------------------------------------------------
# A large matrix as an image (a 1,024-node run has half a million pairs: no SVG of that many marks)

PNG_CONTENT_TYPE = "image/png"
MATRIX_IMAGE_SIDE = 1024  # pixels: a matrix is drawn at the largest whole number of pixels per pair within it
MATRIX_MAX_NODES = 4096  # a pixel per pair up to this many nodes (16 MB of pixels); beyond, a pixel per block
HEAT_STEPS = 16  # the colour scale in 16 steps: a palette image compresses, a pixel's colour reads the same
# Palette indexes: the background (the diagonal, pairs not measured at all), then the levels, then the ramp.
_BACKGROUND, _MISSING, _WARN, _FAIL, _RAMP = 0, 1, 2, 3, 4


def heat_steps(lo: float, hi: float) -> list[str]:
    """The colours of the image's scale, from the slowest pair's to the fastest's (the page's legend)."""
    return [heat_colour(lo + (hi - lo) * step / (HEAT_STEPS - 1), lo=lo, hi=hi) for step in range(HEAT_STEPS)]


def _palette(lo: float, hi: float) -> list[int]:
    colours = ["#ffffff", MISSING_COLOUR, WARN_COLOUR, FAIL_COLOUR, *heat_steps(lo, hi)]
    return [int(c[i : i + 2], 16) for c in colours for i in (1, 3, 5)]


def matrix_block(count: int, *, max_nodes: int = MATRIX_MAX_NODES, side: int = MATRIX_IMAGE_SIDE) -> int:
    """How many nodes a row of the image stands for: one up to `max_nodes` (a pixel square per pair: the page
    names the pair under the pointer), beyond, enough of them that the image is at most `side` pixels (a
    pixel per block of pairs, as the report's heat map aggregates). The bound keeps the image's memory at
    max_nodes^2 bytes whatever the run: 10,000 nodes would be 100 MB a pixel per pair, 100,000 nodes 10 GB."""
    return 1 if count <= max_nodes else math.ceil(count / side)


def matrix_png(
    count: int,
    rows: Sequence[int],
    cols: Sequence[int],
    values: Sequence[float],
    levels: Sequence[int],
    *,
    side: int = MATRIX_IMAGE_SIDE,
    max_nodes: int = MATRIX_MAX_NODES,
) -> tuple[bytes, float | None, float | None]:
    """A `count` x `count` matrix as a PNG, both triangles (row i and column i are node i, so a node's pairs
    read along its row): pair k is (rows[k], cols[k]) with its value (NaN: not measured) and its level (an
    index of LEVEL_CODES). Colours as heatmap_drawing's: fail and warn in their level's colour, else the
    value on a light (slowest) to dark (fastest) scale in HEAT_STEPS steps. Beyond `max_nodes` a pixel is a
    block of nodes (matrix_block) in its worst pair's colour: its worst level, else its slowest pair. Returns
    the PNG and the scale's ends (None without a measured pair)."""
    known = [v for v in values if not math.isnan(v)]
    lo, hi = (min(known), max(known)) if known else (None, None)
    span = (hi - lo) if known and hi > lo else 0.0
    count = max(count, 1)  # a run without pairs yet: one background pixel
    block = matrix_block(count, max_nodes=max_nodes, side=side)
    if block > 1:
        count, cells = _worst_of_blocks(count, block, rows, cols, values, levels)
    else:
        cells = ((a, b, value, level) for a, b, value, level in zip(rows, cols, values, levels, strict=True) if a != b)
    pixels = bytearray(count * count)  # _BACKGROUND: the diagonal, and pairs not in the run
    for a, b, value, level in cells:
        index = _pixel(value, level, lo or 0.0, span)
        pixels[a * count + b] = index
        pixels[b * count + a] = index
    image = Image.frombuffer("P", (count, count), pixels, "raw", "P", 0, 1)  # no copy of the pixels
    image.putpalette(_palette(lo or 0.0, hi or 1.0))
    scale = max(1, side // count)
    if scale > 1:
        image = image.resize((count * scale, count * scale), Image.Resampling.NEAREST)
    out = BytesIO()
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue(), lo, hi


def _pixel(value: float, level: int, lo: float, span: float) -> int:
    """The palette index of a pair (or a block): its level's colour if flagged, else its place on the scale."""
    if level == 2:
        return _FAIL
    if level == 1:
        return _WARN
    if math.isnan(value):
        return _MISSING
    step = int((value - lo) / span * HEAT_STEPS) if span else HEAT_STEPS - 1
    return _RAMP + min(max(step, 0), HEAT_STEPS - 1)


def _worst_of_blocks(count, block, rows, cols, values, levels):
    """The grid of blocks of `block` nodes (ceil(count / block) a side) and, for each block holding a pair,
    (row, column, slowest value, worst level): the lower triangle, the blocks on the diagonal included (their
    pairs are real pairs). The slowest value is NaN when none of the block's pairs was measured."""
    grid = math.ceil(count / block)
    worst = bytearray(grid * grid)
    slowest = array("d", [math.inf]) * (grid * grid)
    held = bytearray(grid * grid)
    for a, b, value, level in zip(rows, cols, values, levels, strict=True):
        if a == b:
            continue
        i, j = a // block, b // block
        cell = max(i, j) * grid + min(i, j)
        held[cell] = 1
        worst[cell] = max(worst[cell], level)
        if value < slowest[cell]:  # NaN compares false: a pair without a figure leaves the block's slowest
            slowest[cell] = value
    cells = (
        (cell // grid, cell % grid, math.nan if slowest[cell] == math.inf else slowest[cell], worst[cell])
        for cell in range(grid * grid)
        if held[cell]
    )  # one at a time: a million blocks as tuples would be the memory the blocks save
    return grid, cells


# ---------------------------------------------------------------------------------------------------
# Curves: NCCL bus bandwidth against message size, and values over time


def _series_line(drawing, points: Sequence[tuple[float, float]], colour: str) -> None:
    if len(points) > 1:
        drawing.add(PolyLine([c for p in points for c in p], strokeColor=_colour(colour), strokeWidth=1.5))


def _point(drawing, x: float, y: float, colour: str, **data) -> None:
    drawing.add(_box(x - 2.5, y - 2.5, 5, 5, colour, "point", **data))


def _size_ticks(lo: int, hi: int) -> list[float]:
    """Powers of two between the sizes, at most about nine of them."""
    first, last = math.ceil(math.log2(lo)), math.floor(math.log2(hi))
    step = max(1, math.ceil((last - first) / 8))
    return [float(2**k) for k in range(first, last + 1, step)]


def nccl_curve_svg(
    points: Sequence[tuple[int, float]],
    *,
    thresholds: Sequence[Threshold] = (),
    title: str,
    width: float = 720,
    height: float = 280,
) -> str:
    """Bus bandwidth (GB/s) against message size on a log x axis, with the profile's figures as lines."""
    drawing = nccl_curves_drawing({"busbw": points}, thresholds=thresholds, width=width, height=height)
    return render(drawing, title=title, css_class="nccl-curve")


def nccl_curves_drawing(
    series: Mapping[str, Sequence[tuple[int, float]]],
    *,
    thresholds: Sequence[Threshold] = (),
    width: float = 720,
    height: float = 280,
) -> Drawing:
    """One line per named series of (message size, bus bandwidth) points; points of several series carry
    their series' name (data-series)."""
    drawing = Drawing(width, height)
    points = [point for curve in series.values() for point in curve]
    plot = Plot(left=50, bottom=34, right=width - 14, top=height - 34)
    sizes = [max(int(s), 1) for s, _ in points] or [1, 2]
    lo, hi = min(sizes), max(max(sizes), min(sizes) * 2)
    x = Scale(lo, hi, plot.left, plot.right, log=True)
    top = nice_ceiling(max([bw for _, bw in points] + [t.value for t in thresholds] + [1]) * 1.05)
    y = Scale(0, top, plot.bottom, plot.top)
    _frame(drawing, plot)
    _y_ticks(drawing, plot, y, linear_ticks(0, top), lambda v: fmt_num(v))
    _x_ticks(drawing, plot, x, _size_ticks(lo, hi), lambda v: fmt_bytes(int(v)).replace(" ", ""))
    for t in thresholds:
        _hline(drawing, plot.left, plot.right, y.at(t.value), "threshold", THRESHOLD_COLOURS[t.level],
               level=t.level, value=t.value)
    named = len(series) > 1
    for (name, curve), colour in zip(series.items(), SERIES_COLOURS * 4, strict=False):
        placed = [(x.at(max(int(s), 1)), y.at(bw)) for s, bw in curve]
        _series_line(drawing, placed, colour)
        for (size, busbw), (px, py) in zip(curve, placed, strict=True):
            _point(drawing, px, py, colour, **({"series": name} if named else {}), size=int(size), value=busbw)
    _axis_titles(drawing, plot, "message size (log scale)", "bus bandwidth, GB/s")
    _legend(drawing, plot.right, plot.top + 6,
            [(name, colour) for name, colour in zip(series, SERIES_COLOURS * 4, strict=False)]
            + [(t.label, THRESHOLD_COLOURS[t.level]) for t in thresholds])
    return drawing


def timeline_svg(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    log: bool = False,
    thresholds: Sequence[Threshold] = (),
    title: str,
    y_title: str = "",
    width: float = 520,
    height: float = 200,
) -> str:
    """Readings in the order they were taken (evenly spaced, first and last labelled), one line per
    series; on a log axis values below the floor sit on it."""
    drawing = timeline_drawing(labels, series, log=log, thresholds=thresholds, y_title=y_title, width=width,
                               height=height)
    return render(drawing, title=title, css_class="timeline")


def timeline_drawing(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    log: bool = False,
    thresholds: Sequence[Threshold] = (),
    y_title: str = "",
    width: float = 520,
    height: float = 200,
) -> Drawing:
    drawing = Drawing(width, height)
    plot = Plot(left=50, bottom=34, right=width - 14, top=height - 34)
    count = max(len(labels), 1)
    slot = plot.width / count
    values = [v for vs in series.values() for v in vs if v is not None]
    if log:
        positive = [v for v in values if v > 0] + [t.value for t in thresholds]
        lo = max(min(positive, default=BER_FLOOR), BER_FLOOR)
        lo = 10.0 ** math.floor(math.log10(lo))
        hi = 10.0 ** math.ceil(math.log10(max(positive, default=1e-6)) + 1e-9)
        hi = max(hi, lo * 10)
        y = Scale(lo, hi, plot.bottom, plot.top, log=True)
        ticks, fmt = decade_ticks(lo, hi), fmt_sci
        ticks = ticks[:: max(1, math.ceil(len(ticks) / 6))]
    else:
        top = nice_ceiling(max(values + [t.value for t in thresholds] + [1]))
        y = Scale(0, top, plot.bottom, plot.top)
        ticks, fmt = [t for t in linear_ticks(0, top) if t == int(t)], lambda v: f"{v:.0f}"
    _frame(drawing, plot)
    _y_ticks(drawing, plot, y, ticks, fmt)
    for position in sorted({0, count - 1}):
        if position < len(labels):
            drawing.add(_text(plot.left + slot * (position + 0.5), plot.bottom - 14, labels[position],
                              anchor="middle"))
    for t in thresholds:
        _hline(drawing, plot.left, plot.right, y.at(t.value), "threshold", THRESHOLD_COLOURS[t.level],
               level=t.level, value=t.value)
    for (name, readings), colour in zip(series.items(), SERIES_COLOURS * 4, strict=False):
        placed = []
        for index, value in enumerate(readings):
            if value is None:
                continue
            px, py = plot.left + slot * (index + 0.5), y.at(max(value, y.lo) if log else value)
            placed.append((px, py))
            _point(drawing, px, py, colour, series=name, index=index, value=value)
        _series_line(drawing, placed, colour)
    _axis_titles(drawing, plot, "", y_title)
    _legend(drawing, plot.right, plot.top + 6,
            [(name, colour) for name, colour in zip(series, SERIES_COLOURS * 4, strict=False)]
            + [(t.label, THRESHOLD_COLOURS[t.level]) for t in thresholds])
    return drawing


# ---------------------------------------------------------------------------------------------------
# BER levels (the run page's decade chart colours a decade by the level its lower bound reaches)


def ber_level(value: float | None, *, warn: float, fail: float) -> str:
    if value is None:
        return "error"
    if value > fail:
        return "fail"
    if value > warn:
        return "warn"
    return "pass"


# ---------------------------------------------------------------------------------------------------
# DOM per lane


@dataclass(frozen=True)
class DomSeries:
    """One reading per lane (Rx or Tx power, dBm) and the module's own [low, high] limits."""

    name: str
    lanes: Sequence[float | None]
    limits: tuple[float, float] | None


def dom_level(value: float | None, limits: tuple[float, float] | None, margin: float) -> str:
    if value is None:
        return "error"
    if limits is None:
        return "pass"
    lo, hi = limits
    if value < lo or value > hi:
        return "fail"
    if margin and (value < lo + margin or value > hi - margin):
        return "warn"
    return "pass"


def dom_svg(series: Sequence[DomSeries], *, margin: float, title: str, width: float = 640,
            height: float = 240) -> str:
    """A panel per series (Rx power, Tx power): a point per lane against the module's low and high
    limits (fail lines) and the profile's margin inside them (warn lines)."""
    return render(dom_drawing(series, margin=margin, width=width, height=height), title=title, css_class="dom")


def dom_drawing(series: Sequence[DomSeries], *, margin: float, width: float = 640, height: float = 240) -> Drawing:
    drawing = Drawing(width, height)
    values = [v for s in series for v in s.lanes if v is not None]
    bounds = [b for s in series if s.limits for b in s.limits]
    lo = math.floor(min(values + bounds + [0]) - 1)
    hi = math.ceil(max(values + bounds + [0]) + 1)
    panel_width = (width - 50) / max(len(series), 1)
    for panel, s in enumerate(series):
        plot = Plot(left=50 + panel * panel_width + (0 if panel == 0 else 16), bottom=30,
                    right=50 + (panel + 1) * panel_width - 10, top=height - 34)
        y = Scale(lo, hi, plot.bottom, plot.top)
        _frame(drawing, plot)
        _y_ticks(drawing, plot, y, linear_ticks(lo, hi, 6), lambda v: fmt_num(v), grid=True)
        if s.limits:
            low, high = s.limits
            for value, level, bound in ((low, "fail", "low"), (high, "fail", "high"),
                                        (low + margin, "warn", "low"), (high - margin, "warn", "high")):
                if level == "warn" and not margin:
                    continue
                _hline(drawing, plot.left, plot.right, y.at(value), "threshold", THRESHOLD_COLOURS[level],
                       level=level, bound=bound, value=value, series=s.name)
        slot = plot.width / max(len(s.lanes), 1)
        for lane, value in enumerate(s.lanes):
            x = plot.left + slot * (lane + 0.5)
            drawing.add(_text(x, plot.bottom - 12, f"lane {lane}", anchor="middle"))
            if value is not None:
                level = dom_level(value, s.limits, margin)
                _point(drawing, x, y.at(value), LEVEL_COLOURS[level], series=s.name, lane=lane, value=value,
                       level=level)
        drawing.add(_text(plot.left, plot.top + 8, f"{s.name}, dBm"))
    _legend(drawing, width - 14, height - 14, [("module limit", FAIL_COLOUR), ("margin", WARN_COLOUR)])
    return drawing


# ---------------------------------------------------------------------------------------------------
# Links per state of a topology comparison


@dataclass(frozen=True)
class StateBar:
    state: str  # "ok", "miswired" ...: the bar's class and data-state
    label: str
    count: int
    colour: str


def state_bars_svg(bars: Sequence[StateBar], *, title: str, width: float = 640) -> str:
    """One horizontal bar per state, on a logarithmic scale: a fabric of 1,700 links with one miswire must
    show the miswire too. Each bar carries its count (data-count) and prints it."""
    return render(state_bars_drawing(bars, width=width), title=title, css_class="states")


def state_bars_drawing(bars: Sequence[StateBar], *, width: float = 640) -> Drawing:
    row = 26
    height = 30 + row * len(bars)
    drawing = Drawing(width, height)
    plot = Plot(left=150, bottom=8, right=width - 70, top=height - 22)
    top = max((bar.count for bar in bars), default=0)
    span = math.log10(max(top, 1) + 1) or 1.0
    for index, bar in enumerate(bars):
        y = plot.top - (index + 1) * row + 6
        drawing.add(_text(plot.left - 8, y + 5, bar.label, anchor="end", fill="#1d2430"))
        length = (plot.right - plot.left) * math.log10(bar.count + 1) / span if bar.count else 0
        drawing.add(_box(plot.left, y, max(length, 1.5 if bar.count else 0), row - 10, bar.colour, "bar",
                         state=bar.state, count=bar.count))
        drawing.add(_text(plot.left + length + 6, y + 5, f"{bar.count:,}", fill="#1d2430"))
    drawing.add(_text(plot.left, height - 12, "links per state (logarithmic scale)"))
    return drawing


# ---------------------------------------------------------------------------------------------------
# Ports per BER decade (the acceptance report's BER chart: a histogram, not a bar per port)


@dataclass(frozen=True)
class DecadeSeries:
    """How many ports fall in each decade [10^k, 10^(k+1)) of `decades`, and below the floor (10^decades[0],
    where mlxlink's 1.5e-254 for "no errors" lands)."""

    name: str
    below_floor: int
    counts: Sequence[int]


def ber_decade(value: float) -> int:
    """The decade k with 10^k <= value < 10^(k+1)."""
    return math.floor(math.log10(value) + 1e-12)


def ber_decade_labels(decades: Sequence[int]) -> list[str]:
    """The name of each group of a decade chart: "< 1e-20" for the values below the floor, then the
    decades' lower bounds."""
    return [f"< {fmt_sci(10.0 ** decades[0])}" if decades else "< floor"] + [fmt_sci(10.0**k) for k in decades]


def ber_decades_drawing(
    decades: Sequence[int],
    series: Sequence[DecadeSeries],
    *,
    thresholds: Sequence[Threshold] = (),
    hrefs: Sequence[str] = (),
    levels: Sequence[str] = (),
    width: float = 520,
    height: float = 240,
) -> Drawing:
    """A group of bars per decade (one bar per series), the first group for the values below the floor;
    threshold lines sit at their value inside their decade. Decade labels read bottom to top.

    For a page, with one series: `hrefs` (one per group, below-floor first) make each bar a link (to the
    results in that decade), `levels` colour each group's bar by its level (pass, warn, fail) instead of
    the series colour, and each bar prints its count above it, so a decade of one port among thousands
    still reads (a bar is at least 2 units tall)."""
    drawing = Drawing(width, height)
    labels = ber_decade_labels(decades)
    bottom = 20 + CHAR_WIDTH * max(len(label) for label in labels)
    plot = Plot(left=50, bottom=bottom, right=width - 12, top=height - 34 - (FONT_SIZE if hrefs else 0))
    groups = [[s.below_floor, *list(s.counts)] for s in series]
    top = nice_ceiling(max([count for group in groups for count in group] + [1]))
    y = Scale(0, top, plot.bottom, plot.top)
    _frame(drawing, plot)
    _y_ticks(drawing, plot, y, [t for t in linear_ticks(0, top) if t == int(t)], lambda v: f"{v:.0f}")
    slot = plot.width / len(labels)
    bar = slot * 0.8 / max(len(series), 1)
    for index, label in enumerate(labels):
        left = plot.left + index * slot
        for number, (s, colour) in enumerate(zip(series, SERIES_COLOURS * 4, strict=False)):
            count = groups[number][index]
            if not count:
                continue
            if index < len(levels):
                colour = LEVEL_COLOURS.get(levels[index], colour)
            bar_top = max(y.at(count), plot.bottom + 2)
            drawing.add(_box(left + slot * 0.1 + number * bar, plot.bottom, max(bar - 0.5, 0.5),
                             bar_top - plot.bottom, colour, "bar",
                             href=hrefs[index] if index < len(hrefs) else "",
                             href_title=f"{count} port(s) at {label}", bucket=label, series=s.name, count=count))
            if index < len(hrefs):
                drawing.add(_text(left + slot / 2, bar_top + 3, f"{count:,}", anchor="middle", fill="#1d2430"))
                # The whole column leads where the bar does: a bar of one port among thousands is 2 units tall,
                # too small a target for a finger.
                hit = _box(left, plot.bottom, slot, plot.height, "#ffffff", "hit", href=hrefs[index],
                           href_title=f"{count} port(s) at {label}", bucket=label, count=count)
                hit.fillColor = colors.Color(1, 1, 1, alpha=0)  # unseen, yet it takes the tap
                drawing.add(hit)
        drawing.add(_vertical_text(left + slot / 2 + FONT_SIZE / 3, plot.bottom - 4, label))
    for t in thresholds:
        if decades and t.value > 0:
            exponent = math.log10(t.value)
            position = min(max(exponent - decades[0], 0), len(decades)) + 1  # +1: the below-floor group
            _vline(drawing, plot.left + position * slot, plot.bottom, plot.top, "threshold",
                   THRESHOLD_COLOURS[t.level], level=t.level, value=t.value)
    _axis_titles(drawing, plot, "", "ports")
    entries = ([("pass", PASS_COLOUR), ("warn", WARN_COLOUR), ("fail", FAIL_COLOUR)] if levels
               else [(s.name, colour) for s, colour in zip(series, SERIES_COLOURS * 4, strict=False)])
    _legend(drawing, plot.right, height - 28, entries + [(t.label, THRESHOLD_COLOURS[t.level]) for t in thresholds])
    return drawing


def ber_decades_svg(decades: Sequence[int], series: DecadeSeries, *, hrefs: Sequence[str], levels: Sequence[str],
                    thresholds: Sequence[Threshold], title: str, width: float = 600, height: float = 300) -> str:
    """The page's BER chart: ports per decade of one series, each bar a link."""
    drawing = ber_decades_drawing(decades, [series], thresholds=thresholds, hrefs=hrefs, levels=levels, width=width,
                                  height=height)
    return render(drawing, title=title, css_class="ber-decades")


# ---------------------------------------------------------------------------------------------------
# A matrix of blocks (the acceptance report's heat map: a big matrix aggregated into blocks of nodes)

LEVEL_CODES = ("pass", "warn", "fail")  # how a block's worst level travels: its index here


def heatmap_grid_drawing(
    labels: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    levels: Sequence[Sequence[int]] = (),
    diagonal: bool = True,
    unit: str = "Gb/s",
    width: float = 720,
    height: float = 300,
) -> Drawing:
    """The lower triangle of a square matrix: `values[i][j]` for j <= i (row i below column j), each cell
    coloured from light (the lowest value) to dark (the highest), a cell whose level (`levels[i][j]`, an
    index of LEVEL_CODES) is warn or fail in that level's colour, a missing value grey. The diagonal is
    drawn only when `diagonal` (blocks of several nodes hold pairs of their own).

    Made for a report's wide, low box: the triangle is as tall as the box and each name is written once,
    right of its diagonal cell, where the empty upper triangle leaves room (row i and column i are the
    same node), every n-th one when 9 pt text does not fit every row; the legend stands right of it."""
    drawing = Drawing(width, height)
    count = len(labels)
    label_room = 6 + max((text_width(label) for label in labels), default=text_width("node"))
    known = [v for row in values for v in row if v is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 1.0)
    flags = (("fail", FAIL_COLOUR), ("slow or uneven", WARN_COLOUR), ("not measured", MISSING_COLOUR))
    legend_room = max(heat_scale_width(lo, hi, unit, step=5), 11 + max(text_width(name) for name, _ in flags)) + 4
    side = max(min(height - 8, width - max(label_room, legend_room) - 12, 28.0 * max(count, 1)), 10.0)
    cell = side / max(count, 1)
    left, top = 4.0, height - 4.0
    for i, row in enumerate(values[:count]):
        for j, value in enumerate(row[: i + 1]):
            if i == j and not diagonal:
                continue
            level = LEVEL_CODES[levels[i][j]] if i < len(levels) and j < len(levels[i]) else "pass"
            if level != "pass":
                fill = LEVEL_COLOURS[level]
            elif value is None:
                fill = MISSING_COLOUR
            else:
                fill = heat_colour(value, lo=lo, hi=hi)
            drawing.add(_box(left + j * cell, top - (i + 1) * cell, max(cell - 0.3, 0.2), max(cell - 0.3, 0.2),
                             fill, "cell", row=labels[i], col=labels[j], value=value, flag=level))
    every = max(1, math.ceil((FONT_SIZE + 1) / cell))
    beside = 1 if diagonal else 0  # right of the diagonal cell, or in its place when it is not drawn
    for i in range(0, count, every):
        drawing.add(_text(left + (i + beside) * cell + 3, top - (i + 0.5) * cell - FONT_SIZE / 3, labels[i]))
    x, y = left + side + 12, top - FONT_SIZE
    x = min(x, width - legend_room)
    _heat_scale(drawing, x, y, lo, hi, unit, step=5)
    for number, (name, colour) in enumerate(flags, start=1):
        drawing.add(Rect(x, y - 1 - 14 * number, 8, 8, fillColor=_colour(colour), strokeColor=None))
        drawing.add(_text(x + 11, y - 14 * number, name))
    return drawing


# ---------------------------------------------------------------------------------------------------
# The acceptance report's drawers: (data, *, width, height) -> Drawing, registered under these kinds by
# ValidationConfig.ready() (projects.reports). `data` comes from a frozen snapshot, possibly an old one:
# a drawer reads it defensively and draws what it can rather than failing the whole report.


def _thresholds(data: Mapping) -> list[Threshold]:
    lines = []
    for item in data.get("thresholds") or ():
        if isinstance(item, Sequence) and len(item) == 3 and isinstance(item[0], int | float):
            level = item[1] if item[1] in THRESHOLD_COLOURS else "line"
            lines.append(Threshold(float(item[0]), level, str(item[2])))
    return lines


def report_histogram(data: Mapping, *, width: float, height: float) -> Drawing:
    """data: {"bins": [[lo, hi, count], ...], "thresholds": [[value, level, label], ...], "x_title",
    "y_title"}."""
    bins = [Bin(float(lo), float(hi), int(count)) for lo, hi, count in data.get("bins") or ()] or [Bin(0.0, 1.0, 0)]
    return histogram_drawing(bins, thresholds=_thresholds(data), x_title=str(data.get("x_title", "")),
                             y_title=str(data.get("y_title", "count")), width=width, height=height)


def report_ber_decades(data: Mapping, *, width: float, height: float) -> Drawing:
    """data: {"decades": [k, ...], "series": [{"name", "below_floor", "counts"}], "thresholds": [...]}."""
    decades = [int(k) for k in data.get("decades") or ()]
    series = [DecadeSeries(str(s.get("name", "")), int(s.get("below_floor") or 0),
                           [int(c) for c in (s.get("counts") or [])][: len(decades)]
                           + [0] * max(len(decades) - len(s.get("counts") or []), 0))
              for s in data.get("series") or ()]
    return ber_decades_drawing(decades, series, thresholds=_thresholds(data), width=width, height=height)


def report_heatmap(data: Mapping, *, width: float, height: float) -> Drawing:
    """data: {"labels": [...], "values": lower triangle rows, "levels": the same shape (LEVEL_CODES
    indexes), "block_size": nodes per block, "unit"}."""
    return heatmap_grid_drawing(list(data.get("labels") or ()), data.get("values") or (),
                                levels=data.get("levels") or (), diagonal=(data.get("block_size") or 1) > 1,
                                unit=str(data.get("unit", "Gb/s")), width=width, height=height)


def report_nccl_curve(data: Mapping, *, width: float, height: float) -> Drawing:
    """data: {"series": [{"name", "points": [[size, busbw], ...]}], "thresholds": [...]}."""
    series = {str(s.get("name", "")): [(int(size), float(bw)) for size, bw in s.get("points") or ()]
              for s in data.get("series") or ()}
    return nccl_curves_drawing(series or {"busbw": []}, thresholds=_thresholds(data), width=width, height=height)


REPORT_CHARTS: dict[str, Callable[..., Drawing]] = {
    "validation.histogram": report_histogram,
    "validation.ber_decades": report_ber_decades,
    "validation.heatmap": report_heatmap,
    "validation.nccl_curve": report_nccl_curve,
}
