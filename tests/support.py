"""Helpers every test module may use: counting queries, and the members of a project by role."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

from django.db import connection
from django.test.utils import CaptureQueriesContext


def count_queries(action: Callable[[], object]) -> int:
    """How many queries `action()` makes on the default database."""
    with CaptureQueriesContext(connection) as captured:
        action()
    return len(captured.captured_queries)


def wait_for_job(model, pk: int, statuses=None, *, seconds: float = 60):
    """Poll a job row (core.models.Job) until its status is one of `statuses` (default: finished), as a
    page would while a real worker runs its task; fail the test after `seconds`."""
    import time

    import pytest
    from django.db import OperationalError

    from core.choices import FINISHED_JOB_STATUSES

    wanted = set(statuses or FINISHED_JOB_STATUSES)
    deadline = time.monotonic() + seconds
    row = None
    while time.monotonic() < deadline:
        try:
            row = model._default_manager.get(pk=pk)
        except OperationalError:  # SQLite: the worker holds the database for a moment
            row = None
        if row is not None and row.status in wanted:
            return row
        time.sleep(0.1)
    last = row and (row.status, row.progress_done, row.progress_total)
    pytest.fail(f"{model.__name__} {pk} did not reach {sorted(wanted)} within {seconds:g} s (last: {last})")


def postgresql_only(what: str) -> None:
    """Skip a test of `what` (a PostgreSQL path: COPY, a data-modifying CTE, a table setting) on another
    database, and fail it there when the services are required (REQUIRE_SERVICES=1, CI): it must run."""
    import pytest

    from tests.conftest import REQUIRE_SERVICES

    if connection.vendor != "postgresql":
        if REQUIRE_SERVICES:
            pytest.fail(f"REQUIRE_SERVICES=1 but the database is not PostgreSQL: {what} must be tested")
        pytest.skip(f"{what} needs PostgreSQL (DATABASE_URL=postgres://...)")


def history_as_rows_now(model, at, reason: str) -> tuple[int, int]:
    """(history rows of `model` written at `at` for `reason`, how many of them differ from their row as it is
    now in any tracked field): a bulk write's history row copies the row as the write left it."""
    historical = model.history.model
    names = [field.attname for field in historical.tracked_fields]
    records = list(historical.objects.filter(history_date=at, history_change_reason=reason).values_list(*names))
    now = {row[0]: row for row in model.objects.filter(pk__in=[r[0] for r in records]).values_list(*names)}
    return len(records), sum(record != now[record[0]] for record in records)


@contextmanager
def scratch_database(tmp_path):
    """A database of the suite's kind with no table yet (a file for SQLite, a database of its own on the same
    server for PostgreSQL), standing in for the default connection inside the block, so the ORM, migrations
    and their RunPython all reach it. Yields a MigrationExecutor on it.

    A migration test walks it forward to the state before its migration and through it. Walking the suite's
    own database back and forth instead unapplies and reapplies every later migration of every app, each
    step re-rendering the project state: about a minute a test on SQLite."""
    import uuid

    from django.db import connections
    from django.db.migrations.executor import MigrationExecutor
    from django.db.utils import load_backend

    original = connections["default"]
    settings = dict(original.settings_dict)
    postgres = original.vendor == "postgresql"
    if postgres:
        settings["NAME"] = f"scratch_{uuid.uuid4().hex[:12]}"
        with original._nodb_cursor() as cursor:  # outside any transaction, as CREATE DATABASE needs
            cursor.execute(f'CREATE DATABASE "{settings["NAME"]}"')
    else:
        settings["NAME"] = str(tmp_path / "scratch.sqlite3")
    scratch = load_backend(settings["ENGINE"]).DatabaseWrapper(settings, alias="default")
    connections["default"] = scratch
    try:
        yield MigrationExecutor(scratch)
    finally:
        scratch.close()
        connections["default"] = original
        if postgres:
            with original._nodb_cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{settings["NAME"]}" WITH (FORCE)')


def migrated_to(executor, targets):
    """Migrate the executor's database to `targets`; the models as they are there."""
    executor.loader.build_graph()  # what the last migrate applied
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps
