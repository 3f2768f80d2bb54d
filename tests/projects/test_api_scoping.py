"""Scoping of the inventory and membership endpoints with real payloads: customers cannot write even a
valid row, technicians write the inventory but cannot manage members, an outsider's valid create does
not reveal the project. Each refusal has a positive control next to it, so a test cannot pass because the
endpoint is simply broken. Every route's anonymous and outsider cases (404 on objects, no rows in lists)
are the access matrix's, for every endpoint at once: tests/test_access_matrix.py."""

import pytest
from django.urls import reverse

from inventory import services
from projects.choices import Role
from projects.models import Membership
from tests.factories import MembershipFactory, OpticFactory, RackFactory, UserFactory, gpu_server_model

pytestmark = pytest.mark.django_db


INVENTORY = ["site", "rack", "device", "nic", "port", "optic"]
PROJECT_SCOPED = [*INVENTORY, "membership"]


def one_of_everything(project, member) -> dict:
    """A row of every project-scoped kind in `project`, keyed by the API's basename."""
    rack = RackFactory(project=project)
    device = services.device_create(
        project=project, hardware_model=gpu_server_model(), name="gpu-001", rack=rack, position_u=1
    )
    port = device.ports.get(name="ib0/0")
    return {
        "site": rack.site,
        "rack": rack,
        "device": device,
        "nic": device.nics.get(slot="nic0"),
        "port": port,
        "optic": services.optic_install(optic=OpticFactory(project=project), port=port),
        "membership": Membership.objects.get(user=member, project=project),
    }


@pytest.fixture
def rows(project, manager):
    return one_of_everything(project, manager)


@pytest.fixture
def their_rows(other_project, outsider):
    """The outsider's own project, so their lists are not empty merely because they are broken."""
    return one_of_everything(other_project, outsider)


def detail(basename: str, obj) -> str:
    return reverse(f"{basename}-detail", args=[obj.pk])


def listing(basename: str) -> str:
    return reverse(f"{basename}-list")


def listed_ids(response) -> set[int]:
    assert response.status_code == 200, response.content
    return {row["id"] for row in response.json()["results"]}


def new_row_payload(basename: str, project, rows) -> dict:
    """A valid create payload for each endpoint (the same one succeeds for a role that may write)."""
    device = rows["device"]
    return {
        "site": {"project": project.code, "name": "Hall 9"},
        "rack": {
            "project": project.code,
            "site": rows["site"].name,
            "name": "R-NEW",
            "row": "Z",
            "position": 1,
            "power_budget_w": 20000,
        },
        "device": {
            "project": project.code,
            "name": "gpu-new",
            "hardware_model": device.hardware_model.part_number,
        },
        "nic": {"device": device.pk, "slot": "ocp0", "model": "BlueField-3"},
        "port": {"device": device.pk, "name": "eth9", "kind": "ethernet", "speed_gbps": 400},
        "optic": {
            "project": project.code,
            "vendor": "NVIDIA",
            "part_number": "980-9I693-00NS00",
            "serial": "NEW-1",
            "form_factor": "osfp",
            "speed_gbps": 800,
        },
        "membership": {
            "project": project.code,
            "user": UserFactory(username="newbie").username,
            "role": "customer",
        },
    }[basename]


CHANGE = {
    "site": {"address": "Hall 2, cage 4"},
    "rack": {"status": "installed"},
    "device": {"status": "racked"},
    "nic": {"firmware": "40.44.1036"},
    "port": {"status": "up"},
    "optic": {"vendor": "Someone else"},
    "membership": {"role": "manager"},
}


# --- outsiders --------------------------------------------------------------------------------


def test_outsider_gets_404_on_the_project_and_does_not_list_it(
    api_for, outsider, customer, project, other_project
):
    assert api_for(outsider).get(reverse("project-detail", args=[project.code])).status_code == 404
    codes = [p["code"] for p in api_for(outsider).get(listing("project")).json()["results"]]
    assert codes == [other_project.code]
    assert api_for(customer).get(reverse("project-detail", args=[project.code])).status_code == 200


def test_staff_see_every_project_and_its_rows(api_for, rows, their_rows, project, other_project):
    staff = UserFactory(username="ops", is_staff=True)
    assert listed_ids(api_for(staff).get(listing("rack"))) == {rows["rack"].pk, their_rows["rack"].pk}


