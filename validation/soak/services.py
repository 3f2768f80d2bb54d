"""The soak's writes: opening and stopping a window, the beat tick that starts a reading when one is due,
and recording (and judging) one node's readings. Readings are enqueued by task name (core.jobs)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.choices import JobStatus
from core.jobs import enqueue_on_commit
from core.models import log_line
from projects.access import Capability, can
from projects.evidence import evidence_changed_send
from projects.models import Project

from .. import criteria
from ..choices import CheckKind, ResultStatus, RunnerKind, Verdict
from ..cluster import gpu_nodes, sim_cluster_for
from ..kinds import soak as soak_kind
from ..kinds.base import clean_options
from ..models import CheckResult, CheckRun, SoakSample, SoakWindow
from .maths import COUNTER_FIELDS, final_verdict, growth_reasons, merged_growth
from .runner import Reading, counters_command, growing_ports, read_counters, soak_runner

SOAK_RUNNERS = (RunnerKind.SIMULATED, RunnerKind.SSH)
SAMPLE_TASK = "validation.tasks.soak_sample_node"


def default_duration() -> timedelta:
    return timedelta(hours=float(getattr(settings, "SOAK_DURATION_HOURS", 72)))


def sample_interval() -> timedelta:
    return timedelta(minutes=float(getattr(settings, "SOAK_SAMPLE_INTERVAL_MINUTES", 15)))


def parse_now(value: str | None) -> datetime | None:
    """An ISO 8601 time passed through a task's arguments (tasks take plain values), aware."""
    if not value:
        return None
    moment = parse_datetime(value)
    if moment is None:
        raise ValueError(f"not an ISO 8601 time: {value!r}")
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment, UTC)


