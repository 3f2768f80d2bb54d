"""Celery tasks of the validation engine. Thin: they take ids, call services and own the retries.

check_run_dispatch hands out a run's current round of targets (all of them for kinds without rounds) in
chunks; check_chunk claims a chunk's targets at once, runs them one after another and records their
outcomes at once; check_target is a chunk of one (a message sent before chunks, or a test's);
check_runs_sweep (on Celery beat) picks up runs that stopped moving. All are safe to run twice: a target
is claimed once (a running one stays its claim's until its lease ends), a finished one is never redone,
and the dispatcher decides under a lock on the run row. Eagerly (no broker) the dispatcher itself walks
the rounds, because each chunk has already run by the time `.delay()` returns; with a worker, the chunk
that finishes a round asks for the next one.
"""

from __future__ import annotations

import logging
import random
import time

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from core.sql import atomic_block_open, connection_close_if_unusable

from . import services, soak
from .runners import TransientRunnerError
from .topology import services as topology_services
from .uploads import services as upload_services

logger = logging.getLogger(__name__)

# A write that meets a locked database (SQLite) or a dropped connection is tried this many times.
DB_ATTEMPTS = 6


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


def with_db_retry(call, /, **kwargs):
    """Call a service, again after a short pause if the database refused (SQLite's "database is locked",
    a connection PostgreSQL dropped): a measurement taken at length must not be lost, nor a target left
    running, because one write met a busy database. Inside an outer transaction nothing can be retried
    (the transaction is broken), so the error goes up at once."""
    for attempt in range(1, DB_ATTEMPTS + 1):
        try:
            return call(**kwargs)
        except OperationalError:
            if attempt == DB_ATTEMPTS or atomic_block_open():
                raise
            logger.warning("database busy in %s, attempt %s of %s", call.__name__, attempt, DB_ATTEMPTS)
            connection_close_if_unusable()
            time.sleep(0.05 * 2**attempt + random.uniform(0, 0.05))
    raise AssertionError("unreachable")


def _retry_later(task, retrying: list[tuple[object, Exception]]) -> None:
    """Hand the targets back and run them again after an exponential backoff, as one chunk per attempt
    number (nearly always one). Eagerly there is no queue to wait in, so the next attempt simply runs now
    (as Celery's own eager retry does, ignoring the countdown)."""
    eager = task.request.is_eager
    delays = {result.attempt: 0.0 if eager else backoff_seconds(result.attempt - 1) for result, _ in retrying}
    lines = [
        f"{result.target_key}: {exc}; retry {result.attempt} of {services.max_attempts() - 1} "
        f"in {delays[result.attempt]:.0f} s"
        for result, exc in retrying
    ]
    with_db_retry(services.check_run_log_lines, run_id=retrying[0][0].run_id, lines=lines)
    with_db_retry(services.check_targets_release, results=[result for result, _ in retrying])
    for attempt, delay in delays.items():
        ids = [result.pk for result, _ in retrying if result.attempt == attempt]
        if eager:
            check_chunk.apply(args=(ids,))
        else:
            check_chunk.apply_async(args=(ids,), countdown=delay)


@shared_task(bind=True, ignore_result=True)
def check_run_dispatch(self, run_id: int) -> None:
    handed_out: list[list[int]] = []
    while True:
        chunks = with_db_retry(services.check_run_chunks, run_id=run_id)
        for chunk in chunks:
            check_chunk.delay(chunk)
        # With a worker, the chunks ask for the next round themselves. Eagerly they have all run by now,
        # so loop to the next round; the same ids twice means nothing moved, and looping would not help.
        if not chunks or not self.request.is_eager or chunks == handed_out:
            return
        handed_out = chunks


@shared_task(bind=True, ignore_result=True)
def check_chunk(self, result_ids: list[int]) -> None:
    """Claim the chunk's targets, run each, record them all; then, if that finished the round, ask for
    the next. If the worker dies midway, nothing of the chunk is recorded: its targets stay running
    until their lease ends, and are then handed out again (by the dispatcher or the sweeper)."""
    _claim_run_record(self, result_ids)


