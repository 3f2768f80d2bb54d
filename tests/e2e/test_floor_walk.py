"""In Chromium, at 768x1024, a technician verifies a cable by doing only what the scan page says (issue 21):
the test reads the instruction on the page (which end, rack, U, device, port, and the code to scan there),
scans that code as a handheld scanner does (the code typed in a burst, then Enter), and goes on until the
page says the cable is verified, by whom and when; at each step the page fits the tablet and every target is
a gloved finger's size. A plain cable (planned, or verified by the fabric and
never scanned: the issue's cable), every leg of a breakout, the walk after a wrong port refused, and an end
confirmed offline whose answer arrives later. The fabric is tests/cabling/conftest.py's."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from cabling.choices import CableStatus, FabricState, ScanAction, ScanResult, ScanSource
from cabling.models import Cable, CableEnd, ScanEvent
from cabling.services import cables_fabric_record
from projects.choices import Role
from tests.cabling.conftest import fabric  # noqa: F401 (fixture)
from tests.e2e.test_floor import (  # noqa: F401 (fixture)
    BANNER,
    TABLET,
    WAITING,
    floor_page,
    save_rack_for_offline,
    scan,
)
from tests.e2e.test_floor_layout import check
from tests.factories import MembershipFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

STEP = "#flow-step"
RECENT = "#recent-list .recent"  # this tablet's last scans: one more for each answer (or scan kept offline)
TABLET_ZONE = "Asia/Kolkata"  # UTC+05:30: a time shown in UTC, or not converted, cannot pass for local
# "Go to rack N01 · U1 · leaf-01 · port p3 · plane 0 with end C00005/B1. Scan the port's label: leaf-01:p3
# (or tap the port)."
INSTRUCTION = re.compile(
    r"^Go to rack (?P<rack>\S+) · U(?P<u>\d+) · (?P<device>\S+) · port (?P<port>[^\s·]+)(?: · lane \d+)?"
    r"(?: · plane \d+)? with end (?P<end>\S+)\. Scan the port's label: (?P<code>\S+) \(or tap the port\)\.$")


def open_scan_page(floor_page, user, project):  # noqa: F811
    """The scan page on a tablet (768x1024) that keeps its own time zone and English (UK) dates."""
    page = floor_page(user, viewport=TABLET, locale="en-GB", timezone_id=TABLET_ZONE)
    page.goto(f"/p/{project.code}/floor/scan/")
    expect(page.locator("#scan-input")).to_be_focused()
    return page


def instruction(page) -> dict | None:
    """What the page says to do now: {end, rack, u, device, port, code}; None once it says "Verified."."""
    step = page.locator(STEP)
    expect(step).to_have_text(re.compile(r"^(Go to rack |Verified\.)"))
    text = step.inner_text()
    if text.startswith("Verified."):
        return None
    said = INSTRUCTION.match(text)
    assert said, f"not an instruction a technician can follow: {text!r}"
    return said.groupdict()


def scan_and_wait(page, code: str) -> None:
    """Scan `code` and wait for the server's answer (the scan joins the page's list of this tablet's scans)."""
    answered = page.locator(RECENT).count()
    scan(page, code)
    expect(page.locator(RECENT)).to_have_count(answered + 1)


def follow_the_page(page, *, limit: int, first_code: str | None = None) -> list[dict]:
    """Scan `first_code` (the label on the cable end in hand), if given; then do what the page says until
    it says the cable is verified, each time scanning the code it names. Returns what it said, in order."""
    if first_code:
        scan(page, first_code)
    said_before: list[dict] = []
    while (said := instruction(page)) is not None:
        assert said["end"] not in [s["end"] for s in said_before], (
            f"the page asks again for {said['end']}, which the server confirmed: {said_before}")
        assert len(said_before) < limit, f"still not verified after {limit} ends"
        assert said["code"] == f"{said['device']}:{said['port']}"  # the label of the port it sends you to
        check(page, f"the step to {said['end']}")  # no sideways scrolling, every target 44 px
        said_before.append(said)
        scan_and_wait(page, said["code"])
        banner = page.locator(BANNER)
        expect(banner).to_have_attribute("data-result", "ok")
        expect(banner).to_contain_text(re.compile(
            rf"{re.escape(said['end'])} confirmed in {said['device']} port {re.escape(said['port'])}|verified"))
        expect(banner).not_to_contain_text(re.compile(r"\bat \."))  # a time, or no "at"
    return said_before


