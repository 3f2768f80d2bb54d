"""Cable.fabric_verified_at: when the topology comparison that verified a cable by the fabric's word ran (the
burn-up's date for it). Set by the comparison that moves the cable into verified, kept by the comparisons
that see it ok again (fabric_checked_at moves, this does not), cleared by every write that takes the cable
out of verified and by the scan that verifies it (verified_at dates it then). Migration 0009 fills it for the
cables verified by the fabric's word before it existed, from their history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from cabling.choices import CableStatus, FabricState, ScanAction
from cabling.models import Cable, CableEnd
from cabling.services import (
    cable_end_repatch,
    cable_status_set,
    cables_fabric_record,
    cables_link_observe,
    scan_record,
)
from cabling.swaps.services import cable_swap
from tests.support import migrated_to, scratch_database

from .conftest import ports_of

pytestmark = pytest.mark.django_db

# Both services that record a comparison keep the field the same way.
RECORDERS = pytest.mark.parametrize("record", [cables_fabric_record, cables_fabric_record],
                                    ids=["bulk", "per-cable"])


def compare(record, fabric, seen: dict, at) -> None:
    record(project=fabric.project, observations={cable.pk: state for cable, state in seen.items()}, checked_at=at,
           cause=f"comparison at {at:%H:%M}")


def dates(cable) -> tuple:
    cable.refresh_from_db()
    return cable.status, cable.fabric_verified_at, cable.fabric_checked_at


def last_history(cable):
    """The history row written last (not the latest by date: a comparison may be dated in the past)."""
    return cable.history.order_by("-history_id").first()


def fabric_verified(fabric, at) -> Cable:
    """C00001 verified by the fabric's word at `at`."""
    compare(cables_fabric_record, fabric, {fabric.c1: FabricState.OK}, at)
    assert dates(fabric.c1) == (CableStatus.VERIFIED, at, at)
    return fabric.c1


@RECORDERS
def test_the_comparison_that_verifies_a_cable_dates_it_and_later_ones_keep_that_date(fabric, record):
    first = timezone.now() - timedelta(days=9)
    compare(record, fabric, {fabric.c1: FabricState.OK}, first)
    assert dates(fabric.c1) == (CableStatus.VERIFIED, first, first)
    assert last_history(fabric.c1).fabric_verified_at == first
    later = first + timedelta(days=9)
    compare(record, fabric, {fabric.c1: FabricState.OK}, later)
    assert dates(fabric.c1) == (CableStatus.VERIFIED, first, later)  # seen again: verified nine days ago still


@RECORDERS
@pytest.mark.parametrize("seen, status", [(FabricState.MISSING, CableStatus.INSTALLED),
                                          (FabricState.MISWIRED, CableStatus.FAULTY),
                                          (FabricState.DEGRADED, CableStatus.FAULTY)])
def test_a_cable_the_fabric_takes_out_of_verified_loses_the_date(fabric, record, seen, status):
    fabric_verified(fabric, timezone.now() - timedelta(days=2))
    at = timezone.now()
    compare(record, fabric, {fabric.c1: seen}, at)
    assert dates(fabric.c1) == (status, None, at)
    assert last_history(fabric.c1).fabric_verified_at is None
    # Seen ok again: verified again, dated by the comparison that did it.
    again = at + timedelta(hours=1)
    compare(record, fabric, {fabric.c1: FabricState.OK}, again)
    assert dates(fabric.c1) == (CableStatus.VERIFIED, again, again)


@RECORDERS
def test_a_scan_verified_cable_seen_ok_is_not_dated_by_the_fabric(fabric, technician, record):
    for code, where in (("C00001/A", "gpu-001:ib0/0"), ("C00001/B", "leaf-01:p1")):
        scan_record(user=technician, project=fabric.project, action=ScanAction.CABLE_END, code=code, port_code=where)
    compare(record, fabric, {fabric.c1: FabricState.OK}, timezone.now())
    status, fabric_verified_at, _ = dates(fabric.c1)
    assert (status, fabric_verified_at) == (CableStatus.VERIFIED, None) and fabric.c1.verified_at is not None


