"""scan_record, the one service every scan goes through: each action and each refusal with its exact
words, one event per scan (kept, with what it resolved to), replays recorded once, conflicts naming who
and when, and bad input refused before anything is read. The fabric is tests/cabling/conftest.py's:

    C00001  gpu-001:ib0/0 (A01, U1-10)  ->  leaf-01:p1 (N01 U1)        optics OPT-NODE-800 / OPT-SW-2x400
    C00005  gpu-003:ib0                 ->  B1 leaf-01:p3, B2 leaf-02:p3 (a breakout)
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from cabling.choices import CableStatus, ScanAction, ScanResult, ScanSource
from cabling.models import Cable, CableEnd, ScanEvent
from cabling.services import scan_record
from inventory.choices import DeviceStatus, OpticStatus, PortStatus
from inventory.models import Device, DeviceUnit, Optic, Port
from inventory.services import device_update, moment
from tests.factories import OpticFactory, RackFactory

from .conftest import NODE_OPTIC, SWITCH_OPTIC, ports_of

pytestmark = pytest.mark.django_db


def scan(user, project, action, code, **given):
    return scan_record(user=user, project=project, action=action, code=code, **given)


def said(user, project, action, code, **given) -> tuple[str, str]:
    event = scan(user, project, action, code, **given).event
    return event.result, event.reason


# --- lookup ---------------------------------------------------------------------------------------------------


def test_a_lookup_records_what_the_code_names_and_who_scanned_it(fabric, technician):
    outcome = scan(technician, fabric.project, ScanAction.LOOKUP, "C00001/A", source=ScanSource.PAGE)
    event = outcome.event
    assert not outcome.replayed
    assert (event.result, event.reason) == (ScanResult.FOUND, "C00001/A is cable end C00001 A0: gpu-001:ib0/0 "
                                                               "(by its end code).")
    assert (event.user, event.project, event.raw_code, event.source) == (technician, fabric.project, "C00001/A", "page")
    assert (event.cable_end.cable, event.cable, event.port.name) == (fabric.c1, fabric.c1, "ib0/0")
    assert event.context["matches"] == [{
        "kind": "cable_end", "id": event.cable_end_id, "label": "C00001 A0: gpu-001:ib0/0",
        "url": reverse("cabling:cable-detail", args=[fabric.project.code, fabric.c1.pk]), "how": "end code",
    }]
    assert ScanEvent.objects.count() == 1


def test_a_lookup_of_a_serial_finds_the_device(fabric, technician):
    device_update(device=fabric.gpu2, serial="SN-GPU-2")
    event = scan(technician, fabric.project, ScanAction.LOOKUP, " SN-GPU-2\n").event
    assert (event.result, event.reason, event.device) == (ScanResult.FOUND, "SN-GPU-2 is device gpu-002 (by its "
                                                                            "serial).", fabric.gpu2)
    assert event.raw_code == " SN-GPU-2\n"  # kept exactly as read


def test_an_unknown_code_is_refused_naming_what_was_read_and_another_projects_label_is_unknown(fabric, technician):
    assert said(technician, fabric.project, ScanAction.LOOKUP, "NOPE-1") == (
        ScanResult.REFUSED, "Unknown code 'NOPE-1': nothing in this project has it.")
    assert said(technician, fabric.project, ScanAction.LOOKUP, "C00001-FOREIGN")[0] == ScanResult.REFUSED
    assert ScanEvent.objects.filter(result=ScanResult.REFUSED).count() == 2


# --- rack -----------------------------------------------------------------------------------------------------


def test_racking_by_serial_at_the_planned_place(fabric, technician):
    device_update(device=fabric.gpu1, serial="SN-1", status=DeviceStatus.RECEIVED)
    before = timezone.now()
    event = scan(technician, fabric.project, ScanAction.RACK, "SN-1").event
    assert (event.result, event.reason, event.device) == (ScanResult.ACCEPTED, "gpu-001 racked in A01 U1.",
                                                          fabric.gpu1)
    assert event.context["matches"][0]["how"] == "serial"
    device = Device.objects.get(pk=fabric.gpu1.pk)
    assert (device.status, device.racked_by, device.rack.name, device.position_u) == (
        DeviceStatus.RACKED, technician, "A01", 1)
    assert device.racked_at >= before
    assert device.history.latest().status == DeviceStatus.RACKED


def test_racking_a_device_already_in_its_rack_keeps_its_status_and_records_who(fabric, technician):
    device_update(device=fabric.gpu1, status=DeviceStatus.POWERED)
    assert said(technician, fabric.project, ScanAction.RACK, "gpu-001", rack="a01", position_u=1)[0] == "accepted"
    device = Device.objects.get(pk=fabric.gpu1.pk)
    assert (device.status, device.racked_by) == (DeviceStatus.POWERED, technician)
    # The same person again: nothing changes, and it says so.
    assert said(technician, fabric.project, ScanAction.RACK, "gpu-001") == (
        ScanResult.ACCEPTED, "gpu-001 was already racked in A01 U1 by you; nothing changed.")


def test_racking_at_another_free_place_moves_the_device_and_its_units(fabric, technician):
    result, reason = said(technician, fabric.project, ScanAction.RACK, "gpu-003", position_u=35)
    assert (result, reason) == (ScanResult.ACCEPTED, "gpu-003 racked in A01 U35. Its planned place was A01 U21: "
                                                     "the inventory now has it here.")
    units = sorted(DeviceUnit.objects.filter(device=fabric.gpu3).values_list("unit", flat=True).distinct())
    assert units == list(range(35, 45))


@pytest.mark.parametrize(
    ("code", "given", "reason"),
    [
        ("NO-SUCH-SERIAL", {}, "Unknown code 'NO-SUCH-SERIAL': it is not a device's serial or asset tag in this "
                               "project."),
        ("C00001", {}, "C00001 is a cable label (C00001), not a device's serial or asset tag."),
        ("gpu-003", {"position_u": 5}, "U5 of rack A01 is already taken by gpu-001."),
        ("gpu-003", {"rack": "Z99", "position_u": 5}, "No rack Z99 in this project."),
        ("gpu-003", {"position_u": 45}, "gpu-003 (10U at U45) sticks out of rack A01 (48U): its top would be U54."),
        ("gpu-003", {"rack": "N01"}, "Say at which U of N01 gpu-003 stands."),
    ],
)
def test_racking_refusals(fabric, technician, code, given, reason):
    before = list(Device.objects.order_by("pk").values_list("rack_id", "position_u", "status"))
    assert said(technician, fabric.project, ScanAction.RACK, code, **given) == (ScanResult.REFUSED, reason)
    assert list(Device.objects.order_by("pk").values_list("rack_id", "position_u", "status")) == before


def test_a_serial_of_another_project_is_unknown_here(fabric, technician, other_project):
    foreign = Device.objects.get(name="foreign-sw")
    device_update(device=foreign, serial="FOREIGN-SN")
    assert said(technician, fabric.project, ScanAction.RACK, "FOREIGN-SN") == (
        ScanResult.REFUSED, "Unknown code 'FOREIGN-SN': it is not a device's serial or asset tag in this project.")
    assert Device.objects.get(pk=foreign.pk).racked_at is None


def test_a_device_racked_elsewhere_must_be_taken_out_first(fabric, technician):
    device_update(device=fabric.gpu2, status=DeviceStatus.RACKED)
    RackFactory(project=fabric.project, name="A02")
    assert said(technician, fabric.project, ScanAction.RACK, "gpu-002", rack="A02", position_u=1) == (
        ScanResult.REFUSED, "gpu-002 is already racked in A01 U11; take it out there first.")


def test_racked_by_someone_else_is_a_conflict_naming_them(fabric, technician, manager):
    scan(manager, fabric.project, ScanAction.RACK, "gpu-001")
    racked_at = Device.objects.get(pk=fabric.gpu1.pk).racked_at
    assert said(technician, fabric.project, ScanAction.RACK, "gpu-001") == (
        ScanResult.CONFLICT, f"gpu-001 was already racked in A01 U1 by mgr at {moment(racked_at)}.")
    assert Device.objects.get(pk=fabric.gpu1.pk).racked_by == manager


# --- optic ----------------------------------------------------------------------------------------------------


@pytest.fixture
def optics(fabric):
    make = dict(project=fabric.project)
    return {
        "node": OpticFactory(serial="MT-NODE-1", part_number=NODE_OPTIC, **make),
        "node2": OpticFactory(serial="MT-NODE-2", part_number=NODE_OPTIC, **make),
        "switch": OpticFactory(serial="MT-SW-1", part_number=SWITCH_OPTIC, **make),
        "faulty": OpticFactory(serial="MT-BAD-1", part_number=NODE_OPTIC, status=OpticStatus.FAULTY, **make),
        "rma": OpticFactory(serial="MT-RMA-1", part_number=NODE_OPTIC, status=OpticStatus.RMA, **make),
    }


def test_seating_an_optic_in_the_cage_of_the_scanned_lane(fabric, technician, optics):
    event = scan(technician, fabric.project, ScanAction.OPTIC, "MT-NODE-1", port_code="gpu-001:ib0/0").event
    assert (event.result, event.reason) == (ScanResult.ACCEPTED, "Optic MT-NODE-1 seated in gpu-001 port ib0.")
    optic = Optic.objects.get(pk=optics["node"].pk)
    assert (optic.status, optic.port, optic.installed_by) == (OpticStatus.INSTALLED, ports_of(fabric.gpu1)["ib0"],
                                                              technician)
    assert optic.installed_at is not None and (event.optic, event.port) == (optic, optic.port)


def test_an_optic_where_no_cable_names_a_part_is_allowed(fabric, technician, optics):
    port = ports_of(fabric.gpu1)["ib7"]  # no cable plugs into it
    assert said(technician, fabric.project, ScanAction.OPTIC, "MT-SW-1", port=port.pk) == (
        ScanResult.ACCEPTED, "Optic MT-SW-1 seated in gpu-001 port ib7.")


@pytest.mark.parametrize(
    ("serial", "port_code", "reason"),
    [
        ("MT-SW-1", "gpu-001:ib0", "C00001 calls for OPT-NODE-800 at gpu-001 port ib0; optic MT-SW-1 is OPT-SW-2x400."),
        ("MT-NODE-1", "leaf-01:p1", "C00001 calls for OPT-SW-2x400 at leaf-01 port p1; optic MT-NODE-1 is "
                                    "OPT-NODE-800."),
        ("MT-BAD-1", "gpu-001:ib0", "Optic MT-BAD-1 is marked faulty: put it aside and take another."),
        ("MT-RMA-1", "gpu-001:ib0", "Optic MT-RMA-1 is in RMA: put it aside and take another."),
        ("MT-NOPE", "gpu-001:ib0", "Unknown code 'MT-NOPE': it is not an optic's serial in this project."),
        ("MT-NODE-1", "leaf-09:p1", "leaf-09:p1 is not a port of this project: scan the port's label (device:port)."),
        ("MT-NODE-1", "gpu-001", "gpu-001 is a device (gpu-001), not a port: scan the port's label."),
    ],
)
def test_optic_refusals(fabric, technician, optics, serial, port_code, reason):
    assert said(technician, fabric.project, ScanAction.OPTIC, serial, port_code=port_code) == (
        ScanResult.REFUSED, reason)
    assert not Optic.objects.filter(status=OpticStatus.INSTALLED).exists()


def test_an_optic_in_another_port_or_a_port_holding_one_is_refused(fabric, technician, optics):
    scan(technician, fabric.project, ScanAction.OPTIC, "MT-NODE-1", port_code="gpu-001:ib0")
    assert said(technician, fabric.project, ScanAction.OPTIC, "MT-NODE-1", port_code="gpu-002:ib0") == (
        ScanResult.REFUSED, "Optic MT-NODE-1 is already in gpu-001 port ib0; take it out there first.")
    assert said(technician, fabric.project, ScanAction.OPTIC, "MT-NODE-2", port_code="gpu-001:ib0") == (
        ScanResult.REFUSED, "gpu-001 port ib0 already holds optic MT-NODE-1; take it out first.")
    assert said(technician, fabric.project, ScanAction.OPTIC, "MT-NODE-1", port_code="gpu-001:ib0") == (
        ScanResult.ACCEPTED, "Optic MT-NODE-1 is already seated in gpu-001 port ib0; nothing changed.")
    assert Optic.objects.get(pk=optics["node2"].pk).status == OpticStatus.IN_STOCK


def test_an_optic_seated_by_someone_else_is_a_conflict(fabric, technician, manager, optics):
    scan(manager, fabric.project, ScanAction.OPTIC, "MT-NODE-1", port_code="gpu-001:ib0")
    at = Optic.objects.get(pk=optics["node"].pk).installed_at
    assert said(technician, fabric.project, ScanAction.OPTIC, "MT-NODE-1", port_code="gpu-001:ib0") == (
        ScanResult.CONFLICT, f"Optic MT-NODE-1 was already seated in gpu-001 port ib0 by mgr at {moment(at)}.")


# --- cable ends -----------------------------------------------------------------------------------------------


def test_both_ends_confirmed_verify_the_cable_with_who_when_cause_history_and_ports(fabric, technician, manager):
    project = fabric.project
    first = scan(technician, project, ScanAction.CABLE_END, "C00001/A", port_code="gpu-001:ib0/0").event
    assert (first.result, first.reason) == (
        ScanResult.ACCEPTED, "C00001/A confirmed in gpu-001 port ib0/0. Next: C00001/B at leaf-01 port p1.")
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert (cable.status, cable.verified_at) == (CableStatus.INSTALLED, None)  # on the floor, not yet verified
    assert cable.status_cause == "Installed: C00001/A confirmed by scan in gpu-001 port ib0/0 by tech."

    leaf_port = ports_of(fabric.leaf1)["p1"]
    last = scan(manager, project, ScanAction.CABLE_END, "C00001/B", port=leaf_port.pk).event
    assert (last.result, last.reason) == (
        ScanResult.ACCEPTED,
        "C00001/B confirmed in leaf-01 port p1: C00001 is verified, every end where the plan says.",
    )
    cable.refresh_from_db()
    assert (cable.status, cable.verified_by) == (CableStatus.VERIFIED, manager)
    assert cable.verified_at == CableEnd.objects.get(cable=cable, side="B").confirmed_at
    assert cable.status_cause == "Verified by scan: C00001/B confirmed in leaf-01 port p1 by mgr."
    ends = {e.side: (e.confirmed_by, e.confirmed_at is not None) for e in CableEnd.objects.filter(cable=cable)}
    assert ends == {"A": (technician, True), "B": (manager, True)}
    # Its ports move on, with the same cause, and every change has its history row.
    for port in Port.objects.filter(cable_end__cable=cable):
        assert (port.status, port.status_cause) == (PortStatus.CONNECTED, cable.status_cause)
        assert port.history.latest().history_change_reason == cable.status_cause
    assert [h.status for h in cable.history.order_by("history_id")] == ["planned", "installed", "verified"]
    assert cable.history.latest().history_user == manager
    assert CableEnd.history.filter(cable_id=cable.pk, confirmed_by=technician).exists()
    assert (last.cable, last.cable_end.side, last.port) == (cable, "B", leaf_port)


def test_a_bare_label_confirms_the_end_planned_on_the_port(fabric, technician):
    """Labels printed before end codes hold only C00001: the port says which end."""
    assert said(technician, fabric.project, ScanAction.CABLE_END, "c00001", port_code="leaf-01 p1") == (
        ScanResult.ACCEPTED, "C00001/B confirmed in leaf-01 port p1. Next: C00001/A at gpu-001 port ib0/0.")
    assert CableEnd.objects.get(cable=fabric.c1, side="B").confirmed_by == technician


def test_a_breakouts_b_leg_is_told_by_the_port(fabric, technician):
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00005/B", port_code="leaf-02:p3") == (
        ScanResult.ACCEPTED,
        "C00005/B2 confirmed in leaf-02 port p3. Next: C00005/A at gpu-003 port ib0, C00005/B1 at leaf-01 port p3.")
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00005/B1", port_code="leaf-01:p3")[0] == "accepted"
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00005/A", port_code="gpu-003:ib0") == (
        ScanResult.ACCEPTED, "C00005/A confirmed in gpu-003 port ib0: C00005 is verified, every end where the plan "
                             "says.")


def test_an_end_on_a_lane_is_confirmed_at_its_cage(fabric, technician):
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00001/A", port_code="gpu-001:ib0")[0] == "accepted"


@pytest.mark.parametrize(
    ("code", "port_code", "reason"),
    [
        ("C00001/B", "leaf-01:p2", "C00001/B belongs in leaf-01 port p1; you are at leaf-01 port p2."),
        ("C00001/B", "leaf-02:p1", "C00001/B belongs in leaf-01 port p1; you are at leaf-02 port p1."),
        ("C00001", "leaf-01:p2", "C00001 goes from gpu-001 port ib0/0 to leaf-01 port p1; you are at leaf-01 port p2."),
        ("C00005", "leaf-01:p4", "C00005 goes from gpu-003 port ib0 to leaf-01 port p3 and leaf-02 port p3; you are "
                                 "at leaf-01 port p4."),
        ("C00001-FOREIGN", "leaf-01:p1", "Unknown code 'C00001-FOREIGN': it is not a cable label in this project."),
        ("gpu-001", "leaf-01:p1", "gpu-001 is a device (gpu-001), not a cable label."),
    ],
)
def test_a_mismatch_says_where_the_end_belongs_and_records_nothing_as_verified(fabric, technician, code, port_code,
                                                                               reason):
    event = scan(technician, fabric.project, ScanAction.CABLE_END, code, port_code=port_code).event
    assert (event.result, event.reason) == (ScanResult.REFUSED, reason)
    assert not CableEnd.objects.filter(confirmed_at__isnull=False).exists()
    assert set(Cable.objects.values_list("status", flat=True)) == {CableStatus.PLANNED}


def test_an_end_confirmed_by_someone_else_is_a_conflict_naming_who_and_when(fabric, technician, manager):
    scan(manager, fabric.project, ScanAction.CABLE_END, "C00001/A", port_code="gpu-001:ib0/0")
    at = CableEnd.objects.get(cable=fabric.c1, side="A").confirmed_at
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00001/A", port_code="gpu-001:ib0/0") == (
        ScanResult.CONFLICT, f"C00001/A was already confirmed in gpu-001 port ib0/0 by mgr at {moment(at)}.")
    assert said(manager, fabric.project, ScanAction.CABLE_END, "C00001/A", port_code="gpu-001:ib0/0") == (
        ScanResult.ACCEPTED, "C00001/A was already confirmed in gpu-001 port ib0/0 by you; nothing changed. Next: "
                             "C00001/B at leaf-01 port p1.")
    assert CableEnd.objects.get(cable=fabric.c1, side="A").confirmed_by == manager


def test_a_faulty_cable_is_scanned_again_after_the_fix(fabric, technician, manager):
    """Confirmations stand while the cable is on the floor as scanned; once found faulty (or set back to
    planned) the next scans confirm its ends again and verify it again."""
    from cabling.services import cable_status_set

    for code, where in (("C00001/A", "gpu-001:ib0/0"), ("C00001/B", "leaf-01:p1")):
        scan(manager, fabric.project, ScanAction.CABLE_END, code, port_code=where)
    cable_status_set(cables=[fabric.c1], status=CableStatus.FAULTY, user=manager, reason="no light on p1")
    # One end scanned after the fix is not enough: the other end's confirmation predates the fault.
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00001/B", port_code="leaf-01:p1") == (
        ScanResult.ACCEPTED, "C00001/B confirmed in leaf-01 port p1. Next: C00001/A at gpu-001 port ib0/0.")
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert cable.status == CableStatus.INSTALLED and cable.status_cause.startswith("Installed again (was faulty)")
    assert CableEnd.objects.get(cable=fabric.c1, side="A").confirmed_at is None
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00001/A", port_code="gpu-001:ib0/0") == (
        ScanResult.ACCEPTED,
        "C00001/A confirmed in gpu-001 port ib0/0: C00001 is verified, every end where the plan says.",
    )
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert (cable.status, cable.verified_by) == (CableStatus.VERIFIED, technician)


def test_the_end_id_says_which_end_a_bare_label_means(fabric, technician):
    b_end = CableEnd.objects.get(cable=fabric.c1, side="B")
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00001", port_code="leaf-01:p2", end=b_end.pk) == (
        ScanResult.REFUSED, "C00001 belongs in leaf-01 port p1; you are at leaf-01 port p2.")
    with pytest.raises(ValidationError) as refused:
        scan(technician, fabric.project, ScanAction.CABLE_END, "C00001", port_code="leaf-01:p1",
             end=CableEnd.objects.get(cable=fabric.c2, side="B").pk)
    assert refused.value.message_dict == {"end": [f"End {fabric.c2.ends.get(side='B').pk} is not an end of C00001."]}


def test_a_scan_for_one_cable_refuses_another_cables_label(fabric, technician):
    assert said(technician, fabric.project, ScanAction.CABLE_END, "C00002/A", port_code="gpu-001:ib0/1",
                cable=fabric.c1) == (ScanResult.REFUSED, "C00002/A is the label of C00002, not of C00001.")


# --- replays and bad input --------------------------------------------------------------------------------------


def test_a_replay_is_recorded_once_and_answers_the_first_event(fabric, technician):
    first = scan(technician, fabric.project, ScanAction.CABLE_END, "C00001/A", port_code="gpu-001:ib0/0",
                 idempotency_key="tablet-1-scan-0001", source=ScanSource.PAGE)
    again = scan(technician, fabric.project, ScanAction.CABLE_END, "C00001/A", port_code="gpu-001:ib0/0",
                 idempotency_key="tablet-1-scan-0001", source=ScanSource.OFFLINE)
    assert (first.replayed, again.replayed) == (False, True)
    assert again.event.pk == first.event.pk and again.event.result == ScanResult.ACCEPTED
    assert ScanEvent.objects.count() == 1 and CableEnd.history.filter(confirmed_by=technician).count() == 1


def test_a_refused_scan_replayed_comes_back_refused(fabric, technician):
    first = scan(technician, fabric.project, ScanAction.CABLE_END, "C00001/B", port_code="leaf-01:p2",
                 idempotency_key="offline-000042")
    # Meanwhile the problem went away; the replay still answers what was recorded, once.
    again = scan(technician, fabric.project, ScanAction.CABLE_END, "C00001/B", port_code="leaf-01:p1",
                 idempotency_key="offline-000042")
    assert again.replayed and again.event.pk == first.event.pk and again.event.result == ScanResult.REFUSED
    assert not CableEnd.objects.filter(confirmed_at__isnull=False).exists()


def test_the_same_key_in_another_project_is_another_scan(fabric, technician, other_project):
    from tests.factories import MembershipFactory

    MembershipFactory(user=technician, project=other_project)
    scan(technician, fabric.project, ScanAction.LOOKUP, "C00001", idempotency_key="same-key-0001")
    assert not scan(technician, other_project, ScanAction.LOOKUP, "C00001-FOREIGN",
                    idempotency_key="same-key-0001").replayed
    assert ScanEvent.objects.count() == 2


@pytest.mark.parametrize(
    ("given", "errors"),
    [
        ({"action": "dance"}, {"action": ["Unknown action 'dance': choose one of lookup, rack, optic, cable_end."]}),
        ({"code": "x" * 513}, {"code": ["That is 513 characters: no label holds more than 512."]}),
        ({"code": " \t\n"}, {"code": ["The code is empty: scan or type it again."]}),
        ({"code": 417}, {"code": ["A code is text."]}),
        ({"idempotency_key": "short"}, {"idempotency_key": ["8 to 64 letters, digits, '-' or '_', chosen once per "
                                                            "scan."]}),
        ({"idempotency_key": "with space 123"}, {"idempotency_key": ["8 to 64 letters, digits, '-' or '_', chosen "
                                                                     "once per scan."]}),
        ({"action": "rack", "position_u": 70000}, {"position_u": ["A rack unit from 1 to 60."]}),
        ({"action": "cable_end"}, {"port": ["Say which port you are at: scan its label (port_code) or pick it "
                                            "(port)."]}),
        ({"action": "cable_end", "port": 10**9}, {"port": ["No port 1000000000 in this project."]}),
        ({"source": "carrier-pigeon"}, {"source": ["Unknown source: choose one of page, offline, api."]}),
    ],
)
def test_bad_input_is_refused_before_anything_is_recorded(fabric, technician, given, errors):
    kwargs = {"action": ScanAction.LOOKUP, "code": "C00001", **given}
    with pytest.raises(ValidationError) as refused:
        scan_record(user=technician, project=fabric.project, **kwargs)
    assert refused.value.message_dict == errors
    assert not ScanEvent.objects.exists()


def test_a_nul_in_the_code_is_not_stored(fabric, technician):
    event = scan(technician, fabric.project, ScanAction.LOOKUP, "C000\x0001").event
    assert (event.raw_code, event.result) == ("C00001", ScanResult.FOUND)


def test_scan_record_is_keyword_only(fabric, technician):
    with pytest.raises(TypeError):
        scan_record(technician, fabric.project, ScanAction.LOOKUP, "C00001")  # type: ignore[misc]
