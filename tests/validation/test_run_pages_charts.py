"""The charts of the run pages read on a tablet (issue 11): no chart text under 12 px (a page draws a chart at
one unit a pixel, and no wider than a tablet's column), and a large matrix as a PNG, pure functions of
plain numbers like the rest of validation.charts."""

from __future__ import annotations

import io
import math
import re
from array import array

import pytest
from PIL import Image

from validation import charts, selectors
from validation.charts import Bin, DecadeSeries, DomSeries, StateBar, Threshold

MIN_PX = 12
PAGE_WIDTH = 704  # the card's inner width on a 768-px tablet: a page chart wider than this would be shrunk
NODES = [f"gpu-{i:03d}" for i in range(1, 73)]


def every_chart() -> dict[str, str]:
    """One SVG of every chart the pages and the report draw, with long labels where a chart has labels."""
    lines = [Threshold(1e-13, "warn", "warn 1e-13"), Threshold(1e-12, "fail", "fail 1e-12")]
    cells = {(a, b): 390.0 - i for i, (a, b) in enumerate((a, b) for a in NODES for b in NODES if a < b)}
    report = {"bins": [[0, 20, 3], [380, 400, 60]], "thresholds": [[200, "fail", "fail"]], "x_title": "Gb/s"}
    return {
        "histogram": charts.histogram_svg(charts.bandwidth_bins([390.0, 200.0], line_rate=400), title="h"),
        "heatmap of 72": charts.heatmap_svg(NODES, cells, title="m"),
        "heatmap of 4": charts.heatmap_svg(NODES[:4], {(NODES[0], NODES[1]): 1.0}, title="m"),
        "ber decades": charts.ber_decades_svg(list(range(-20, -8)), DecadeSeries("effective BER", 574, [0] * 11 + [2]),
                                              hrefs=["?ber=below"] * 13, levels=["pass"] * 13, thresholds=lines,
                                              title="d"),
        "dom": charts.dom_svg([DomSeries("Rx power", [-2.0, -3.0, None, -1.0], (-10.4, 4.0))], margin=1.0, title="o"),
        "states": charts.state_bars_svg([StateBar("ok", "as planned", 1700, charts.PASS_COLOUR)], title="s"),
        "nccl": charts.nccl_curve_svg([(8, 0.1), (1 << 30, 480.0)], title="n"),
        "timeline": charts.timeline_svg(["2026-01-01 10:00", "2026-01-02 10:00"], {"effective BER": [1e-15, 2e-14]},
                                        log=True, thresholds=lines, title="t", y_title="BER"),
        "report histogram": charts.render(charts.report_histogram(report, width=480, height=200), title="r"),
        "report decades": charts.render(charts.report_ber_decades(
            {"decades": list(range(-20, -8)), "series": [{"name": "effective BER", "below_floor": 5, "counts": [1]}],
             "thresholds": [[1e-12, "fail", "fail 1e-12"]]}, width=480, height=220), title="r"),
        "report heatmap": charts.render(charts.report_heatmap(
            {"labels": NODES[:8], "values": [[390.0] * (i + 1) for i in range(8)], "block_size": 1},
            width=480, height=220), title="r"),
    }


@pytest.mark.parametrize(("name", "svg"), every_chart().items())
def test_no_chart_text_is_smaller_than_12_px(name, svg):
    sizes = [float(size) for size in re.findall(r"font-size: ?([\d.]+)px", svg)]
    assert sizes, f"{name}: no text found"
    assert min(sizes) >= MIN_PX, f"{name}: text at {min(sizes)} px"
    assert charts.FONT_SIZE >= MIN_PX


def test_the_run_pages_charts_fit_a_tablets_column_unshrunk():
    """A page chart wider than the column is scaled down with its text: the ones a run page draws fit."""
    for svg in (every_chart()["ber decades"], every_chart()["heatmap of 4"]):
        width = float(re.search(r'<svg [^>]*width="([\d.]+)"', svg).group(1))
        assert width <= PAGE_WIDTH


def test_the_ber_decades_first_bucket_is_below_the_floor_and_bars_link():
    svg = every_chart()["ber decades"]
    assert ">&lt; 1e-20<" in svg and "e-254" not in svg
    assert svg.count('xlink:href="?ber=below"') == 4  # the two bars drawn (574 and 2 ports), each with its column
    assert ">574<" in svg and ">2<" in svg  # each bar prints its count: one port among hundreds still reads


