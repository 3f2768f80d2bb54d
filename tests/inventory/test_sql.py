"""inventory.sql, each function against what the ORM does on the same rows: the suite runs on SQLite here and
on PostgreSQL in CI, so each holds on both (identities_learn_recorded is PostgreSQL's only). The identities'
two paths (one statement, or the ORM's reads by chunks) are also held to each other, through the service, by
tests/validation/test_topology_identities.py."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from inventory import sql
from inventory.models import Device, Port
from inventory.services import device_create
from tests.factories import ProjectFactory, gpu_server_model
from tests.support import history_as_rows_now, postgresql_only

pytestmark = pytest.mark.django_db


class RolledBack(Exception):
    pass


def state_after(write, model) -> dict:
    """Every row of `model` (id -> every concrete field) after `write()`, which is then rolled back."""
    snapshot = {}
    try:
        with transaction.atomic():
            write()
            snapshot = {row["id"]: row for row in model.objects.values()}
            raise RolledBack
    except RolledBack:
        pass
    return snapshot


@pytest.fixture
def nodes(project):
    model = gpu_server_model(nics=2, lanes=2)
    return [device_create(project=project, hardware_model=model, name=f"gpu-{i:03d}") for i in range(3)]


def test_field_values_update_writes_what_bulk_update_writes(nodes, monkeypatch):
    monkeypatch.setattr(sql, "CHUNK", 3)  # several statements
    ports = list(Port.objects.filter(device__in=nodes).order_by("pk"))
    values = [(port.pk, f"b8:ce:f6:00:00:{index:02x}") for index, port in enumerate(ports[:7])] + [(ports[8].pk, "")]
    Port.objects.filter(pk=ports[8].pk).update(guid_mac="b8:ce:f6:00:00:ff")

    def by_orm():
        rows = [Port(pk=pk, guid_mac=value) for pk, value in values]
        Port.objects.bulk_update(rows, ["guid_mac"])

    expected = state_after(by_orm, Port)
    assert state_after(lambda: sql.field_values_update(model=Port, field="guid_mac", values=values), Port) == expected
    assert expected[ports[0].pk]["guid_mac"] == "b8:ce:f6:00:00:00" and expected[ports[8].pk]["guid_mac"] == ""


def test_identities_learn_recorded_changes_what_the_orm_finds(project, nodes, technician):
    postgresql_only("identities learned in one statement")
    other = ProjectFactory(code="OTHER-3")
    stranger = device_create(project=other, hardware_model=nodes[0].hardware_model, name="x-001")
    ports = list(Port.objects.filter(device__in=nodes).order_by("pk"))
    Port.objects.filter(pk=ports[5].pk).update(guid_mac="b8:ce:f6:00:00:01")  # to be taken from it
    Port.objects.filter(pk=ports[6].pk).update(guid_mac="b8:ce:f6:00:00:02")  # learned again: unchanged
    Port.objects.filter(device=stranger).update(guid_mac="b8:ce:f6:00:00:01")  # another project's: untouched
    values = {ports[0].pk: "b8:ce:f6:00:00:01", ports[6].pk: "b8:ce:f6:00:00:02",
              Port.objects.filter(device=stranger).first().pk: "b8:ce:f6:00:00:09"}
    # What the ORM finds: the project's rows named whose value differs, and the project's others holding one.
    mine = Port.objects.filter(device__project=project)
    learned = {pk for pk, value in mine.filter(pk__in=values).values_list("pk", "guid_mac") if value != values[pk]}
    cleared = set(mine.filter(guid_mac__in=[values[pk] for pk in learned]).exclude(pk__in=learned)
                  .values_list("pk", flat=True))
    assert (learned, cleared) == ({ports[0].pk}, {ports[5].pk})
    at = timezone.now()
    with transaction.atomic():
        changed = sql.identities_learn_recorded(model=Port, field="guid_mac", values=values, project=project,
                                                user=technician, reason="cmp", at=at)
    assert changed == 2
    assert dict(Port.objects.filter(pk__in=[*learned, *cleared]).values_list("pk", "guid_mac")) == {
        ports[0].pk: "b8:ce:f6:00:00:01", ports[5].pk: ""}
    assert set(Port.objects.filter(device=stranger).values_list("guid_mac", flat=True)) == {"b8:ce:f6:00:00:01"}
    assert history_as_rows_now(Port, at, "cmp") == (2, 0)
    guid = {nodes[1].pk: "506b4b0300820910"}
    with transaction.atomic():
        assert sql.identities_learn_recorded(model=Device, field="node_guid", values=guid, project=project,
                                             user=technician, reason="cmp2", at=at) == 1
    assert Device.objects.get(pk=nodes[1].pk).node_guid == "506b4b0300820910"
