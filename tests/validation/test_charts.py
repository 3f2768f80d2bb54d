"""The charts are pure functions of numbers: parse the SVG they return and check that every bar, cell,
point and threshold line sits where the data puts it (reportlab draws with y growing upwards)."""

import math
from xml.etree import ElementTree

import pytest
from reportlab.lib import colors

from validation import charts
from validation.charts import Bin, DomSeries, Threshold

NODES_72 = [f"gpu-{i:03d}" for i in range(1, 73)]


def parse(svg: str) -> ElementTree.Element:
    return ElementTree.fromstring(svg)


def marks(svg: ElementTree.Element, css_class: str, **data) -> list[ElementTree.Element]:
    found = [e for e in svg.iter() if e.get("class") == css_class]
    for key, value in data.items():
        found = [e for e in found if e.get("data-" + key.replace("_", "-")) == value]
    return found


def num(element, attribute: str) -> float:
    return float(element.get(attribute))


def centre_x(rect) -> float:
    return num(rect, "x") + num(rect, "width") / 2


def centre_y(rect) -> float:
    return num(rect, "y") + num(rect, "height") / 2


def tick(svg, axis: str, value: float) -> float:
    """Where the axis puts `value`, read from its tick mark."""
    (mark,) = [t for t in marks(svg, "tick", axis=axis) if math.isclose(float(t.get("data-value")), value)]
    return centre_x(mark) if axis == "x" else centre_y(mark)


def fill(element) -> str:
    style = dict(part.split(": ") for part in element.get("style").rstrip(";").split("; "))
    return style["fill"]


def rgb(hex_colour: str) -> str:
    """A colour the way reportlab writes it into SVG styles."""
    c = colors.HexColor(hex_colour)
    return "rgb({:d}%,{:d}%,{:d}%)".format(*(int(v * 100) for v in (c.red, c.green, c.blue)))


# -- rendering ---------------------------------------------------------------------------------------------


def test_render_gives_an_inline_svg_with_a_title_and_no_shared_ids():
    svg = charts.histogram_svg([Bin(0, 10, 1)], title="Bandwidth <GPU>")
    assert svg.startswith("<svg ") and "<?xml" not in svg and "DOCTYPE" not in svg
    root = parse(svg)
    assert root.find("{http://www.w3.org/2000/svg}title").text == "Bandwidth <GPU>"
    assert 'id="' not in svg  # several charts share one page
    assert root.get("class") == "chart histogram" and root.get("role") == "img"


def test_node_names_are_escaped_not_injected():
    svg = charts.heatmap_svg(["<b>a", "b&c"], {("b&c", "<b>a"): 1.0}, title="t")
    root = parse(svg)  # well-formed XML: the names were escaped
    assert marks(root, "cell")[0].get("data-row") == "b&c"


# -- histogram ----------------------------------------------------------------------------------------------


def test_histogram_counts_values_into_equal_bins_with_outliers_at_the_ends():
    bins = charts.histogram([0, 5, 9.99, 10, 55, -3, 1000], lo=0, hi=60, bins=6)
    assert [b.count for b in bins] == [4, 1, 0, 0, 0, 2]
    assert (bins[1].lo, bins[1].hi) == (10, 20)


def test_bandwidth_bins_run_from_zero_to_the_line_rate():
    bins = charts.bandwidth_bins([787.7, 787.9, 472.6], line_rate=800)
    assert (bins[0].lo, bins[-1].hi, len(bins)) == (0.0, 800.0, 40)
    assert {b.lo: b.count for b in bins if b.count} == {460.0: 1, 780.0: 2}


def test_histogram_bars_have_heights_in_proportion_to_counts_and_the_threshold_sits_at_its_value():
    bins = charts.bandwidth_bins([787.7] * 6 + [472.6] * 2 + [770.0] * 3, line_rate=800)
    root = parse(charts.histogram_svg(bins, thresholds=[Threshold(760, "fail", "fail"), Threshold(800, "line", "line")],
                                     title="GPU RDMA"))
    bars = marks(root, "bar")
    assert [(float(b.get("data-lo")), int(b.get("data-count"))) for b in bars] == [(460.0, 2), (760.0, 3), (780.0, 6)]
    heights = [num(b, "height") for b in bars]
    assert heights[2] / heights[0] == pytest.approx(3.0) and heights[1] / heights[0] == pytest.approx(1.5)
    x0, x800 = tick(root, "x", 0), tick(root, "x", 800)
    (fail,) = marks(root, "threshold", level="fail")
    assert centre_x(fail) == pytest.approx(x0 + (x800 - x0) * 760 / 800)
    (line,) = marks(root, "threshold", level="line")
    assert centre_x(line) == pytest.approx(x800)
    # A bar starts at its bin's lower edge: the 760-780 bin is right of the fail line.
    assert num(bars[1], "x") >= centre_x(fail)


# -- heatmap -----------------------------------------------------------------------------------------------


