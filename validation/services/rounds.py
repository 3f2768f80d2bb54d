"""Scheduling a run's targets in rounds (bandwidth tests: no node in two tests at once) and closing the
run once every target is finished."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from core.choices import FINISHED_JOB_STATUSES, JobStatus
from delivery.evidence import evidence_changed_send

from ..choices import FINISHED_RESULT_STATUSES, Verdict
from ..kinds import kind_of
from ..models import CheckResult, CheckRun
from .leases import claimable_ids
from .profiles import acceptance_profile_for
from .progress import finished_count


@transaction.atomic
def check_run_advance(*, run_id: int, now=None) -> list[int]:
    """Which targets to enqueue now. While a round handed out before has unfinished targets: those of
    them that can be claimed (pending, or running past their lease), on every call, so a dispatch
    redelivered after this recorded the round still hands its targets out (enqueuing one twice is
    harmless: a claim is taken once). Once the round is finished: the next round's. With nothing left,
    the run is finalised. Safe to call any number of times from any number of workers: the run row is
    locked while deciding."""
    now = now or timezone.now()
    run = CheckRun.objects.select_for_update().get(pk=run_id)
    if run.is_finished:
        return []
    if run.status == JobStatus.QUEUED and run.start():
        run.append_log("started")
    round_no, unfinished = round_to_hand_out(run)
    if round_no is None:
        _finalise(run)
        return []
    if round_no != run.current_round:
        run.current_round = round_no
        run.save(update_fields=["current_round"])
    return claimable_ids(run, unfinished, now)


def round_to_hand_out(run: CheckRun):
    """(round, its unfinished targets): the round handed out last while any target of it (or before) is
    unfinished, else the first round with unfinished targets; (None, none) when every target finished."""
    unfinished = run.results.exclude(status__in=FINISHED_RESULT_STATUSES)
    if run.current_round is not None:
        handed_out = unfinished.filter(round__lte=run.current_round)
        if handed_out.exists():
            return run.current_round, handed_out
    next_round = unfinished.order_by("round").values_list("round", flat=True).first()
    if next_round is None:
        return None, unfinished.none()
    return next_round, unfinished.filter(round=next_round)


def _finalise(run: CheckRun) -> None:
    """Judgements that need the whole run (its kind's: slow outliers of the matrix, the majority's
    versions), then the final status: done when anything was measured, failed when nothing could be."""
    entry = kind_of(run.kind)
    profile = acceptance_profile_for(project=run.project).as_criteria()
    lines = entry.finalise(run, profile) if entry.finalise else []
    counts = dict(
        run.results.order_by().values_list("verdict").annotate(n=Count("id")).values_list("verdict", "n")
    )
    measured = sum(n for verdict, n in counts.items() if verdict and verdict != Verdict.ERROR)
    done = finished_count(run)
    if measured or not run.progress_total:
        run.finish(progress_done=done)
    else:
        run.fail(f"none of the {run.progress_total} target(s) could be measured", progress_done=done)
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in Verdict.values)
    for line in [*lines, f"finished: {summary}"]:
        run.append_log(line)
    evidence_changed_send(project_id=run.project_id, what="check_run")  # the stage gates read its results


def next_round_due(*, result_id: int) -> int | None:
    """The run id when the target's run is unfinished and every target of the round it handed out last
    (and of those before) is finished, so the dispatcher should hand out what comes next; else None. A
    target of an earlier round, redelivered late, does not ask again for a round already handed out."""
    row = (
        CheckResult.objects.filter(pk=result_id)
        .exclude(run__status__in=FINISHED_JOB_STATUSES)
        .values_list("run_id", "run__current_round")
        .first()
    )
    if row is None:
        return None
    run_id, current_round = row
    waiting = CheckResult.objects.filter(run_id=run_id).exclude(status__in=FINISHED_RESULT_STATUSES)
    if current_round is not None:
        waiting = waiting.filter(round__lte=current_round)
    return None if waiting.exists() else run_id


