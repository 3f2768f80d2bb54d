"""The project's RoCE settings live in its acceptance profile: a manager sets them (service and page), a bad
one is refused naming the setting, customers read them, and a lossless run judges by them."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from inventory.choices import DeviceRole
from inventory.models import HardwareModel
from inventory.services import device_create
from inventory.services.catalogue import catalogue_load_shipped
from validation import criteria
from validation.choices import CheckKind
from validation.cluster import roce_settings
from validation.models import AcceptanceProfile
from validation.services import acceptance_profile_update

pytestmark = pytest.mark.django_db


def profile_url(project) -> str:
    return reverse("validation:profile", args=[project.code])


def form_data(**changes) -> dict:
    profile = AcceptanceProfile()
    data = {name: str(getattr(profile, name)) for name in AcceptanceProfile.THRESHOLD_FIELDS}
    data.update(check_dom="on", pinned_versions="{}", roce="{}")
    data.update(changes)
    return data


def test_the_service_stores_overrides_and_runs_read_them(project, manager):
    acceptance_profile_update(project=project, user=manager, roce={"pfc_priority": 5, "dscp": 40})
    assert roce_settings(project) == criteria.RoceSettings(pfc_priority=5, dscp=40, traffic_class=40 << 2 | 2)
    assert AcceptanceProfile.objects.get(project=project).history.first().roce == {"pfc_priority": 5, "dscp": 40}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"pfc_priority": 9}, "roce.pfc_priority: expected a whole number from 0 to 7"),
        ({"dscp": True}, "roce.dscp: expected a whole number from 0 to 63"),
        ({"trust": "l2"}, "roce.trust: expected dscp or pcp"),
        ({"gid": 3}, "roce.gid: not a RoCE setting"),
        ([3], "Give an object of RoCE settings"),
        ({"gid_index": 10**30}, "roce.gid_index: expected a whole number from 0 to 255"),
    ],
)
def test_a_bad_setting_is_refused_naming_it_and_nothing_is_stored(project, manager, value, message):
    with pytest.raises(ValidationError) as refused:
        acceptance_profile_update(project=project, user=manager, roce=value)
    assert message in refused.value.message_dict["roce"][0]
    assert roce_settings(project) == criteria.RoceSettings()


def test_the_manager_sets_them_on_the_page_and_the_customer_reads_them(client_for, manager, customer, project):
    response = client_for(manager).post(profile_url(project), form_data(roce=json.dumps({"pfc_priority": 4})))
    assert response.status_code == 302
    page = client_for(customer).get(profile_url(project)).content.decode()
    row = page.split('data-setting="roce"')[1].split("</tr>")[0]
    assert "pfc_priority 4" in row and "dscp 26" in row  # the settings runs use: overrides over defaults


def test_the_page_names_a_bad_setting_on_its_field(client_for, manager, project):
    page = client_for(manager).post(profile_url(project), form_data(roce='{"ecn": "yes"}')).content.decode()
    assert 'id="error-roce"' in page and "roce.ecn: expected true or false" in page
    assert not AcceptanceProfile.objects.exists()


def test_technicians_and_outsiders_cannot_change_them(client_for, technician, outsider, project):
    assert client_for(technician).post(profile_url(project), form_data(roce='{"dscp": 1}')).status_code == 403
    assert client_for(outsider).post(profile_url(project), form_data(roce='{"dscp": 1}')).status_code == 404
    assert client_for(outsider).get(profile_url(project)).status_code == 404
    assert not AcceptanceProfile.objects.exists()


def test_the_traffic_class_follows_the_dscp_unless_it_contradicts_it(project, manager):
    acceptance_profile_update(project=project, user=manager, roce={"dscp": 24})
    assert roce_settings(project).traffic_class == 24 << 2 | 2  # NCCL and perftest mark the lossless DSCP
    with pytest.raises(ValidationError) as refused:
        acceptance_profile_update(project=project, user=manager, roce={"dscp": 24, "traffic_class": 106})
    assert "106 marks DSCP 26, not the lossless DSCP 24" in refused.value.message_dict["roce"][0]


def test_rdma_cm_is_a_setting_and_bandwidth_tests_then_connect_through_it(project, manager, start):
    catalogue_load_shipped()
    model = HardwareModel.objects.get(part_number="B300-8GPU-ETH")
    for name in ("roce-001", "roce-002"):
        device_create(project=project, hardware_model=model, name=name, role=DeviceRole.GPU_NODE)
    acceptance_profile_update(project=project, user=manager, roce={"rdma_cm": True, "dscp": 24})
    run = start(CheckKind.CPU_BANDWIDTH)
    argv = run.results.order_by("id").first().params["client_command"].split()
    assert argv[argv.index("-R") + 1:argv.index("-R") + 3] == ["--tos", "98"]


def test_a_lossless_run_judges_by_the_projects_priority(project, manager, start):
    catalogue_load_shipped()
    model = HardwareModel.objects.get(part_number="B300-8GPU-ETH")
    device_create(project=project, hardware_model=model, name="roce-001", role=DeviceRole.GPU_NODE)
    acceptance_profile_update(project=project, user=manager, roce={"pfc_priority": 5, "dscp": 40})
    run = start(CheckKind.LOSSLESS)
    texts = [r["text"] for r in run.results.get(target_key="roce-001:eth0").reasons]
    assert "PFC off on priority 5, the lossless priority" in texts


def test_settings_stored_past_the_checks_refuse_the_run_clearly(project, manager):
    AcceptanceProfile.objects.create(project=project, roce=[3])  # as the admin or a script could
    with pytest.raises(ValidationError) as refused:
        roce_settings(project)
    assert "roce: expected an object of settings" in str(refused.value)


def test_the_bandwidth_matrix_carries_the_projects_gid_and_traffic_class(project, manager, start):
    catalogue_load_shipped()
    model = HardwareModel.objects.get(part_number="B300-8GPU-ETH")
    for name in ("roce-001", "roce-002"):
        device_create(project=project, hardware_model=model, name=name, role=DeviceRole.GPU_NODE)
    acceptance_profile_update(project=project, user=manager, roce={"gid_index": 5, "dscp": 24})
    run = start(CheckKind.BANDWIDTH_MATRIX)
    argv = run.results.get().params["rails"][0]["client_command"].split()
    assert argv[argv.index("-x") + 1] == "5" and argv[argv.index("--tclass") + 1] == "98"
