"""A large run's page on a tablet held upright (768x1024), in real Chromium (issue 11): the link-health run of
thousands of ports shows its BER chart without scrolling sideways, its text at 12 px or more as drawn (the
chart is not shrunk), a bar leads to the ports of its decade; a large bandwidth matrix shows its image, names
the pair under the pointer and opens that pair's results on a click."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.test_stage_waiver import TABLET, assert_fits
from tests.validation.test_run_pages import NO_ERRORS, bare_nodes, link_run_of, matrix_run_of

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# The smallest text of the chart as the screen shows it: each <text>'s font size times the SVG's scale.
SMALLEST_TEXT = """(selector) => {
  const svg = document.querySelector(selector);
  const scale = svg.getScreenCTM().a;
  const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
  return Math.min(...sizes);
}"""


def test_a_link_health_run_of_2000_ports_reads_on_a_tablet(page_for, project, manager):
    (node,) = bare_nodes(project, 1, prefix="node")
    run = link_run_of(project, node, [NO_ERRORS] * 2000 + [2e-13] * 5 + [3.2e-9] * 3)
    page = page_for(manager, viewport=TABLET)
    page.goto(f"/p/{project.code}/checks/runs/{run.pk}/")
    chart = page.locator("#chart-ber svg.chart")
    expect(chart).to_be_visible()
    chart.scroll_into_view_if_needed()
    assert page.evaluate(SMALLEST_TEXT, "#chart-ber svg.chart") >= 12
    assert_fits(page)
    # The failing decade's bar leads to its three ports, worst first.
    page.locator('#chart-ber svg a:has(rect.hit[data-bucket="1e-9"])').click()
    expect(page).to_have_url(re.compile(r"\?ber=-9#results$"))
    expect(page.locator("#results tr.result")).to_have_count(3)
    assert_fits(page)


def test_a_large_matrix_shows_its_image_and_names_the_pair_under_the_pointer(page_for, project, manager):
    nodes = bare_nodes(project, 50)
    run = matrix_run_of(project, nodes, failing=(("gpu-0010", "gpu-0042"),))
    page = page_for(manager, viewport=TABLET)
    with page.expect_response(re.compile(r"/matrix-nodes/$")):  # the names the script fetches when it starts
        page.goto(f"/p/{project.code}/checks/runs/{run.pk}/")
    image = page.locator("#matrix-image")
    expect(image).to_be_visible()
    assert page.evaluate("() => document.getElementById('matrix-image').naturalWidth") == 1000  # 20 px a pair
    assert_fits(page)
    image.scroll_into_view_if_needed()
    box = image.bounding_box()
    cell = box["width"] / 50
    # Row 42 (gpu-0042), column 10 (gpu-0010): the failing pair.
    x, y = box["x"] + cell * 9.5, box["y"] + cell * 41.5
    page.mouse.move(x, y)
    expect(page.locator("#matrix-pointer")).to_have_text("gpu-0042 ~ gpu-0010")
    page.mouse.click(x, y)
    expect(page).to_have_url(re.compile(r"\?pair=gpu-0042~gpu-0010#results$"))
    expect(page.locator("#results tr.result")).to_have_count(1)
    expect(page.locator("#results tr.result")).to_have_attribute("data-verdict", "fail")