@pytest.mark.parametrize("basename", ["site", "rack", "device", "optic"])
def test_outsiders_write_into_a_project_gets_a_400_that_does_not_reveal_it(api_for, project, rows, basename):
    """A technician of another project cannot create rows in this one, and the error is the same as
    for a project code that does not exist."""
    intruder = UserFactory(username="intruder")
    MembershipFactory(user=intruder, role=Role.TECHNICIAN)
    api = api_for(intruder)
    payload = new_row_payload(basename, project, rows)
    real = api.post(listing(basename), payload, format="json")
    made_up = api.post(listing(basename), {**payload, "project": "NO-SUCH-PROJECT"}, format="json")
    assert real.status_code == made_up.status_code == 400
    assert "project" in real.json()
    assert real.json()["project"] == [
        m.replace("NO-SUCH-PROJECT", project.code) for m in made_up.json()["project"]
    ]


@pytest.mark.parametrize("basename", ["nic", "port"])
def test_outsider_cannot_attach_to_a_device_they_cannot_see(api_for, project, rows, basename):
    intruder = UserFactory(username="intruder")
    MembershipFactory(user=intruder, role=Role.TECHNICIAN)
    response = api_for(intruder).post(
        listing(basename), new_row_payload(basename, project, rows), format="json"
    )
    assert response.status_code == 400
    assert "device" in response.json()


# --- roles ------------------------------------------------------------------------------------


@pytest.mark.parametrize("basename", PROJECT_SCOPED)
def test_customer_cannot_create_change_or_delete(api_for, customer, project, rows, basename):
    api = api_for(customer)
    obj = rows[basename]
    before = api.get(detail(basename, obj)).json()
    assert (
        api.post(listing(basename), new_row_payload(basename, project, rows), format="json").status_code
        == 403
    )
    assert api.post(listing(basename), {}, format="json").status_code == 403  # refused before validation
    assert api.patch(detail(basename, obj), CHANGE[basename], format="json").status_code == 403
    assert api.delete(detail(basename, obj)).status_code == 403
    assert api.get(detail(basename, obj)).json() == before


@pytest.mark.parametrize("basename", INVENTORY)
def test_technician_creates_changes_and_deletes_inventory(api_for, technician, project, rows, basename):
    api = api_for(technician)
    created = api.post(listing(basename), new_row_payload(basename, project, rows), format="json")
    assert created.status_code == 201, created.json()
    url = reverse(f"{basename}-detail", args=[created.json()["id"]])
    changed = api.patch(url, CHANGE[basename], format="json")
    assert changed.status_code == 200, changed.json()
    field, value = next(iter(CHANGE[basename].items()))
    assert changed.json()[field] == value
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404


def test_technician_cannot_manage_memberships(api_for, technician, project, rows):
    api = api_for(technician)
    membership = rows["membership"]
    payload = new_row_payload("membership", project, rows)
    assert api.post(listing("membership"), payload, format="json").status_code == 403
    assert api.patch(detail("membership", membership), {"role": "customer"}, format="json").status_code == 403
    assert api.delete(detail("membership", membership)).status_code == 403
    membership.refresh_from_db()
    assert membership.role == Role.MANAGER


def test_manager_manages_memberships(api_for, manager, technician, project, rows):
    api = api_for(manager)
    created = api.post(listing("membership"), new_row_payload("membership", project, rows), format="json")
    assert created.status_code == 201, created.json()
    tech_membership = Membership.objects.get(user=technician, project=project)
    changed = api.patch(detail("membership", tech_membership), {"role": "customer"}, format="json")
    assert changed.status_code == 200 and changed.json()["role"] == "customer"
    assert api.delete(reverse("membership-detail", args=[created.json()["id"]])).status_code == 204
    duplicate = api.post(
        listing("membership"),
        {"project": project.code, "user": technician.username, "role": "manager"},
        format="json",
    )
    assert duplicate.status_code == 400 and "user" in duplicate.json()


# --- the shared hardware catalogue ------------------------------------------------------------


def test_hardware_catalogue_is_read_by_anyone_signed_in_and_written_by_staff_only(
    api_for, outsider, technician, rows
):
    model = rows["device"].hardware_model
    assert model.pk in listed_ids(api_for(outsider).get(listing("hardware-model")))
    assert api_for(outsider).get(detail("hardware-model", model)).status_code == 200
    payload = {
        "vendor": "NVIDIA",
        "model": "Q3400-RA",
        "part_number": "920-9B36F",
        "kind": "ib_switch",
        "height_u": 4,
        "max_power_w": 3200,
    }
    assert api_for(technician).post(listing("hardware-model"), payload, format="json").status_code == 403
    assert (
        api_for(technician)
        .patch(detail("hardware-model", model), {"max_power_w": 1}, format="json")
        .status_code
        == 403
    )
    assert api_for(technician).delete(detail("hardware-model", model)).status_code == 403
    staff = UserFactory(username="ops", is_staff=True)
    assert api_for(staff).post(listing("hardware-model"), payload, format="json").status_code == 201
