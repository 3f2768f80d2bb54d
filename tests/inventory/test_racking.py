"""device_rack and optic_install as the floor uses them: who and when recorded, the rack-space rules
applied to a move, a device racked elsewhere refused, a conflict naming who was first; an optic's seating
time and person recorded, and cleared when it comes out."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from inventory.choices import DeviceStatus, OpticStatus
from inventory.models import Device, DeviceUnit
from inventory.services import (
    CONFLICT,
    device_create,
    device_rack,
    device_update,
    moment,
    optic_install,
    optic_remove,
    person,
)
from tests.factories import HardwareModelFactory, OpticFactory, RackFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def rack(project):
    return RackFactory(project=project, name="A01", height_u=42)


@pytest.fixture
def box(project, rack):
    model = HardwareModelFactory(height_u=2)
    return device_create(project=project, hardware_model=model, name="srv-1", rack=rack, position_u=10,
                         status=DeviceStatus.RECEIVED)


def test_racking_at_the_planned_place_records_who_and_when(box, rack, technician):
    racked = device_rack(device=box, rack=rack, position_u=10, user=technician)
    assert (racked.status, racked.racked_by, racked.rack, racked.position_u) == (DeviceStatus.RACKED, technician,
                                                                                 rack, 10)
    assert Device.objects.get(pk=box.pk).racked_at == racked.racked_at is not None
    assert box.history.latest().racked_by == technician


def test_a_move_claims_the_new_units_only_when_free(project, box, rack, technician):
    other = device_create(project=project, hardware_model=box.hardware_model, name="srv-2", rack=rack, position_u=20)
    with pytest.raises(ValidationError) as refused:
        device_rack(device=box, rack=rack, position_u=21, user=technician)
    assert refused.value.messages == ["U21 of rack A01 is already taken by srv-2."]
    device_rack(device=box, rack=rack, position_u=30, user=technician)
    assert sorted(set(DeviceUnit.objects.filter(device=box).values_list("unit", flat=True))) == [30, 31]
    assert set(DeviceUnit.objects.filter(device=other).values_list("unit", flat=True)) == {20, 21}


def test_racked_elsewhere_is_refused_and_someone_elses_racking_is_a_conflict(project, box, rack, technician,
                                                                           manager):
    device_update(device=box, status=DeviceStatus.POWERED)
    with pytest.raises(ValidationError) as refused:
        device_rack(device=box, rack=rack, position_u=30, user=technician)
    assert refused.value.messages == ["srv-1 is already racked in A01 U10; take it out there first."]
    racked = device_rack(device=box, rack=rack, position_u=10, user=manager)
    assert racked.status == DeviceStatus.POWERED  # confirmed where it stands, its status kept
    with pytest.raises(ValidationError) as conflict:
        device_rack(device=box, rack=rack, position_u=10, user=technician)
    assert conflict.value.code == CONFLICT
    assert conflict.value.messages == [f"srv-1 was already racked in A01 U10 by mgr at {moment(racked.racked_at)}."]
    assert device_rack(device=box, rack=rack, position_u=10, user=manager).racked_at == racked.racked_at


def test_a_rack_of_another_project_is_refused(box, other_project, technician):
    with pytest.raises(ValidationError) as refused:
        device_rack(device=box, rack=RackFactory(project=other_project, name="X9"), position_u=1, user=technician)
    assert refused.value.message_dict == {"rack": ["No rack X9 in this project."]}


def test_seating_an_optic_records_who_and_when_and_taking_it_out_clears_them(box, technician, project):
    port = box.ports.create(name="p1", kind="ethernet", speed_gbps=400)
    optic = optic_install(optic=OpticFactory(project=project), port=port, user=technician)
    assert (optic.status, optic.installed_by) == (OpticStatus.INSTALLED, technician) and optic.installed_at
    seated_at = optic.installed_at
    assert optic_install(optic=optic, port=port, user=None).installed_at == seated_at  # already there: kept
    optic = optic_remove(optic=optic)
    assert (optic.status, optic.port, optic.installed_at, optic.installed_by) == (OpticStatus.IN_STOCK, None, None,
                                                                                  None)


def test_people_and_moments_in_the_floors_words():
    assert person(UserFactory(username="jdoe", first_name="Jane", last_name="Doe")) == "Jane Doe"
    assert person(UserFactory(username="jdoe2")) == "jdoe2"
    assert person(None) == "someone" and moment(None) == "an unknown time"
