"""Scheduling a run's targets in rounds (bandwidth tests: no node in two tests at once), handed out in
chunks (one task each), and closing the run once every target is finished."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.choices import FINISHED_JOB_STATUSES, JobStatus
from projects.evidence import evidence_changed_send

from ..choices import FINISHED_RESULT_STATUSES, ResultStatus, RunnerKind, Verdict
from ..kinds import kind_of
from ..models import CheckResult, CheckRun
from .leases import claimable_ids
from .profiles import acceptance_profile_for
from .progress import SUMMARY_VERDICTS, check_run_summary_store, run_summary_figures

UNFINISHED_RESULT_STATUSES = tuple(status for status in ResultStatus if status not in FINISHED_RESULT_STATUSES)


def chunk_size(run: CheckRun) -> int:
    """How many targets one task claims and runs one after another. The simulated runner answers in
    milliseconds, so a target's own reads and writes were most of its cost: chunks share them. A runner
    that reaches real nodes keeps one target per task: its commands take seconds to minutes, the pool runs
    them side by side, and a chunk would only stretch the lease a lost worker's targets wait out."""
    if run.runner != RunnerKind.SIMULATED:
        return 1
    return max(1, int(getattr(settings, "VALIDATION_CHUNK_SIZE", 50)))


def chunked(ids: list[int], size: int) -> list[list[int]]:
    return [ids[start : start + size] for start in range(0, len(ids), size)]


@transaction.atomic
def check_run_chunks(*, run_id: int, now=None) -> list[list[int]]:
    """What `check_run_advance` hands out, in chunks of `chunk_size` (one task each)."""
    run, ids = _advance(run_id, now)
    return chunked(ids, chunk_size(run)) if ids else []


@transaction.atomic
def check_run_advance(*, run_id: int, now=None) -> list[int]:
    """Which targets to enqueue now. While a round handed out before has unfinished targets: those of
    them that can be claimed (pending, or running past their lease), on every call, so a dispatch
    redelivered after this recorded the round still hands its targets out (enqueuing one twice is
    harmless: a claim is taken once). Once the round is finished: the next round's. With nothing left,
    the run is finalised. Safe to call any number of times from any number of workers: the run row is
    locked while deciding."""
    return _advance(run_id, now)[1]


def _advance(run_id: int, now) -> tuple[CheckRun, list[int]]:
    now = now or timezone.now()
    run = CheckRun.objects.select_for_update().get(pk=run_id)
    if run.is_finished:
        return run, []
    if run.status == JobStatus.QUEUED and run.start():
        run.append_log("started")
    round_no, unfinished = round_to_hand_out(run)
    if round_no is None:
        _finalise(run)
        return run, []
    if round_no != run.current_round:
        run.current_round = round_no
        run.save(update_fields=["current_round"])
    return run, claimable_ids(run, unfinished, now)


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
    # The figures the run's pages show, counted once now that no verdict changes (after the kind's
    # judgements), and stored with the final status.
    figures = run_summary_figures(run)
    counts = {verdict: figures[field] for field, verdict in SUMMARY_VERDICTS.items()}
    measured = sum(n for verdict, n in counts.items() if verdict != Verdict.ERROR)
    # Every target is finished, and each was counted once as it finished: progress_done is the run's
    # counter, kept as it is (no recount; tests/validation/test_engine_chunks.py checks it equals one).
    if measured or not run.progress_total:
        run.finish(progress_done=run.progress_done)
    else:
        run.fail(f"none of the {run.progress_total} target(s) could be measured")
    check_run_summary_store(run=run, figures=figures)
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
    # The unfinished statuses named (not "not finished"): the (run, status, round) index then finds the
    # first waiting target directly, where NOT IN read the index entries of every finished target of the
    # run, once per chunk, which grew a run's cost with the square of its size.
    waiting = CheckResult.objects.filter(run_id=run_id, status__in=UNFINISHED_RESULT_STATUSES)
    if current_round is not None:
        waiting = waiting.filter(round__lte=current_round)
    return None if waiting.exists() else run_id