def test_heatmap_of_72_nodes_has_one_cell_per_pair_and_flagged_cells_in_the_level_colour():
    cells = {(a, b): 780.0 + (i + j) % 8 for i, a in enumerate(NODES_72) for j, b in enumerate(NODES_72[:i])}
    flags = {("gpu-003", "gpu-001"): "fail", ("gpu-010", "gpu-002"): "warn"}
    root = parse(charts.heatmap_svg(NODES_72, cells, flags=flags, title="matrix"))
    drawn = marks(root, "cell")
    assert len(drawn) == 72 * 71 // 2 == 2556
    by_pair = {(c.get("data-row"), c.get("data-col")): c for c in drawn}
    assert fill(by_pair[("gpu-003", "gpu-001")]) == rgb(charts.FAIL_COLOUR)
    assert fill(by_pair[("gpu-010", "gpu-002")]) == rgb(charts.WARN_COLOUR)
    unflagged = {fill(c) for pair, c in by_pair.items() if pair not in flags}
    assert rgb(charts.FAIL_COLOUR) not in unflagged and rgb(charts.WARN_COLOUR) not in unflagged
    # The colour scale runs from the slowest pair (light) to the fastest (dark).
    slowest = min(by_pair.values(), key=lambda c: float(c.get("data-value")) if not c.get("data-flag") else 1e9)
    assert fill(slowest) == rgb(charts.HEAT_LOW)


def test_heatmap_puts_a_pair_in_one_cell_whichever_way_round_and_rows_below_columns():
    nodes = ["n1", "n2", "n3"]
    root = parse(charts.heatmap_svg(nodes, {("n1", "n2"): 10.0, ("n3", "n1"): None, ("n2", "n3"): 20.0},
                                    flags={("n2", "n1"): "fail"}, title="t"))
    cells = {(c.get("data-row"), c.get("data-col")): c for c in marks(root, "cell")}
    assert set(cells) == {("n2", "n1"), ("n3", "n1"), ("n3", "n2")}
    assert fill(cells[("n2", "n1")]) == rgb(charts.FAIL_COLOUR)  # flagged given the other way round
    assert fill(cells[("n3", "n1")]) == rgb(charts.MISSING_COLOUR)  # not measured
    assert fill(cells[("n3", "n2")]) == rgb(charts.HEAT_HIGH)  # the fastest
    # Rows run down the picture: n3's row is below n2's; columns run right: n2's column right of n1's.
    assert num(cells[("n3", "n1")], "y") < num(cells[("n2", "n1")], "y")
    assert num(cells[("n3", "n2")], "x") > num(cells[("n3", "n1")], "x")


# -- NCCL curve -----------------------------------------------------------------------------------------------


def test_nccl_curve_has_a_point_per_size_on_a_log_axis_and_the_profile_line():
    points = [(2**k, min(820.0, 2**k / 2**25 * 800)) for k in range(3, 35)]
    root = parse(charts.nccl_curve_svg(points, thresholds=[Threshold(780, "fail", "fail 780")], title="nccl"))
    drawn = marks(root, "point")
    assert [(int(p.get("data-size")), float(p.get("data-value"))) for p in drawn] == points
    xs = [centre_x(p) for p in drawn]
    steps = {round(b - a, 6) for a, b in zip(xs, xs[1:], strict=False)}
    assert len(steps) == 1  # each doubling of the size is the same step: a log axis
    y0, top_tick = tick(root, "y", 0), max(float(t.get("data-value")) for t in marks(root, "tick", axis="y"))
    y_top = tick(root, "y", top_tick)
    for point in drawn:
        expected = y0 + (y_top - y0) * float(point.get("data-value")) / top_tick
        assert centre_y(point) == pytest.approx(expected)
    (fail,) = marks(root, "threshold", level="fail")
    assert centre_y(fail) == pytest.approx(y0 + (y_top - y0) * 780 / top_tick)
    assert len(root.findall(".//{http://www.w3.org/2000/svg}polyline")) == 1


# -- DOM per lane ------------------------------------------------------------------------------------------------


def test_dom_points_sit_between_the_modules_limits_with_margin_lines_inside():
    rx = DomSeries("Rx power", [-12.1, -9.9, -3.0, 4.5], (-10.4, 5.0))
    tx = DomSeries("Tx power", [1.5, 1.7, None, 0.7], (-6.4, 5.0))
    root = parse(charts.dom_svg([rx, tx], margin=1.0, title="dom"))
    points = marks(root, "point", series="Rx power")
    assert [p.get("data-level") for p in points] == ["fail", "warn", "pass", "warn"]
    assert len(marks(root, "point", series="Tx power")) == 3  # a lane without a reading has no point
    rx_lines = marks(root, "threshold", series="Rx power")
    lines = {(t.get("data-level"), t.get("data-bound")): centre_y(t) for t in rx_lines}
    low, high = lines[("fail", "low")], lines[("fail", "high")]
    assert low < lines[("warn", "low")] < lines[("warn", "high")] < high
    # Linear in dBm: -3 dBm lies at (-3 - -10.4) / (5 - -10.4) of the way from the low line to the high one.
    middle = next(p for p in points if float(p.get("data-value")) == -3.0)
    assert centre_y(middle) == pytest.approx(low + (high - low) * (7.4 / 15.4))
    assert centre_y(points[0]) < low  # below the module's low limit