def places(said: list[dict]) -> list[tuple]:
    return [(s["end"], s["rack"], s["u"], s["device"], s["port"]) for s in said]


def local_time(at) -> str:
    """How the tablet (en-GB, TABLET_ZONE) writes a time: "3 Mar, 14:05"."""
    here = at.astimezone(ZoneInfo(TABLET_ZONE))
    return f"{here.day} {here:%b}, {here:%H:%M}"


def assert_verified_on_the_page(page, cable: Cable, name: str) -> None:
    when = local_time(cable.verified_at)
    check(page, f"{cable.label} verified")
    expect(page.locator("[data-flow=cable] [data-verified]")).to_have_text(f"Verified by {name} at {when}")
    expect(page.locator(BANNER)).to_contain_text(f"{cable.label} verified")
    expect(page.locator(BANNER)).to_contain_text(f"Verified by {name} at {when}.")
    expect(page.locator(STEP)).to_have_text("Verified. Scan the next cable.")


def assert_verified_once_per_end(cable: Cable, user, *, refused: int = 0) -> None:
    """The cable verified by `user` by scan; each end confirmed by one accepted scan; `refused` refusals."""
    cable.refresh_from_db()
    assert (cable.status, cable.verified_by, cable.fabric_verified_at) == (CableStatus.VERIFIED, user, None)
    ends = CableEnd.objects.filter(cable=cable)
    assert ends.count() == ends.filter(confirmed_by=user, confirmed_at__isnull=False).count() > 0
    events = ScanEvent.objects.filter(action=ScanAction.CABLE_END, cable=cable)
    accepted = sorted(events.filter(result=ScanResult.ACCEPTED).values_list("cable_end__side", "cable_end__position"))
    assert accepted == sorted(ends.values_list("side", "position"))
    assert events.filter(result=ScanResult.REFUSED).count() == refused
    assert events.count() == len(accepted) + refused


@pytest.mark.parametrize("before", ["planned", "verified by the fabric"])
def test_a_plain_cable_is_verified_by_doing_what_the_page_says(floor_page, technician, fabric, before):  # noqa: F811
    if before == "verified by the fabric":  # the cable: the fabric saw its link ok, nobody scanned it yet
        cables_fabric_record(project=fabric.project, observations={fabric.c6.pk: FabricState.OK},
                             checked_at=timezone.now(), cause="Topology comparison: link up.")
    page = open_scan_page(floor_page, technician, fabric.project)
    scan(page, "C00006/A")  # the label on the end in hand: leaf-01 p7 -> spine-01 p1
    if before == "verified by the fabric":
        seen = Cable.objects.get(pk=fabric.c6.pk).fabric_verified_at
        expect(page.locator("[data-verified]")).to_have_text(
            f"Verified by the fabric at {local_time(seen)}. Confirm its ends by scan too.")
    said = follow_the_page(page, limit=2)
    assert places(said) == [("C00006/A", "N01", "1", "leaf-01", "p7"), ("C00006/B", "N01", "10", "spine-01", "p1")]
    cable = Cable.objects.get(pk=fabric.c6.pk)
    assert_verified_on_the_page(page, cable, "tech")
    assert_verified_once_per_end(cable, technician)


