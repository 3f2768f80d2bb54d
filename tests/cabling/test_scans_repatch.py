"""cable_end_repatch: a manager records that an end is really in another, free port (an as-built change).
The end's confirmation goes (it was of the old port), a cable verified in its old place goes back to
installed, the old port back to planned, each with the repatch as cause; a taken port, another project's
port or a non-manager is refused."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from cabling.choices import CableStatus, ScanAction
from cabling.models import Cable, CableEnd
from cabling.services import cable_end_repatch, scan_record
from inventory.choices import PortStatus
from inventory.models import Port

from .conftest import ports_of

pytestmark = pytest.mark.django_db


def verify(fabric, user):
    for code, where in (("C00001/A", "gpu-001:ib0/0"), ("C00001/B", "leaf-01:p1")):
        scan_record(user=user, project=fabric.project, action=ScanAction.CABLE_END, code=code, port_code=where)


def test_an_end_moves_to_a_free_port_and_the_cable_must_be_scanned_again(fabric, manager):
    verify(fabric, manager)
    end = CableEnd.objects.get(cable=fabric.c1, side="B")
    old, new = ports_of(fabric.leaf1)["p1"], ports_of(fabric.leaf1)["p5"]
    moved = cable_end_repatch(end=end, port=new, user=manager, reason=" found  in p5 on the walk ")
    cause = "Repatched by mgr: C00001/B moved from leaf-01:p1 to leaf-01:p5 (found in p5 on the walk)."
    assert (moved.port, moved.confirmed_at, moved.confirmed_by) == (new, None, None)
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert (cable.status, cable.status_cause) == (CableStatus.INSTALLED, cause)
    assert (Port.objects.get(pk=old.pk).status, Port.objects.get(pk=old.pk).status_cause) == (PortStatus.PLANNED,
                                                                                             cause)
    record = CableEnd.history.filter(id=end.pk).latest()
    assert (record.port_id, record.history_user, record.history_change_reason) == (new.pk, manager, cause)
    # Scanned where it now is, it verifies again.
    result = scan_record(user=manager, project=fabric.project, action=ScanAction.CABLE_END, code="C00001/B",
                         port_code="leaf-01:p5").event
    assert result.result == "accepted" and Cable.objects.get(pk=fabric.c1.pk).status == CableStatus.VERIFIED


@pytest.mark.parametrize(
    ("port_name", "errors"),
    [
        ("p2", {"port": ["leaf-01:p2 already carries C00003; move or remove that one first."]}),
        ("p1", {"port": ["C00001/B is already planned in leaf-01:p1."]}),
    ],
)
def test_a_taken_port_is_refused(fabric, manager, port_name, errors):
    end = CableEnd.objects.get(cable=fabric.c1, side="B")
    with pytest.raises(ValidationError) as refused:
        cable_end_repatch(end=end, port=ports_of(fabric.leaf1)[port_name], user=manager, reason="walk")
    assert refused.value.message_dict == errors
    assert CableEnd.objects.get(pk=end.pk).port.name == "p1"


def test_refusals_another_project_no_reason_not_a_manager(fabric, manager, technician):
    end = CableEnd.objects.get(cable=fabric.c1, side="B")
    foreign = Port.objects.get(device__name="foreign-sw", name="p5")
    with pytest.raises(ValidationError) as refused:
        cable_end_repatch(end=end, port=foreign, user=manager, reason="walk")
    assert refused.value.message_dict == {"port": ["The port belongs to another project."]}
    with pytest.raises(ValidationError) as refused:
        cable_end_repatch(end=end, port=ports_of(fabric.leaf1)["p5"], user=manager, reason="  ")
    assert refused.value.message_dict == {"reason": ["Say why the end moved (what you found on the floor)."]}
    with pytest.raises(PermissionDenied):
        cable_end_repatch(end=end, port=ports_of(fabric.leaf1)["p5"], user=technician, reason="walk")
    assert CableEnd.objects.get(pk=end.pk).port.name == "p1"
