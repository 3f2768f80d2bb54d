"""Swaps and RMA (cabling.swaps.services): an optic replaced in its port, a cable replaced between its ports,
each recorded with the serial out and in, the RMA case and its state, and the cable in that place sent back
through verification, verified again only by a scan of every end. The fabric is tests/cabling/conftest.py's:

    C00001  gpu-001:ib0/0 -> leaf-01:p1   (ib0/0 and ib0/1 are lanes of the cage gpu-001:ib0, whose optic
    C00002  gpu-001:ib0/1 -> leaf-02:p1    serves both cables)
"""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from cabling.choices import CableStatus, FabricState, RmaState, ScanAction, ScanResult, SwapKind
from cabling.models import Cable, CableEnd, Swap
from cabling.services import scan_record
from cabling.swaps.services import cable_swap, optic_swap, swap_rma_update
from inventory.choices import OpticStatus, PortStatus
from inventory.models import Optic, Port
from inventory.services import optic_install
from tests.factories import OpticFactory

from .conftest import NODE_OPTIC, SWITCH_OPTIC, ports_of

pytestmark = pytest.mark.django_db


def scan_end(user, project, code, port_code):
    return scan_record(user=user, project=project, action=ScanAction.CABLE_END, code=code, port_code=port_code).event


def verify_c1(fabric, user):
    scan_end(user, fabric.project, "C00001/A", "gpu-001:ib0/0")
    assert scan_end(user, fabric.project, "C00001/B", "leaf-01:p1").result == ScanResult.ACCEPTED
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert cable.status == CableStatus.VERIFIED
    return cable


@pytest.fixture
def seated(fabric, technician):
    """MT-NODE-1 seated in the cage gpu-001:ib0 by a scan; C00001 verified by a scan of both ends and seen ok by
    the fabric; a spare MT-NODE-2 in stock."""
    make = dict(project=fabric.project, part_number=NODE_OPTIC, vendor="Mellanox")
    old = OpticFactory(serial="MT-NODE-1", **make)
    spare = OpticFactory(serial="MT-NODE-2", **make)
    scan_record(user=technician, project=fabric.project, action=ScanAction.OPTIC, code="MT-NODE-1",
                port_code="gpu-001:ib0")
    verify_c1(fabric, technician)
    Cable.objects.filter(pk=fabric.c1.pk).update(fabric_state=FabricState.OK)
    return Optic.objects.get(pk=old.pk), spare


# --- optic swap -------------------------------------------------------------------------------------------


def test_an_optic_swap_puts_the_spare_in_the_port_and_the_old_one_in_rma(fabric, technician, seated):
    old, spare = seated
    cage = ports_of(fabric.gpu1)["ib0"]
    swap = optic_swap(optic=old, new_serial="MT-NODE-2", reason="Rx power -14 dBm on lane 2", user=technician,
                      rma_case="RMA-7781", rma_state=RmaState.OPEN)
    old.refresh_from_db()
    spare.refresh_from_db()
    assert (old.status, old.port) == (OpticStatus.RMA, None)
    assert (spare.status, spare.port, spare.installed_by) == (OpticStatus.INSTALLED, cage, technician)
    assert (swap.kind, swap.optic, swap.new_optic, swap.port, swap.cable) == (SwapKind.OPTIC, old, spare, cage, None)
    assert (swap.old_serial, swap.new_serial, swap.rma_case, swap.rma_state) == (
        "MT-NODE-1", "MT-NODE-2", "RMA-7781", RmaState.OPEN)
    assert (swap.recorded_by, swap.reason) == (technician, "Rx power -14 dBm on lane 2")
    # History: the swap itself, and each optic's move, by the technician, naming the swap.
    assert swap.history.get().history_user == technician
    assert old.history.first().history_user == technician
    assert "MT-NODE-1 → MT-NODE-2" in old.history.first().history_change_reason


def test_an_optic_swap_without_rma_leaves_the_old_one_faulty_and_makes_an_unknown_spare(fabric, technician, seated):
    old, _ = seated
    swap = optic_swap(optic=old, new_serial="MT-NEW-9", reason="dropped on the floor", user=technician)
    old.refresh_from_db()
    new = Optic.objects.get(project=fabric.project, serial="MT-NEW-9")
    assert old.status == OpticStatus.FAULTY and swap.rma_state == RmaState.NONE
    # Made like the one it replaces.
    assert (new.vendor, new.part_number, new.form_factor, new.speed_gbps) == (
        old.vendor, old.part_number, old.form_factor, old.speed_gbps)
    assert (new.status, new.port.name, swap.new_optic) == (OpticStatus.INSTALLED, "ib0", new)


