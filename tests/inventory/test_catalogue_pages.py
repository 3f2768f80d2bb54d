"""The hardware catalogue pages under /p/<code>/catalogue/: every member reads the list (filtered by kind)
and a model's NIC and port templates; managers import device-type files, adding models; changing a model
already there is for staff. Outsiders get 404, technicians and customers 403 on the import."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from inventory.catalogue import DATA_DIR
from inventory.choices import HardwareKind
from inventory.models import HardwareModel
from inventory.services import catalogue_load_shipped
from tests.factories import UserFactory
from tests.support import count_queries

pytestmark = pytest.mark.django_db
NETBOX = Path(__file__).resolve().parents[1] / "fixtures" / "netbox"


def url(project, name: str = "inventory:catalogue", *args) -> str:
    return reverse(name, args=[project.code, *args])


def upload(path: Path, text: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, (text if text is not None else path.read_text()).encode())


def test_members_read_the_list_with_port_lane_and_nic_counts(client_for, project, customer):
    catalogue_load_shipped()
    body = client_for(customer).get(url(project)).content.decode()
    q3400 = body.split('data-part="Q3400-RA"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="ports">145</td>' in q3400 and '<td class="lanes">576</td>' in q3400
    b300 = body.split('data-part="B300-8GPU"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="nics">10</td>' in b300
    assert "Import device types" not in body  # a customer may not import


def test_the_list_filters_by_kind(client_for, project, manager):
    catalogue_load_shipped()
    body = client_for(manager).get(url(project), {"kind": HardwareKind.IB_SWITCH}).content.decode()
    assert 'data-part="MQM9700-NS2F"' in body and 'data-part="Q3400-RA"' in body
    assert 'data-part="SN5600"' not in body and 'data-part="B300-8GPU"' not in body
    assert "Import device types" in body


def test_the_list_costs_the_same_queries_whatever_the_catalogue_holds(client_for, project, manager):
    client = client_for(manager)
    HardwareModel.objects.create(vendor="X", model="Y", part_number="ONE", kind=HardwareKind.OTHER)
    few = count_queries(lambda: client.get(url(project)))
    catalogue_load_shipped()
    many = count_queries(lambda: client.get(url(project)))
    assert many == few


def test_a_model_page_lists_its_nics_and_port_templates(client_for, project, technician):
    catalogue_load_shipped()
    model = HardwareModel.objects.get(part_number="B300-8GPU")
    response = client_for(technician).get(url(project, "inventory:catalogue-detail", model.pk))
    body = response.content.decode()
    assert response.status_code == 200
    assert 'data-port="ib7"' in body and "4 × 200G, lane k in plane k" in body
    assert "900-9X81Q-00CN-ST0" in body and 'data-port="bmc0"' in body


def test_outsiders_get_404_on_every_catalogue_page(client_for, project, outsider):
    catalogue_load_shipped()
    model = HardwareModel.objects.first()
    client = client_for(outsider)
    for target in (url(project), url(project, "inventory:catalogue-detail", model.pk),
                   url(project, "inventory:catalogue-import")):
        assert client.get(target).status_code == 404
    assert client.post(url(project, "inventory:catalogue-import"),
                       {"files": [upload(NETBOX / "nvidia-sn4700.yaml")]}).status_code == 404
    assert not HardwareModel.objects.filter(part_number="MSN4700-WS2FC").exists()


def test_an_unknown_model_is_a_404(client_for, project, manager):
    assert client_for(manager).get(url(project, "inventory:catalogue-detail", 999999)).status_code == 404


@pytest.mark.parametrize("role", ["technician", "customer"])
def test_only_managers_import(request, client_for, project, role):
    client = client_for(request.getfixturevalue(role))
    assert client.get(url(project, "inventory:catalogue-import")).status_code == 403
    response = client.post(url(project, "inventory:catalogue-import"),
                           {"files": [upload(NETBOX / "nvidia-sn4700.yaml")], "kind": "eth_switch"})
    assert response.status_code == 403 and not HardwareModel.objects.exists()


def test_a_manager_imports_a_netbox_file_with_a_kind(client_for, project, manager):
    client = client_for(manager)
    assert client.get(url(project, "inventory:catalogue-import")).status_code == 200
    response = client.post(url(project, "inventory:catalogue-import"),
                           {"files": [upload(NETBOX / "nvidia-sn4700.yaml"),
                                      upload(NETBOX / "generic-head-node-1u.yaml")],
                            "kind": "eth_switch"}, follow=True)
    assert response.redirect_chain[-1][0] == url(project)
    body = response.content.decode()
    assert "Hardware catalogue: 2 created, 0 updated, 0 unchanged." in body
    assert "module bays are not imported" in body
    model = HardwareModel.objects.get(part_number="MSN4700-WS2FC")
    assert model.kind == HardwareKind.ETH_SWITCH and model.port_templates.count() == 33


def test_a_bad_file_comes_back_on_the_form_naming_file_and_line(client_for, project, manager):
    text = (NETBOX / "nvidia-sn4700.yaml").read_text().replace("type: 400gbase-x-qsfpdd\n", "type: 400gbase-zz\n", 1)
    response = client_for(manager).post(url(project, "inventory:catalogue-import"),
                                        {"files": [upload(NETBOX / "nvidia-sn4700.yaml", text)], "kind": "eth_switch"})
    assert response.status_code == 400
    assert ("nvidia-sn4700.yaml, line 29: interfaces[1].type: unknown interface type &#x27;400gbase-zz&#x27;"
            in response.content.decode())
    assert not HardwareModel.objects.exists()


def test_a_manager_cannot_change_a_model_other_projects_use_but_staff_can(client_for, project, manager):
    catalogue_load_shipped()
    shipped = DATA_DIR / "quantum2-qm9700.yaml"
    changed = shipped.read_text().replace("maximum_draw: 860", "maximum_draw: 900")
    target = url(project, "inventory:catalogue-import")
    response = client_for(manager).post(target, {"files": [upload(shipped, changed)]})
    assert response.status_code == 400
    assert "MQM9700-NS2F is already in the catalogue with another max_power_w; only staff change" in (
        response.content.decode())
    assert HardwareModel.objects.get(part_number="MQM9700-NS2F").max_power_w == 1720
    staff = UserFactory(username="ops", is_staff=True)
    response = client_for(staff).post(target, {"files": [upload(shipped, changed)]})
    assert response.status_code == 302
    assert HardwareModel.objects.get(part_number="MQM9700-NS2F").max_power_w == 1800


def test_anonymous_is_sent_to_log_in(client, project):
    response = client.get(url(project))
    assert response.status_code == 302 and "/login/" in response["Location"]
