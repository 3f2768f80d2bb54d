"""States that follow the evidence (cabling.services.evidence): what the topology comparison and the
link-health check saw moves each cable and its ports forward or back, every change with its cause and a
history row, in a number of statements that does not grow with the number of cables."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from cabling.choices import CableStatus, FabricState, ScanAction
from cabling.models import Cable
from cabling.services import cables_fabric_record, cables_link_observe, scan_record
from inventory.choices import PortStatus
from inventory.models import Port
from tests.support import count_queries

pytestmark = pytest.mark.django_db

CAUSE = "Topology comparison 7 (iblinkinfo of 2026-12-01)"


def state(cable) -> tuple[str, str, str]:
    cable.refresh_from_db()
    return cable.status, cable.fabric_state, cable.status_cause


def ports(cable) -> set[tuple[str, str]]:
    return set(Port.objects.filter(cable_end__cable=cable).values_list("status", "status_cause"))


def verify_by_scan(fabric, user, cable, a_port: str, b_port: str) -> None:
    for code, where in ((f"{cable.label}/A", a_port), (f"{cable.label}/B", b_port)):
        scan_record(user=user, project=fabric.project, action=ScanAction.CABLE_END, code=code, port_code=where)


def test_a_link_seen_ok_verifies_the_cable_by_the_fabric_and_its_ports_are_up(fabric):
    at = timezone.now()
    changed = cables_fabric_record(project=fabric.project, observations={fabric.c1.pk: FabricState.OK},
                                    checked_at=at, cause=CAUSE)
    assert changed == 1
    assert state(fabric.c1) == (CableStatus.VERIFIED, FabricState.OK, CAUSE)
    assert fabric.c1.fabric_checked_at == at and fabric.c1.verified_at is None  # by the fabric, not a scan
    assert ports(fabric.c1) == {(PortStatus.UP, CAUSE)}
    record = fabric.c1.history.latest()
    assert (record.status, record.history_change_reason, record.history_date, record.history_type) == (
        CableStatus.VERIFIED, CAUSE, at, "~")
    assert all(p.history.latest().status == PortStatus.UP for p in Port.objects.filter(cable_end__cable=fabric.c1))
    # The same observation again changes nothing (but the time it was seen).
    later = at + timedelta(minutes=5)
    assert cables_fabric_record(project=fabric.project, observations={fabric.c1.pk: "ok"}, checked_at=later,
                                 cause="again") == 0
    fabric.c1.refresh_from_db()
    assert fabric.c1.fabric_checked_at == later and fabric.c1.history.count() == 2


def test_a_missing_link_takes_the_ports_down_and_undoes_only_the_fabrics_own_verification(fabric, technician):
    verify_by_scan(fabric, technician, fabric.c1, "gpu-001:ib0/0", "leaf-01:p1")  # verified by scan
    cables_fabric_record(project=fabric.project, observations={fabric.c2.pk: "ok"}, checked_at=timezone.now(),
                          cause="first comparison")  # verified by the fabric only
    changed = cables_fabric_record(
        project=fabric.project, observations={fabric.c1.pk: "missing", fabric.c2.pk: "missing"},
        checked_at=timezone.now(), cause=CAUSE,
    )
    assert changed == 2  # both changed fabric state; only c2 changed status
    status, seen, cause = state(fabric.c1)
    assert (status, seen) == (CableStatus.VERIFIED, FabricState.MISSING) and cause.startswith("Verified by scan")
    assert state(fabric.c2) == (CableStatus.INSTALLED, FabricState.MISSING, CAUSE)
    assert ports(fabric.c1) == ports(fabric.c2) == {(PortStatus.DOWN, CAUSE)}


@pytest.mark.parametrize("seen", [FabricState.MISWIRED, FabricState.DEGRADED])
def test_a_miswired_or_degraded_link_makes_the_cable_faulty(fabric, technician, seen):
    verify_by_scan(fabric, technician, fabric.c1, "gpu-001:ib0/0", "leaf-01:p1")
    assert cables_fabric_record(project=fabric.project, observations={fabric.c1.pk: seen},
                                 checked_at=timezone.now(), cause=CAUSE) == 1
    assert state(fabric.c1) == (CableStatus.FAULTY, seen, CAUSE)
    assert ports(fabric.c1) == {(PortStatus.DOWN, CAUSE)}
    assert [h.status for h in fabric.c1.history.order_by("history_id")][-2:] == ["verified", "faulty"]


def test_another_projects_cables_and_unknown_states_are_not_touched(fabric):
    assert cables_fabric_record(project=fabric.project, observations={fabric.foreign.pk: "ok"},
                                 checked_at=timezone.now(), cause=CAUSE) == 0
    assert state(fabric.foreign)[:2] == (CableStatus.PLANNED, "")
    with pytest.raises(ValidationError) as refused:
        cables_fabric_record(project=fabric.project, observations={fabric.c1.pk: "sideways"},
                              checked_at=timezone.now(), cause=CAUSE)
    assert refused.value.message_dict == {"observations": ["Unknown fabric states: sideways."]}


def test_a_disabled_port_stays_disabled(fabric):
    port = Port.objects.get(cable_end__cable=fabric.c1, cable_end__side="B")
    Port.objects.filter(pk=port.pk).update(status=PortStatus.DISABLED)
    cables_fabric_record(project=fabric.project, observations={fabric.c1.pk: "ok"}, checked_at=timezone.now(),
                          cause=CAUSE)
    assert Port.objects.get(pk=port.pk).status == PortStatus.DISABLED


def test_link_checks_install_planned_cables_and_fail_broken_ones(fabric, technician):
    verify_by_scan(fabric, technician, fabric.c3, "gpu-002:ib0/0", "leaf-01:p2")
    at = timezone.now()
    changed = cables_link_observe(
        project=fabric.project, ok=[fabric.c1.pk, fabric.c3.pk, fabric.foreign.pk],
        failed={fabric.c2.pk: "Symbol errors 1.2e-9 over the limit", fabric.c4.pk: ""}, at=at,
        cause="Link health run 12",
    )
    assert changed == 3  # c1 installed; c2 and c4 faulty; c3 stays verified; the foreign cable is not ours
    assert state(fabric.c1) == (CableStatus.INSTALLED, "", "Link health run 12")
    assert state(fabric.c2) == (CableStatus.FAULTY, "", "Link health run 12: Symbol errors 1.2e-9 over the limit")
    assert state(fabric.c4)[0] == CableStatus.FAULTY and fabric.c4.status_cause == "Link health run 12"
    assert state(fabric.c3)[0] == CableStatus.VERIFIED
    assert ports(fabric.c1) == {(PortStatus.UP, "Link health run 12")}
    assert ports(fabric.c2) == {(PortStatus.DOWN, "Link health run 12: Symbol errors 1.2e-9 over the limit")}
    assert state(fabric.foreign)[0] == CableStatus.PLANNED
    assert fabric.c2.history.latest().history_date == at


def test_statements_do_not_grow_with_the_cables(project, add_cables):
    """Within a batch (SQLite's bulk inserts hold about 999 values, so 25 cables and 50 ports fit one)."""

    def observe(cables, state_):
        ids = {cable.pk: state_ for cable in cables}
        return count_queries(lambda: cables_fabric_record(project=project, observations=ids,
                                                           checked_at=timezone.now(), cause="bench"))

    few, many = add_cables(project, 5, 0), add_cables(project, 25, 5)
    assert observe(few, "ok") == observe(many, "ok")
    assert observe(few, "miswired") == observe(many, "miswired")
    link = [count_queries(lambda c=cables: cables_link_observe(
        project=project, ok=[], failed={cable.pk: "down" for cable in c}, at=timezone.now(), cause="run"))
        for cables in (few, many)]
    assert link[0] == link[1]
    assert Cable.objects.filter(project=project, status=CableStatus.FAULTY).count() == 30