def test_an_optic_swap_sends_the_cables_in_the_cage_back_through_verification(fabric, technician, seated):
    old, _ = seated
    leaf_port = ports_of(fabric.leaf1)["p1"]
    assert leaf_port.status == PortStatus.CONNECTED
    optic_swap(optic=old, new_serial="MT-NODE-2", reason="link flaps", user=technician)
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert (cable.status, cable.verified_at, cable.verified_by, cable.fabric_state) == (
        CableStatus.INSTALLED, None, None, "")
    assert "Optic swapped in gpu-001 port ib0 by tech: MT-NODE-1 → MT-NODE-2" in cable.status_cause
    assert not CableEnd.objects.filter(cable=cable, confirmed_at__isnull=False).exists()
    assert Port.objects.get(pk=leaf_port.pk).status == PortStatus.PLANNED
    # C00002 shares the cage (lane ib0/1) but was never on the floor: it stays planned.
    assert Cable.objects.get(pk=fabric.c2.pk).status == CableStatus.PLANNED
    assert cable.history.first().history_user == technician


def test_the_swapped_cable_is_verified_again_only_by_a_scan_of_both_ends(fabric, technician, manager, seated):
    old, _ = seated
    optic_swap(optic=old, new_serial="MT-NODE-2", reason="link flaps", user=technician)
    first = scan_end(manager, fabric.project, "C00001/A", "gpu-001:ib0/0")
    # Not a conflict with the confirmation from before the swap: that one is gone.
    assert first.result == ScanResult.ACCEPTED
    assert Cable.objects.get(pk=fabric.c1.pk).status == CableStatus.INSTALLED
    scan_end(manager, fabric.project, "C00001/B", "leaf-01:p1")
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert (cable.status, cable.verified_by) == (CableStatus.VERIFIED, manager)


@pytest.mark.parametrize(
    ("serial", "field", "words"),
    [
        ("MT-NODE-1", "new_serial", "MT-NODE-1 is the optic going out: scan the new one."),
        ("mt-node-1", "new_serial", "mt-node-1 is the optic going out"),
        ("MT-ELSEWHERE", "new_serial", "Optic MT-ELSEWHERE is already in leaf-01 port p2"),
        ("MT-BAD", "new_serial", "Optic MT-BAD is marked faulty: take another."),
        ("MT-SW-1", "new_serial", f"Optic MT-SW-1 is {SWITCH_OPTIC}; gpu-001 port ib0 takes {NODE_OPTIC}"),
        ("", "new_serial", "Scan or type the new optic's serial."),
        ("x" * 101, "new_serial", "At most 100 characters."),
        ("MT\x00NUL", "new_serial", "Remove the control characters."),
    ],
)
def test_optic_swap_refusals_name_the_field_and_change_nothing(fabric, technician, seated, serial, field, words):
    old, _ = seated
    make = dict(project=fabric.project, part_number=NODE_OPTIC)
    elsewhere = OpticFactory(serial="MT-ELSEWHERE", **make)
    optic_install(optic=elsewhere, port=ports_of(fabric.leaf1)["p2"], user=technician)
    OpticFactory(serial="MT-BAD", status=OpticStatus.FAULTY, **make)
    OpticFactory(serial="MT-SW-1", project=fabric.project, part_number=SWITCH_OPTIC)
    with pytest.raises(ValidationError) as refused:
        optic_swap(optic=old, new_serial=serial, reason="bad", user=technician)
    assert words in " ".join(refused.value.message_dict[field])
    assert Optic.objects.get(pk=old.pk).status == OpticStatus.INSTALLED
    assert Cable.objects.get(pk=fabric.c1.pk).status == CableStatus.VERIFIED
    assert not Swap.objects.exists()


def test_an_optic_in_no_port_is_not_swapped_and_a_reason_is_required(fabric, technician, seated):
    _, spare = seated
    with pytest.raises(ValidationError) as refused:
        optic_swap(optic=spare, new_serial="MT-X", reason="bad", user=technician)
    assert refused.value.message_dict["optic"] == ["Optic MT-NODE-2 is not in a port (in stock): only a seated "
                                                   "optic is swapped."]
    with pytest.raises(ValidationError) as refused:
        optic_swap(optic=seated[0], new_serial="MT-NODE-2", reason="   ", user=technician)
    assert "reason" in refused.value.message_dict


