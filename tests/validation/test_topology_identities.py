"""inventory.services.identities: GUIDs and MACs learned from the fabric, recorded on devices and ports with
history; an identity belongs to one row of a project (learning it elsewhere takes it from the old one);
malformed values and other projects' rows are refused or ignored."""

import pytest
from django.core.exceptions import ValidationError

from inventory.models import Device
from inventory.services.identities import identities_record
from tests.factories import ProjectFactory

from .topology_support import port, sb7700_fabric

pytestmark = pytest.mark.django_db


def test_learned_identities_with_history_and_moved_once(project):
    sb7700_fabric(project)
    switch = Device.objects.get(project=project, name="SB7700")
    n01, n02 = port(project, "n01:ib0"), port(project, "n02:ib0")
    changed = identities_record(project=project, device_guids={switch.pk: "506b4b0300820910"},
                                port_ids={n01.pk: "ec0d9a03003d62be", n02.pk: "b8:ce:f6:00:00:01"}, cause="cmp #1")
    assert changed == 3
    switch.refresh_from_db()
    assert switch.node_guid == "506b4b0300820910"
    assert switch.history.latest().history_change_reason == "cmp #1"
    assert port(project, "n02:ib0").guid_mac == "b8:ce:f6:00:00:01"
    # The HCA moved to n02: its GUID leaves n01.
    assert identities_record(project=project, port_ids={n02.pk: "ec0d9a03003d62be"}) == 2
    assert (port(project, "n01:ib0").guid_mac, port(project, "n02:ib0").guid_mac) == ("", "ec0d9a03003d62be")
    assert identities_record(project=project, port_ids={n02.pk: "ec0d9a03003d62be"}) == 0  # nothing new


def test_malformed_values_and_other_projects(project):
    sb7700_fabric(project)
    n01 = port(project, "n01:ib0")
    with pytest.raises(ValidationError) as refused:
        identities_record(project=project, port_ids={n01.pk: "0xEC0D9A03003D62BE"})
    assert "port_ids" in refused.value.message_dict
    with pytest.raises(ValidationError):
        identities_record(project=project, device_guids={n01.device_id: "b8:ce:f6:00:00:01"})  # a MAC is no node GUID
    other = ProjectFactory(code="OTHER-1")
    assert identities_record(project=other, port_ids={n01.pk: "ec0d9a03003d62be"}) == 0
    assert port(project, "n01:ib0").guid_mac == ""
