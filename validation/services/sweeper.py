"""The sweeper: runs whose dispatch was lost, whose worker died, or that finished without being closed."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Max, Q
from django.utils import timezone

from core.choices import ACTIVE_JOB_STATUSES

from ..choices import EXECUTING_RUNNERS, FINISHED_RESULT_STATUSES
from ..kinds import STARTABLE_CHECK_KINDS
from ..models import CheckRun
from .leases import claimable_ids
from .progress import check_run_log
from .rounds import round_to_hand_out


def check_runs_to_sweep(*, now=None, stale_after_s: float | None = None) -> list[int]:
    """Unfinished runs the dispatcher should look at again: those whose targets are all finished (to
    close them), and those with no progress for `stale_after_s` that have a target to hand out (pending,
    or running past its lease). Uploads and soak windows have no targets to execute and are left alone.
    Each stale run gets a log line saying what is handed out again."""
    now = now or timezone.now()
    if stale_after_s is None:
        stale_after_s = float(getattr(settings, "VALIDATION_STALE_RUN_S", 600))
    runs = (
        CheckRun.objects.filter(
            status__in=ACTIVE_JOB_STATUSES,
            runner__in=EXECUTING_RUNNERS,
            kind__in=STARTABLE_CHECK_KINDS,
        )
        .annotate(
            unfinished=Count("results", filter=~Q(results__status__in=FINISHED_RESULT_STATUSES)),
            last_started=Max("results__started_at"),
            last_finished=Max("results__finished_at"),
        )
        .defer("log")
        .order_by("created_at", "id")
    )
    due = []
    for run in runs:
        if run.unfinished == 0:
            due.append(run.pk)
            continue
        moments = [m for m in (run.created_at, run.started_at, run.last_started, run.last_finished) if m]
        idle = (now - max(moments)).total_seconds()
        if idle < stale_after_s:
            continue
        _, round_targets = round_to_hand_out(run)
        waiting = claimable_ids(run, round_targets, now)
        if waiting:
            check_run_log(
                run_id=run.pk,
                line=f"no progress for {idle / 60:.0f} min: handing out {len(waiting)} waiting target(s) again",
            )
            due.append(run.pk)
    return due
