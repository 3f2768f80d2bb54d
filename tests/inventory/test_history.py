"""Change history: an edit through the service records who changed what, and the object's page shows it."""

import re

import pytest
from django.urls import reverse

from inventory.choices import DeviceStatus, HardwareKind
from inventory.models import Port
from inventory.services import device_create, device_update, optic_install
from tests.factories import HardwareModelFactory, OpticFactory, RackFactory, gpu_server_model
from tests.support import count_queries

pytestmark = pytest.mark.django_db


@pytest.fixture
def leaf(project):
    rack = RackFactory(project=project, name="R-OK")
    model = HardwareModelFactory(model="Leaf 1U", kind=HardwareKind.IB_SWITCH, height_u=1)
    return device_create(project=project, hardware_model=model, name="leaf-01", rack=rack, position_u=42,
                         status=DeviceStatus.RACKED)


def device_url(device, name="inventory:device-detail"):
    return reverse(name, args=[device.project.code, device.pk])


def history_section(body):
    return body[body.index('id="history"'):]


def edit(client, device, **changes):
    data = {"status": device.status, "rack": device.rack_id, "position_u": device.position_u,
            "face": device.face, "serial": device.serial, "asset_tag": device.asset_tag, "oob_address": ""}
    data.update(changes)
    return client.post(device_url(device, "inventory:device-edit"), data)


def test_an_edit_from_the_page_records_the_user_and_the_fields(client_for, technician, project, leaf):
    new_rack = RackFactory(project=project, name="R-HOT")
    client = client_for(technician)
    assert edit(client, leaf, status=DeviceStatus.POWERED, rack=new_rack.pk, position_u=30).status_code == 302

    latest = leaf.history.order_by("-history_date", "-history_id").first()
    assert latest.history_type == "~" and latest.history_user == technician
    delta = latest.diff_against(latest.prev_record)
    assert set(delta.changed_fields) == {"status", "rack", "position_u"}

    history = history_section(client.get(device_url(leaf)).content.decode())
    newest_row = re.search(r"<tr>(.*?)</tr>", history.split("<tbody>")[1], re.S).group(1)
    assert "tech" in newest_row and "Changed" in newest_row
    assert "Racked &rarr; Powered" in newest_row
    assert "R-OK &rarr; R-HOT" in newest_row  # foreign keys by name, not by id
    assert "42 &rarr; 30" in newest_row
    assert "Created" in history  # the creation is listed too, below


def test_a_service_call_outside_a_request_is_recorded_as_system(client_for, customer, leaf):
    device_update(device=leaf, serial="SN-NEW")  # e.g. a task or a management command
    history = history_section(client_for(customer).get(device_url(leaf)).content.decode())
    assert "SN-NEW" in history and "system" in history


def test_the_user_given_to_the_service_is_recorded(technician, leaf):
    leaf._history_user = technician  # how a task or command names who asked for the change
    device_update(device=leaf, asset_tag="AT-9")
    assert leaf.history.latest().history_user == technician


def test_a_refused_edit_records_nothing(client_for, technician, project, leaf):
    rack = leaf.rack
    model = HardwareModelFactory(height_u=1)
    device_create(project=project, hardware_model=model, name="blocker", rack=rack, position_u=10)
    before = leaf.history.count()
    response = edit(client_for(technician), leaf, position_u=10)
    assert response.status_code == 200 and "already taken by blocker" in response.content.decode()
    assert leaf.history.count() == before


def test_outsider_cannot_read_the_history(client_for, outsider, leaf):
    assert client_for(outsider).get(device_url(leaf)).status_code == 404


def test_history_query_count_does_not_grow_with_entries(
    client_for, customer, project, django_assert_num_queries
):
    """Foreign keys in the diffs (here an optic moving from port to port) are fetched in one query."""
    server = device_create(project=project, hardware_model=gpu_server_model(), name="gpu-h")
    ports = list(Port.objects.filter(device=server, parent__isnull=True).order_by("id"))
    optic = OpticFactory(project=project, serial="MT-MOVES")
    address = reverse("inventory:optic-detail", args=[project.code, optic.pk])
    client = client_for(customer)
    for port in ports[:2]:
        optic_install(optic=optic, port=port)
    few = count_queries(lambda: client.get(address))
    for port in ports[2:]:
        optic_install(optic=optic, port=port)
    with django_assert_num_queries(few):
        body = client.get(address).content.decode()
    assert "gpu-h:ib0 &rarr; gpu-h:ib1" in body and "gpu-h:ib7 &rarr; gpu-h:bmc" in body
