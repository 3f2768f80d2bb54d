"""Rules that keep the inventory consistent whichever door a change comes through (model, API, admin,
page form): a rack is never shorter than its devices, a hardware model in use keeps its shape, breakout is
one level deep, a NIC does not take its ports away, an optic is in a port exactly when it is installed,
positions start at 1, and a row never changes project."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse

from inventory import services
from inventory.choices import DeviceStatus, Face, HardwareKind, OpticStatus, RackStatus
from inventory.models import Device, DeviceUnit, HardwareModel, Nic, Optic, Port, Rack, Site
from tests.factories import (
    HardwareModelFactory,
    OpticFactory,
    ProjectFactory,
    RackFactory,
    UserFactory,
    gpu_server_model,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def rack(project):
    return RackFactory(project=project, name="R1", height_u=48)


@pytest.fixture
def gpu(project, rack):
    """gpu-001: a 10U server at U30-U39 of R1, with 8 NICs, their 800G ports and 4 lanes each."""
    return services.device_create(
        project=project, hardware_model=gpu_server_model(), name="gpu-001", rack=rack, position_u=30
    )


@pytest.fixture
def tech_api(api_for, technician):
    return api_for(technician)


@pytest.fixture
def admin_client(client_for):
    return client_for(UserFactory(username="root", is_staff=True, is_superuser=True))


def api_url(basename: str, pk=None) -> str:
    return reverse(f"{basename}-list") if pk is None else reverse(f"{basename}-detail", args=[pk])


def rack_admin_form(rack: Rack, **changes) -> dict:
    data = {
        "site": rack.site_id, "name": rack.name, "row": rack.row, "position": rack.position,
        "height_u": rack.height_u, "power_budget_w": rack.power_budget_w, "status": rack.status,
    }
    return {**data, **changes}


# --- a rack is never shorter than its devices ----------------------------------------------------------


def test_a_rack_cannot_shrink_below_its_highest_device(rack, gpu):
    rack.height_u = 38
    with pytest.raises(ValidationError) as refused:
        rack.full_clean()
    assert refused.value.message_dict == {"height_u": [
        "gpu-001 reaches U39 of this rack; the rack must stay at least 39U high (move the device first)."
    ]}
    rack.height_u = 39  # exactly tall enough
    rack.full_clean()


def test_the_api_refuses_to_shrink_a_rack_under_a_device(tech_api, rack, gpu):
    response = tech_api.patch(api_url("rack", rack.pk), {"height_u": 20}, format="json")
    assert response.status_code == 400
    assert "gpu-001" in response.json()["height_u"][0]
    rack.refresh_from_db()
    assert rack.height_u == 48
    assert tech_api.patch(api_url("rack", rack.pk), {"height_u": 42}, format="json").status_code == 200


def test_the_admin_refuses_to_shrink_a_rack_under_a_device(admin_client, rack, gpu):
    response = admin_client.post(
        reverse("admin:inventory_rack_change", args=[rack.pk]), rack_admin_form(rack, height_u=10)
    )
    assert response.status_code == 200  # the form again, with the error
    assert "gpu-001 reaches U39" in response.content.decode()
    rack.refresh_from_db()
    assert rack.height_u == 48


# --- a hardware model in use keeps its shape ---------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [("height_u", 20), ("is_full_depth", False)])
def test_the_shape_of_a_model_in_use_cannot_change(staff_api, gpu, field, value):
    model = gpu.hardware_model
    response = staff_api.patch(api_url("hardware-model", model.pk), {field: value}, format="json")
    assert response.status_code == 400
    assert response.json() == {field: [
        "1 device uses this model, and their rack units were claimed with the current value; "
        "create a new hardware model instead."
    ]}
    assert DeviceUnit.objects.filter(device=gpu).count() == 20  # claims still match the model
    model.refresh_from_db()
    assert (model.height_u, model.is_full_depth) == (10, True)


def test_other_fields_of_a_model_in_use_can_change(staff_api, gpu):
    model = gpu.hardware_model
    response = staff_api.patch(api_url("hardware-model", model.pk), {"max_power_w": 15000}, format="json")
    assert response.status_code == 200, response.json()


def test_the_shape_of_an_unused_model_can_change(staff_api):
    model = HardwareModelFactory(height_u=1)
    response = staff_api.patch(api_url("hardware-model", model.pk), {"height_u": 2}, format="json")
    assert response.status_code == 200, response.json()


def test_the_model_counts_the_devices_that_use_it(project, rack):
    model = HardwareModelFactory(height_u=1)
    for u in (1, 2, 3):
        services.device_create(project=project, hardware_model=model, name=f"d{u}", rack=rack, position_u=u)
    model.height_u = 2
    with pytest.raises(ValidationError, match="3 devices use this model"):
        model.full_clean()


def test_the_admin_refuses_to_change_the_shape_of_a_model_in_use(admin_client, project, rack):
    model = HardwareModelFactory(height_u=1, kind=HardwareKind.OTHER)
    services.device_create(project=project, hardware_model=model, name="box", rack=rack, position_u=1)
    data = {
        "vendor": model.vendor, "model": model.model, "part_number": model.part_number, "kind": model.kind,
        "height_u": 4, "max_power_w": model.max_power_w, "is_full_depth": "on",
    }
    for prefix in ("nic_templates", "port_templates"):
        data.update({f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0})
    response = admin_client.post(reverse("admin:inventory_hardwaremodel_change", args=[model.pk]), data)
    assert response.status_code == 200
    assert "1 device uses this model" in response.content.decode()
    assert HardwareModel.objects.get(pk=model.pk).height_u == 1


@pytest.fixture
def staff_api(api_for):
    return api_for(UserFactory(username="ops", is_staff=True))


# --- breakout is one level deep -----------------------------------------------------------------------


def test_a_port_cannot_be_its_own_parent(tech_api, gpu):
    port = gpu.ports.get(name="bmc")
    response = tech_api.patch(api_url("port", port.pk), {"parent": port.pk, "lane": 0}, format="json")
    assert response.status_code == 400
    assert response.json() == {"parent": ["A port cannot be a lane of itself."]}
    port.refresh_from_db()
    assert port.parent_id is None


def test_a_lane_cannot_be_the_parent_of_another_port(tech_api, gpu):
    lane = gpu.ports.get(name="ib0/0")
    response = tech_api.post(
        api_url("port"),
        {"device": gpu.pk, "name": "ib0/0/a", "kind": "infiniband", "speed_gbps": 100, "parent": lane.pk,
         "lane": 0},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"parent": ["ib0/0 is itself a lane; a lane's parent is a physical port."]}
    assert not Port.objects.filter(name="ib0/0/a").exists()


def test_a_port_with_lanes_cannot_become_a_lane(tech_api, gpu):
    port, other = gpu.ports.get(name="ib0"), gpu.ports.get(name="ib1")
    response = tech_api.patch(api_url("port", port.pk), {"parent": other.pk, "lane": 9}, format="json")
    assert response.status_code == 400
    assert response.json() == {"parent": ["ib0 has breakout lanes of its own, so it cannot be a lane."]}
    assert Port.objects.get(pk=port.pk).parent_id is None


def test_a_physical_port_without_lanes_can_still_become_a_lane(tech_api, gpu):
    spare = Port.objects.create(device=gpu, name="eth9", kind="ethernet", speed_gbps=100)
    parent = gpu.ports.get(name="bmc")
    response = tech_api.patch(api_url("port", spare.pk), {"parent": parent.pk, "lane": 0}, format="json")
    assert response.status_code == 200, response.json()


# --- a NIC does not take its ports away -----------------------------------------------------------------


def test_deleting_a_nic_that_has_ports_is_a_409_naming_them(tech_api, gpu):
    nic = gpu.nics.get(slot="nic0")
    ports = gpu.ports.count()
    response = tech_api.delete(api_url("nic", nic.pk))
    assert response.status_code == 409
    assert "gpu-001:ib0" in response.json()["detail"]
    assert Nic.objects.filter(pk=nic.pk).exists() and gpu.ports.count() == ports


def test_a_nic_without_ports_can_be_deleted(tech_api, gpu):
    nic = Nic.objects.create(device=gpu, slot="ocp0", model="BlueField-3")
    assert tech_api.delete(api_url("nic", nic.pk)).status_code == 204


def test_deleting_a_device_still_takes_its_nics_and_ports(tech_api, gpu):
    assert tech_api.delete(api_url("device", gpu.pk)).status_code == 204
    assert not Nic.objects.exists() and not Port.objects.exists() and not DeviceUnit.objects.exists()


# --- an optic is in a port exactly when it is installed --------------------------------------------------


@pytest.mark.parametrize("status", [OpticStatus.IN_STOCK, OpticStatus.FAULTY, OpticStatus.RMA])
def test_an_optic_in_a_port_must_be_installed(project, gpu, status):
    optic = OpticFactory(project=project, port=gpu.ports.get(name="ib1"), status=OpticStatus.INSTALLED)
    optic.status = status
    with pytest.raises(ValidationError) as refused:
        optic.full_clean()
    assert list(refused.value.message_dict) == ["status"]
    assert "take it out of the port first" in refused.value.message_dict["status"][0]


@pytest.mark.parametrize(
    ("status", "in_port"),
    [(OpticStatus.FAULTY, True), (OpticStatus.IN_STOCK, True), (OpticStatus.INSTALLED, False)],
)
def test_the_database_refuses_a_port_without_installed_and_the_reverse(project, gpu, status, in_port):
    port = gpu.ports.get(name="ib2") if in_port else None
    with pytest.raises(IntegrityError), transaction.atomic():
        Optic.objects.create(
            project=project, vendor="v", part_number="p", serial="S-DB", form_factor="osfp", speed_gbps=800,
            port=port, status=status,
        )


def test_a_status_only_patch_cannot_leave_an_optic_in_its_port(tech_api, project, gpu):
    optic = services.optic_install(optic=OpticFactory(project=project), port=gpu.ports.get(name="ib1"))
    response = tech_api.patch(api_url("optic", optic.pk), {"status": "in_stock"}, format="json")
    assert response.status_code == 400
    assert "set port to null" in response.json()["status"][0]
    optic.refresh_from_db()
    assert (optic.status, optic.port.name) == (OpticStatus.INSTALLED, "ib1")
    # The way that works: take it out with the status in one request.
    response = tech_api.patch(api_url("optic", optic.pk), {"port": None, "status": "faulty"}, format="json")
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["port"]) == ("faulty", None)


def test_a_port_and_a_status_other_than_installed_is_a_400(tech_api, project, gpu):
    optic = OpticFactory(project=project)
    port = gpu.ports.get(name="ib3")
    response = tech_api.patch(api_url("optic", optic.pk), {"port": port.pk, "status": "rma"}, format="json")
    assert response.status_code == 400 and "status" in response.json()
    assert Optic.objects.get(pk=optic.pk).port_id is None


def test_installed_without_a_port_is_a_400_on_the_port(tech_api, project):
    optic = OpticFactory(project=project)
    response = tech_api.patch(api_url("optic", optic.pk), {"status": "installed"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"port": ["An installed optic sits in a port; give the port."]}


def test_an_optic_in_a_port_can_still_be_edited(tech_api, project, gpu):
    optic = services.optic_install(optic=OpticFactory(project=project), port=gpu.ports.get(name="ib1"))
    response = tech_api.patch(api_url("optic", optic.pk), {"vendor": "Other", "status": "installed"}, format="json")
    assert response.status_code == 200, response.json()


# --- positions start at 1 -----------------------------------------------------------------------------


def test_position_zero_is_a_field_error_on_the_device_page(client_for, technician, project, rack):
    device = services.device_create(
        project=project, hardware_model=HardwareModelFactory(height_u=1), name="box", rack=rack, position_u=5
    )
    response = client_for(technician).post(
        reverse("inventory:device-edit", args=[project.code, device.pk]),
        {"status": DeviceStatus.PLANNED, "rack": rack.pk, "position_u": 0, "face": Face.FRONT, "serial": "",
         "asset_tag": "", "oob_address": ""},
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "Ensure this value is greater than or equal to 1." in body
    assert "is violated" not in body
    assert Device.objects.get(pk=device.pk).position_u == 5


def test_rack_position_zero_is_a_400_naming_the_field(tech_api, project, rack):
    response = tech_api.post(
        api_url("rack"),
        {"project": project.code, "site": rack.site.name, "name": "R0", "row": "B", "position": 0,
         "power_budget_w": 1000},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()) == ["position"]


def test_rack_position_zero_is_refused_by_the_model(project, rack):
    rack.position = 0
    with pytest.raises(ValidationError) as refused:
        rack.full_clean()
    assert list(refused.value.message_dict) == ["position"]


# --- a row never changes project in the admin ------------------------------------------------------------


def test_the_admin_keeps_a_racks_project(admin_client, project, rack):
    elsewhere = ProjectFactory()
    response = admin_client.post(
        reverse("admin:inventory_rack_change", args=[rack.pk]),
        {**rack_admin_form(rack, status=RackStatus.INSTALLED), "project": elsewhere.pk},
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    rack.refresh_from_db()
    assert (rack.project, rack.status) == (project, RackStatus.INSTALLED)


def test_the_admin_keeps_a_sites_and_an_optics_project(admin_client, project):
    elsewhere = ProjectFactory()
    site = Site.objects.create(project=project, name="Hall 1")
    response = admin_client.post(
        reverse("admin:inventory_site_change", args=[site.pk]),
        {"name": "Hall 1b", "address": "", "project": elsewhere.pk},
    )
    assert response.status_code == 302
    site.refresh_from_db()
    assert (site.project, site.name) == (project, "Hall 1b")
    optic = OpticFactory(project=project)
    page = admin_client.get(reverse("admin:inventory_optic_change", args=[optic.pk])).content.decode()
    assert 'name="project"' not in page


def test_the_admin_still_checks_names_unique_in_the_project(admin_client, project, rack):
    """Read-only fields leave validation; the project is put back so this is a form error, not a 500."""
    RackFactory(project=project, name="R2", site=rack.site)
    response = admin_client.post(
        reverse("admin:inventory_rack_change", args=[rack.pk]), rack_admin_form(rack, name="R2")
    )
    assert response.status_code == 200
    assert "A rack with this name already exists in the project." in response.content.decode()


def test_the_admin_adds_a_rack_with_its_project(admin_client, project, rack):
    response = admin_client.post(
        reverse("admin:inventory_rack_add"),
        {**rack_admin_form(rack, name="R-NEW", position=9), "project": project.pk},
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    assert Rack.objects.get(name="R-NEW").project == project


# --- outsiders ---------------------------------------------------------------------------------------


def test_an_outsider_cannot_touch_these_rows(api_for, outsider, rack, gpu):
    api = api_for(outsider)
    assert api.patch(api_url("rack", rack.pk), {"height_u": 20}, format="json").status_code == 404
    assert api.delete(api_url("nic", gpu.nics.first().pk)).status_code == 404
    port = gpu.ports.get(name="bmc")
    assert api.patch(api_url("port", port.pk), {"parent": port.pk, "lane": 0}, format="json").status_code == 404
