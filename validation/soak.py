"""Soak: every compute port's link counters read through the runner at a fixed interval across a long
window (default 72 hours), so a link that degrades under load is caught: any growth of symbol errors,
effective physical errors, link-down or link error recovery counters between two readings is a failure
that names the port and the first reading at which it grew.

A window is a SoakWindow row with a check run of kind "soak" holding one CheckResult per port; failures
are those results' verdicts, so they sit with every other check result (pages, punch items). Readings are
SoakSample rows. Celery beat calls `soak_tick` (tasks.soak_tick) every SOAK_TICK_SECONDS; a window due a
reading starts one sampling ("sweep") with a task per node, so readings across a big cluster run in
parallel on the workers.

This module holds the soak's writes (start, stop, tick, record a node's readings), its reads for the pages
and charts, and the simulated runner's soak behaviour (counters that grow on chosen ports).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from delivery.access import Capability, can, scope_to_user
from delivery.models import Project

from . import criteria
from .choices import CheckKind, ResultStatus, RunnerKind, RunStatus, Verdict
from .models import CheckResult, CheckRun, SoakSample, SoakWindow
from .parsers import mlxlink as mlxlink_parser
from .parsers.base import ParseError
from .runners import Runner, RunnerError, RunOutput, SimCluster, SimulatedRunner, plan_faults
from .runners.ssh import SSHRunner
from .services import gpu_nodes, log_line, sim_cluster_for

# The counters that must not grow while the cluster is under load (DOMAIN.md, stage 8), as SoakSample
# fields and mlxlink's counter keys.
GROWTH_COUNTERS = (
    ("symbol_errors", "symbol errors"),
    ("effective_physical_errors", "effective physical errors"),
    ("link_down", "link-down counter"),
    ("link_error_recovery", "link error recovery counter"),
)
SOAK_RUNNERS = (RunnerKind.SIMULATED, RunnerKind.SSH)
READ_TIMEOUT_S = 60


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


def counters_command(rdma_device: str) -> str:
    """Counters and BER only (-c): the module's DOM is the link-health run's business."""
    return shlex.join(["mlxlink", "-d", rdma_device, "-c"])


# ---------------------------------------------------------------------------------------------------
# Pure: what grew between two readings


def counter_growth(before: Mapping, after: Mapping) -> list[tuple[str, str, int, int]]:
    """(key, label, before, after) of every counter higher than at the previous reading. A counter lower
    than before was cleared in between, which is not growth."""
    grown = []
    for key, label in GROWTH_COUNTERS:
        old, new = before.get(key), after.get(key)
        if old is not None and new is not None and new > old:
            grown.append((key, label, old, new))
    return grown


def _when(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M %Z")


def growth_reasons(growth: Mapping[str, dict]) -> list[criteria.Reason]:
    """One failure per counter that grew, at the first reading it did, earliest first."""
    labels = dict(GROWTH_COUNTERS)
    order = list(labels)
    reasons = []
    for key, seen in sorted(growth.items(), key=lambda item: (item[1]["sweep"], order.index(item[0]))):
        at = parse_now(seen["at"])
        reasons.append(
            criteria.Reason(
                criteria.Outcome.FAIL,
                f"{labels.get(key, key)} grew from {seen['before']} to {seen['after']} at sample {seen['sweep']} "
                f"({_when(at)})",
            )
        )
    return reasons


# ---------------------------------------------------------------------------------------------------
# The simulated cluster under soak: counters that grow on chosen ports


_GROWTH_PER_SAMPLE = {
    "Symbol Errors": 1500,
    "Effective Physical Errors": 40,
    "Link Error Recovery Counter": 1,
}
_COUNTER_LINE = re.compile(
    r"^(?P<key>" + "|".join(map(re.escape, _GROWTH_PER_SAMPLE)) + r")(?P<sep>\s*:\s*)(?P<value>\d+)\s*$",
    re.MULTILINE,
)


def grow_counters(text: str, steps: int) -> str:
    """mlxlink text with its error counters raised as `steps` readings of a degrading link would show."""

    def raise_value(match: re.Match) -> str:
        value = int(match.group("value")) + steps * _GROWTH_PER_SAMPLE[match.group("key")]
        return f"{match.group('key')}{match.group('sep')}{value}"

    return _COUNTER_LINE.sub(raise_value, text)


class SoakSimulatedRunner(SimulatedRunner):
    """The demo cluster read at sample `sweep`: ports in `growing` ((host, rdma device) pairs) gain errors
    at every reading from sample `grow_from` on; every other port's counters stay where they are."""

    def __init__(
        self,
        cluster: SimCluster,
        *,
        seed: int,
        sweep: int,
        growing: Iterable[tuple[str, str]],
        grow_from: int,
        down_hosts: Iterable[str] = (),
    ):
        super().__init__(cluster, seed=seed, down_hosts=down_hosts)
        self.sweep = sweep
        self.growing = set(growing)
        self.grow_from = grow_from

    def run(self, host: str, command: str, timeout: float) -> RunOutput:
        output = super().run(host, command, timeout)
        argv = shlex.split(command)
        device = argv[argv.index("-d") + 1] if "-d" in argv[:-1] else None
        steps = self.sweep - self.grow_from + 1
        if not output.ok or steps <= 0 or (host, device) not in self.growing:
            return output
        return RunOutput(grow_counters(output.stdout, steps), output.stderr, output.exit_code)


