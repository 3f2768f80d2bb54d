"""In Chromium, at 768x1024, the technician's floor: rack a device by scan, seat an optic, the cabling flow
(scan a label, confirm both ends, verified), a mismatch in the technician's words, and the offline queue
(scans kept on the tablet while the network is down, each recorded once when it returns, a refused one
listed as a problem). The fabric is tests/cabling/conftest.py's (A01: gpu-001..003; N01: leaf-01, leaf-02,
spine-01; C00001 gpu-001:ib0/0 -> leaf-01:p1 ...). Scans go through the real scan API.

A handheld scanner is a keyboard typing fast and pressing Enter: `scan()` types the code with a few ms
between keys, as one does."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from cabling.choices import CableStatus, ScanAction, ScanResult, ScanSource
from cabling.models import Cable, CableEnd, ScanEvent
from inventory.choices import DeviceStatus, OpticStatus
from inventory.models import Device, Optic
from inventory.services import device_update
from tests.cabling.conftest import NODE_OPTIC, fabric, ports_of  # noqa: F401 (fixture)
from tests.e2e.conftest import TEST_PASSWORD, TIMEOUT_MS, close_contexts
from tests.factories import OpticFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TABLET = {"width": 768, "height": 1024}
BANNER = "#flow-banner"
WAITING = "[data-floor-status] [data-queue-count]"


@pytest.fixture
def floor_page(browser, live_server):
    """`floor_page(user, service_worker=False, on=browser, **context options)`: a tablet-sized page logged
    in as `user` through the login form, in a new context of the harness's browser (or of `on`). The
    floor's service worker is blocked unless asked for (it fetches pages in the background,
    which a test has no reason to wait for). Before the context closes, whatever the page still has in
    flight is let finish, so that the live server is idle when the test's database is emptied."""
    contexts = []

    def open_page(user, *, service_worker: bool = False, viewport: dict | None = None, on=None, **options):
        context = (on or browser).new_context(base_url=live_server.url, viewport=viewport or TABLET,
                                              service_workers="allow" if service_worker else "block", **options)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.goto("/login/")
        page.get_by_label("Username").fill(user.get_username())
        page.get_by_label("Password").fill(TEST_PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        return page

    yield open_page
    for context in contexts:
        for page in context.pages:
            settle(page)
    close_contexts(contexts)


def settle(page) -> None:
    """Let the page's background work finish: the queue's flush, a rack's data being saved, the service
    worker's install (it keeps pages and files)."""
    try:
        page.context.set_offline(False)
        page.wait_for_load_state("networkidle")
        page.evaluate("""() => {
            const settled = w => ['activated', 'redundant'].includes(w.state);
            const installing = !navigator.serviceWorker ? null : navigator.serviceWorker.getRegistration()
                .then(r => { const w = r && (r.installing || r.waiting); return w && new Promise(done =>
                    w.addEventListener('statechange', () => settled(w) && done())); });
            const flushed = window.FloorQueue ? FloorQueue.flush() : null;
            return Promise.race([new Promise(done => setTimeout(done, 5000)), Promise.all([installing, flushed])]);
        }""")
        page.wait_for_load_state("networkidle")
    except Exception:  # a page already gone has nothing left in flight
        pass


def scan(page, code: str, *, enter: bool = True) -> None:
    """What a handheld scanner does: the code typed in a burst, then Enter, into whatever has the focus
    (the page must have kept it in the scan field)."""
    page.keyboard.type(code, delay=4)
    if enter:
        page.keyboard.press("Enter")


def open_scan_page(floor_page, user, project, query: str = ""):
    page = floor_page(user)
    page.goto(f"/p/{project.code}/floor/scan/{query}")
    expect(page.locator("#scan-input")).to_be_focused()
    return page


def serials(fab) -> None:
    for i, device in enumerate((fab.gpu1, fab.gpu2, fab.gpu3), start=1):
        device_update(device=device, serial=f"SN-GPU-{i}")


# --- racking ------------------------------------------------------------------------------------------------


def test_rack_a_device_by_scanning_its_serial(floor_page, technician, fabric):  # noqa: F811
    serials(fabric)
    page = open_scan_page(floor_page, technician, fabric.project, f"?rack={fabric.servers_rack.pk}")
    scan(page, "SN-GPU-2")
    card = page.locator("[data-flow=rack]")
    expect(card.get_by_role("heading")).to_have_text("Rack gpu-002")
    expect(page.locator("#rack-choice")).to_have_value("A01")  # the plan's place, prefilled
    expect(page.locator("#unit-choice")).to_have_value("11")
    expect(page.locator("#rack-picture svg .dev.lit")).to_have_count(1)
    page.get_by_role("button", name="Racked here").click()
    expect(page.locator(BANNER)).to_have_attribute("data-result", "ok")
    expect(page.locator(BANNER)).to_contain_text("gpu-002 racked in A01 U11.")
    expect(page.locator("#scan-input")).to_be_focused()  # ready for the next device
    device = Device.objects.get(pk=fabric.gpu2.pk)
    assert (device.status, device.racked_by, device.rack, device.position_u) == (
        DeviceStatus.RACKED, technician, fabric.servers_rack, 11)
    event = ScanEvent.objects.get(action=ScanAction.RACK)
    assert (event.result, event.source, event.device, event.raw_code) == (
        ScanResult.ACCEPTED, ScanSource.PAGE, device, "SN-GPU-2")
    assert len(event.idempotency_key) == 36  # crypto.randomUUID


def test_a_scanner_without_enter_still_sends_the_code(floor_page, technician, fabric):  # noqa: F811
    """Some scanners end a code with nothing: a burst of fast keys that stops is a whole code."""
    serials(fabric)
    page = open_scan_page(floor_page, technician, fabric.project)
    # The burst typed inside the page, key after key in one go as a scanner's are: Playwright's own typing
    # crosses processes per key, and on a loaded machine its keys can arrive further apart than a scanner's.
    page.evaluate("""code => {
        const input = document.activeElement;
        for (const key of code) {
            input.value += key;
            input.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
        }
    }""", "SN-GPU-3")
    expect(page.locator("[data-flow=rack] h2")).to_have_text("Rack gpu-003")
    assert page.locator("#scan-form").get_attribute("data-last-input") == "scanner"


def test_typing_a_code_by_hand_works_too(floor_page, technician, fabric):  # noqa: F811
    """Slow keys are a person typing: nothing is sent until they press Go (or Enter)."""
    page = open_scan_page(floor_page, technician, fabric.project)
    page.keyboard.type("c00004", delay=120)
    page.wait_for_timeout(400)
    expect(page.locator("#flow[data-mode=idle]")).to_have_count(1)
    assert not ScanEvent.objects.exists()
    page.get_by_role("button", name="Go").click()
    expect(page.locator("[data-flow=cable] h2")).to_have_text("Cable C00004")  # labels match in any case
    assert page.locator("#scan-form").get_attribute("data-last-input") == "button"
    expect(page.locator("#scan-input")).to_be_focused()


def test_racking_at_a_taken_unit_is_refused_in_large_type(floor_page, technician, fabric):  # noqa: F811
    serials(fabric)
    page = open_scan_page(floor_page, technician, fabric.project)
    scan(page, "SN-GPU-1")
    page.locator("#unit-choice").fill("11")  # gpu-002's units
    page.get_by_role("button", name="Racked here").click()
    banner = page.locator(BANNER)
    expect(banner).to_have_attribute("data-result", "refused")
    expect(banner.locator(".banner-title")).to_contain_text("gpu-002")
    assert float(banner.locator(".banner-title").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 24
    assert Device.objects.get(pk=fabric.gpu1.pk).status == DeviceStatus.PLANNED


# --- optics -------------------------------------------------------------------------------------------------


def test_seat_an_optic_by_scanning_it_then_tapping_the_port(floor_page, technician, fabric):  # noqa: F811
    optic = OpticFactory(project=fabric.project, part_number=NODE_OPTIC, serial="MT-OPTIC-1")
    page = open_scan_page(floor_page, technician, fabric.project, f"?rack={fabric.servers_rack.pk}")
    scan(page, "MT-OPTIC-1")
    expect(page.locator("[data-flow=optic] h2")).to_have_text("Seat optic MT-OPTIC-1")
    scan(page, "gpu-002")  # the device's label: its port row, to tap
    row = page.locator("#optic-ports svg.port-row")
    expect(row.locator("g.port.lit")).to_have_attribute("data-port", "ib0")  # the cage that calls for this part
    row.locator("g.port[data-port='ib0']").click()
    expect(page.locator(BANNER)).to_contain_text("Optic MT-OPTIC-1 seated in gpu-002 port ib0.")
    optic.refresh_from_db()
    assert (optic.status, optic.port, optic.installed_by) == (
        OpticStatus.INSTALLED, ports_of(fabric.gpu2)["ib0"], technician)


def test_an_optic_of_the_wrong_part_is_refused_with_the_reason(floor_page, technician, fabric):  # noqa: F811
    OpticFactory(project=fabric.project, part_number="SOMETHING-ELSE", serial="MT-WRONG")
    page = open_scan_page(floor_page, technician, fabric.project)
    scan(page, "MT-WRONG")
    scan(page, "gpu-001:ib0")  # the port's label
    expect(page.locator(BANNER)).to_have_attribute("data-result", "refused")
    expect(page.locator(BANNER)).to_contain_text(f"calls for {NODE_OPTIC} at gpu-001 port ib0")
    assert not Optic.objects.filter(port__isnull=False).exists()


# --- cables -------------------------------------------------------------------------------------------------


def test_the_cabling_flow_confirms_both_ends_and_verifies_the_cable(floor_page, technician, fabric):  # noqa: F811
    page = open_scan_page(floor_page, technician, fabric.project)
    scan(page, "C00001")  # an old label: the bare cable label
    card = page.locator("[data-flow=cable]")
    expect(card.locator("h2")).to_have_text("Cable C00001")
    ends = card.locator(".flow-end")
    expect(ends).to_have_count(2)
    expect(ends.nth(0)).to_contain_text("rack A01 · U10 · gpu-001 · port ib0/0 · lane 0 · plane 0")
    expect(ends.nth(1)).to_contain_text("rack N01 · U1 · leaf-01 · port p1")
    expect(ends.nth(0)).to_have_class(re.compile(r"\btarget\b"))
    expect(ends.nth(0).locator("svg.mini-elevation .dev.lit")).to_have_count(1)
    # The port row of gpu-001, with ib0 lit (the end is on its lane 0): tap it, then the lane.
    row = card.locator("#cable-ports svg.port-row")
    expect(row.locator("g.port.lit")).to_have_attribute("data-port", "ib0")
    row.locator("g.port[data-port='ib0']").click()
    page.get_by_role("button", name="lane 0 (plane 0)").click()
    expect(page.locator(BANNER)).to_contain_text("C00001/A confirmed in gpu-001 port ib0/0.")
    expect(page.locator("#flow-step")).to_contain_text("Go to rack N01 · U1 · leaf-01 · port p1")
    end_a = CableEnd.objects.get(cable=fabric.c1, side="A")
    assert end_a.confirmed_by == technician and Cable.objects.get(pk=fabric.c1.pk).status == CableStatus.INSTALLED
    # The other end: its port's label scanned.
    expect(page.locator("#scan-input")).to_be_focused()
    scan(page, "leaf-01:p1")
    expect(page.locator(BANNER)).to_have_attribute("data-result", "ok")
    expect(page.locator(BANNER)).to_contain_text("C00001 verified")
    expect(card.locator("[data-verified]")).to_contain_text("Verified by tech at")
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert (cable.status, cable.verified_by) == (CableStatus.VERIFIED, technician)
    assert cable.verified_at is not None
    assert list(ScanEvent.objects.filter(action=ScanAction.CABLE_END).values_list("result", flat=True)) == [
        ScanResult.ACCEPTED, ScanResult.ACCEPTED]


def test_a_mismatch_says_where_the_end_belongs_and_verifies_nothing(floor_page, technician, fabric):  # noqa: F811
    page = open_scan_page(floor_page, technician, fabric.project)
    scan(page, "C00003/B")  # an end label: this end is leaf-01 p2
    expect(page.locator("[data-flow=cable] .flow-end.target")).to_have_attribute("data-end", "C00003/B")
    scan(page, "leaf-01:p1")  # the technician is one port off
    banner = page.locator(BANNER)
    expect(banner).to_have_attribute("data-result", "refused")
    title = banner.locator(".banner-title")
    expect(title).to_have_text("C00003/B belongs in leaf-01 port p2; you are at leaf-01 port p1.")
    expect(banner).to_contain_text("Nothing was verified.")
    # Tapping the wrong port in the picture says the same.
    page.locator("#cable-ports svg.port-row g.port[data-port='p3']").click()
    expect(title).to_have_text("C00003/B belongs in leaf-01 port p2; you are at leaf-01 port p3.")
    assert not CableEnd.objects.filter(cable=fabric.c3, confirmed_at__isnull=False).exists()
    assert Cable.objects.get(pk=fabric.c3.pk).status == CableStatus.PLANNED
    assert ScanEvent.objects.filter(action=ScanAction.CABLE_END, result=ScanResult.REFUSED).count() == 2


def test_codes_scanned_back_to_back_are_each_handled_in_turn(floor_page, technician, fabric):  # noqa: F811
    """A scanner fires the end's label and then the port's label without waiting for the page: the second
    code waits for the first one's answer instead of being lost."""
    page = open_scan_page(floor_page, technician, fabric.project)
    scan(page, "C00001/B")
    scan(page, "leaf-01:p1")
    expect(page.locator(BANNER)).to_contain_text("C00001/B confirmed in leaf-01 port p1.")
    assert CableEnd.objects.get(cable=fabric.c1, side="B").confirmed_by == technician
    assert list(ScanEvent.objects.order_by("id").values_list("action", flat=True)) == [
        ScanAction.LOOKUP, ScanAction.CABLE_END]


# --- offline ------------------------------------------------------------------------------------------------


def save_rack_for_offline(page, project, rack) -> None:
    """What a technician does before walking into a dead spot: open the rack's worklist, which keeps the
    rack's data on the tablet."""
    page.goto(f"/p/{project.code}/floor/racks/{rack.pk}/")
    expect(page.locator("[data-offline-rack]")).to_have_attribute("data-state", "saved")


def test_the_offline_queue_keeps_scans_and_sends_each_once(floor_page, technician, fabric):  # noqa: F811
    serials(fabric)
    page = floor_page(technician)
    save_rack_for_offline(page, fabric.project, fabric.servers_rack)
    page.goto(f"/p/{fabric.project.code}/floor/scan/?rack={fabric.servers_rack.pk}")
    expect(page.locator(WAITING)).to_have_text("0")

    page.context.set_offline(True)
    expect(page.locator("[data-floor-status] [data-net]")).to_have_text("Offline")
    for count, serial in enumerate(("SN-GPU-1", "SN-GPU-2", "SN-GPU-3"), start=1):
        scan(page, serial)  # found in the rack saved on the tablet: its planned place is shown
        expect(page.locator("#rack-choice")).to_have_value("A01")
        page.get_by_role("button", name="Racked here").click()
        expect(page.locator(BANNER)).to_have_attribute("data-result", "queued")
        expect(page.locator(WAITING)).to_have_text(str(count))
    assert not ScanEvent.objects.exists()
    keys = page.evaluate("FloorQueue.waiting().then(items => items.map(i => i.key))")
    assert len(set(keys)) == 3

    page.context.set_offline(False)
    expect(page.locator(WAITING)).to_have_text("0", timeout=20_000)
    events = ScanEvent.objects.filter(action=ScanAction.RACK)
    assert sorted(events.values_list("idempotency_key", flat=True)) == sorted(keys)
    assert set(events.values_list("result", "source")) == {(ScanResult.ACCEPTED, ScanSource.OFFLINE)}
    assert set(Device.objects.filter(rack=fabric.servers_rack).values_list("status", flat=True)) == {
        DeviceStatus.RACKED}
    # A replay of a scan already recorded (its answer lost on the way back) is recorded once.
    replay = page.evaluate("""key => FloorStore.get('recent', key).then(row => FloorQueue.post({
        project: row.project, action: row.action, code: row.code, idempotency_key: row.key, rack: 'A01',
        position_u: 1, source: 'offline'}))""", keys[0])
    assert replay["status"] == 200 and replay["body"]["replayed"] is True
    assert ScanEvent.objects.count() == 3
    expect(page.locator("#recent-list .recent")).to_have_count(3)


def test_a_queued_scan_the_server_refuses_comes_back_as_a_problem(floor_page, technician, fabric):  # noqa: F811
    page = floor_page(technician)
    save_rack_for_offline(page, fabric.project, fabric.network_rack)
    page.goto(f"/p/{fabric.project.code}/floor/scan/")
    page.context.set_offline(True)
    scan(page, "C00003/B")  # from the saved rack
    expect(page.locator("[data-flow=cable] .flow-end.target")).to_have_attribute("data-end", "C00003/B")
    page.locator("#cable-ports svg.port-row g.port[data-port='p1']").click()  # the wrong port
    expect(page.locator(BANNER)).to_have_attribute("data-result", "queued")
    expect(page.locator(WAITING)).to_have_text("1")
    page.context.set_offline(False)
    expect(page.locator(WAITING)).to_have_text("0", timeout=20_000)
    problems = page.locator("#problems")
    expect(problems).to_be_visible()
    expect(problems.locator(".problem-reason")).to_have_text(
        "C00003/B belongs in leaf-01 port p2; you are at leaf-01 port p1.")
    expect(page.locator("[data-problems-link]")).to_contain_text("1 to fix")
    event = ScanEvent.objects.get()
    assert (event.result, event.source) == (ScanResult.REFUSED, ScanSource.OFFLINE)
    # Kept until the technician deals with it, across a reload.
    page.reload()
    expect(page.locator("#problems .problem")).to_have_count(1)
    page.locator("#problems").get_by_role("button", name="Dismiss").click()
    expect(page.locator("#problems")).to_be_hidden()


def test_the_floor_pages_open_offline_from_the_service_worker(floor_page, technician, fabric):  # noqa: F811
    page = floor_page(technician, service_worker=True)
    page.goto(f"/p/{fabric.project.code}/floor/racks/{fabric.servers_rack.pk}/")
    assert page.evaluate("navigator.serviceWorker.ready.then(r => r.active.scriptURL)").endswith(
        f"/p/{fabric.project.code}/floor/sw.js")
    page.reload()  # now controlled by the worker, which keeps what it serves
    expect(page.locator("h1")).to_contain_text("Rack A01")
    # Renamed on the server: a page that still says A01 can only come from the tablet's copy.
    type(fabric.servers_rack).objects.filter(pk=fabric.servers_rack.pk).update(name="A01-NEW")
    page.context.set_offline(True)
    page.goto(f"/p/{fabric.project.code}/floor/scan/")  # kept at install
    expect(page.locator("#scan-input")).to_be_focused()
    page.goto(f"/p/{fabric.project.code}/floor/racks/{fabric.servers_rack.pk}/")  # kept when seen
    expect(page.locator("h1")).to_contain_text("Rack A01")
    expect(page.locator("h1")).not_to_contain_text("A01-NEW")
    expect(page.locator("[data-floor-status] [data-net]")).to_have_text("Offline")
    page.context.set_offline(False)
    page.reload()  # online again: the network first
    expect(page.locator("h1")).to_contain_text("Rack A01-NEW")


# --- who may scan -------------------------------------------------------------------------------------------


def test_a_customer_can_look_but_not_scan(floor_page, customer, fabric):  # noqa: F811
    page = floor_page(customer)
    page.goto(f"/p/{fabric.project.code}/floor/scan/")
    expect(page.locator("#scan-input")).to_have_count(0)
    expect(page.locator("[data-cannot-scan-here]")).to_contain_text("only ACME-72's technicians and managers")
    page.goto(f"/p/{fabric.project.code}/floor/racks/{fabric.servers_rack.pk}/")
    expect(page.locator("[data-cannot-scan]")).to_be_visible()
    expect(page.locator("[data-start-scan]")).to_have_count(0)
    # Even sent by hand from the page, the API refuses a customer's scan.
    answer = page.evaluate("""() => FloorQueue.post({project: 'ACME-72', action: 'lookup', code: 'C00001',
        idempotency_key: 'customer-try-1'})""")
    assert answer["status"] == 403
    assert not ScanEvent.objects.exists()
