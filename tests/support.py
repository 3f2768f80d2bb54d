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