def growing_ports(options: Mapping, cluster: SimCluster) -> list[tuple[str, str]]:
    """The simulated ports whose counters grow: the window's `growing_ports` ("host:mlx5_N"), or by default
    the dirty fiber the fault plan puts in the cluster (a dirty connector keeps taking errors)."""
    if "growing_ports" in options:
        return [tuple(entry.split(":", 1)) for entry in options["growing_ports"]]
    dirty = plan_faults(cluster, options.get("seed", 0)).dirty_fiber
    return [dirty] if dirty else []


def soak_runner(window: SoakWindow, sweep: int) -> Runner:
    run = window.run
    if run.runner == RunnerKind.SIMULATED:
        cluster = sim_cluster_for(window.project)
        return SoakSimulatedRunner(
            cluster,
            seed=run.options.get("seed", 0),
            sweep=sweep,
            growing=growing_ports(run.options, cluster),
            grow_from=run.options.get("grow_from_sample", 1),
            down_hosts=run.options.get("down_hosts", ()),
        )
    return SSHRunner()


# ---------------------------------------------------------------------------------------------------
# Starting and stopping a window


def _whole(minimum: int):
    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"expected a whole number of at least {minimum}")
        return value

    return check


def _port_list(value):
    if not isinstance(value, list) or not all(isinstance(v, str) and re.fullmatch(r"[^:\s]+:\S+", v) for v in value):
        raise ValueError('expected a list of "host:rdma_device" entries, e.g. ["gpu-002:mlx5_3"]')
    return value