def _when(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M %Z")


def _when_iso(value: str) -> str:
    return _when(parse_now(value))


def clean_soak_options(runner: str, options: Mapping | None) -> dict:
    return clean_options(
        options, soak_kind.KIND.options, runner=runner, refusal=f"not an option of a soak with the {runner} runner"
    )


def _check_may_soak(user, project: Project) -> None:
    if user is not None and not can(user, Capability.RUN_CHECKS, project):
        raise PermissionDenied("Your role in this project does not allow running a soak.")


def open_window(project: Project) -> SoakWindow | None:
    return SoakWindow.objects.filter(project=project, run__status=JobStatus.RUNNING).select_related("run").first()


def _who(user) -> str:
    return user.get_username() if user else "the system"


@transaction.atomic
def soak_window_start(
    *,
    project: Project,
    user=None,
    duration: timedelta | None = None,
    runner: str = RunnerKind.SIMULATED,
    options: Mapping | None = None,
    now: datetime | None = None,
) -> SoakWindow:
    """Open a window over every compute port of the project's GPU nodes and take the first reading (the
    baseline) once the transaction commits. One open window per project. `user` None is the system."""
    _check_may_soak(user, project)
    now = now or timezone.now()
    if runner not in SOAK_RUNNERS:
        raise ValidationError({"runner": f"A soak runs with one of: {', '.join(SOAK_RUNNERS)}."})
    options = clean_soak_options(runner, options)
    Project.objects.select_for_update().filter(pk=project.pk).first()  # two starts at once: one waits
    current = open_window(project)
    if current is not None:
        raise ValidationError(
            f"Soak #{current.pk} is open until {_when(current.ends_at)}; stop it before starting another."
        )
    targets = [(node, rail) for node in gpu_nodes(project) for rail in node.rails]
    if not targets:
        raise ValidationError("Nothing to soak: the project has no GPU nodes with compute-fabric ports.")
    duration, interval = duration or default_duration(), sample_interval()
    log = log_line(
        f"soak of {len(targets)} port(s) for {criteria.fmt_num(duration.total_seconds() / 3600)} h, a reading "
        f"every {criteria.fmt_num(interval.total_seconds() / 60)} min, started by {_who(user)} with the "
        f"{runner} runner",
        now,
    )
    if runner == RunnerKind.SIMULATED:
        grows = [f"{h} {d}" for h, d in growing_ports(options, sim_cluster_for(project))]
        log += log_line("simulated growing counters on: " + (", ".join(grows) or "none"), now)
    run = CheckRun(
        project=project,
        kind=CheckKind.SOAK,
        runner=runner,
        status=JobStatus.RUNNING,
        options=options,
        progress_total=len(targets),
        requested_by=user,
        started_at=now,
        log=log,
    )
    run.full_clean()
    run.save()
    CheckResult.objects.bulk_create(
        [
            CheckResult(
                run=run,
                target_key=f"{node.name}:{rail.port.name}",
                params={"rdma_device": rail.rdma_device},
                status=ResultStatus.RUNNING,
                device=node.device,
                port=rail.port,
                cable_id=rail.cable_id,
                optic=rail.optic,
                host=node.name,
                command=counters_command(rail.rdma_device),
                started_at=now,
            )
            for node, rail in targets
        ],
        batch_size=500,
    )
    window = SoakWindow(
        project=project, run=run, started_at=now, duration=duration, interval=interval, started_by=user
    )
    window.full_clean()
    window.save()
    _start_sweep(window, now)
    return window


@transaction.atomic
def soak_window_stop(*, window: SoakWindow, user=None, now: datetime | None = None) -> SoakWindow:
    """End a window early: the ports are judged on the readings taken so far."""
    _check_may_soak(user, window.project)
    window = _locked(window.pk)
    if not window.is_open:
        raise ValidationError(f"Soak #{window.pk} is already {window.run.status_label.lower()}.")
    _finalise(window, JobStatus.CANCELLED, now or timezone.now(), f"stopped early by {_who(user)}")
    return window


def _locked(window_id: int) -> SoakWindow:
    return SoakWindow.objects.select_for_update().select_related("run", "project").get(pk=window_id)


# ---------------------------------------------------------------------------------------------------
# The beat tick and the per-node readings


def soak_tick(*, now: datetime | None = None) -> None:
    """Start a reading on every open window that is due one; close windows that ran their course, and
    judge the ports of windows whose run was cancelled from the check-run pages."""
    now = now or timezone.now()
    for window_id in SoakWindow.objects.filter(run__status=JobStatus.RUNNING).values_list("pk", flat=True):
        _tick_window(window_id, now)
    cancelled = SoakWindow.objects.filter(run__status=JobStatus.CANCELLED, run__results__status=ResultStatus.RUNNING)
    for window_id in cancelled.distinct().values_list("pk", flat=True):
        _judge_cancelled(window_id, now)


@transaction.atomic
def _tick_window(window_id: int, now: datetime) -> None:
    window = _locked(window_id)
    if not window.is_open:
        return
    if now >= window.ends_at:
        _finalise(window, JobStatus.DONE, now, "the window ran its course")
    elif window.last_sweep_at is None or now >= window.last_sweep_at + window.interval:
        _start_sweep(window, now)


@transaction.atomic
def _judge_cancelled(window_id: int, now: datetime) -> None:
    window = _locked(window_id)
    if window.run.status == JobStatus.CANCELLED:
        _finalise(window, JobStatus.CANCELLED, window.run.finished_at or now, "cancelled from the run page")


def _start_sweep(window: SoakWindow, at: datetime) -> None:
    """Number the next reading and, once committed, hand each node's ports to a task."""
    sweep = window.sweeps
    window.sweeps = sweep + 1
    window.last_sweep_at = at
    window.save(update_fields=["sweeps", "last_sweep_at"])
    device_ids = (
        window.run.results.exclude(device=None).order_by("device_id").values_list("device_id", flat=True).distinct()
    )
    for device_id in device_ids:
        enqueue_on_commit(SAMPLE_TASK, window.pk, sweep, device_id, at.isoformat())


def soak_node_sample(*, window_id: int, sweep: int, device_id: int, taken_at: datetime) -> None:
    """Read one node's ports for sampling `sweep` (outside any transaction: the runner is slow), then
    record the readings and judge growth."""
    window = SoakWindow.objects.select_related("run", "project").filter(pk=window_id).first()
    if window is None or not window.is_open:
        return
    results = list(
        window.run.results.filter(device_id=device_id).exclude(soak_samples__sweep=sweep).order_by("id")
    )
    if not results:
        return  # read already (a redelivered task)
    runner = soak_runner(window, sweep)
    timeout = window.run.options.get("timeout_s", soak_kind.KIND.timeout_s)
    readings = [read_counters(runner, result, timeout) for result in results]
    _record(window.pk, sweep, taken_at, results, readings)


def _sample(window_id: int, result: CheckResult, sweep: int, taken_at: datetime, reading: Reading) -> SoakSample:
    counters = reading.counters or {}
    return SoakSample(
        window_id=window_id,
        result=result,
        sweep=sweep,
        taken_at=taken_at,
        error=reading.error,
        effective_ber=counters.get("effective_ber"),
        symbol_ber=counters.get("symbol_ber"),
        **{key: counters.get(key) for key in COUNTER_FIELDS},
    )


@transaction.atomic
def _record(window_id: int, sweep: int, taken_at: datetime, results: list[CheckResult], readings: list[Reading]):
    """Store the readings and judge them, unless the window closed while the node was being read."""
    window = _locked(window_id)
    if not window.is_open:
        return  # closed while this node was being read
    samples = [_sample(window_id, r, sweep, taken_at, reading) for r, reading in zip(results, readings, strict=True)]
    SoakSample.objects.bulk_create(samples, ignore_conflicts=True)  # a concurrent duplicate keeps the first
    reading_of = {result.pk: reading for result, reading in zip(results, readings, strict=True)}
    for result in CheckResult.objects.select_for_update().filter(pk__in=reading_of).order_by("id"):
        counters = reading_of[result.pk].counters
        if counters is not None:
            _judge_reading(result, sweep, taken_at, counters)


def _judge_reading(result: CheckResult, sweep: int, taken_at: datetime, counters: dict) -> None:
    """Compare with the port's previous good reading; the first reading at which a counter grew fails the
    port (an earlier reading that arrives late moves the failure back to it)."""
    previous = (
        SoakSample.objects.filter(result=result, sweep__lt=sweep, error="")
        .order_by("-sweep")
        .values(*COUNTER_FIELDS)
        .first()
    )
    metrics = dict(result.metrics or {})
    if sweep >= metrics.get("last_sweep", -1):
        metrics["last_sweep"] = sweep
        metrics["counters"] = {key: counters.get(key) for key in (*COUNTER_FIELDS, "effective_ber", "symbol_ber")}
    growth = merged_growth(
        metrics.get("growth") or {}, previous=previous or {}, counters=counters, sweep=sweep, at=taken_at.isoformat()
    )
    update = ["metrics"]
    if growth:
        metrics["growth"] = growth
        verdict = criteria.Verdict.of(growth_reasons(growth, when=_when_iso))
        result.verdict, result.reasons = verdict.outcome.value, verdict.reasons_json()
        update += ["verdict", "reasons"]
    result.metrics = metrics
    result.save(update_fields=update)


def _finalise(window: SoakWindow, status: str, now: datetime, why: str) -> None:
    """Judge every port on its readings and close the run. Called with the window row locked."""
    run = window.run
    stats = {
        row["result_id"]: row
        for row in SoakSample.objects.filter(window=window)
        .values("result_id")
        .annotate(good=Count("id", filter=Q(error="")), bad=Count("id", filter=~Q(error="")))
    }
    first_errors: dict[int, str] = {}
    errored = SoakSample.objects.filter(window=window).exclude(error="").order_by("result_id", "sweep")
    for result_id, error in errored.values_list("result_id", "error"):
        first_errors.setdefault(result_id, error)
    results = list(run.results.all())
    for result in results:
        counts = stats.get(result.pk, {"good": 0, "bad": 0})
        verdict = final_verdict(
            (result.metrics or {}).get("growth") or {},
            good=counts["good"],
            bad=counts["bad"],
            first_error=first_errors.get(result.pk),
            when=_when_iso,
        )
        result.verdict, result.reasons = verdict.outcome.value, verdict.reasons_json()
        result.status = ResultStatus.ERROR if verdict.outcome == criteria.Outcome.ERROR else ResultStatus.DONE
        result.finished_at = now
    CheckResult.objects.bulk_update(results, ["status", "verdict", "reasons", "finished_at"], batch_size=500)
    verdicts = Counter(r.verdict for r in results)
    # A run cancelled from the check-run pages is closed here too, so it may be cancelled already.
    run.finish(
        status=status,
        from_statuses={JobStatus.RUNNING, JobStatus.CANCELLED},
        finished_at=now,
        progress_done=run.progress_total,
    )
    summary = ", ".join(f"{verdicts.get(v, 0)} {v}" for v in Verdict.values)
    run.append_log(f"closed after {window.sweeps} sample(s): {why}; {summary}", at=now)
    evidence_changed_send(project_id=run.project_id, what="soak")  # the soak stage's gate reads it