def test_a_scan_that_verifies_a_fabric_verified_cable_clears_the_fabrics_date(fabric, technician):
    fabric_verified(fabric, timezone.now() - timedelta(days=3))
    for code, where in (("C00001/A", "gpu-001:ib0/0"), ("C00001/B", "leaf-01:p1")):
        scan_record(user=technician, project=fabric.project, action=ScanAction.CABLE_END, code=code, port_code=where)
    status, fabric_verified_at, _ = dates(fabric.c1)
    assert (status, fabric_verified_at) == (CableStatus.VERIFIED, None) and fabric.c1.verified_at is not None
    assert last_history(fabric.c1).fabric_verified_at is None


def test_a_failed_link_check_clears_it(fabric):
    fabric_verified(fabric, timezone.now() - timedelta(days=3))
    cables_link_observe(project=fabric.project, ok=[], failed={fabric.c1.pk: "BER 1e-9"}, at=timezone.now(),
                        cause="link health #4")
    assert dates(fabric.c1)[:2] == (CableStatus.FAULTY, None)


def test_a_person_setting_the_status_clears_it(fabric, manager):
    fabric_verified(fabric, timezone.now() - timedelta(days=3))
    cable_status_set(cables=[fabric.c1], status=CableStatus.FAULTY, user=manager, reason="crushed")
    assert dates(fabric.c1)[:2] == (CableStatus.FAULTY, None)
    assert last_history(fabric.c1).fabric_verified_at is None


def test_a_cable_swap_clears_it(fabric, technician):
    fabric_verified(fabric, timezone.now() - timedelta(days=3))
    cable_swap(cable=fabric.c1, new_serial="CBL-NEW-2", reason="kinked at the tray", user=technician)
    assert dates(fabric.c1) == (CableStatus.INSTALLED, None, None)


def test_a_repatch_clears_it(fabric, manager):
    fabric_verified(fabric, timezone.now() - timedelta(days=3))
    end = CableEnd.objects.get(cable=fabric.c1, side="B")
    cable_end_repatch(end=end, port=ports_of(fabric.leaf1)["p5"], user=manager, reason="found in p5")
    assert dates(fabric.c1)[:2] == (CableStatus.INSTALLED, None)


# --- migration 0009 ---------------------------------------------------------------------------------------

BEFORE = [("cabling", "0008_swaps")]
AFTER = [("cabling", "0009_cable_fabric_verified_at")]


def test_the_migration_dates_the_cables_verified_by_the_fabrics_word_by_their_history(tmp_path):
    """Every comparison moved fabric_checked_at to today (the bug): the history still holds when each cable
    became verified. A cable with no history row keeps fabric_checked_at; the demo's, backdated in
    fabric_checked_at but not in its history, keeps the earlier of the two."""
    now = timezone.now()
    day = [now - timedelta(days=n) for n in range(10)]
    with scratch_database(tmp_path) as executor:
        old = migrated_to(executor, BEFORE)
        project = old.get_model("delivery", "Project").objects.create(code="OLD-9", name="Old", customer_name="C")
        OldCable, OldHistory = old.get_model("cabling", "Cable"), old.get_model("cabling", "HistoricalCable")
        make = dict(project=project, network="compute", cable_type="aoc", length_m=3, speed_gbps=400)

        def cable(label, status, *, checked_at=now, verified_at=None, history=()):
            row = OldCable.objects.create(label=label, status=status, fabric_checked_at=checked_at,
                                          verified_at=verified_at, fabric_state="ok", **make)
            for at, was in history:  # (when, status) as the services wrote them
                OldHistory.objects.create(id=row.pk, label=label, status=was, history_date=at, history_type="~",
                                          **make)
            return row.pk

        ids = {
            "verified once": cable("F1", "verified", history=[(day[9], "planned"), (day[7], "verified")]),
            "verified again": cable("F2", "verified", history=[(day[9], "verified"), (day[6], "installed"),
                                                              (day[4], "verified"), (day[2], "verified")]),
            "no history": cable("F3", "verified", checked_at=day[5]),
            "backdated": cable("F4", "verified", checked_at=day[8], history=[(day[0], "verified")]),
            "scanned": cable("S1", "verified", verified_at=day[3], history=[(day[3], "verified")]),
            "installed": cable("I1", "installed", history=[(day[7], "verified"), (day[1], "installed")]),
        }

        Cable = migrated_to(executor, AFTER).get_model("cabling", "Cable")
        dated = dict(Cable.objects.filter(pk__in=ids.values()).values_list("pk", "fabric_verified_at"))
        assert {kind: dated[pk] for kind, pk in ids.items()} == {
            "verified once": day[7], "verified again": day[4], "no history": day[5], "backdated": day[8],
            "scanned": None, "installed": None}
