"""core.sql: each function against what Django itself says of the same connection or table, on SQLite here and
PostgreSQL in CI. The job's progress through a side connection is held to what the poller sees by
tests/core/test_jobs.py (test_progress_inside_an_open_transaction_is_seen_by_the_poller), and the tables'
fillfactor after migrate by tests/cabling/test_fabric_states.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from cabling.models import Cable
from core import sql


def test_atomic_block_open_is_the_connections_own():
    assert sql.atomic_block_open() is connection.in_atomic_block is False  # no database touched


@pytest.mark.django_db
def test_atomic_block_open_inside_a_transaction():
    with transaction.atomic():
        assert sql.atomic_block_open() is connection.in_atomic_block is True


@pytest.mark.django_db(transaction=True)
def test_after_a_broken_connection_is_closed_the_next_query_runs(monkeypatch):
    """What validation.tasks' retry relies on: Django's close_if_unusable_or_obsolete, then a query works."""
    assert Cable.objects.count() == 0
    sql.connection_close_if_unusable()
    assert Cable.objects.count() == 0
    closed = []
    default = connections[DEFAULT_DB_ALIAS]
    monkeypatch.setattr(default, "get_autocommit", lambda: default.settings_dict["AUTOCOMMIT"])
    monkeypatch.setattr(default, "errors_occurred", True)
    monkeypatch.setattr(default, "is_usable", lambda: False)  # as after the database dropped it
    monkeypatch.setattr(default, "close", lambda: closed.append(True))
    sql.connection_close_if_unusable()
    monkeypatch.undo()
    assert closed == [True] and Cable.objects.count() == 0


def test_the_scratch_is_one_dict_per_name_on_the_connection():
    first = sql.connection_scratch(name="_test_scratch")
    first["x"] = 1
    assert sql.connection_scratch(name="_test_scratch") is first
    assert sql.connection_scratch(name="_test_other") == {}
    assert transaction.get_connection().__dict__["_test_scratch"] is first
    del transaction.get_connection().__dict__["_test_scratch"], transaction.get_connection().__dict__["_test_other"]


@pytest.mark.django_db
def test_a_tables_fillfactor_is_set_and_reset_on_postgresql_only():
    def fillfactor():
        with connection.cursor() as cursor:
            cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [Cable._meta.db_table])
            return [option for option in cursor.fetchone()[0] or [] if option.startswith("fillfactor")]

    if connection.vendor != "postgresql":  # no such setting: nothing is sent
        editor = SimpleNamespace(connection=connection, quote_name=connection.ops.quote_name,
                                 execute=lambda statement: pytest.fail(f"sent {statement}"))
        sql.table_fillfactor_set(schema_editor=editor, model=Cable, fillfactor=70, rewrite=True)
        return
    with connection.schema_editor(atomic=True) as editor:
        sql.table_fillfactor_set(schema_editor=editor, model=Cable, fillfactor=70, rewrite=False)
        assert fillfactor() == ["fillfactor=70"]
        sql.table_fillfactor_set(schema_editor=editor, model=Cable, fillfactor=None, rewrite=False)
        assert fillfactor() == []
        sql.table_fillfactor_set(schema_editor=editor, model=Cable, fillfactor=50, rewrite=False)  # as migrated
