"""A run's life as people and schedules see it: starting one, cancelling it, re-running its failures.
Each enqueues the dispatch task by name once the transaction commits (core.jobs), so no service imports
the tasks that call the services."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from core.choices import JobStatus
from core.jobs import enqueue_on_commit
from core.models import log_line
from projects.access import Capability, can
from projects.models import Project

from ..choices import EXECUTING_RUNNERS, CheckKind, ResultStatus, RunnerKind, Verdict
from ..cluster import sim_cluster_for
from ..kinds import STARTABLE_CHECK_KINDS, kind_of
from ..models import CheckResult, CheckRun
from ..runners import SimulatedRunner
from .options import clean_run_options
from .progress import check_run_summary_store, finished_count
from .targets import build_targets, not_startable_message, result_row

DISPATCH_TASK = "validation.tasks.check_run_dispatch"


def _check_may_run(user, project: Project) -> None:
    if user is not None and not can(user, Capability.RUN_CHECKS, project):
        raise PermissionDenied("Your role in this project does not allow running checks.")


def _who(user) -> str:
    return user.get_username() if user else "the system"


def _create_run(**fields) -> CheckRun:
    run = CheckRun(**fields)
    run.full_clean()
    run.save()
    return run


def _check_startable(kind: str, runner: str) -> None:
    if kind not in CheckKind.values:
        raise ValidationError({"kind": f"{kind!r} is not a check kind ({', '.join(CheckKind.values)})."})
    entry = kind_of(kind)
    if not entry.startable:
        raise ValidationError({"kind": entry.not_startable})
    if runner not in EXECUTING_RUNNERS:
        raise ValidationError(
            {"runner": f"{runner!r} is not a runner that executes checks ({', '.join(EXECUTING_RUNNERS)})."}
        )
    if runner == RunnerKind.LOCAL and not entry.local_runner:
        # Every per-node command would run on this server and be filed under each node in turn.
        raise ValidationError(
            {
                "runner": "The local runner runs commands on this server: "
                "only NCCL (launched from here) can use it."
            }
        )


@transaction.atomic
def check_run_start(
    *,
    project: Project,
    kind: str,
    runner: str = RunnerKind.SIMULATED,
    requested_by=None,
    options: dict | None = None,
) -> CheckRun:
    """Create the run and one pending result per target, and enqueue it once the transaction commits.
    `requested_by` None means the system (a management command or a schedule)."""
    _check_may_run(requested_by, project)
    _check_startable(kind, runner)
    options = clean_run_options(kind, options, runner=runner)
    targets = build_targets(project=project, kind=kind, options=options)
    if not targets:
        raise ValidationError(
            {
                "kind": kind_of(kind).no_targets
                or "Nothing to check: the project has no GPU nodes with compute-fabric ports"
                + (" (pair tests need at least two)." if kind_of(kind).between_nodes else ".")
            }
        )
    log = log_line(f"queued {len(targets)} target(s) for {_who(requested_by)} with the {runner} runner")
    if runner == RunnerKind.SIMULATED:
        log += log_line("simulated faults: " + ("; ".join(simulated_faults(project, kind, options)) or "none"))
    run = _create_run(
        project=project,
        kind=kind,
        runner=runner,
        requested_by=requested_by,
        options=options,
        progress_total=len(targets),
        log=log,
    )
    CheckResult.objects.bulk_create([result_row(run, t) for t in targets], batch_size=500)
    enqueue_on_commit(DISPATCH_TASK, run.pk)
    return run


def simulated_faults(project: Project, kind: str, options: dict) -> list[str]:
    """What the simulated cluster plants for a run of this kind: the fabric's faults for a topology check,
    the nodes' for the others."""
    topology = kind == CheckKind.TOPOLOGY
    runner = SimulatedRunner(sim_cluster_for(project, with_fabric=topology), seed=options.get("seed", 0))
    if topology:
        fabric = runner.cluster.fabric
        return runner.fabric_faults.describe({link.key: link for link in fabric.links}) if fabric else []
    return runner.faults.describe()


def _require_executed(run: CheckRun, action: str) -> None:
    """Only runs of targets that a runner executes can be cancelled or re-run: an upload's results came
    as a file, and a soak window is started and stopped on its own page."""
    if run.runner not in EXECUTING_RUNNERS:
        raise ValidationError(
            f"Run #{run.pk} holds uploaded results: there is nothing to {action}; upload the output again instead."
        )
    if run.kind not in STARTABLE_CHECK_KINDS:
        raise ValidationError(f"Run #{run.pk} has no targets to {action}. {not_startable_message(run.kind)}")


@transaction.atomic
def check_run_cancel(*, run: CheckRun, user=None) -> CheckRun:
    """Stop scheduling: pending targets are cancelled; targets already running finish and are kept."""
    _check_may_run(user, run.project)
    _require_executed(run, "cancel")
    run = CheckRun.objects.select_for_update().get(pk=run.pk)
    if run.is_finished:
        raise ValidationError(f"Run #{run.pk} is already {run.status_label.lower()}.")
    cancelled = run.results.filter(status=ResultStatus.PENDING).update(
        status=ResultStatus.CANCELLED, finished_at=timezone.now()
    )
    run.finish(status=JobStatus.CANCELLED, progress_done=finished_count(run))
    check_run_summary_store(run=run)  # a target still running records later and clears it (progress.py)
    run.append_log(f"cancelled by {_who(user)}; {cancelled} pending target(s) will not run")
    return run


@transaction.atomic
def check_run_rerun_failed(*, run: CheckRun, requested_by=None) -> CheckRun:
    """A new run (child of `run`) with only the targets that failed or could not be measured."""
    _check_may_run(requested_by, run.project)
    _require_executed(run, "re-run")
    failed = list(run.results.filter(verdict__in=[Verdict.FAIL, Verdict.ERROR]).order_by("round", "id"))
    if not failed:
        raise ValidationError(f"Run #{run.pk} has no failed targets to re-run.")
    child = _create_run(
        project=run.project,
        kind=run.kind,
        runner=run.runner,
        requested_by=requested_by,
        options=run.options,
        parent=run,
        progress_total=len(failed),
        log=log_line(f"re-running {len(failed)} failed target(s) of run #{run.pk}"),
    )
    CheckResult.objects.bulk_create(
        [
            CheckResult(
                run=child,
                target_key=r.target_key,
                round=r.round,
                params=r.params,
                host=r.host,
                command=r.command,
                device_id=r.device_id,
                peer_device_id=r.peer_device_id,
                port_id=r.port_id,
                peer_port_id=r.peer_port_id,
                cable_id=r.cable_id,
                optic_id=r.optic_id,
            )
            for r in failed
        ]
    )
    enqueue_on_commit(DISPATCH_TASK, child.pk)
    return child
