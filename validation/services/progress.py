"""A run's progress and log, each written in one statement, so concurrent tasks never overwrite each
other's.

Progress is a counter on the run (`progress_done`), moved by `count_finished` in the same transaction
that moves the targets to a finished status, and only by as many targets as that transaction moved:
a target is finished once (every write to a finished status is guarded by the claim that holds it), so
it is counted once, however many times its task is delivered. No recount over the run's results: that
made each target's cost grow with the run's size.

A finished run's figures (verdict counts, results, a matrix's colour-scale range) are stored on the run by
`check_run_summary_store` when it closes, so its pages read them instead of counting every result. A
result recorded after that (a target still running when the run was cancelled) is counted by
`count_finished`, whose UPDATE also clears the stored figures: the pages then count live, never stale.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import models
from django.db.models import Count, F, Max, Min, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from core.models import log_line

from ..choices import FINISHED_RESULT_STATUSES, CheckKind, Verdict
from ..models import SLOWEST_GBPS, CheckResult, CheckRun


def check_run_log(*, run_id: int, line: str) -> None:
    """Append a stamped line to a run's log."""
    CheckRun(pk=run_id).append_log(line)


def check_run_log_lines(*, run_id: int, lines: Iterable[str]) -> None:
    """Append several stamped lines to a run's log in one statement (a chunk's)."""
    text = "".join(log_line(line) for line in lines)
    if text:
        CheckRun.objects.filter(pk=run_id).update(log=Concat(F("log"), Value(text), output_field=models.TextField()))


def count_finished(run_id: int, finished: int) -> None:
    """`finished` more targets of the run reached a finished status, in the caller's transaction: one
    UPDATE of the run's counter."""
    if finished:
        # A running run has no stored figures; a finished one that still records (a cancelled run's
        # running targets) must stop showing them: cleared in the same statement, for free.
        CheckRun.objects.filter(pk=run_id).update(progress_done=F("progress_done") + finished, summarised_at=None)


def finished_count(run: CheckRun) -> int:
    """A recount of the run's finished targets: for cancelling (once per run) and for checking the counter."""
    return run.results.filter(status__in=FINISHED_RESULT_STATUSES).count()


SUMMARY_VERDICTS = {"summary_passed": Verdict.PASS, "summary_warned": Verdict.WARN,
                     "summary_failed": Verdict.FAIL, "summary_errored": Verdict.ERROR}


def run_summary_figures(run: CheckRun) -> dict:
    """What a finished run's pages show of all its results, as CheckRun's summary fields: its results,
    its verdict counts (one aggregate) and, for a bandwidth matrix, the slowest and fastest pair's slowest
    rail, the ends of the heat map's colour scale (one more)."""
    results = CheckResult.objects.filter(run_id=run.pk).order_by()
    figures = results.aggregate(
        summary_results=Count("id"),
        **{field: Count("id", filter=Q(verdict=verdict)) for field, verdict in SUMMARY_VERDICTS.items()},
    )
    lo = hi = None
    if run.kind == CheckKind.BANDWIDTH_MATRIX:
        pairs = results.filter(device__isnull=False, peer_device__isnull=False)
        scale = pairs.aggregate(lo=Min(SLOWEST_GBPS), hi=Max(SLOWEST_GBPS))
        lo, hi = scale["lo"], scale["hi"]
    return {**figures, "summary_figure_lo": lo, "summary_figure_hi": hi}


def check_run_summary_store(*, run: CheckRun, figures: dict | None = None) -> None:
    """Store the run's figures on it as it closes, in the closing transaction (the run's row is locked
    or being written by it): one pass over its results, once, instead of one on every page view.
    `figures`: run_summary_figures(run) when the caller has just counted them."""
    values = {**(figures if figures is not None else run_summary_figures(run)), "summarised_at": timezone.now()}
    CheckRun.objects.filter(pk=run.pk).update(**values)
    for name, value in values.items():
        setattr(run, name, value)