@shared_task(bind=True, ignore_result=True)
def check_target(self, result_id: int) -> None:
    """One target alone: a chunk of one (a message sent before chunks, or a test's)."""
    _claim_run_record(self, [result_id])


def _claim_run_record(task, result_ids: list[int]) -> None:
    claimed = with_db_retry(services.check_chunk_claim, result_ids=result_ids)
    if claimed:
        _run_chunk(task, claimed)
    # A chunk with nothing to run (finished already, held by another, cancelled) may still be the one
    # whose round's end nobody has reported yet.
    _ask_for_next_round(task, result_ids[0] if result_ids else None)


def _run_chunk(task, claimed: list) -> None:
    try:
        chunk = with_db_retry(services.check_chunk_inputs, results=claimed)
    except Exception as exc:  # a bug must not leave the chunk running until its lease ends: record it
        logger.exception("a check chunk of %s target(s) could not start", len(claimed))
        failed = services.failed_measurement(f"internal error: {type(exc).__name__}: {exc}")
        with_db_retry(services.check_chunk_record, outcomes=[(result, failed) for result in claimed])
        return
    outcomes, retrying = [], []
    for result in claimed:
        try:
            inputs = with_db_retry(services.target_inputs, result=result, chunk=chunk)
            measurement = services.check_target_execute(result=result, inputs=inputs)
        except TransientRunnerError as exc:
            if result.attempt < services.max_attempts():
                retrying.append((result, exc))
                continue
            measurement = services.failed_measurement(f"{exc} (gave up after {result.attempt} attempts)")
        except Exception as exc:  # a bug must not leave the target running forever: record it, then log it
            logger.exception("check target %s failed", result.pk)
            measurement = services.failed_measurement(f"internal error: {type(exc).__name__}: {exc}")
        outcomes.append((result, measurement))
    _record(outcomes)
    if retrying:
        _retry_later(task, retrying)


def _record(outcomes: list) -> None:
    """Record the chunk's outcomes. A value the database refuses costs only its own target (the service
    writes the others); should the record fail otherwise (a bug), the chunk's targets are recorded as
    errors naming it, rather than left running until their lease ends and then taken for a lost worker's.
    If even that fails, they are handed out again once their lease ends."""
    try:
        with_db_retry(services.check_chunk_record, outcomes=outcomes)
    except OperationalError:
        raise  # the database stayed unreachable: nothing more can be written now
    except Exception as exc:
        logger.exception("a check chunk's %s outcome(s) could not be recorded", len(outcomes))
        failed = services.failed_measurement(f"internal error while recording: {type(exc).__name__}: {exc}")
        with_db_retry(services.check_chunk_record, outcomes=[(result, failed) for result, _ in outcomes])


def _ask_for_next_round(task, result_id: int | None) -> None:
    if task.request.is_eager or result_id is None:
        return  # the eager dispatcher walks the rounds itself
    run_id = with_db_retry(services.next_round_due, result_id=result_id)
    if run_id is not None:
        check_run_dispatch.delay(run_id)


@shared_task(ignore_result=True)
def check_runs_sweep() -> None:
    """Celery beat calls this every few minutes (bringup/celery.py): every run that stopped moving (its
    dispatch was lost, its worker died) is dispatched again, and runs whose targets all finished are
    closed. Cheap when nothing is stale."""
    for run_id in with_db_retry(services.check_runs_to_sweep):
        check_run_dispatch.delay(run_id)


# ---------------------------------------------------------------------------------------------------
# Uploaded tool outputs and soak sampling (thin: the work is in uploads/services.py and soak/services.py)


@shared_task(ignore_result=True)
def tool_upload_parse(upload_id: int) -> None:
    """Parse a queued upload and file its results (or its error). A second delivery finds it done."""
    upload_services.tool_upload_process(upload_id=upload_id)


@shared_task(ignore_result=True)
def topology_comparison_run(comparison_id: int) -> None:
    """Read a queued comparison's files and compare them with the plan. A second delivery finds it
    running or done and does nothing."""
    topology_services.topology_comparison_run(comparison_id=comparison_id)


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
