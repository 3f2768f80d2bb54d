"""Helpers every test module may use: counting queries, and the members of a project by role."""

from __future__ import annotations

from collections.abc import Callable

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
