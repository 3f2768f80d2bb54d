"""Leases and attempts: a running target belongs to the claim that took it until its lease ends, after
which it may be claimed again, up to `max_attempts()`.

Targets are claimed a chunk at a time (`check_chunk_claim`: one locking read, one UPDATE), and a chunk's
targets run one after another, so each row of it holds the chunk's lease: what every target of the chunk
may take, plus one margin. For a runner that reaches real nodes that is every command at its full
timeout; the simulated runner answers in milliseconds, so its targets are sized on that (a few seconds a
command), else one killed worker would stall a seconds-long run for the hours its chunk's timeouts add up
to (link health: 50 x 61 s). A worker killed mid-chunk leaves its rows running;
once the lease ends the dispatcher (or the sweeper) hands them out again, and the late outcome of the
lost worker, should it arrive, is dropped (services.execution records only for the claim that holds)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core.choices import JobStatus

from .. import criteria
from ..choices import FINISHED_RESULT_STATUSES, ResultStatus, RunnerKind
from ..kinds import Measurement, kind_of
from ..models import CheckResult, CheckRun
from ..runners import Runner
from .execution import record_outcomes
from .options import command_timeout
from .progress import check_run_log_lines, count_finished


def lease_margin_seconds() -> float:
    """What a claim gets beyond its commands' timeouts: the worker's own work (reads, parsing, writes)."""
    return float(getattr(settings, "VALIDATION_LEASE_MARGIN_S", 120))


def commands_seconds(run: CheckRun, result: CheckResult) -> float:
    """The longest one target's commands may take: every command it runs at its full timeout (its kind
    says how many: a matrix pair runs one ib_write_bw per rail, node inventory one probe per version),
    plus the time a pair's server gets to start."""
    commands_run = kind_of(run.kind).commands_per_target(result.params)
    return commands_run * (command_timeout(run) + Runner.server_start_s)


def simulated_command_seconds() -> float:
    """What one command of the simulated runner is given: it answers in milliseconds, whatever the run's
    timeout says, so this is generous and still keeps a lost chunk's wait to minutes."""
    return float(getattr(settings, "VALIDATION_SIM_COMMAND_S", 1.0))


def target_seconds(run: CheckRun, result: CheckResult) -> float:
    """How long one target may take: its commands at their timeouts on real nodes, or at the simulated
    runner's own pace."""
    if run.runner == RunnerKind.SIMULATED:
        return kind_of(run.kind).commands_per_target(result.params) * simulated_command_seconds()
    return commands_seconds(run, result)


def target_lease_seconds(run: CheckRun, result: CheckResult) -> float:
    """How long a target claimed alone may run before it counts as lost: its commands, plus the margin."""
    return target_seconds(run, result) + lease_margin_seconds()


def chunk_lease_seconds(run: CheckRun, results: Iterable[CheckResult]) -> float:
    """How long a chunk claimed at once may run: its targets one after another, plus one margin."""
    return sum(target_seconds(run, result) for result in results) + lease_margin_seconds()


def lease_of(run: CheckRun, result: CheckResult) -> float:
    """The lease the row's claim holds (its chunk's), or its own for a row claimed before chunks."""
    return result.lease_s if result.lease_s is not None else target_lease_seconds(run, result)


def lease_expired(run: CheckRun, result: CheckResult, now) -> bool:
    if result.started_at is None:
        return True
    return (now - result.started_at).total_seconds() > lease_of(run, result)


def max_attempts() -> int:
    """Executions of one target before it is given up: the first, then the transient-error retries.
    A worker lost mid-target (its lease runs out) uses up an attempt too, so a target that kills its
    worker every time cannot loop forever."""
    return int(getattr(settings, "VALIDATION_MAX_RETRIES", 3)) + 1


def claimable_ids(run: CheckRun, results, now) -> list[int]:
    """Pending targets, and running ones whose lease ran out (their worker was lost), in the order of
    `results`. Read as plain values: a round of a big run is thousands of rows, and only a row claimed
    before chunks (no lease of its own) needs its params to size its lease."""
    rows = list(results.filter(status__in=[ResultStatus.PENDING, ResultStatus.RUNNING]).values_list(
        "id", "status", "started_at", "lease_s"
    ))
    unsized = [pk for pk, status, started_at, lease_s in rows
               if status == ResultStatus.RUNNING and started_at is not None and lease_s is None]
    expired_unsized = {
        result.pk for result in CheckResult.objects.filter(pk__in=unsized).only("id", "started_at", "params")
        if lease_expired(run, result, now)
    } if unsized else set()
    return [
        pk for pk, status, started_at, lease_s in rows
        if status == ResultStatus.PENDING or started_at is None or pk in expired_unsized
        or (lease_s is not None and (now - started_at).total_seconds() > lease_s)
    ]


