"""inventory.services.identities: GUIDs and MACs learned from the fabric, recorded on devices and ports with
history; an identity belongs to one row of a project (learning it elsewhere takes it from the old one);
malformed values and other projects' rows are refused or ignored."""

import pytest
from django.core.exceptions import ValidationError

from inventory.models import Device, HardwareModel, Port
from inventory.services.identities import identities_record
from tests.factories import ProjectFactory
from tests.support import count_queries, history_as_rows_now, postgresql_only

from .topology_support import devices, port, sb7700_fabric

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


@pytest.mark.parametrize("one_statement", [True, False], ids=["one-statement", "by-chunks"])
def test_both_paths_learn_take_and_record_alike(project, technician, monkeypatch, one_statement):
    """PostgreSQL learns each kind in one statement (data-modifying CTEs, history rows included); elsewhere the
    rows are read and updated by chunks and history_copy follows. The same rows move, each with one history row
    as the row now is, with the user, the date and the reason; another project's rows are never touched; and
    PostgreSQL's statements do not grow with the values."""
    from inventory.services import identities

    if one_statement:
        postgresql_only("learning in one statement")
    monkeypatch.setattr(identities, "update_recorded_supported", lambda: one_statement)
    sb7700_fabric(project)
    other = ProjectFactory(code="OTHER-2")
    host = HardwareModel.objects.get(part_number="TEST-EDR-HOST")
    stranger = devices(other, host, "x01")[0]
    Port.objects.filter(device=stranger).update(guid_mac="ec0d9a03003d62be")  # the same value in another project
    switch = Device.objects.get(project=project, name="SB7700")
    n01, n02, n03 = (port(project, f"{name}:ib0") for name in ("n01", "n02", "n03"))
    first = {n01.pk: "ec0d9a03003d62be", n02.pk: "b8:ce:f6:00:00:01", n03.pk: "b8:ce:f6:00:00:03"}
    assert identities_record(project=project, device_guids={switch.pk: "506b4b0300820910"}, port_ids=first,
                             user=technician, cause="cmp #1") == 4
    at = Port.history.filter(id=n01.pk).latest().history_date
    assert history_as_rows_now(Port, at, "cmp #1") == (3, 0)
    assert history_as_rows_now(Device, at, "cmp #1") == (1, 0)
    assert set(Port.history.filter(history_date=at).values_list("history_user", "history_type")) == {
        (technician.pk, "~")}
    # n01's HCA moved to n02 and n02's to n03: n01 loses its value, n02 and n03 take theirs (n02 is not cleared
    # of the value n03 takes: it learns another); a port id that is no port is ignored; the switch's GUID is seen
    # again (no change, no history row).
    again = {n02.pk: "ec0d9a03003d62be", n03.pk: "b8:ce:f6:00:00:01", 10**9: "b8:ce:f6:00:00:09"}
    assert identities_record(project=project, device_guids={switch.pk: "506b4b0300820910"}, port_ids=again,
                             cause="cmp #2") == 3
    assert [port(project, f"{name}:ib0").guid_mac for name in ("n01", "n02", "n03")] == [
        "", "ec0d9a03003d62be", "b8:ce:f6:00:00:01"]
    later = Port.history.filter(id=n02.pk).latest().history_date
    assert history_as_rows_now(Port, later, "cmp #2") == (3, 0)  # n01 cleared, n02 and n03 learned
    assert not Device.history.filter(history_date=later).exists()
    assert Port.objects.get(device=stranger).guid_mac == "ec0d9a03003d62be"  # another project's: kept
    assert identities_record(project=project, port_ids=again, device_guids={switch.pk: "506b4b0300820910"}) == 0
    if one_statement:  # a statement per kind, however many values (and the atomic block's savepoint and release)
        many = {n01.pk: "b8:ce:f6:00:00:11", **{10**9 + pk: "b8:ce:f6:00:00:12" for pk in range(5000)}}
        assert count_queries(lambda: identities_record(project=project, port_ids=many,
                                                       device_guids={switch.pk: "506b4b0300820911"})) == 2 + 2


def test_history_off_learns_without_history_rows(project, settings):
    sb7700_fabric(project)
    settings.SIMPLE_HISTORY_ENABLED = False
    n01 = port(project, "n01:ib0")
    assert identities_record(project=project, port_ids={n01.pk: "ec0d9a03003d62be"}) == 1
    assert port(project, "n01:ib0").guid_mac == "ec0d9a03003d62be"
    assert not Port.history.filter(id=n01.pk, guid_mac="ec0d9a03003d62be").exists()


def test_what_a_comparison_writes_and_nothing_reads_is_not_indexed():
    """Migration inventory 0010 (PostgreSQL, where db_index gave guid_mac two indexes on each table): no index on
    a port's guid_mac, in the port table nor in its history, so the ports learning a whole fabric's MACs rewrite
    no index entry; the history table keeps its indexes on the port (id), the date and the user only."""
    from django.db import connection

    postgresql_only("the port tables' indexes")
    history = Port.history.model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexdef LIKE %s",
                       [Port._meta.db_table, "%guid_mac%"])
        assert cursor.fetchall() == []
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [history])
        columns = sorted(definition.rsplit("(", 1)[1].split(")")[0] for (definition,) in cursor.fetchall())
    assert columns == ["history_date", "history_id", "history_user_id", "id"]
