"""Executing one target: what it needs from the database, running it through the run's runner (its kind
says how, validation.kinds), and recording the outcome on the target's own row."""

from __future__ import annotations

import functools

from django.db import transaction
from django.utils import timezone

from delivery.models import Project

from .. import criteria
from ..choices import CheckKind, ResultStatus, RunnerKind
from ..cluster import sim_cluster_for
from ..kinds import Measurement, TargetInputs, kind_of
from ..models import CheckResult, CheckRun
from ..runners import LocalRunner, Runner, RunnerError, SimCluster, SimulatedRunner, TransientRunnerError
from ..runners.ssh import SSHRunner
from .options import command_timeout
from .profiles import acceptance_profile_for
from .progress import check_run_log, refresh_progress


@functools.lru_cache(maxsize=8)
def _cached_sim_cluster(project_id: int, run_id: int, run_created: str, with_fabric: bool = False) -> SimCluster:
    # One snapshot of the inventory per run and worker process, not one per target.
    return sim_cluster_for(Project.objects.get(pk=project_id), with_fabric=with_fabric)


def runner_for(run: CheckRun, *, attempt: int = 1) -> Runner:
    if run.runner == RunnerKind.SIMULATED:
        cluster = _cached_sim_cluster(run.project_id, run.pk, run.created_at.isoformat(),
                                      run.kind == CheckKind.TOPOLOGY)
        return SimulatedRunner(
            cluster,
            seed=run.options.get("seed", 0),
            down_hosts=run.options.get("down_hosts", ()),
            flaky_hosts=run.options.get("flaky_hosts"),
            attempt=attempt,
        )
    if run.runner == RunnerKind.LOCAL:
        return LocalRunner()
    if run.runner == RunnerKind.SSH:
        return SSHRunner()
    raise RunnerError(f"run #{run.pk} has the {run.runner} runner, which executes nothing")


def check_target_inputs(*, result: CheckResult) -> TargetInputs:
    run = result.run
    entry = kind_of(run.kind)
    return TargetInputs(
        runner=runner_for(run, attempt=result.attempt),
        profile=acceptance_profile_for(project=run.project).as_criteria(),
        timeout=command_timeout(run),
        baseline=entry.baseline(result) if entry.baseline else None,
    )


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
def check_target_record(*, result: CheckResult, measurement: Measurement) -> CheckResult | None:
    """Store the outcome on the target's own row (never a new row) and update the run's progress. Only
    the claim that holds the target records: if its lease ran out and another attempt took it over (or
    finished it), this late outcome is dropped and None returned."""
    current = (
        CheckResult.objects.select_for_update().filter(pk=result.pk).values_list("status", "attempt").first()
    )
    if current != (ResultStatus.RUNNING, result.attempt):
        check_run_log(
            run_id=result.run_id,
            line=f"{result.target_key}: the outcome of attempt {result.attempt} came after another attempt "
            f"took the target over; dropped",
        )
        return None
    return record(result, measurement)


def record(result: CheckResult, measurement: Measurement) -> CheckResult:
    """Write the outcome onto a target row the caller holds."""
    verdict = measurement.verdict
    result.raw_output = measurement.raw_output
    result.stderr = measurement.stderr
    result.exit_code = measurement.exit_code
    result.metrics = measurement.metrics
    result.verdict = verdict.outcome.value
    result.reasons = verdict.reasons_json()
    result.status = ResultStatus.ERROR if verdict.outcome == criteria.Outcome.ERROR else ResultStatus.DONE
    result.finished_at = timezone.now()
    result.save(
        update_fields=["raw_output", "stderr", "exit_code", "metrics", "verdict", "reasons", "status", "finished_at"]
    )
    refresh_progress(result.run_id)
    return result


def failed_measurement(message: str) -> Measurement:
    """Retries exhausted (or an unexpected error): the target could not be measured."""
    return Measurement(verdict=criteria.error_verdict(message))


def check_target_give_up(*, result: CheckResult, message: str) -> CheckResult | None:
    return check_target_record(result=result, measurement=failed_measurement(message))
