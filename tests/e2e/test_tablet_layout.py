"""Every page, on a tablet held upright (768x1024) and on a phone (390x844), in real Chromium: nothing
scrolls sideways, and everything a finger taps (links, in tables too, buttons, fields, disclosure
triangles) is at least 44 px tall and wide.

The pages are found, not listed: every GET route under /p/<code>/ in the URLconf (as the access matrix
walks them, tests/access_world.py), on the access matrix's world (one object of each kind) grown with
what makes pages wide and long on a real floor: a 721-port leaf, long end tags, a breakout, a faulty
cable with its cause, scans. Downloads (non-HTML answers) are skipped. Links drawn inside an SVG (the
rack elevation, the heat map) are pictures of rows that the page also lists as 44 px links, so they are
not measured.
"""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse

from cabling.choices import CableStatus, CableType, FabricState, ScanAction, ScanResult
from cabling.models import Cable, CableEnd, ScanEvent
from inventory.choices import DeviceRole, DeviceStatus, HardwareKind, Network, PortKind
from inventory.models import HardwareModel, Port, PortTemplate
from inventory.services import device_create
from tests.access_world import build_world, page_routes
from tests.e2e.conftest import close_contexts
from tests.factories import RackFactory, gpu_server_model

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

VIEWPORTS = ((768, 1024), (390, 844))
MIN_TARGET = 44

# What the page measures: the page's width against the window's, and every visible control's box (a
# checkbox or radio button by its label, which is what the finger hits).
MEASURE = """(min) => {
  const small = [];
  for (const el of document.querySelectorAll(
      'a[href], button, input:not([type=hidden]), select, textarea, summary')) {
    if (el.closest('svg')) continue;
    const target = el.matches('input[type=checkbox], input[type=radio]') && el.closest('label') || el;
    const box = target.getBoundingClientRect();
    if (!box.width || !box.height || getComputedStyle(el).visibility === 'hidden') continue;
    if (box.width < min || box.height < min) {
      const text = (el.textContent || el.name || el.type || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
      small.push(`<${el.tagName.toLowerCase()}> "${text}" ${Math.round(box.width)}x${Math.round(box.height)}`);
    }
  }
  const wide = [...document.querySelectorAll('main *, header *')]
    .filter((el) => !el.closest('svg') && el.getBoundingClientRect().right > window.innerWidth + 0.5)
    .slice(0, 3).map((el) => `<${el.tagName.toLowerCase()} class="${el.className}">`);
  return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, small, wide};
}"""


def xdr_leaf_model() -> HardwareModel:
    model, _ = HardwareModel.objects.get_or_create(
        part_number="TEST-Q3400-E2E", defaults=dict(vendor="NVIDIA", model="Quantum-X800 Q3400-RA",
                                                    kind=HardwareKind.IB_SWITCH, height_u=4))
    PortTemplate.objects.bulk_create(
        PortTemplate(hardware_model=model, name=f"p{i}", kind=PortKind.INFINIBAND, speed_gbps=800,
                     network=Network.COMPUTE, breakout_lanes=4, lane_speed_gbps=200, planes_per_lane=True)
        for i in range(1, 145)
    )
    return model


def cable(project, label, a, *b, **fields) -> Cable:
    made = Cable.objects.create(project=project, label=label, network=Network.COMPUTE, cable_type=CableType.FIBER,
                                length_m=Decimal("12.0"), speed_gbps=800, optic_part_a="OSFP-800G-XDR-NODE",
                                optic_part_b="OSFP-800G-XDR-TWIN", **fields)
    CableEnd.objects.create(cable=made, side="A", port=a)
    for position, port in enumerate(b):
        CableEnd.objects.create(cable=made, side="B", position=position, port=port)
    return made