def test_dom_without_a_margin_draws_only_the_limits():
    root = parse(charts.dom_svg([DomSeries("Rx power", [0.0], (-10.0, 5.0))], margin=0, title="dom"))
    assert {t.get("data-level") for t in marks(root, "threshold")} == {"fail"}


# -- timeline ---------------------------------------------------------------------------------------------------


def test_timeline_draws_readings_left_to_right_and_skips_missing_ones():
    root = parse(charts.timeline_svg(["d1", "d2", "d3"], {"link down": [0, None, 2], "symbol errors": [0, 1, 1]},
                                     title="counters"))
    down = marks(root, "point", series="link down")
    assert [p.get("data-index") for p in down] == ["0", "2"]
    errors = marks(root, "point", series="symbol errors")
    assert centre_x(errors[0]) < centre_x(errors[1]) < centre_x(errors[2])
    assert centre_y(errors[1]) == pytest.approx(centre_y(errors[2]))
    assert centre_y(errors[1]) > centre_y(errors[0])
    assert centre_x(down[1]) == pytest.approx(centre_x(errors[2]))


def test_log_timeline_puts_thresholds_on_their_decades():
    root = parse(charts.timeline_svg(["a", "b"], {"effective BER": [1e-15, 2e-12]}, log=True,
                                     thresholds=[Threshold(1e-12, "fail", "fail")], title="ber"))
    (fail,) = marks(root, "threshold")
    assert centre_y(fail) == pytest.approx(tick(root, "y", 1e-12))
    first, second = marks(root, "point")
    assert centre_y(first) == pytest.approx(tick(root, "y", 1e-15)) and centre_y(second) > centre_y(fail)


# -- scales ---------------------------------------------------------------------------------------------------


def test_scales_clamp_and_map_linearly_or_by_logarithm():
    linear = charts.Scale(0, 100, 10, 110)
    assert (linear.at(50), linear.at(-5), linear.at(500)) == (60, 10, 110)
    log = charts.Scale(1e-20, 1e-10, 0, 100, log=True)
    assert log.at(1e-15) == pytest.approx(50) and log.at(0) == 0
    assert charts.linear_ticks(0, 800, 8) == [0, 100, 200, 300, 400, 500, 600, 700, 800]
    assert charts.decade_ticks(1e-20, 1e-18) == [1e-20, 1e-19, 1e-18]


def strings_of(drawing):
    """Every String of a drawing written across (a rotated group's, the column names, is left out), with its
    left and right x as drawn."""
    from reportlab.graphics.shapes import Group, String

    for shape in drawing.contents:
        if isinstance(shape, Group):
            if tuple(shape.transform) == (1, 0, 0, 1, 0, 0):
                yield from strings_of(shape)
        elif isinstance(shape, String):
            width = charts.text_width(shape.text, shape.fontSize)
            left = {"start": shape.x, "middle": shape.x - width / 2, "end": shape.x - width}[shape.textAnchor]
            yield shape.text, left, left + width


@pytest.mark.parametrize("lo, hi", [(1.5, 9.9), (472.4, 1234.5), (12345.6, 98765.4)])
def test_every_figure_of_a_heat_maps_legend_fits_the_drawing_whole(lo, hi):
    """The acceptance report's heat map cut its legend's unit ("472.4 Gb/"): every text of the triangle of the
    report and of the page's heat map now ends inside the drawing, and the scale's figures do not run into
    the ramp."""
    labels = [f"gpu-node-{i:04d}-su01" for i in range(24)]
    values = [[lo + (hi - lo) * ((i + j) % 7) / 6 for j in range(i + 1)] for i in range(24)]
    levels = [[0] * (i + 1) for i in range(24)]
    report = charts.report_heatmap({"labels": labels, "values": values, "levels": levels, "unit": "Gb/s"},
                                   width=480, height=220)
    page = charts.heatmap_drawing(labels[:8], {(a, b): hi for a in labels[:8] for b in labels[:8] if a != b})
    for drawing in (report, page):
        texts = list(strings_of(drawing))
        assert any("Gb/s" in text for text, _, _ in texts)
        for text, left, right in texts:
            assert left >= -0.5 and right <= drawing.width + 0.5, (text, left, right, drawing.width)
    low = next(item for item in strings_of(report) if item[0].startswith(charts.fmt_num(lo, 1)))
    ramp = min(shape.x for shape in report.contents if type(shape).__name__ == "Rect" and shape.width == 5)
    assert low[2] < ramp
