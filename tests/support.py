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
