"""Executing targets: what they need from the database, running each through the run's runner (its kind
says how, validation.kinds), and recording the outcomes on the targets' own rows, a chunk at a time.

A chunk costs a fixed number of queries whatever the cluster's size and its own: the run's runner is
built once per run and worker process (the simulated one holds the cluster's snapshot and its fault plan),
the profile and the kind's baselines (link health: the ports' previous counters) are read once per chunk,
the outcomes are written in one bulk write, and the run's progress moves by one UPDATE of its counter. A
kind with a per-target `baseline` and no `baselines` still reads one a target."""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import DataError, transaction
from django.utils import timezone

from projects.models import Project

from .. import criteria
from ..choices import CheckKind, ResultStatus, RunnerKind
from ..cluster import sim_cluster_for
from ..kinds import Measurement, TargetInputs, kind_of
from ..models import CheckResult, CheckRun
from ..runners import LocalRunner, Runner, RunnerError, SimulatedRunner, TransientRunnerError
from ..runners.ssh import SSHRunner
from ..sql import check_results_write
from .options import command_timeout
from .profiles import acceptance_profile_for
from .progress import check_run_log_lines, count_finished

# A value the database refuses (DataError: a NUL, a number out of range) or that cannot become JSON at all
# (TypeError, ValueError from preparing it): one target's problem, not its chunk's.
REFUSED_VALUE_ERRORS = (DataError, TypeError, ValueError)

# What recording an outcome writes on a target's row.
OUTCOME_FIELDS = ["raw_output", "stderr", "exit_code", "metrics", "verdict", "reasons", "status", "finished_at"]


# Runs whose simulated runner a worker process keeps (each holds a snapshot of the cluster and its fault
# plan; at 1,024 servers some tens of MB): a worker works through one run or two at a time, and a third
# lets a run that comes back after another's chunks find its runner.
SIM_RUNNERS_KEPT = 3


@functools.lru_cache(maxsize=SIM_RUNNERS_KEPT)
def _cached_sim_runner(
    project_id: int, run_id: int, run_created: str, with_fabric: bool, options: str
) -> SimulatedRunner:
    # One runner per run and worker process, and the only owner of its cluster's snapshot (building it
    # reads the inventory; the runner plans the faults over every rail, kept on the snapshot itself).
    # The run's options never change once it started; they are in the key only to build it.
    settings = json.loads(options)
    return SimulatedRunner(
        sim_cluster_for(Project.objects.get(pk=project_id), with_fabric=with_fabric),
        seed=settings.get("seed", 0),
        down_hosts=settings.get("down_hosts", ()),
        flaky_hosts=settings.get("flaky_hosts"),
    )


def runner_for(run: CheckRun, *, attempt: int = 1) -> Runner:
    if run.runner == RunnerKind.SIMULATED:
        runner = _cached_sim_runner(
            run.project_id,
            run.pk,
            run.created_at.isoformat(),
            run.kind == CheckKind.TOPOLOGY,
            json.dumps(run.options, sort_keys=True),
        )
        if runner.attempt == attempt:
            return runner
        # The attempt only decides which flaky hosts still refuse: a shallow copy shares the rest.
        at_attempt = copy.copy(runner)
        at_attempt.attempt = attempt
        return at_attempt
    if run.runner == RunnerKind.LOCAL:
        return LocalRunner()
    if run.runner == RunnerKind.SSH:
        return SSHRunner()
    raise RunnerError(f"run #{run.pk} has the {run.runner} runner, which executes nothing")


@dataclass(frozen=True)
class ChunkInputs:
    """What a chunk's targets need from the database, read once for the chunk."""

    shared: TargetInputs  # the run's runner (at the first attempt), the project's profile, the timeout
    baselines: dict[int, dict | None] | None = None  # by result id, when the kind reads them a chunk at once


def check_chunk_inputs(*, results: Sequence[CheckResult]) -> ChunkInputs:
    """Read what the chunk's targets (one run's, `run` loaded) need: the runner is the run's, built once
    per worker process; the profile one query; the kind's baselines one query for the chunk."""
    run = results[0].run
    entry = kind_of(run.kind)
    shared = TargetInputs(
        runner=runner_for(run),
        profile=acceptance_profile_for(project=run.project).as_criteria(),
        timeout=command_timeout(run),
    )
    return ChunkInputs(shared, entry.baselines(list(results)) if entry.baselines else None)


def target_inputs(*, result: CheckResult, chunk: ChunkInputs) -> TargetInputs:
    """A target's inputs: the chunk's, with the runner at the target's attempt and its kind's baseline
    (read now only for a kind that cannot read them a chunk at once)."""
    entry = kind_of(result.run.kind)
    if chunk.baselines is not None:
        baseline = chunk.baselines.get(result.pk)
    else:
        baseline = entry.baseline(result) if entry.baseline else None
    shared = chunk.shared
    runner = shared.runner if result.attempt == 1 else runner_for(result.run, attempt=result.attempt)
    return TargetInputs(runner=runner, profile=shared.profile, timeout=shared.timeout, baseline=baseline)