def test_matrix_png_paints_each_pair_in_both_triangles_at_a_whole_number_of_pixels():
    rows, cols = array("H", [1, 2, 2]), array("H", [0, 0, 1])
    values, levels = array("d", [100.0, 400.0, math.nan]), bytearray([0, 0, 0])
    png, lo, hi = charts.matrix_png(3, rows, cols, values, levels, side=300)
    assert (lo, hi) == (100.0, 400.0)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (300, 300)  # 100 pixels a pair

    def at(row, col):
        return "#{:02x}{:02x}{:02x}".format(*image.getpixel((col * 100 + 50, row * 100 + 50)))

    assert at(1, 0) == at(0, 1) == charts.HEAT_LOW  # the slowest pair: the light end
    assert at(2, 0) == at(0, 2) == charts.HEAT_HIGH.lower()  # the fastest: the dark end
    assert at(2, 1) == charts.MISSING_COLOUR  # no figure
    assert at(1, 1) == "#ffffff"


def test_matrix_png_paints_a_flagged_pair_in_its_levels_colour_and_stays_small_at_1024_nodes():
    count = 1024
    rows, cols, values, levels = array("H"), array("H"), array("d"), bytearray()
    for a in range(count):
        for b in range(a):
            rows.append(a)
            cols.append(b)
            values.append(380.0 + (a * 7 + b * 13) % 20)  # noisy, the worst case for compression
            levels.append(2 if (a, b) == (700, 3) else 1 if a == 500 else 0)
    png, _, _ = charts.matrix_png(count, rows, cols, values, levels)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (1024, 1024)
    assert "#{:02x}{:02x}{:02x}".format(*image.getpixel((3, 700))) == charts.FAIL_COLOUR.lower()
    assert "#{:02x}{:02x}{:02x}".format(*image.getpixel((500, 10))) == charts.WARN_COLOUR.lower()
    assert len(png) < 1_000_000


def test_matrix_png_beyond_its_node_limit_paints_a_pixel_per_block_in_its_worst_pairs_colour():
    """Past MATRIX_MAX_NODES a pixel is a block of nodes (its worst level, else its slowest pair), so the
    image stays within its side whatever the node count (a pixel per pair would be count^2 bytes)."""
    count = charts.MATRIX_MAX_NODES + 904  # 5,000 nodes: blocks of 5 (1,000 a side)
    block = charts.matrix_block(count)
    assert block == 5 and charts.matrix_block(charts.MATRIX_MAX_NODES) == 1
    rows, cols = array("H", [4999, 12, 13, 3000, 3001, 900]), array("H", [3, 11, 10, 2, 2, 0])
    values = array("d", [380.0, 100.0, 390.0, 390.0, 200.0, math.nan])
    levels = bytearray([2, 0, 0, 0, 0, 0])
    png, lo, hi = charts.matrix_png(count, rows, cols, values, levels)
    assert (lo, hi) == (100.0, 390.0)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (1000, 1000)

    def at(row, col):
        return "#{:02x}{:02x}{:02x}".format(*image.getpixel((col, row)))

    assert at(999, 0) == at(0, 999) == charts.FAIL_COLOUR.lower()  # gpu 4999 ~ gpu 3: a failing pair
    assert at(2, 2) == charts.HEAT_LOW  # a block on the diagonal holds real pairs: its slowest, 100 Gb/s
    assert at(600, 0) == at(0, 600) != charts.HEAT_HIGH.lower()  # its slowest (200), not its fastest (390)
    assert at(180, 0) == charts.MISSING_COLOUR  # no pair of the block measured
    assert at(500, 500) == at(1, 0) == "#ffffff"  # no pair of the run in the block


def test_matrix_png_of_a_hundred_thousand_nodes_stays_within_its_side():
    count = 100_000  # a pixel per pair: 10 GB of pixels; the indexes pass 65,535
    rows, cols = selectors.node_indexes(count), selectors.node_indexes(count)
    rows.append(99_999)
    cols.append(70_000)
    png, _, _ = charts.matrix_png(count, rows, cols, array("d", [400.0]), bytearray([1]))
    image = Image.open(io.BytesIO(png)).convert("RGB")
    block = charts.matrix_block(count)
    assert image.size == (1021, 1021) and block == 98  # ceil(100,000 / 98) blocks a side
    assert "#{:02x}{:02x}{:02x}".format(*image.getpixel((70_000 // block, 99_999 // block))) == (
        charts.WARN_COLOUR.lower())


def test_node_indexes_hold_every_node_of_any_run():
    assert selectors.node_indexes(65_536).itemsize == 2
    big = selectors.node_indexes(65_537)
    big.append(65_536)  # a two-byte array would raise OverflowError
    assert big[0] == 65_536


def test_the_ber_decade_chart_marks_reach_the_bins_of_a_histogram():
    """The report's histogram still draws a bar per bin (the shared drawing kept its marks at 12 px)."""
    svg = charts.histogram_svg([Bin(0, 10, 2), Bin(10, 20, 0), Bin(20, 30, 5)], title="h")
    assert svg.count('class="bar"') == 2