def _host_list(value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of host names")
    return value


def _seconds(value):
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError("expected a positive number of seconds")
    return value


# name -> (check, simulated runner only)
SOAK_OPTIONS = {
    "seed": (_whole(0), True),
    "growing_ports": (_port_list, True),
    "grow_from_sample": (_whole(0), True),
    "down_hosts": (_host_list, True),  # these refuse every connection
    "timeout_s": (_seconds, False),
}


def clean_soak_options(runner: str, options: Mapping | None) -> dict:
    cleaned, errors = {}, {}
    for name, value in (options or {}).items():
        spec = SOAK_OPTIONS.get(name)
        if spec is None or (spec[1] and runner != RunnerKind.SIMULATED):
            errors[f"options.{name}"] = f"not an option of a soak with the {runner} runner"
            continue
        try:
            cleaned[name] = spec[0](value)
        except ValueError as exc:
            errors[f"options.{name}"] = str(exc)
    if errors:
        raise ValidationError(errors)
    return cleaned


def _check_may_soak(user, project: Project) -> None:
    if user is not None and not can(user, Capability.RUN_CHECKS, project):
        raise PermissionDenied("Your role in this project does not allow running a soak.")


def open_window(project: Project) -> SoakWindow | None:
    return SoakWindow.objects.filter(project=project, run__status=RunStatus.RUNNING).select_related("run").first()


def _log(run: CheckRun, line: str, now: datetime) -> None:
    run.log = f"{run.log}{log_line(line, now)}"


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
    nodes = gpu_nodes(project)
    targets = [(node, rail) for node in nodes for rail in node.rails]
    if not targets:
        raise ValidationError("Nothing to soak: the project has no GPU nodes with compute-fabric ports.")
    run = CheckRun(
        project=project,
        kind=CheckKind.SOAK,
        runner=runner,
        status=RunStatus.RUNNING,
        options=options,
        total=len(targets),
        requested_by=user,
        started_at=now,
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
        project=project,
        run=run,
        started_at=now,
        duration=duration or default_duration(),
        interval=sample_interval(),
        started_by=user,
    )
    window.full_clean()
    window.save()
    who = user.get_username() if user else "the system"
    hours = window.duration.total_seconds() / 3600
    minutes = window.interval.total_seconds() / 60
    _log(run, f"soak of {len(targets)} port(s) for {criteria.fmt_num(hours)} h, a reading every "
              f"{criteria.fmt_num(minutes)} min, started by {who} with the {runner} runner", now)
    if runner == RunnerKind.SIMULATED:
        grows = [f"{h} {d}" for h, d in growing_ports(options, sim_cluster_for(project))]
        _log(run, "simulated growing counters on: " + (", ".join(grows) or "none"), now)
    run.save(update_fields=["log"])
    _start_sweep(window, now)
    return window


@transaction.atomic
def soak_window_stop(*, window: SoakWindow, user=None, now: datetime | None = None) -> SoakWindow:
    """End a window early: the ports are judged on the readings taken so far."""
    _check_may_soak(user, window.project)
    window = _locked(window.pk)
    if not window.is_open:
        raise ValidationError(f"Soak #{window.pk} is already {window.run.get_status_display().lower()}.")
    who = user.get_username() if user else "the system"
    _finalise(window, RunStatus.CANCELLED, now or timezone.now(), f"stopped early by {who}")
    return window


def _locked(window_id: int) -> SoakWindow:
    return SoakWindow.objects.select_for_update().select_related("run", "project").get(pk=window_id)


# ---------------------------------------------------------------------------------------------------
# The beat tick and the per-node readings


def soak_tick(*, now: datetime | None = None) -> None:
    """Start a reading on every open window that is due one; close windows that ran their course, and
    judge the ports of windows whose run was cancelled from the check-run pages."""
    now = now or timezone.now()
    for window_id in SoakWindow.objects.filter(run__status=RunStatus.RUNNING).values_list("pk", flat=True):
        _tick_window(window_id, now)
    cancelled = SoakWindow.objects.filter(run__status=RunStatus.CANCELLED, run__results__status=ResultStatus.RUNNING)
    for window_id in cancelled.distinct().values_list("pk", flat=True):
        _judge_cancelled(window_id, now)


@transaction.atomic
def _tick_window(window_id: int, now: datetime) -> None:
    window = _locked(window_id)
    if not window.is_open:
        return
    if now >= window.ends_at:
        _finalise(window, RunStatus.DONE, now, "the window ran its course")
    elif window.last_sweep_at is None or now >= window.last_sweep_at + window.interval:
        _start_sweep(window, now)


@transaction.atomic
def _judge_cancelled(window_id: int, now: datetime) -> None:
    window = _locked(window_id)
    if window.run.status == RunStatus.CANCELLED:
        _finalise(window, RunStatus.CANCELLED, window.run.finished_at or now, "cancelled from the run page")


def _start_sweep(window: SoakWindow, at: datetime) -> None:
    """Number the next reading and, once committed, hand each node's ports to a task."""
    from .tasks import soak_sample_node

    sweep = window.sweeps
    window.sweeps = sweep + 1
    window.last_sweep_at = at
    window.save(update_fields=["sweeps", "last_sweep_at"])
    device_ids = list(
        window.run.results.exclude(device=None).order_by("device_id").values_list("device_id", flat=True).distinct()
    )
    window_id, taken_at = window.pk, at.isoformat()

    def enqueue():
        for device_id in device_ids:
            soak_sample_node.delay(window_id, sweep, device_id, taken_at)

    transaction.on_commit(enqueue)


@dataclass(frozen=True)
class Reading:
    counters: dict | None = None
    error: str = ""


def _tail(text: str) -> str:
    return " | ".join(text.strip().splitlines()[-3:])


def read_counters(runner: Runner, result: CheckResult, timeout: float) -> Reading:
    """One port's counters through the runner, or why they could not be read. Never raises: a port that
    cannot be read at one sampling is tried again at the next."""
    try:
        output = runner.run(result.host, result.command, timeout)
    except RunnerError as exc:
        return Reading(error=f"could not run on {result.host}: {exc}")
    if not output.stdout.strip():
        return Reading(error=f"mlxlink exited {output.exit_code}: {_tail(output.stderr) or 'no output'}")
    try:
        parsed = mlxlink_parser.parse(output.stdout)
    except ParseError as exc:
        return Reading(error=f"mlxlink output unreadable at {exc}")
    counters = criteria.as_dict(parsed[0].counters) if parsed else {}
    if all(counters.get(key) is None for key, _ in GROWTH_COUNTERS):
        return Reading(error="mlxlink printed no error counters (is -c supported?)")
    return Reading(counters=counters)


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
    timeout = window.run.options.get("timeout_s", READ_TIMEOUT_S)
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
        **{key: counters.get(key) for key, _ in GROWTH_COUNTERS},
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
    fields = [key for key, _ in GROWTH_COUNTERS]
    previous = (
        SoakSample.objects.filter(result=result, sweep__lt=sweep, error="").order_by("-sweep").values(*fields).first()
    )
    metrics = dict(result.metrics or {})
    if sweep >= metrics.get("last_sweep", -1):
        metrics["last_sweep"] = sweep
        metrics["counters"] = {key: counters.get(key) for key in (*fields, "effective_ber", "symbol_ber")}
    growth = dict(metrics.get("growth") or {})
    for key, _label, before, after in counter_growth(previous or {}, counters):
        if key not in growth or sweep < growth[key]["sweep"]:
            growth[key] = {"sweep": sweep, "at": taken_at.isoformat(), "before": before, "after": after}
    update = ["metrics"]
    if growth:
        metrics["growth"] = growth
        verdict = criteria.Verdict.of(growth_reasons(growth))
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
        _judge_final(result, stats.get(result.pk, {"good": 0, "bad": 0}), first_errors.get(result.pk), now)
    CheckResult.objects.bulk_update(results, ["status", "verdict", "reasons", "finished_at"], batch_size=500)
    verdicts = Counter(r.verdict for r in results)
    run.status, run.finished_at, run.done = status, now, run.total
    summary = ", ".join(f"{verdicts.get(v, 0)} {v}" for v in Verdict.values)
    _log(run, f"closed after {window.sweeps} sample(s): {why}; {summary}", now)
    run.save(update_fields=["status", "finished_at", "done", "log"])


def _judge_final(result: CheckResult, stats: Mapping, first_error: str | None, now: datetime) -> None:
    growth = (result.metrics or {}).get("growth") or {}
    reasons = growth_reasons(growth)
    good, bad = stats["good"], stats["bad"]
    if bad:
        level = criteria.Outcome.ERROR if not good else criteria.Outcome.WARN
        reasons.append(criteria.Reason(level, f"counters unreadable at {bad} of {good + bad} sample(s): {first_error}"))
    elif good < 2:
        reasons.append(criteria.Reason(criteria.Outcome.WARN, f"{good} reading(s): too few to see growth"))
    verdict = criteria.Verdict.of(reasons)
    result.verdict, result.reasons = verdict.outcome.value, verdict.reasons_json()
    result.status = ResultStatus.ERROR if verdict.outcome == criteria.Outcome.ERROR else ResultStatus.DONE
    result.finished_at = now


# ---------------------------------------------------------------------------------------------------
# Reads for the soak pages and the charts


def soak_window_list(*, user, project: Project) -> QuerySet[SoakWindow]:
    """Windows newest first, each with its count of failed ports and of ports."""
    windows = scope_to_user(SoakWindow.objects.filter(project=project), user)
    return (
        windows.select_related("run", "started_by", "project")
        .annotate(
            failed_ports=Count("run__results", filter=Q(run__results__verdict=Verdict.FAIL)),
            port_count=Count("run__results"),
        )
        .order_by("-started_at", "-id")
    )


def soak_window_detail(*, user, project: Project, pk: int) -> SoakWindow:
    return get_object_or_404(soak_window_list(user=user, project=project), pk=pk)


def soak_failures(*, user, window: SoakWindow) -> list[CheckResult]:
    """The ports whose counters grew, earliest first, each linked to its cable and optic."""
    results = scope_to_user(CheckResult.objects.filter(run_id=window.run_id), user, "run__project")
    failed = list(
        results.filter(verdict=Verdict.FAIL)
        .select_related("device__rack", "port", "cable", "optic")
        .defer("raw_output", "stderr")
    )

    def first_growth(result: CheckResult) -> tuple:
        growth = (result.metrics or {}).get("growth") or {}
        return (min((g["sweep"] for g in growth.values()), default=10**9), result.target_key)

    return sorted(failed, key=first_growth)


def soak_series(*, user, window: SoakWindow, result_ids: Iterable[int] | None = None) -> dict[str, list[dict]]:
    """Counters over time per port (target key -> readings in order), for the soak chart. Give
    `result_ids` to chart a few ports; all ports of a 72-hour window on 576 ports is 166,000 readings."""
    samples = scope_to_user(SoakSample.objects.filter(window=window), user, "window__project")
    if result_ids is not None:
        samples = samples.filter(result_id__in=list(result_ids))
    fields = [key for key, _ in GROWTH_COUNTERS]
    series: dict[str, list[dict]] = {}
    rows = samples.order_by("result_id", "sweep").values(
        "result__target_key", "sweep", "taken_at", "error", "effective_ber", "symbol_ber", *fields
    )
    for row in rows:
        key = row.pop("result__target_key")
        series.setdefault(key, []).append(row)
    return series
