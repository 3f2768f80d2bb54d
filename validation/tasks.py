"""Celery tasks of the validation engine. Thin: they take ids, call services and own the retries.

check_run_dispatch hands out the next round of a run's targets (all of them for kinds without
rounds); check_target runs one target. Both are safe to run twice: a finished target is never redone
and the dispatcher decides under a lock on the run row. Eagerly (no broker), the dispatcher itself
walks the rounds, because each target has already run by the time `.delay()` returns; with a worker,
the target that finishes a round asks for the next one.
"""

from __future__ import annotations

import logging
import random

from celery import shared_task
from django.conf import settings

from . import services, soak
from .runners import TransientRunnerError
from .uploads import services as upload_services

logger = logging.getLogger(__name__)


def retry_policy() -> tuple[int, float, float]:
    """(max retries, first delay, longest delay) for transient runner errors, from settings."""
    return (
        int(getattr(settings, "VALIDATION_MAX_RETRIES", 3)),
        float(getattr(settings, "VALIDATION_RETRY_BASE_S", 5)),
        float(getattr(settings, "VALIDATION_RETRY_MAX_S", 300)),
    )


def backoff_seconds(retries: int) -> float:
    """Exponential backoff with jitter: base, 2 x base, 4 x base ... capped, plus up to one base."""
    _, base, cap = retry_policy()
    return min(base * 2**retries, cap) + random.uniform(0, base)


def _retry_later(task, result, exc: Exception, max_retries: int) -> None:
    """Exponential backoff through Celery. Eagerly there is no queue to wait in, and Celery would
    propagate its Retry signal to the caller, so the next attempt simply runs now (as Celery's own
    eager retry does, ignoring the countdown)."""
    retries = task.request.retries
    delay = 0.0 if task.request.is_eager else backoff_seconds(retries)
    services.check_run_log(
        run_id=result.run_id,
        line=f"{result.target_key}: {exc}; retry {retries + 1} of {max_retries} in {delay:.0f} s",
    )
    if task.request.is_eager:
        task.apply(args=(result.pk,), retries=retries + 1)
        return
    raise task.retry(exc=exc, countdown=delay)


@shared_task(bind=True, ignore_result=True)
def check_run_dispatch(self, run_id: int) -> None:
    while True:
        result_ids = services.check_run_advance(run_id=run_id)
        for result_id in result_ids:
            check_target.delay(result_id)
        if not result_ids or not self.request.is_eager:
            return


@shared_task(bind=True, ignore_result=True, max_retries=None)
def check_target(self, result_id: int) -> None:
    result = services.check_target_claim(result_id=result_id)
    if result is None:
        return  # finished already (redelivered), or its run was cancelled
    max_retries, _, _ = retry_policy()
    try:
        runner = services.runner_for(result.run, attempt=result.attempt)
        measurement = services.check_target_execute(result=result, runner=runner)
    except TransientRunnerError as exc:
        if self.request.retries < max_retries:
            _retry_later(self, result, exc, max_retries)
            return
        services.check_target_give_up(
            result=result, message=f"{exc} (gave up after {result.attempt} attempts)"
        )
    except Exception as exc:  # a bug must not leave the target running forever: record it, then log it
        logger.exception("check target %s failed", result_id)
        services.check_target_give_up(result=result, message=f"internal error: {type(exc).__name__}: {exc}")
    else:
        services.check_target_record(result=result, measurement=measurement)
    if not self.request.is_eager and services.round_is_finished(result=result):
        check_run_dispatch.delay(result.run_id)


# ---------------------------------------------------------------------------------------------------
# Uploaded tool outputs and soak sampling (thin: the work is in uploads/services.py and soak.py)


@shared_task(ignore_result=True)
def tool_upload_parse(upload_id: int) -> None:
    """Parse a queued upload and file its results (or its error). A second delivery finds it done."""
    upload_services.tool_upload_process(upload_id=upload_id)


@shared_task(ignore_result=True)
def soak_tick(now: str | None = None) -> None:
    """Celery beat calls this every SOAK_TICK_SECONDS: every open soak window due a reading starts one
    (a task per node), and windows that ran their course are closed. `now` (ISO 8601) is for tests and
    replays; beat leaves it out."""
    soak.soak_tick(now=soak.parse_now(now))


@shared_task(ignore_result=True)
def soak_sample_node(window_id: int, sweep: int, device_id: int, taken_at: str) -> None:
    """Read the counters of one node's ports for one sampling of a soak window. Safe to run twice: a
    port already read at this sampling is skipped."""
    soak.soak_node_sample(window_id=window_id, sweep=sweep, device_id=device_id, taken_at=soak.parse_now(taken_at))
