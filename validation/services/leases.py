"""Leases and attempts: a running target belongs to the worker that claimed it until its lease ends, after
which it may be claimed again, up to `max_attempts()`."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.choices import JobStatus

from .. import criteria
from ..choices import FINISHED_RESULT_STATUSES, ResultStatus
from ..kinds import Measurement, kind_of
from ..models import CheckResult, CheckRun
from ..runners import Runner
from .execution import record
from .options import command_timeout
from .progress import check_run_log, refresh_progress


def target_lease_seconds(run: CheckRun, result: CheckResult) -> float:
    """How long a claimed target may run before it counts as lost: every command it runs at its full
    timeout (its kind says how many: a matrix pair runs one ib_write_bw per rail, node inventory one probe
    per version), plus the time a pair's server gets to start, plus a margin for the worker's own work."""
    commands_run = kind_of(run.kind).commands_per_target(result.params)
    margin = float(getattr(settings, "VALIDATION_LEASE_MARGIN_S", 120))
    return commands_run * (command_timeout(run) + Runner.server_start_s) + margin


def lease_expired(run: CheckRun, result: CheckResult, now) -> bool:
    if result.started_at is None:
        return True
    return (now - result.started_at).total_seconds() > target_lease_seconds(run, result)


def max_attempts() -> int:
    """Executions of one target before it is given up: the first, then the transient-error retries.
    A worker lost mid-target (its lease runs out) uses up an attempt too, so a target that kills its
    worker every time cannot loop forever."""
    return int(getattr(settings, "VALIDATION_MAX_RETRIES", 3)) + 1


def claimable_ids(run: CheckRun, results, now) -> list[int]:
    """Pending targets, and running ones whose lease ran out (their worker was lost)."""
    ids = []
    for result in results.filter(status__in=[ResultStatus.PENDING, ResultStatus.RUNNING]).only(
        "id", "status", "started_at", "params"
    ):
        if result.status == ResultStatus.PENDING or lease_expired(run, result, now):
            ids.append(result.pk)
    return ids


def check_target_claim(*, result_id: int, now=None) -> CheckResult | None:
    """Mark the target running and count the attempt. None when there is nothing to do: the run was
    cancelled or finished, the target already finished (a redelivered task must not redo it), another
    worker holds it (running, within its lease), or its attempts are used up (then it is recorded as an
    error naming them)."""
    now = now or timezone.now()
    with transaction.atomic():
        result = CheckResult.objects.select_for_update().select_related("run").filter(pk=result_id).first()
        if result is None or result.status in FINISHED_RESULT_STATUSES:
            return None
        run = result.run
        if run.status == JobStatus.CANCELLED:
            result.status, result.finished_at = ResultStatus.CANCELLED, now
            result.save(update_fields=["status", "finished_at"])
            refresh_progress(result.run_id)
            return None
        if result.status == ResultStatus.RUNNING and not lease_expired(run, result, now):
            return None
        if result.attempt >= max_attempts():
            record(result, Measurement(verdict=criteria.error_verdict(_gave_up_message(run, result))))
            return None
        if result.status == ResultStatus.RUNNING:
            check_run_log(
                run_id=run.pk,
                line=f"{result.target_key}: attempt {result.attempt} started {result.started_at:%H:%M:%S} and "
                f"never finished (its worker was lost); trying again",
            )
        result.status = ResultStatus.RUNNING
        result.attempt += 1
        result.started_at = now
        result.save(update_fields=["status", "attempt", "started_at"])
    return result


def _gave_up_message(run: CheckRun, result: CheckResult) -> str:
    lease = criteria.fmt_num(target_lease_seconds(run, result), 0)
    return (
        f"gave up after {result.attempt} attempts: none finished within its {lease} s lease "
        f"(the worker was lost or the command hung)"
    )


def check_target_release(*, result: CheckResult) -> bool:
    """Hand a claimed target back (pending) while its retry waits out the backoff, so the retry (or any
    dispatcher) can claim it again. Only the claim that holds it may: False if another took over."""
    released = CheckResult.objects.filter(
        pk=result.pk, status=ResultStatus.RUNNING, attempt=result.attempt
    ).update(status=ResultStatus.PENDING)
    return bool(released)