def grow(world) -> dict[str, str]:
    """What a real floor has and the samples lack; returns the extra pages to measure, by name."""
    project, manager = world.project, world.users["manager"]
    rack = RackFactory(project=project, name="C01-NETWORK-ROW-C")
    leaf = device_create(project=project, hardware_model=xdr_leaf_model(), name="ib-leaf-plane-0-su-01", rack=rack,
                         position_u=40, role=DeviceRole.LEAF, status=DeviceStatus.RACKED)
    gpu = device_create(project=project, hardware_model=gpu_server_model(), name="gpu-node-0001-su01", rack=rack,
                        position_u=2, role=DeviceRole.GPU_NODE, serial="SN-E2E-GPU-0001")

    def port(device, name):
        return Port.objects.get(device=device, name=name)

    whole = cable(project, "C000001", port(gpu, "ib0"), port(leaf, "p1"), status=CableStatus.FAULTY,
                  status_cause="topology comparison 12: miswired, seen on ib-leaf-plane-0-su-01 port p2 instead of p1",
                  fabric_state=FabricState.MISWIRED)
    cable(project, "C000002", port(gpu, "ib1"), port(leaf, "p2/0"), port(leaf, "p3/1"), port(leaf, "p4/2"),
          port(leaf, "p5/3"))
    for i in range(30):
        ScanEvent.objects.create(project=project, user=manager, action=ScanAction.CABLE_END,
                                 result=ScanResult.REFUSED if i % 3 else ScanResult.ACCEPTED,
                                 raw_code="C000001/B", cable=whole, port=port(leaf, "p2"),
                                 reason="C000001 belongs in ib-leaf-plane-0-su-01 port p1; you are at port p2")
    code = project.code
    return {
        "leaf with 721 ports": reverse("inventory:device-detail", args=[code, leaf.pk]),
        "GPU server": reverse("inventory:device-detail", args=[code, gpu.pk]) + "?ports_q=ib1",
        "faulty cable with scans": reverse("cabling:cable-detail", args=[code, whole.pk]),
        "breakout trace": reverse("cabling:port-trace", args=[code, port(gpu, "ib1").pk]),
        "progress": reverse("cabling:progress", args=[code]),
        "search, several matches": reverse("cabling:search", args=[code]) + "?q=gpu-node-0001-su01",
        "cable list": reverse("cabling:cable-list", args=[code]) + "?rack=C01-NETWORK-ROW-C",
    }


def every_page(world) -> dict[str, str]:
    """Every GET page under /p/<code>/ with its sample, as the access matrix builds its URLs."""
    pages = {}
    for route in page_routes():
        if "get" not in route.methods or (route.kwargs and route.name not in world.samples):
            continue
        url = reverse(route.url_name, kwargs={**world.samples.get(route.name, {}), "code": world.project.code})
        query = world.queries.get(route.name)
        pages[route.name] = f"{url}?{urlencode(query)}" if query else url
    return pages


def html_pages(user, pages: dict[str, str]) -> dict[str, str]:
    """The pages that answer HTML (a download is not a page), after any redirect."""
    client = Client()
    client.force_login(user)
    found = {}
    for name, url in pages.items():
        response = client.get(url, follow=True)
        assert response.status_code == 200, f"{name} {url}: {response.status_code}"
        if response["Content-Type"].startswith("text/html"):
            found[name] = response.redirect_chain[-1][0] if response.redirect_chain else url
    return found


def test_every_page_fits_a_tablet_and_a_phone_with_44px_targets(browser, live_server):
    world = build_world()
    pages = html_pages(world.users["manager"], {"delivery:project-list": "/"} | every_page(world) | grow(world))
    assert len(pages) >= 25 and "inventory:device-detail" in pages and "leaf with 721 ports" in pages
    failures = []

    def measure(page, width: int, name: str, url: str) -> None:
        seen = page.evaluate(MEASURE, MIN_TARGET)
        if seen["scrollWidth"] > seen["innerWidth"]:
            failures.append(f"{width}px {name} {url}: scrolls sideways ({seen['scrollWidth']}px wide: "
                            f"{', '.join(seen['wide'])})")
        if seen["small"]:
            failures.append(f"{width}px {name} {url}: {len(seen['small'])} targets under {MIN_TARGET}px: "
                            + "; ".join(seen["small"][:5]))

    for width, height in VIEWPORTS:
        context = browser.new_context(viewport={"width": width, "height": height}, base_url=live_server.url)
        page = context.new_page()
        page.goto("/login/")
        measure(page, width, "login", "/login/")
        page.get_by_label("Username").fill(world.users["manager"].get_username())
        page.get_by_label("Password").fill("pw-for-tests-1")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        for name, url in pages.items():
            page.goto(url)
            measure(page, width, name, url)
        close_contexts([context])
    assert not failures, "\n".join(failures)


def test_the_leaf_page_is_no_longer_a_wall(browser, live_server):
    """The 721-port leaf was one 44,800 px table, then a page of 16 ports with their 64 lanes (10,000 px): now
    each port's lanes are folded under it, a tap away."""
    world = build_world()
    url = grow(world)["leaf with 721 ports"]
    context = browser.new_context(viewport={"width": 768, "height": 1024}, base_url=live_server.url)
    page = context.new_page()
    page.goto("/login/")
    page.get_by_label("Username").fill(world.users["technician"].get_username())
    page.get_by_label("Password").fill("pw-for-tests-1")
    page.get_by_role("button", name="Log in").click()
    page.goto(url)
    assert page.locator("tr.port").count() == 16
    assert page.locator("tr.port[data-port=p1] [data-far]").inner_text().startswith("gpu-node-0001-su01:ib0")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 9_000, height
    fold = page.locator("tr.lanes-fold[data-parent=p1] summary")
    assert fold.bounding_box()["height"] >= MIN_TARGET
    fold.click()
    assert page.locator("tr.lane[data-parent=p1]").first.is_visible()
    page.get_by_role("link", name="Next →").click()
    assert page.locator("tr.port").first.get_attribute("data-port") == "p17"
    close_contexts([context])