def test_the_new_optic_is_looked_up_in_this_project_only(fabric, other_project, technician, seated):
    old, _ = seated
    OpticFactory(project=other_project, serial="MT-THEIRS", part_number=NODE_OPTIC)
    swap = optic_swap(optic=old, new_serial="MT-THEIRS", reason="flaps", user=technician)
    assert swap.new_optic.project == fabric.project  # a new row here; theirs untouched
    assert Optic.objects.filter(serial="MT-THEIRS").count() == 2


@pytest.mark.parametrize(
    ("case", "state", "field"),
    [("RMA-1", RmaState.NONE, "rma_state"), ("", RmaState.SHIPPED, "rma_case"), ("", "lost", "rma_state")],
)
def test_rma_fields_must_agree(fabric, technician, seated, case, state, field):
    with pytest.raises(ValidationError) as refused:
        optic_swap(optic=seated[0], new_serial="MT-NODE-2", reason="bad", user=technician, rma_case=case,
                   rma_state=state)
    assert field in refused.value.message_dict


def test_customers_and_outsiders_record_no_swap(fabric, customer, outsider, seated):
    for user in (customer, outsider):
        with pytest.raises(PermissionDenied):
            optic_swap(optic=seated[0], new_serial="MT-NODE-2", reason="bad", user=user)
        with pytest.raises(PermissionDenied):
            cable_swap(cable=fabric.c1, new_serial="CBL-2", reason="bad", user=user)
    assert not Swap.objects.exists()


# --- cable swap -------------------------------------------------------------------------------------------


def test_a_cable_swap_records_the_serials_and_sends_the_cable_back_through_verification(fabric, technician,
                                                                                        manager):
    verify_c1(fabric, technician)
    swap = cable_swap(cable=fabric.c1, new_serial="CBL-NEW-2", old_serial="CBL-OLD-1", reason="kinked at the tray",
                      user=technician, rma_case="RMA-55", rma_state=RmaState.TO_SHIP)
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert (swap.kind, swap.cable, swap.optic, swap.old_serial, swap.new_serial) == (
        SwapKind.CABLE, cable, None, "CBL-OLD-1", "CBL-NEW-2")
    assert (cable.serial, cable.status, cable.verified_at) == ("CBL-NEW-2", CableStatus.INSTALLED, None)
    assert not CableEnd.objects.filter(cable=cable, confirmed_at__isnull=False).exists()
    assert [h.serial for h in cable.history.all()[:1]] == ["CBL-NEW-2"]
    # The next swap of the same cable takes the serial recorded; an old serial that contradicts it is refused.
    with pytest.raises(ValidationError) as refused:
        cable_swap(cable=cable, new_serial="CBL-NEW-3", old_serial="typo", reason="again", user=manager)
    assert "recorded with serial CBL-NEW-2, not typo" in refused.value.message_dict["old_serial"][0]
    again = cable_swap(cable=cable, new_serial="CBL-NEW-3", reason="again", user=manager)
    assert again.old_serial == "CBL-NEW-2"
    # Scanned again: verified.
    verify_c1(fabric, manager)


def test_cable_swap_refusals(fabric, technician):
    Cable.objects.filter(pk__in=[fabric.c1.pk, fabric.c2.pk]).update(status=CableStatus.INSTALLED)
    cable_swap(cable=fabric.c2, new_serial="CBL-TAKEN", reason="bad", user=technician)
    with pytest.raises(ValidationError) as refused:
        cable_swap(cable=fabric.c1, new_serial="cbl-taken", reason="bad", user=technician)
    assert refused.value.message_dict["new_serial"] == ["Cable C00002 already carries serial cbl-taken."]
    with pytest.raises(ValidationError) as refused:
        cable_swap(cable=fabric.c2, new_serial="CBL-TAKEN", reason="bad", user=technician)
    assert "going out" in refused.value.message_dict["new_serial"][0]
    assert Swap.objects.count() == 1


def test_the_check_constraint_refuses_a_swap_naming_the_wrong_part(fabric, technician):
    from django.db import IntegrityError, transaction
    from django.utils import timezone

    with pytest.raises(IntegrityError), transaction.atomic():
        Swap.objects.create(project=fabric.project, kind=SwapKind.OPTIC, cable=fabric.c1, new_serial="X",
                            reason="r", recorded_at=timezone.now())


# --- the RMA later ----------------------------------------------------------------------------------------