def test_every_leg_of_a_breakout_is_verified_by_doing_what_the_page_says(floor_page, fabric):  # noqa: F811
    tomas = UserFactory(username="truiz", first_name="Tomas", last_name="Ruiz")
    MembershipFactory(user=tomas, project=fabric.project, role=Role.TECHNICIAN)
    page = open_scan_page(floor_page, tomas, fabric.project)
    said = follow_the_page(page, first_code="C00005/A", limit=3)  # gpu-003 ib0 -> B1 leaf-01 p3, B2 leaf-02 p3
    assert places(said) == [("C00005/A", "A01", "30", "gpu-003", "ib0"), ("C00005/B1", "N01", "1", "leaf-01", "p3"),
                            ("C00005/B2", "N01", "2", "leaf-02", "p3")]
    cable = Cable.objects.get(pk=fabric.breakout.pk)
    assert_verified_on_the_page(page, cable, "Tomas Ruiz")
    assert_verified_once_per_end(cable, tomas)


def test_after_a_wrong_port_is_refused_the_page_still_leads_to_verified(floor_page, technician, fabric):  # noqa: F811
    page = open_scan_page(floor_page, technician, fabric.project)
    scan(page, "C00003/A")  # gpu-002 ib0/0 (lane 0) -> leaf-01 p2
    said = instruction(page)
    assert (said["end"], said["device"], said["port"], said["code"]) == (
        "C00003/A", "gpu-002", "ib0/0", "gpu-002:ib0/0")
    scan_and_wait(page, "gpu-002:ib1/0")  # one NIC off
    banner = page.locator(BANNER)
    expect(banner).to_have_attribute("data-result", "refused")
    # The refusal names what was expected: the end and the port the page sent the technician to.
    expect(banner.locator(".banner-title")).to_have_text(
        f"{said['end']} belongs in {said['device']} port {said['port']}; you are at gpu-002 port ib1/0.")
    expect(banner).to_contain_text("Nothing was verified.")
    assert instruction(page) == said  # the server still expects that end, there
    rest = follow_the_page(page, limit=2)
    assert places(rest) == [("C00003/A", "A01", "20", "gpu-002", "ib0/0"), ("C00003/B", "N01", "1", "leaf-01", "p2")]
    cable = Cable.objects.get(pk=fabric.c3.pk)
    assert_verified_on_the_page(page, cable, "tech")
    assert_verified_once_per_end(cable, technician, refused=1)


def test_an_end_confirmed_offline_then_sent_leads_on_to_the_next_end(floor_page, technician, fabric):  # noqa: F811
    page = floor_page(technician, viewport=TABLET, locale="en-GB", timezone_id=TABLET_ZONE)
    save_rack_for_offline(page, fabric.project, fabric.network_rack)  # leaf-01 and spine-01: both ends of C00006
    page.goto(f"/p/{fabric.project.code}/floor/scan/")
    page.context.set_offline(True)
    scan(page, "C00006/A")  # found in the rack saved on this tablet
    said = instruction(page)
    assert (said["end"], said["code"]) == ("C00006/A", "leaf-01:p7")
    scan_and_wait(page, said["code"])
    expect(page.locator(BANNER)).to_have_attribute("data-result", "queued")
    expect(page.locator(WAITING)).to_have_text("1")
    assert instruction(page)["end"] == "C00006/B"  # A is confirmed on the tablet; B is next
    assert not ScanEvent.objects.exists()

    page.context.set_offline(False)  # the queue sends A; its answer moves the page on
    expect(page.locator(WAITING)).to_have_text("0", timeout=20_000)
    expect(page.locator(BANNER)).to_have_attribute("data-result", "ok")
    expect(page.locator(BANNER)).to_contain_text(
        "C00006/A confirmed in leaf-01 port p7. Next: C00006/B at spine-01 port p1.")
    expect(page.locator("[data-end='C00006/A'] .end-state")).to_contain_text("Confirmed by tech at")
    said = follow_the_page(page, limit=1)
    assert places(said) == [("C00006/B", "N01", "10", "spine-01", "p1")]
    cable = Cable.objects.get(pk=fabric.c6.pk)
    assert_verified_on_the_page(page, cable, "tech")
    assert_verified_once_per_end(cable, technician)
    sources = ScanEvent.objects.filter(action=ScanAction.CABLE_END).order_by("id").values_list("source", flat=True)
    assert list(sources) == [ScanSource.OFFLINE, ScanSource.PAGE]
