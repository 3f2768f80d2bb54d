"""A whole fabric's observation recorded in bulk (cabling.services.fabric_states.cables_fabric_record), beyond
the single moves tested in tests/cabling/test_evidence.py: rounds of mixed observations against the rules
written out, each change with a history row copied by the database, in a number of statements that does not
grow with the cables, and nothing written but the time seen when nothing changed."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from cabling.choices import CableStatus, FabricState
from cabling.models import Cable
from cabling.services.fabric_states import cables_fabric_record
from inventory.choices import PortStatus
from inventory.models import Port
from tests.support import count_queries, history_as_rows_now, postgresql_only

from .test_evidence import ports, state

pytestmark = pytest.mark.django_db

CAUSE = "topology comparison #7"


def test_a_link_seen_ok_verifies_the_cable_and_keeps_its_history(fabric, technician):
    at = timezone.now()
    assert cables_fabric_record(project=fabric.project, observations={fabric.c1.pk: FabricState.OK},
                                checked_at=at, cause=CAUSE, user=technician) == 1
    assert state(fabric.c1) == (CableStatus.VERIFIED, FabricState.OK, CAUSE)
    assert fabric.c1.fabric_checked_at == at and fabric.c1.verified_at is None
    assert ports(fabric.c1) == {(PortStatus.UP, CAUSE)}
    record = fabric.c1.history.latest()
    assert (record.status, record.fabric_state, record.label, record.history_change_reason, record.history_date,
            record.history_type, record.history_user) == (CableStatus.VERIFIED, FabricState.OK, "C00001", CAUSE, at,
                                                          "~", technician)
    for port in Port.objects.filter(cable_end__cable=fabric.c1):
        latest = port.history.latest()
        assert (latest.status, latest.name, latest.history_change_reason, latest.history_user) == (
            PortStatus.UP, port.name, CAUSE, technician)
    # Seen again: only the time changes, no history row, not a port moved.
    later = at + timedelta(minutes=5)
    port_history = sum(p.history.count() for p in Port.objects.filter(cable_end__cable=fabric.c1))
    assert cables_fabric_record(project=fabric.project, observations={fabric.c1.pk: "ok"}, checked_at=later,
                                cause="again") == 0
    fabric.c1.refresh_from_db()
    assert fabric.c1.fabric_checked_at == later and fabric.c1.history.count() == 2
    assert sum(p.history.count() for p in Port.objects.filter(cable_end__cable=fabric.c1)) == port_history


def test_other_projects_unseen_cables_and_unknown_states_are_left_alone(fabric):
    at = timezone.now()
    assert cables_fabric_record(project=fabric.project, observations={fabric.foreign.pk: "ok", fabric.c1.pk: "ok"},
                                checked_at=at, cause=CAUSE) == 1
    assert state(fabric.foreign)[:2] == (CableStatus.PLANNED, "") and fabric.foreign.fabric_checked_at is None
    assert ports(fabric.foreign) == {(PortStatus.PLANNED, "")}
    fabric.c2.refresh_from_db()
    assert fabric.c2.fabric_checked_at is None  # not in this comparison: not seen
    with pytest.raises(ValidationError) as refused:
        cables_fabric_record(project=fabric.project, observations={fabric.c1.pk: "sideways"},
                             checked_at=timezone.now(), cause=CAUSE)
    assert refused.value.message_dict == {"observations": ["Unknown fabric states: sideways."]}


def expected_move(status: str, seen: str) -> str:
    """The rules, written out: ok verifies; missing takes back what only the fabric had verified (these
    cables have no scan); miswired or degraded is faulty."""
    if seen == FabricState.OK:
        return CableStatus.VERIFIED
    if seen == FabricState.MISSING:
        return CableStatus.INSTALLED if status == CableStatus.VERIFIED else status
    return CableStatus.FAULTY


def test_three_rounds_of_mixed_observations_move_every_cable_by_the_rules_with_a_history_row_per_change(
        project, add_cables):
    cables = add_cables(project, 30, 0)
    rounds = [{cable.pk: random.Random(seed * 100 + i).choice(FabricState.values) for i, cable in enumerate(cables)}
              for seed in range(3)]
    at = timezone.now()
    state = {cable.pk: (CableStatus.PLANNED, "") for cable in cables}
    for n, seen in enumerate(rounds):
        expected = {pk: (expected_move(state[pk][0], seen[pk]), seen[pk]) for pk in seen}
        changes = sum(expected[pk] != state[pk] for pk in seen)
        history_before = Cable.history.filter(project=project).count()
        moved = cables_fabric_record(project=project, observations=seen, checked_at=at + timedelta(minutes=n),
                                     cause=f"round {n}")
        assert moved == changes
        rows = Cable.objects.filter(project=project).values_list("pk", "status", "fabric_state")
        assert {pk: (status, fabric_state) for pk, status, fabric_state in rows} == expected
        assert Cable.history.filter(project=project).count() - history_before == changes
        state = expected


def test_statements_do_not_grow_with_the_cables_and_an_unchanged_fabric_writes_one(project, add_cables):
    def record(cables, state_):
        ids = {cable.pk: state_ for cable in cables}
        return count_queries(lambda: cables_fabric_record(project=project, observations=ids,
                                                          checked_at=timezone.now(), cause="bench"))

    few, many = add_cables(project, 5, 0), add_cables(project, 25, 5)
    assert record(few, "ok") == record(many, "ok")
    assert record(few, "miswired") == record(many, "miswired")
    # Nothing to change: read the cables, stamp the time seen, ask for ports to move up and down (none);
    # no lock, no history.
    assert record(many, "miswired") == 4 + 2  # and the savepoint of the atomic block, in and out


def test_history_copy_writes_the_rows_as_they_are_now_and_nothing_when_history_is_off(
        project, add_cables, technician, settings):
    from core.bulk_history import history_copy

    cables = add_cables(project, 3, 0)
    Cable.objects.filter(pk=cables[0].pk).update(status=CableStatus.FAULTY, status_cause="dropped")
    at = timezone.now()
    history_copy(Cable, [cables[0].pk, cables[1].pk, cables[0].pk], user=technician, reason="why", at=at)
    rows = list(Cable.history.filter(history_date=at).order_by("id").values_list(
        "id", "label", "status", "status_cause", "history_type", "history_user", "history_change_reason"))
    assert rows == [(cables[0].pk, "Q00000", "faulty", "dropped", "~", technician.pk, "why"),
                    (cables[1].pk, "Q00001", "planned", "", "~", technician.pk, "why")]
    settings.SIMPLE_HISTORY_ENABLED = False
    history_copy(Cable, [cables[2].pk], reason="off", at=at)
    assert not Cable.history.filter(history_change_reason="off").exists()


def test_update_returning_is_decided_by_the_database_and_its_version(monkeypatch):
    """UPDATE ... RETURNING: PostgreSQL, SQLite from 3.35, no other backend (MariaDB returns from an INSERT but
    not from an UPDATE, so Django's can_return_columns_from_insert is not the flag)."""
    from types import SimpleNamespace

    from django.db import connection

    from cabling.services.fabric_states import update_returning_supported

    assert update_returning_supported()  # both test databases have it
    if connection.vendor == "sqlite":
        monkeypatch.setattr(connection, "Database", SimpleNamespace(sqlite_version_info=(3, 34, 1)))
        assert not update_returning_supported()
    monkeypatch.setattr(connection, "vendor", "mysql")
    assert not update_returning_supported()


@pytest.mark.parametrize("returning", [True, False])
def test_ports_move_alike_with_and_without_update_returning(project, add_cables, technician, monkeypatch,
                                                             returning):
    """The one UPDATE ... RETURNING per target status and the fallback (lock, read, update) move the same ports
    with the same history rows."""
    from cabling.services import fabric_states

    monkeypatch.setattr(fabric_states, "update_returning_supported", lambda: returning)
    cables = add_cables(project, 6, 0)
    Port.objects.filter(cable_end__cable=cables[5]).update(status=PortStatus.DISABLED)  # a person's: kept
    seen = {cable.pk: state for cable, state in zip(cables, ["ok", "ok", "missing", "miswired", "degraded", "ok"],
                                                    strict=True)}
    at = timezone.now()
    cables_fabric_record(project=project, observations=seen, checked_at=at, cause=CAUSE, user=technician)
    statuses = {cable.label: sorted(Port.objects.filter(cable_end__cable=cable).values_list("status", flat=True))
                for cable in cables}
    up, down, off = [PortStatus.UP] * 2, [PortStatus.DOWN] * 2, [PortStatus.DISABLED] * 2
    assert statuses == {"Q00000": up, "Q00001": up, "Q00002": down, "Q00003": down, "Q00004": down, "Q00005": off}
    moved = Port.history.filter(history_date=at, history_change_reason=CAUSE, history_user=technician)
    assert moved.count() == 10


@pytest.mark.parametrize("one_statement", [True, False])
def test_moves_and_their_history_alike_in_one_statement_and_in_two(project, add_cables, technician, monkeypatch,
                                                                    one_statement):
    """PostgreSQL writes each group of cables and each target of ports with their history rows in one statement
    (update_recorded: the history copied from what the UPDATE returns); elsewhere the UPDATE and history_copy go
    one after the other. The same moves, the same history rows, with the user, the date and the reason."""
    from cabling.services import fabric_states

    if one_statement:
        postgresql_only("a move with its history in one statement")
    monkeypatch.setattr(fabric_states, "update_recorded_supported", lambda: one_statement)
    cables = add_cables(project, 6, 0)
    Port.objects.filter(cable_end__cable=cables[5]).update(status=PortStatus.DISABLED)  # a person's: kept
    seen = dict(zip([c.pk for c in cables], ["ok", "ok", "missing", "miswired", "degraded", "ok"], strict=True))
    at = timezone.now()
    assert cables_fabric_record(project=project, observations=seen, checked_at=at, cause=CAUSE, user=technician) == 6
    assert history_as_rows_now(Cable, at, CAUSE) == (6, 0)  # the missing one stays planned, its fabric state moves
    assert history_as_rows_now(Port, at, CAUSE) == (10, 0)  # the disabled pair is kept
    assert set(Cable.history.filter(history_date=at).values_list("history_user", "history_type")) == {
        (technician.pk, "~")}
    assert set(Port.history.filter(history_date=at).values_list("history_user", "history_type")) == {
        (technician.pk, "~")}
    # Seen again, then down: the ports of the first two move once more, each with one more history row.
    later = at + timedelta(minutes=1)
    assert cables_fabric_record(project=project, observations={cables[0].pk: "missing", cables[1].pk: "missing"},
                                checked_at=later, cause="again") == 2
    assert history_as_rows_now(Cable, later, "again") == (2, 0)
    assert history_as_rows_now(Port, later, "again") == (4, 0)


def test_update_recorded_is_postgresqls_with_history_kept(settings):
    from django.db import connection

    from core.bulk_history import update_recorded_supported

    assert update_recorded_supported() == (connection.vendor == "postgresql")
    settings.SIMPLE_HISTORY_ENABLED = False
    assert not update_recorded_supported()  # no history to write with the UPDATE: the plain UPDATE


def test_moves_with_history_off_write_no_history_row(project, add_cables, settings):
    cables = add_cables(project, 3, 0)
    settings.SIMPLE_HISTORY_ENABLED = False
    at = timezone.now()
    assert cables_fabric_record(project=project, observations={c.pk: "ok" for c in cables}, checked_at=at,
                                cause=CAUSE) == 3
    assert set(Cable.objects.filter(project=project).values_list("status", flat=True)) == {CableStatus.VERIFIED}
    assert set(Port.objects.filter(cable_end__cable__in=cables).values_list("status", flat=True)) == {PortStatus.UP}
    assert not Cable.history.filter(history_date=at).exists()
    assert not Port.history.filter(history_date=at).exists()


def test_cable_and_port_tables_keep_room_for_hot_updates():
    """Migrations inventory 0009 and cabling 0010: half of each page free, so a comparison's moves rewrite no
    index entry (PostgreSQL only)."""
    from django.db import connection

    postgresql_only("the tables' fillfactor")
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, reloptions FROM pg_class WHERE relname IN (%s, %s) ORDER BY relname",
                       [Cable._meta.db_table, Port._meta.db_table])
        options = cursor.fetchall()
    assert options == [(Cable._meta.db_table, ["fillfactor=50"]), (Port._meta.db_table, ["fillfactor=50"])]