def test_the_rma_moves_on_and_the_old_optic_follows(fabric, technician, manager, seated):
    old, _ = seated
    swap = optic_swap(optic=old, new_serial="MT-NODE-2", reason="dead", user=technician)
    assert Optic.objects.get(pk=old.pk).status == OpticStatus.FAULTY
    swap = swap_rma_update(swap=swap, rma_case="RMA-9", rma_state=RmaState.SHIPPED, user=manager)
    assert (swap.rma_case, swap.rma_state) == ("RMA-9", RmaState.SHIPPED) and swap.rma_updated_at
    assert Optic.objects.get(pk=old.pk).status == OpticStatus.RMA
    swap = swap_rma_update(swap=swap, rma_case="RMA-9", rma_state=RmaState.CREDITED, user=technician)
    assert [h.rma_state for h in swap.history.all()] == [RmaState.CREDITED, RmaState.SHIPPED, RmaState.NONE]
    assert swap.history.first().history_user == technician
    with pytest.raises(ValidationError) as refused:
        swap_rma_update(swap=swap, rma_case="", rma_state=RmaState.REPLACED, user=manager)
    assert "rma_case" in refused.value.message_dict
    with pytest.raises(ValidationError) as refused:  # credited is the vendor's last word
        swap_rma_update(swap=swap, rma_case="RMA-9", rma_state=RmaState.SHIPPED, user=manager)
    assert "closed" in refused.value.message_dict["rma_state"][0]


def test_an_rma_moves_forward_only(fabric, technician, seated):
    old, _ = seated
    swap = optic_swap(optic=old, new_serial="MT-NODE-2", reason="dead", user=technician, rma_case="RMA-1",
                      rma_state=RmaState.SHIPPED)
    with pytest.raises(ValidationError) as refused:
        swap_rma_update(swap=swap, rma_case="RMA-1", rma_state=RmaState.TO_SHIP, user=technician)
    assert "cannot go back" in refused.value.message_dict["rma_state"][0]
    swap = swap_rma_update(swap=swap, rma_case="RMA-1b", rma_state=RmaState.SHIPPED, user=technician)  # a case fixed
    assert swap_rma_update(swap=swap, rma_case="RMA-1b", rma_state=RmaState.REPLACED,
                           user=technician).rma_state == RmaState.REPLACED


def test_a_planned_cable_has_nothing_to_swap(fabric, technician):
    planned = Cable.objects.filter(project=fabric.project, status=CableStatus.PLANNED).first()
    with pytest.raises(ValidationError) as refused:
        cable_swap(cable=planned, new_serial="CBL-X", reason="r", user=technician)
    assert "only planned" in refused.value.message_dict["cable"][0]
    assert not Swap.objects.exists()


# --- two people at the same moment (PostgreSQL: threads with their own connections) -----------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("same", ["old optic", "spare"])
def test_two_swaps_at_the_same_moment_one_wins_the_other_is_refused(fabric, technician, manager, same):
    from django.db import connection

    from cabling.swaps import services as swaps
    from tests.test_scan_concurrency import at_once, hold_until_all_arrive

    if connection.vendor != "postgresql":
        pytest.skip("concurrency tests need PostgreSQL (DATABASE_URL=postgres://...)")
    make = dict(project=fabric.project, part_number=NODE_OPTIC)
    first = optic_install(optic=OpticFactory(serial="MT-A", **make), port=ports_of(fabric.gpu1)["ib0"])
    second = optic_install(optic=OpticFactory(serial="MT-B", **make), port=ports_of(fabric.gpu2)["ib0"])
    for serial in ("MT-SPARE-1", "MT-SPARE-2"):
        OpticFactory(serial=serial, **make)
    if same == "old optic":  # both replace MT-A, each with its own spare
        calls = [(first, "MT-SPARE-1", technician), (first, "MT-SPARE-2", manager)]
    else:  # both take MT-SPARE-1, for two different ports
        calls = [(first, "MT-SPARE-1", technician), (second, "MT-SPARE-1", manager)]
    # Both checked their input and are about to lock the optics: one gets them, the other waits.
    with hold_until_all_arrive(swaps, "_locked_optics", 2):
        results = at_once(*(lambda o=o, s=s, u=u: optic_swap(optic=o, new_serial=s, reason="race", user=u)
                            for o, s, u in calls))
    won = [r for r in results if isinstance(r, Swap)]
    refused = [r for r in results if isinstance(r, ValidationError)]
    assert (len(won), len(refused)) == (1, 1), results
    field = "optic" if same == "old optic" else "new_serial"
    assert field in refused[0].message_dict
    assert Swap.objects.count() == 1
    assert Optic.objects.filter(status=OpticStatus.INSTALLED, serial__startswith="MT-SPARE").count() == 1