def check_target_inputs(*, result: CheckResult) -> TargetInputs:
    """One target's inputs, read alone."""
    return target_inputs(result=result, chunk=check_chunk_inputs(results=[result]))


def check_target_execute(*, result: CheckResult, inputs: TargetInputs) -> Measurement:
    """Run the target's command(s) and judge the output, as its kind does. Raises TransientRunnerError for
    the task to retry; every other problem becomes an error verdict on the measurement. No database
    access."""
    try:
        return kind_of(result.run.kind).execute(result, inputs)
    except TransientRunnerError:
        raise
    except RunnerError as exc:
        return Measurement(verdict=criteria.error_verdict(f"could not run on {result.host}: {exc}"))


@transaction.atomic
def check_chunk_record(*, outcomes: Sequence[tuple[CheckResult, Measurement]]) -> list[CheckResult]:
    """Store a chunk's outcomes on the targets' own rows (never new rows) and move the run's progress: one
    locking read, one bulk UPDATE, one UPDATE of the counter. Only the claim that holds a target records
    it: an outcome whose lease ran out and whose target another attempt took over (or finished) is
    dropped, with a line in the log. Returns the rows recorded."""
    if not outcomes:
        return []
    run = outcomes[0][0].run
    held_now = dict(
        (pk, (status, attempt))
        for pk, status, attempt in CheckResult.objects.select_for_update()
        .filter(pk__in=[result.pk for result, _ in outcomes])
        .order_by("pk")
        .values_list("pk", "status", "attempt")
    )
    held = [(r, m) for r, m in outcomes if held_now.get(r.pk) == (ResultStatus.RUNNING, r.attempt)]
    late = [r for r, _ in outcomes if held_now.get(r.pk) != (ResultStatus.RUNNING, r.attempt)]
    check_run_log_lines(
        run_id=run.pk,
        lines=[
            f"{r.target_key}: the outcome of attempt {r.attempt} came after another attempt took the target "
            f"over; dropped"
            for r in late
        ],
    )
    record_outcomes(run, held)
    return [r for r, _ in held]


def check_target_record(*, result: CheckResult, measurement: Measurement) -> CheckResult | None:
    """Store one target's outcome (a chunk of one); None when its claim no longer holds it."""
    recorded = check_chunk_record(outcomes=[(result, measurement)])
    return recorded[0] if recorded else None


def record_outcomes(run: CheckRun, outcomes: Sequence[tuple[CheckResult, Measurement]], *, now=None) -> None:
    """Write outcomes onto target rows the caller holds (locked, in its transaction): one bulk write (written
    out: validation.sql.check_results_write), and the run's counter moved by as many. Should the database
    refuse a value all the same, the rows are written one by one and the refused one becomes an error verdict
    naming why, so one bad output never costs the chunk's other targets (nor leaves them running until their
    lease ends)."""
    if not outcomes:
        return
    now = now or timezone.now()
    for result, measurement in outcomes:
        _fill(result, measurement, now)
    rows = [result for result, _ in outcomes]
    try:
        with transaction.atomic():  # a savepoint: PostgreSQL refuses everything after a failed statement
            check_results_write(rows=rows, fields=OUTCOME_FIELDS)
    except REFUSED_VALUE_ERRORS:
        for row in rows:
            _write_or_refuse(row, now)
    count_finished(run.pk, len(outcomes))


def _write_or_refuse(row: CheckResult, now) -> None:
    """Write one row; if the database refuses its values, record the target as an error saying so."""
    try:
        with transaction.atomic():
            check_results_write(rows=[row], fields=OUTCOME_FIELDS)
    except REFUSED_VALUE_ERRORS as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        _fill(row, failed_measurement(f"the database refused this target's output: {reason}"), now)
        check_results_write(rows=[row], fields=OUTCOME_FIELDS)


def _fill(result: CheckResult, measurement: Measurement, now) -> None:
    verdict = measurement.verdict
    result.raw_output = _storable_text(measurement.raw_output)
    result.stderr = _storable_text(measurement.stderr)
    result.exit_code = measurement.exit_code
    result.metrics = json_safe(measurement.metrics)
    result.verdict = verdict.outcome.value
    result.reasons = json_safe(verdict.reasons_json())
    result.status = ResultStatus.ERROR if verdict.outcome == criteria.Outcome.ERROR else ResultStatus.DONE
    result.finished_at = now


def _storable_text(text: str | None) -> str | None:
    # A tool may print NUL bytes (a corrupt EEPROM string): PostgreSQL's text refuses them.
    return text.replace("\x00", "") if text else text


def json_safe(value):
    """`value` with every NaN or infinity as None (as criteria's numbers read them) and no NUL in its
    strings, recursively: JSON has no such numbers, and PostgreSQL's jsonb refuses the `NaN` that Python's
    json writes."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _storable_text(value)  # jsonb refuses \u0000 as text does
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def failed_measurement(message: str) -> Measurement:
    """Retries exhausted (or an unexpected error): the target could not be measured."""
    return Measurement(verdict=criteria.error_verdict(message))


def check_target_give_up(*, result: CheckResult, message: str) -> CheckResult | None:
    return check_target_record(result=result, measurement=failed_measurement(message))
