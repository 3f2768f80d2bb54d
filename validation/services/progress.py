"""A run's progress and log, each written in one statement, so concurrent tasks never overwrite each
other's."""

from __future__ import annotations

from django.db.models import Count, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from ..choices import FINISHED_RESULT_STATUSES
from ..models import CheckResult, CheckRun


def check_run_log(*, run_id: int, line: str) -> None:
    """Append a stamped line to a run's log."""
    CheckRun(pk=run_id).append_log(line)


def finished_count(run: CheckRun) -> int:
    return run.results.filter(status__in=FINISHED_RESULT_STATUSES).count()


def refresh_progress(run_id: int) -> None:
    """Recount rather than increment, so a redelivered task cannot count a target twice; one UPDATE."""
    finished = (
        CheckResult.objects.filter(run_id=OuterRef("pk"), status__in=FINISHED_RESULT_STATUSES)
        .order_by()
        .values("run_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    CheckRun.objects.filter(pk=run_id).update(progress_done=Coalesce(Subquery(finished), Value(0)))