def check_chunk_claim(*, result_ids: Sequence[int], now=None) -> list[CheckResult]:
    """Mark a chunk's targets running and count their attempt, in one transaction: one locking read of
    the rows (in id order, so two overlapping chunks cannot deadlock), one of the run, one UPDATE. Returns
    the rows claimed, each holding the chunk's lease, with `run` loaded. Left out: targets already
    finished (a redelivered task must not redo them), held by another claim (running, within its lease),
    or whose attempts are used up (recorded as errors naming them); all of them when the run was
    cancelled (its targets nobody holds are then cancelled)."""
    now = now or timezone.now()
    with transaction.atomic():
        run, rows = _lock_unfinished(result_ids)
        if run is None:
            return []
        free = [row for row in rows if row.status == ResultStatus.PENDING or lease_expired(run, row, now)]
        if run.status == JobStatus.CANCELLED:
            _cancel(run, free, now)
            return []
        exhausted = [row for row in free if row.attempt >= max_attempts()]
        if exhausted:
            record_outcomes(run, [(row, _error(_gave_up_message(run, row))) for row in exhausted], now=now)
        claimed = [row for row in free if row.attempt < max_attempts()]
        if claimed:
            _log_lost(run, claimed)
            _claim(run, claimed, now)
    return claimed


def _lock_unfinished(result_ids: Sequence[int]) -> tuple[CheckRun | None, list[CheckResult]]:
    """The chunk's unfinished rows, locked in id order, with their run loaded (one run's: a chunk never
    acts on another run's rows); (None, []) when none is left."""
    rows = list(
        CheckResult.objects.select_for_update()
        .filter(pk__in=list(result_ids))
        .exclude(status__in=FINISHED_RESULT_STATUSES)
        .order_by("pk")
    )
    if not rows:
        return None, []
    run = CheckRun.objects.select_related("project").defer("log").get(pk=rows[0].run_id)
    rows = [row for row in rows if row.run_id == run.pk]
    for row in rows:
        row.run = run
    return run, rows


def _log_lost(run: CheckRun, claimed: list[CheckResult]) -> None:
    """A line per target taken over from a claim whose lease ran out (read before the claim moves it)."""
    check_run_log_lines(
        run_id=run.pk,
        lines=[
            f"{row.target_key}: attempt {row.attempt} started {row.started_at:%H:%M:%S} and never finished "
            f"(its worker was lost); trying again"
            for row in claimed
            if row.status == ResultStatus.RUNNING
        ],
    )


def _claim(run: CheckRun, rows: list[CheckResult], now) -> None:
    """One UPDATE for the chunk (its rows are locked: each goes one attempt up from the one read)."""
    lease = chunk_lease_seconds(run, rows)
    CheckResult.objects.filter(pk__in=[row.pk for row in rows]).update(
        status=ResultStatus.RUNNING, started_at=now, lease_s=lease, attempt=F("attempt") + 1
    )
    for row in rows:
        row.status, row.attempt, row.started_at, row.lease_s = ResultStatus.RUNNING, row.attempt + 1, now, lease


def _cancel(run: CheckRun, free: list[CheckResult], now) -> None:
    """Cancel the rows nobody holds (pending, or running past their lease). A row another claim is still
    measuring within its lease is left to it: check_run_cancel promises that running targets finish and
    are kept, and its holder records it (and counts it) as usual."""
    if not free:
        return
    cancelled = CheckResult.objects.filter(pk__in=[row.pk for row in free]).update(
        status=ResultStatus.CANCELLED, finished_at=now
    )
    count_finished(run.pk, cancelled)


def _error(message: str) -> Measurement:
    return Measurement(verdict=criteria.error_verdict(message))


def check_target_claim(*, result_id: int, now=None) -> CheckResult | None:
    """Claim one target alone (a chunk of one); None when there is nothing to do (see check_chunk_claim)."""
    claimed = check_chunk_claim(result_ids=[result_id], now=now)
    return claimed[0] if claimed else None


def _gave_up_message(run: CheckRun, result: CheckResult) -> str:
    lease = criteria.fmt_num(lease_of(run, result), 0)
    return (
        f"gave up after {result.attempt} attempts: none finished within its {lease} s lease "
        f"(the worker was lost or the command hung)"
    )


def check_targets_release(*, results: Sequence[CheckResult]) -> int:
    """Hand claimed targets back (pending) while their retry waits out the backoff, so the retry (or any
    dispatcher) can claim them again; one UPDATE. Only rows the given claims still hold are released (a
    row another attempt took over is left alone). Returns how many were."""
    condition = Q()
    for result in results:
        condition |= Q(pk=result.pk, attempt=result.attempt)
    if not results:
        return 0
    return CheckResult.objects.filter(condition, status=ResultStatus.RUNNING).update(status=ResultStatus.PENDING)


def check_target_release(*, result: CheckResult) -> bool:
    """Hand one claimed target back (see check_targets_release). False if another took over."""
    return bool(check_targets_release(results=[result]))
