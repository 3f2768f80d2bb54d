"""The floor pages as a tablet (768x1024) and a phone (390x844) show them: nothing wider than the screen
(no sideways scrolling), every visible link, button, field and tappable port at least 44 px tall (and
wide), text large enough to read at arm's length; on each page and in the middle of each scan flow."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from inventory.services import device_update
from tests.cabling.conftest import fabric  # noqa: F401 (fixture)
from tests.e2e.test_floor import floor_page  # noqa: F401 (fixture)
from tests.factories import OpticFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIZES = [pytest.param({"width": 768, "height": 1024}, id="tablet"),
         pytest.param({"width": 390, "height": 844}, id="phone")]
TOUCH = 44

MEASURE = """touch => {
    const named = el => (el.textContent || el.name || el.getAttribute('aria-label') || '').trim().slice(0, 40);
    const size = box => `${Math.round(box.width)}x${Math.round(box.height)}`;
    const tappable = [...document.querySelectorAll('a, button, input, select, textarea, [role=button], summary')];
    const small = [];
    for (const el of tappable) {
        const box = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        if (!box.width || !box.height || style.visibility === 'hidden' || el.closest('[hidden]')) continue;
        if (box.height < touch - 0.5 || box.width < touch - 0.5) {
            small.push(`${el.tagName.toLowerCase()} "${named(el)}" ${size(box)}`);
        }
    }
    const root = document.documentElement;
    const wide = [...document.querySelectorAll('body *')].filter(el => {
        const box = el.getBoundingClientRect();
        return box.width && box.right > root.clientWidth + 1 && !el.closest('[hidden]');
    }).slice(0, 5).map(el => `${el.tagName.toLowerCase()} "${named(el)}" ${size(el.getBoundingClientRect())}`);
    return {scroll: root.scrollWidth, width: root.clientWidth, small, wide,
            font: parseFloat(getComputedStyle(document.body).fontSize)};
}"""


def check(page, where: str) -> None:
    found = page.evaluate(MEASURE, TOUCH)
    assert found["scroll"] <= found["width"], f"{where}: {found['scroll']} px wide in {found['width']}: {found['wide']}"
    assert not found["wide"], f"{where}: wider than the screen: {found['wide']}"
    assert not found["small"], f"{where}: smaller than {TOUCH} px: {found['small']}"
    assert found["font"] >= 16, f"{where}: body text {found['font']} px"


@pytest.mark.parametrize("size", SIZES)
def test_every_floor_page_fits_and_is_tappable(floor_page, technician, fabric, size):  # noqa: F811
    project = fabric.project.code
    page = floor_page(technician, viewport=size)
    pages = {
        "home": f"/p/{project}/floor/",
        "rack": f"/p/{project}/floor/racks/{fabric.servers_rack.pk}/",
        "network rack": f"/p/{project}/floor/racks/{fabric.network_rack.pk}/",
        "plane": f"/p/{project}/floor/networks/compute/?plane=1",
        "row": f"/p/{project}/floor/rows/A/",
        "server": f"/p/{project}/floor/devices/{fabric.gpu1.pk}/",
        "leaf": f"/p/{project}/floor/devices/{fabric.leaf1.pk}/",
        "scan": f"/p/{project}/floor/scan/",
    }
    for name, url in pages.items():
        page.goto(url)
        page.wait_for_load_state("networkidle")
        check(page, name)
    page.goto(f"/p/{project}/floor/devices/{fabric.leaf1.pk}/")
    expect(page.locator("#port-row svg.port-row g.port")).to_have_count(9)  # p1..p8 and mgmt, each tappable


@pytest.mark.parametrize("size", SIZES)
def test_each_scan_flow_fits_and_is_tappable(floor_page, technician, fabric, size):  # noqa: F811
    device_update(device=fabric.gpu1, serial="SN-LAYOUT-1")
    OpticFactory(project=fabric.project, serial="MT-LAYOUT-1")
    project = fabric.project.code
    page = floor_page(technician, viewport=size)
    page.goto(f"/p/{project}/floor/scan/?rack={fabric.servers_rack.pk}")
    expect(page.locator("#scan-input")).to_be_focused()

    def scan(code):
        page.keyboard.type(code, delay=3)
        page.keyboard.press("Enter")

    scan("C00005")  # the breakout: three ends
    expect(page.locator("[data-flow=cable] .flow-end")).to_have_count(3)
    expect(page.locator("#cable-ports svg.port-row")).to_be_visible()
    check(page, "cable flow")
    scan("leaf-02:p1")  # a mismatch: the refusal in large type
    expect(page.locator("#flow-banner")).to_have_attribute("data-result", "refused")
    check(page, "cable refusal")
    page.get_by_role("button", name="Cancel").click()
    scan("SN-LAYOUT-1")
    expect(page.locator("[data-flow=rack]")).to_be_visible()
    check(page, "racking")
    page.get_by_role("button", name="Cancel").click()
    scan("MT-LAYOUT-1")
    expect(page.locator("[data-flow=optic]")).to_be_visible()
    page.locator("#device-choice").select_option(label="gpu-002 (U11)")
    expect(page.locator("#optic-ports svg.port-row")).to_be_visible()
    check(page, "optic")
