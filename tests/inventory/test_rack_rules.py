"""Rack space and power rules: overlap, faces, fit, the database's own refusal, and the components a
device gets from its hardware model."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from inventory.choices import Face, HardwareKind, PortKind
from inventory.models import Device, DeviceUnit, Port
from inventory.selectors import is_power_flagged, power_headroom, with_power
from inventory.services import device_create, device_update
from tests.factories import HardwareModelFactory, RackFactory, gpu_server_model

pytestmark = pytest.mark.django_db
F, R = Face.FRONT, Face.REAR


@pytest.fixture
def rack(project):
    return RackFactory(project=project, name="R01", height_u=48, power_budget_w=10000)


def two_u_server():
    return HardwareModelFactory(
        model="2U server", kind=HardwareKind.STORAGE_SERVER, height_u=2, max_power_w=1000
    )


def rear_pdu():
    return HardwareModelFactory(model="Rear PDU", kind=HardwareKind.PDU, height_u=1, max_power_w=0,
                                is_full_depth=False)


def place(project, rack, name, u, model, face=Face.FRONT):
    return device_create(project=project, hardware_model=model, name=name, rack=rack, position_u=u, face=face)


def unsaved(project, rack, name, u, model, face=Face.FRONT):
    return Device(project=project, hardware_model=model, name=name, rack=rack, position_u=u, face=face)


def claimed_units(device):
    return sorted(DeviceUnit.objects.filter(device=device).values_list("unit", "face"))


# --- overlap and fit ---------------------------------------------------------------------------


def test_clean_refuses_overlap_naming_the_unit_and_the_other_device(project, rack):
    model = two_u_server()
    place(project, rack, "stor-01", 10, model)  # U10-U11
    newcomer = unsaved(project, rack, "stor-02", 11, model)  # U11-U12
    with pytest.raises(ValidationError) as caught:
        newcomer.full_clean()
    message = " ".join(caught.value.message_dict["position_u"])
    assert "U11" in message and "stor-01" in message and "R01" in message


def test_adjacent_devices_do_not_overlap(project, rack):
    model = two_u_server()
    place(project, rack, "stor-01", 10, model)
    unsaved(project, rack, "stor-02", 12, model).full_clean()  # U12-U13: touching, not overlapping


def test_full_depth_device_takes_both_faces(project, rack):
    server = place(project, rack, "stor-01", 5, two_u_server())
    assert claimed_units(server) == [(5, F), (5, R), (6, F), (6, R)]
    with pytest.raises(ValidationError, match="stor-01"):
        unsaved(project, rack, "pdu-rear", 6, rear_pdu(), face=Face.REAR).full_clean()


def test_half_depth_devices_share_a_unit_front_and_rear(project, rack):
    model = rear_pdu()
    rear = place(project, rack, "pdu-rear", 20, model, face=Face.REAR)
    front = place(project, rack, "panel-front", 20, model, face=Face.FRONT)
    assert claimed_units(rear) == [(20, R)]
    assert claimed_units(front) == [(20, F)]
    # ... but a full-depth device cannot then take that unit from either side.
    with pytest.raises(ValidationError, match="U20"):
        unsaved(project, rack, "stor-09", 19, two_u_server()).full_clean()


def test_half_depth_devices_clash_on_the_same_face(project, rack):
    model = rear_pdu()
    place(project, rack, "pdu-a", 3, model, face=Face.REAR)
    with pytest.raises(ValidationError, match="pdu-a"):
        unsaved(project, rack, "pdu-b", 3, model, face=Face.REAR).full_clean()


def test_device_sticking_out_of_the_rack_is_refused(project, rack):
    gpu = gpu_server_model()  # 10U
    with pytest.raises(ValidationError) as caught:
        place(project, rack, "gpu-top", 40, gpu)  # would reach U49 of a 48U rack
    message = " ".join(caught.value.message_dict["position_u"])
    assert "sticks out" in message and "U49" in message
    assert not Device.objects.filter(name="gpu-top").exists()
    place(project, rack, "gpu-fits", 39, gpu)  # U39-U48 is exactly the top


def test_a_rack_of_another_project_is_refused(project, other_project, rack):
    foreign_rack = RackFactory(project=other_project)
    with pytest.raises(ValidationError, match="another project"):
        place(project, foreign_rack, "stor-01", 1, two_u_server())


# --- the database's own guarantee --------------------------------------------------------------


def test_database_refuses_a_second_claim_of_a_unit_even_without_clean(project, rack):
    model = two_u_server()
    first = place(project, rack, "stor-01", 10, model)
    # A second device saved without clean() (as a buggy script or a race would) ...
    intruder = Device.objects.create(
        project=project, hardware_model=model, name="stor-02", rack=rack, position_u=11
    )
    # ... still cannot claim U11: the unique (rack, unit, face) constraint refuses it.
    with pytest.raises(IntegrityError), transaction.atomic():
        DeviceUnit.objects.create(device=intruder, rack=rack, unit=11, face=Face.FRONT)
    assert claimed_units(first) == [(10, F), (10, R), (11, F), (11, R)]


def test_service_turns_the_databases_refusal_into_a_validation_error(project, rack, monkeypatch):
    model = two_u_server()
    place(project, rack, "stor-01", 10, model)
    # Skip the model's check, as two requests racing past it at the same moment would.
    monkeypatch.setattr(Device, "clean", lambda self: None)
    with pytest.raises(ValidationError, match="already taken"):
        place(project, rack, "stor-02", 11, model)
    assert not Device.objects.filter(name="stor-02").exists()  # the whole create rolled back


# --- components from templates -----------------------------------------------------------------


def test_device_create_builds_nics_ports_and_plane_lanes(project, rack):
    device = place(project, rack, "gpu-001", 1, gpu_server_model())
    assert device.nics.count() == 8
    ib_ports = Port.objects.filter(device=device, parent__isnull=True, kind=PortKind.INFINIBAND)
    assert ib_ports.count() == 8
    assert all(p.speed_gbps == 800 for p in ib_ports)
    lanes = Port.objects.filter(device=device, parent__isnull=False)
    assert lanes.count() == 32
    for lane in lanes.select_related("parent"):
        assert lane.plane == lane.lane  # lane k in plane k
        assert lane.speed_gbps == 200
        assert lane.nic_id == lane.parent.nic_id
        assert lane.name == f"{lane.parent.name}/{lane.lane}"
    assert list(lanes.order_by("plane").values_list("plane", flat=True).distinct()) == [0, 1, 2, 3]
    assert Port.objects.filter(device=device, name="bmc", parent__isnull=True).exists()
    assert device.units.count() == 20  # 10U, both faces


def test_moving_a_device_frees_its_old_units(project, rack):
    model = two_u_server()
    device = place(project, rack, "stor-01", 10, model)
    other_rack = RackFactory(project=project, name="R02")
    device_update(device=device, position_u=30)
    assert claimed_units(device) == [(30, F), (30, R), (31, F), (31, R)]
    place(project, rack, "stor-02", 10, model)  # the old units are free again
    device_update(device=device, rack=other_rack, position_u=1)
    assert set(DeviceUnit.objects.filter(device=device).values_list("rack__name", flat=True)) == {"R02"}
    device_update(device=device, rack=None, position_u=None)
    assert not DeviceUnit.objects.filter(device=device).exists()


def test_update_into_an_occupied_unit_is_refused_and_keeps_the_old_claims(project, rack):
    model = two_u_server()
    place(project, rack, "stor-01", 10, model)
    mover = place(project, rack, "stor-02", 20, model)
    with pytest.raises(ValidationError, match="stor-01"):
        device_update(device=mover, position_u=11)
    assert claimed_units(Device.objects.get(pk=mover.pk)) == [(20, F), (20, R), (21, F),
                                                              (21, R)]


# --- power -------------------------------------------------------------------------------------


def test_with_power_sums_the_models_max_power(project, rack):
    place(project, rack, "a", 1, HardwareModelFactory(max_power_w=3000))
    place(project, rack, "b", 2, HardwareModelFactory(max_power_w=4500))
    RackFactory(project=project, name="R-empty", power_budget_w=20000)
    racks = {r.name: r for r in with_power(type(rack).objects.filter(project=project))}
    assert racks["R01"].power_used_w == 7500 and racks["R01"].device_count == 2
    assert racks["R-empty"].power_used_w == 0 and racks["R-empty"].device_count == 0
    # The sum is per rack: the empty rack's budget is all headroom, R01's is 25% left of 10 kW.
    empty, full = racks["R-empty"], racks["R01"]
    assert power_headroom(used_w=empty.power_used_w, budget_w=empty.power_budget_w) == 1.0
    assert power_headroom(used_w=full.power_used_w, budget_w=full.power_budget_w) == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("used_w", "flagged"),
    [(8500, True), (8001, True), (8000, False), (7000, False), (12000, True)],
)
def test_power_flag_below_twenty_percent_headroom(project, rack, used_w, flagged):
    place(project, rack, "load", 1, HardwareModelFactory(max_power_w=used_w))
    annotated = with_power(type(rack).objects.filter(pk=rack.pk)).get()
    assert is_power_flagged(used_w=annotated.power_used_w, budget_w=annotated.power_budget_w) is flagged


def test_headroom_is_the_share_of_budget_left(settings):
    assert power_headroom(used_w=7000, budget_w=10000) == pytest.approx(0.30)
    assert power_headroom(used_w=12000, budget_w=10000) == pytest.approx(-0.20)
    assert power_headroom(used_w=100, budget_w=0) is None
    settings.RACK_POWER_HEADROOM = 0.35
    assert is_power_flagged(used_w=7000, budget_w=10000) is True
