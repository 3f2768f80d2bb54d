"""Swaps on the punch list (delivery.punch.services): recording a swap marks fixed the open items on the part
replaced (the optic, its port, the cable in it), the resolution note naming the swap; "verified" still comes
only from a later passing check, and a failing one after the swap reopens the item for good."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from cabling.choices import CableStatus, RmaState
from cabling.models import Cable
from cabling.swaps.services import cable_swap, optic_swap
from delivery.choices import PunchObjectKind, PunchSource, PunchStatus
from delivery.models import PunchItem
from delivery.punch.services import punch_item_open
from inventory.models import Optic
from inventory.services import optic_install
from tests.factories import OpticFactory
from validation.choices import Verdict

from .stages_world import build_world
from .test_punch import link_health, sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(project, manager, technician, customer):
    world = build_world(project)
    world.optic = OpticFactory(project=project, serial="MT-OLD-1")
    optic_install(optic=world.optic, port=world.c1.ends.get(side="A").port)
    return world


@pytest.fixture(autouse=True)
def cables_in_place(world):
    """A swap replaces a cable that is there: the world's planned cables are installed."""
    Cable.objects.filter(project=world.project, status=CableStatus.PLANNED).update(status=CableStatus.INSTALLED)


def later(seconds: int):
    return timezone.now() + timedelta(seconds=seconds)


def item_of(world, **lookup) -> PunchItem:
    return PunchItem.objects.get(project=world.project, **lookup)


def test_an_optic_swap_fixes_the_items_on_the_optic_its_port_and_its_cable(world, technician):
    link_health(world, {world.c1: Verdict.FAIL, world.c2: Verdict.FAIL})
    sync(world)
    by_hand = punch_item_open(project=world.project, user=technician, title="Optic runs hot",
                              object_kind=PunchObjectKind.OPTIC, object_id=world.optic.pk, object_label="MT-OLD-1")
    optic_swap(optic=world.optic, new_serial="MT-NEW-2", reason="Rx power low on lane 3", user=technician,
               rma_case="RMA-4411", rma_state=RmaState.OPEN)
    sync(world)
    cable_item = item_of(world, object_kind=PunchObjectKind.CABLE, object_id=world.c1.pk)
    by_hand.refresh_from_db()
    for item in (cable_item, by_hand):
        assert (item.status, item.fixed_by, item.verified_at) == (PunchStatus.FIXED, technician, None)
        assert "MT-OLD-1 → MT-NEW-2" in item.resolution_note and "RMA-4411" in item.resolution_note
        assert item.resolution_note.startswith("Optic in gpu-001:ib0 replaced: MT-OLD-1 → MT-NEW-2 (swap #")
        assert "Rx power low" not in item.resolution_note  # the swap's reason stays on the swap
    assert cable_item.history.first().history_change_reason.startswith("fixed by swap #")
    # The other cable's item is about another port: untouched.
    assert item_of(world, object_id=world.c2.pk).status == PunchStatus.OPEN


def test_the_swap_reaches_the_punch_list_through_the_evidence_signal(world, technician,
                                                                   django_capture_on_commit_callbacks):
    link_health(world, {world.c1: Verdict.FAIL})
    sync(world)
    with django_capture_on_commit_callbacks(execute=True):
        cable_swap(cable=world.c1, new_serial="CBL-2", reason="crushed", user=technician)
    assert item_of(world, object_id=world.c1.pk).status == PunchStatus.FIXED


def test_fixed_by_a_swap_is_verified_only_by_a_later_passing_check(world, technician):
    link_health(world, {world.c1: Verdict.FAIL})
    sync(world)
    cable_swap(cable=world.c1, new_serial="CBL-2", reason="crushed", user=technician)
    sync(world)
    assert sync(world)["verified"] == 0  # the swap itself proves nothing
    item = item_of(world, object_id=world.c1.pk)
    assert item.status == PunchStatus.FIXED
    link_health(world, {world.c1: Verdict.PASS}, at=later(5))
    assert sync(world)["verified"] == 1
    item.refresh_from_db()
    assert (item.status, item.verified_by) == (PunchStatus.VERIFIED, None)
    assert "CBL-2" in item.resolution_note


def test_a_failing_check_after_the_swap_reopens_and_the_swap_does_not_fix_it_again(world, technician):
    link_health(world, {world.c1: Verdict.FAIL})
    sync(world)
    optic_swap(optic=world.optic, new_serial="MT-NEW-2", reason="flaps", user=technician)
    sync(world)
    link_health(world, {world.c1: Verdict.FAIL}, at=later(5))
    assert sync(world)["reopened"] == 1
    assert sync(world)["reopened"] == 0
    assert item_of(world, object_id=world.c1.pk).status == PunchStatus.OPEN


def test_an_item_opened_after_the_swap_is_not_fixed_by_it(world, technician):
    optic_swap(optic=world.optic, new_serial="MT-NEW-2", reason="flaps", user=technician)
    sync(world)
    item = punch_item_open(project=world.project, user=technician, title="New optic dirty",
                           object_kind=PunchObjectKind.PORT, object_id=world.c1.ends.get(side="A").port_id)
    sync(world)
    item.refresh_from_db()
    assert (item.status, item.source) == (PunchStatus.OPEN, PunchSource.MANUAL)
    # The new optic itself is in its port; the old one left it.
    assert Optic.objects.get(serial="MT-NEW-2").port_id == item.object_id


def test_an_item_opened_by_hand_on_a_cable_is_verified_by_the_scans_after_the_swap(world, technician, manager):
    from cabling.choices import ScanAction
    from cabling.services import scan_record

    by_hand = punch_item_open(project=world.project, user=technician, title="Cable crushed in the tray",
                              object_kind=PunchObjectKind.CABLE, object_id=world.c1.pk, object_label="C00001")
    link_health(world, {world.c1: Verdict.FAIL})
    sync(world)
    checked = item_of(world, source=PunchSource.CHECK_RESULT)
    cable_swap(cable=world.c1, new_serial="CBL-2", reason="crushed", user=technician)
    sync(world)
    by_hand.refresh_from_db()
    assert by_hand.status == item_of(world, pk=checked.pk).status == PunchStatus.FIXED  # both fixed by the swap
    ends = {end.side: end.port for end in world.c1.ends.select_related("port__device")}
    for side in ("A", "B"):
        event = scan_record(user=manager, project=world.project, action=ScanAction.CABLE_END, code=f"C00001/{side}",
                            port=ends[side].pk).event
        assert event.result == "accepted", event.reason
    assert sync(world)["verified"] == 1
    by_hand.refresh_from_db()
    checked.refresh_from_db()
    assert by_hand.status == PunchStatus.VERIFIED and "verified by a scan of every end" in by_hand.evidence_note
    # ...but the failed link check is proved fixed only by a passing one.
    assert item_of(world, pk=checked.pk).status == PunchStatus.FIXED
