"""Reads of the validation engine, always scoped to what the user may see (delivery.access), with
the joins a page needs so its query count does not grow with the number of runs or results."""

from __future__ import annotations

import dataclasses
import re
import statistics
from dataclasses import dataclass

from django.db.models import Case, Count, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery, Value, When
from django.shortcuts import get_object_or_404

from cabling.models import Cable, CableEnd
from delivery.access import scope_to_user, visible_projects
from delivery.models import Project
from inventory.models import Port

from . import criteria
from .choices import EXECUTING_RUNNERS, CheckKind, ResultStatus, Verdict
from .kinds import STARTABLE_CHECK_KINDS
from .models import AcceptanceProfile, CheckResult, CheckRun


def with_verdict_counts(runs: QuerySet[CheckRun]) -> QuerySet[CheckRun]:
    """Annotate passed / warned / failed / errored counts for progress bars and badges."""
    return runs.annotate(
        passed=Count("results", filter=Q(results__verdict=Verdict.PASS)),
        warned=Count("results", filter=Q(results__verdict=Verdict.WARN)),
        failed=Count("results", filter=Q(results__verdict=Verdict.FAIL)),
        errored=Count("results", filter=Q(results__verdict=Verdict.ERROR)),
    )


def check_run_list(*, user, project: Project | None = None, kind: str | None = None) -> QuerySet[CheckRun]:
    runs = scope_to_user(CheckRun.objects.all(), user)
    if project is not None:
        runs = runs.filter(project=project)
    if kind:
        runs = runs.filter(kind=kind)
    return with_verdict_counts(runs.select_related("project", "requested_by", "parent")).order_by(
        "-created_at", "-id"
    )


def check_run_detail(*, user, project: Project, pk: int) -> CheckRun:
    """One run of the project, or 404 (also for outsiders, who must not learn it exists)."""
    return get_object_or_404(check_run_list(user=user, project=project), pk=pk)


def latest_runs_by_kind(*, user, project: Project) -> dict[str, CheckRun]:
    """The newest executed run of each kind, for a project's validation overview and its punch items (one
    query, one row per kind). Uploads and soak windows are left out: a one-node upload is not the state of
    the cluster and must not hide a full run's failures, and a soak is judged on its own page."""
    executed = CheckRun.objects.filter(runner__in=EXECUTING_RUNNERS, kind__in=STARTABLE_CHECK_KINDS)
    newest_of_kind = (
        executed.filter(project=project, kind=OuterRef("kind")).order_by("-created_at", "-id").values("pk")[:1]
    )
    runs = check_run_list(user=user, project=project).filter(
        runner__in=EXECUTING_RUNNERS, kind__in=STARTABLE_CHECK_KINDS, pk=Subquery(newest_of_kind)
    )
    return {run.kind: run for run in runs}


def check_result_list(
    *,
    user,
    run: CheckRun,
    verdict: str | None = None,
    network: str | None = None,
    plane: int | None = None,
    rack: str | None = None,
) -> QuerySet[CheckResult]:
    """A run's results, filterable by verdict, network and plane (of the port tested) and rack (by name,
    of either node, as the pages' filter does). Heavy columns (raw output) are deferred: a list never
    needs them."""
    results = scope_to_user(CheckResult.objects.filter(run=run), user, "run__project")
    if verdict:
        results = results.filter(verdict=verdict)
    if network:
        results = results.filter(port__network=network)
    if plane is not None and plane != "":
        # A physical port carries every plane of its lanes; match the port itself or one of its lanes.
        results = results.filter(Q(port__plane=plane) | Q(port__lanes__plane=plane)).distinct()
    if rack:
        results = results.filter(Q(device__rack__name=rack) | Q(peer_device__rack__name=rack))
    return (
        results.select_related("device__rack", "peer_device", "port", "cable", "optic")
        .defer("raw_output", "stderr", "command")
        .order_by("round", "id")
    )


def check_result_detail(*, user, project: Project, pk: int) -> CheckResult:
    results = scope_to_user(CheckResult.objects.filter(run__project=project), user, "run__project")
    return get_object_or_404(
        results.select_related("run", "device", "peer_device", "port", "peer_port", "cable", "optic"), pk=pk
    )


def port_link_history(*, user, port: Port) -> QuerySet[CheckResult]:
    """Every finished link-health result of a port, newest first: its counters and DOM over time."""
    results = scope_to_user(CheckResult.objects.filter(port=port), user, "run__project")
    return (
        results.filter(run__kind=CheckKind.LINK_HEALTH, status=ResultStatus.DONE)
        .select_related("run")
        .defer("raw_output", "stderr", "command")
        .order_by("-finished_at", "-id")
    )


def acceptance_profile_get(*, user, project: Project) -> AcceptanceProfile | None:
    """The project's profile for display: the saved one, or an unsaved one holding the defaults (reads
    never create rows; services.acceptance_profile_for does on first write or run). None for outsiders."""
    if not visible_projects(user).filter(pk=project.pk).exists():
        return None
    return AcceptanceProfile.objects.filter(project=project).first() or AcceptanceProfile(project=project)


@dataclass(frozen=True)
class BandwidthMatrix:
    """A matrix run as a heatmap: nodes on both axes, each cell the pair's slowest rail (Gb/s)."""

    nodes: list[str]
    cells: dict[tuple[str, str], float | None]
    verdicts: dict[tuple[str, str], str]
    median_gbps: float | None

    def value(self, a: str, b: str) -> float | None:
        return self.cells.get((a, b), self.cells.get((b, a)))


def bandwidth_matrix(*, user, run: CheckRun) -> BandwidthMatrix:
    results = scope_to_user(run.results.all(), user, "run__project").select_related("device", "peer_device")
    results = results.only("metrics", "verdict", "device__name", "peer_device__name", "run_id")
    cells, verdicts, names = {}, {}, set()
    for result in results:
        if result.device is None or result.peer_device is None:
            continue
        pair = (result.device.name, result.peer_device.name)
        names.update(pair)
        cells[pair] = result.metrics.get("min_gbps")
        verdicts[pair] = result.verdict
    known = {pair: value for pair, value in cells.items() if value is not None}
    median, _ = criteria.slow_outliers(known, 0)
    return BandwidthMatrix(nodes=sorted(names), cells=cells, verdicts=verdicts, median_gbps=median)


def nccl_curve(*, result: CheckResult) -> list[dict[str, float]]:
    """(size, bus bandwidth) points of an NCCL result for the bus-bandwidth-versus-size chart."""
    return result.metrics.get("curve") or criteria.nccl_curve(result.metrics)


def failed_results(*, user, project: Project) -> QuerySet[CheckResult]:
    """Failed results of the newest run of each kind, linked to what they concern, for punch items."""
    newest = [run.pk for run in latest_runs_by_kind(user=user, project=project).values()]
    results = scope_to_user(CheckResult.objects.filter(run_id__in=newest), user, "run__project")
    return (
        results.filter(verdict__in=[Verdict.FAIL, Verdict.ERROR])
        .select_related("run", "device", "peer_device", "port", "cable", "optic")
        .defer("raw_output", "stderr")
        .prefetch_related(Prefetch("port__lanes", queryset=Port.objects.order_by("lane")))
        .order_by("run__kind", "round", "id")
    )


# ---------------------------------------------------------------------------------------------------
# Pages and API: result lists, chart figures, a link's history (H10)


def check_run_list_light(*, user, project: Project | None = None) -> QuerySet[CheckRun]:
    """check_run_list without the log, for lists (a long run's log is most of its row)."""
    return check_run_list(user=user, project=project).defer("log", "options")


def check_result_list_visible(*, user, project: Project | None = None) -> QuerySet[CheckResult]:
    """Every result the user may see (of one project, if given), joined for a list and without the heavy
    columns; filter it with filters.CheckResultFilterSet."""
    results = scope_to_user(CheckResult.objects.all(), user, "run__project")
    if project is not None:
        results = results.filter(run__project=project)
    return (
        results.select_related(
            "run__project", "device__rack", "peer_device", "port", "peer_port", "cable", "optic"
        )
        .defer("raw_output", "stderr", "command", "params")
        .order_by("-run__created_at", "run_id", "round", "id")
    )


_SEVERITY = Case(
    When(verdict=Verdict.FAIL, then=Value(0)),
    When(verdict=Verdict.ERROR, then=Value(1)),
    When(verdict=Verdict.WARN, then=Value(2)),
    When(verdict=Verdict.PASS, then=Value(3)),
    default=Value(4),  # not measured yet
    output_field=IntegerField(),
)


def worst_first(results: QuerySet[CheckResult]) -> QuerySet[CheckResult]:
    """Failures, then errors, warnings, passes and targets still pending; in run order within each."""
    return results.alias(severity=_SEVERITY).order_by("severity", "round", "id")


def check_result_raw(*, user, project: Project, pk: int) -> CheckResult:
    results = scope_to_user(CheckResult.objects.filter(run__project=project), user, "run__project")
    return get_object_or_404(results.only("id", "target_key", "raw_output", "stderr", "run_id"), pk=pk)


def _chart_results(user, run: CheckRun) -> QuerySet[CheckResult]:
    """A run's measured results with just what the charts read (one query whatever the run's size)."""
    results = scope_to_user(run.results.exclude(status=ResultStatus.PENDING), user, "run__project")
    return (
        results.select_related("device", "peer_device", "port")
        .only("id", "run_id", "target_key", "verdict", "metrics", "device__name", "peer_device__name", "port__name")
        .order_by("device__name", "port__name", "id")
    )


def _number(value) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def result_label(result: CheckResult) -> str:
    """node:port, node~peer or the target key: how tables and charts name a result."""
    if result.device_id and result.port_id:
        return f"{result.device.name}:{result.port.name}"
    return result.target_key


@dataclass(frozen=True)
class PortBer:
    result_id: int
    label: str
    verdict: str
    effective_ber: float | None
    symbol_ber: float | None
    raw_ber: float | None


def run_port_ber(*, user, run: CheckRun) -> list[PortBer]:
    """Each port's BERs from a link-health run, in node and port order."""
    rows = []
    for result in _chart_results(user, run):
        counters = (result.metrics or {}).get("counters") or {}
        rows.append(
            PortBer(
                result_id=result.pk,
                label=result_label(result),
                verdict=result.verdict,
                effective_ber=_number(counters.get("effective_ber")),
                symbol_ber=_number(counters.get("symbol_ber")),
                raw_ber=_number(counters.get("raw_ber")),
            )
        )
    return rows


@dataclass(frozen=True)
class BandwidthFigures:
    """A pair-bandwidth run's measured values (Gb/s) and the lines they are judged against."""

    values: list[tuple[int, str, float]]  # (result id, label, Gb/s)
    line_rate_gbps: float | None
    fail_gbps: float | None
    warn_gbps: float | None
    gpu: bool


def _most_common(values: list[float]) -> float | None:
    return max(set(values), key=values.count) if values else None


def run_bandwidth_figures(*, user, run: CheckRun, profile: AcceptanceProfile) -> BandwidthFigures:
    gpu = run.kind == CheckKind.GPU_RDMA
    values, rates = [], []
    for result in _chart_results(user, run):
        metrics = result.metrics or {}
        bw = _number(metrics.get("bw_avg_gbps"))
        rate = _number(metrics.get("line_rate_gbps"))
        if rate:
            rates.append(rate)
        if bw is not None:
            values.append((result.pk, result.target_key, bw))
    line_rate = _most_common(rates)
    if gpu:
        fail = profile.gpu_rdma_fail_fraction * line_rate if line_rate else None
        warn = profile.gpu_rdma_warn_fraction * line_rate if line_rate else None
    else:
        fail, warn = profile.cpu_bw_fail_gbps, profile.cpu_bw_warn_gbps
    return BandwidthFigures(values=values, line_rate_gbps=line_rate, fail_gbps=fail, warn_gbps=warn, gpu=gpu)


@dataclass
class MatrixPair:
    result_id: int
    a: str
    b: str
    min_gbps: float | None
    mean_gbps: float | None
    max_gbps: float | None
    verdict: str
    reverse_min_gbps: float | None = None  # when the pair was also measured the other way round
    flags: list[str] = dataclasses.field(default_factory=list)

    @property
    def level(self) -> str:
        """fail, warn (slow or uneven) or pass: the heatmap's colour for the pair."""
        if self.verdict in (Verdict.FAIL, Verdict.ERROR):
            return "fail"
        return "warn" if self.flags else "pass"


@dataclass(frozen=True)
class MatrixFigures:
    nodes: list[str]
    pairs: list[MatrixPair]
    median_gbps: float | None

    @property
    def flagged(self) -> list[MatrixPair]:
        return [p for p in self.pairs if p.level != "pass"]

    @property
    def passing(self) -> list[MatrixPair]:
        return [p for p in self.pairs if p.level == "pass"]


def _natural_key(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _uneven(low: float | None, high: float | None, fraction: float) -> bool:
    return low is not None and high is not None and high > 0 and low < fraction * high


def bandwidth_matrix_figures(*, user, run: CheckRun, profile: AcceptanceProfile) -> MatrixFigures:
    """The matrix run's pairs with what makes them suspect: a failed verdict, slower than the profile's
    share of the run's median (the engine's outlier warning), rails of one pair that disagree (one slow
    rail points at a port or cable), or the two directions of a pair that disagree."""
    fraction = profile.matrix_outlier_fraction
    by_pair: dict[frozenset, MatrixPair] = {}
    for result in _chart_results(user, run):
        if result.device is None or result.peer_device is None:
            continue
        metrics = result.metrics or {}
        rails = [_number(r.get("bw_avg_gbps")) for r in metrics.get("rails") or []]
        rails = [r for r in rails if r is not None]
        pair = MatrixPair(
            result_id=result.pk,
            a=result.device.name,
            b=result.peer_device.name,
            min_gbps=_number(metrics.get("min_gbps")),
            mean_gbps=_number(metrics.get("mean_gbps")),
            max_gbps=max(rails) if rails else None,
            verdict=result.verdict,
        )
        if result.verdict == Verdict.WARN:
            pair.flags.append("slow: below the run's median share")
        if _uneven(pair.min_gbps, pair.max_gbps, fraction):
            pair.flags.append(f"uneven rails: slowest below {fraction:.0%} of the fastest")
        key = frozenset((pair.a, pair.b))
        other = by_pair.get(key)
        if other is None:
            by_pair[key] = pair
            continue
        # Measured both ways: keep the slower direction in the cell, the other as its reverse.
        slower, faster = sorted((other, pair), key=lambda p: p.min_gbps if p.min_gbps is not None else -1)
        slower.reverse_min_gbps = faster.min_gbps
        slower.flags += [f for f in faster.flags if f not in slower.flags]
        if _uneven(slower.min_gbps, faster.min_gbps, fraction):
            slower.flags.append(f"asymmetric: one direction below {fraction:.0%} of the other")
        if faster.verdict in (Verdict.FAIL, Verdict.ERROR):
            slower.verdict = faster.verdict
        by_pair[key] = slower
    pairs = sorted(by_pair.values(), key=lambda p: (_natural_key(p.a), _natural_key(p.b)))
    nodes = sorted({n for p in pairs for n in (p.a, p.b)}, key=_natural_key)
    known = [p.min_gbps for p in pairs if p.min_gbps is not None]
    median = statistics.median(known) if known else None
    return MatrixFigures(nodes=nodes, pairs=pairs, median_gbps=median)


@dataclass(frozen=True)
class NcclCurve:
    result_id: int
    label: str
    verdict: str
    points: list[tuple[int, float]]  # (message size in bytes, out-of-place bus bandwidth GB/s)
    avg_busbw_gbs: float | None


def run_nccl_curves(*, user, run: CheckRun) -> list[NcclCurve]:
    curves = []
    for result in _chart_results(user, run):
        points = [(int(p["size_bytes"]), float(p["busbw_gbs"])) for p in nccl_curve(result=result)]
        curves.append(
            NcclCurve(
                result_id=result.pk,
                label=result.target_key,
                verdict=result.verdict,
                points=sorted(points),
                avg_busbw_gbs=_number((result.metrics or {}).get("avg_busbw_gbps")),
            )
        )
    return curves


@dataclass(frozen=True)
class DomLane:
    lane: int
    rx_dbm: float | None
    tx_dbm: float | None


@dataclass(frozen=True)
class DomFigures:
    lanes: list[DomLane]
    rx_limits: tuple[float, float] | None
    tx_limits: tuple[float, float] | None
    temperature_c: float | None
    temperature_limits: tuple[float, float] | None


def _limits(ranges: dict, key: str) -> tuple[float, float] | None:
    value = ranges.get(key)
    if isinstance(value, list | tuple) and len(value) == 2:
        lo, hi = _number(value[0]), _number(value[1])
        if lo is not None and hi is not None:
            return lo, hi
    return None


def dom_figures(metrics: dict) -> DomFigures | None:
    """Per-lane Rx/Tx power of an mlxlink result with the module's own limits; None for a module that
    reports no DOM (a passive copper cable) or a result without module information."""
    module = (metrics or {}).get("module") or {}
    if not module or criteria.is_passive_copper(module):
        return None
    rx = module.get("rx_power_dbm") or []
    tx = module.get("tx_power_dbm") or []
    rx, tx = (rx if isinstance(rx, list) else [rx]), (tx if isinstance(tx, list) else [tx])
    if not rx and not tx:
        return None
    count = max(len(rx), len(tx))
    lanes = [
        DomLane(i, _number(rx[i]) if i < len(rx) else None, _number(tx[i]) if i < len(tx) else None)
        for i in range(count)
    ]
    ranges = module.get("ranges") or {}
    return DomFigures(
        lanes=lanes,
        rx_limits=_limits(ranges, "rx_power_dbm"),
        tx_limits=_limits(ranges, "tx_power_dbm"),
        temperature_c=_number(module.get("temperature_c")),
        temperature_limits=_limits(ranges, "temperature_c"),
    )


# -- a link's history ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkSubject:
    """What a history page is about: a port (with the cable in it, if any) or a cable (with its ports)."""

    title: str
    port: Port | None
    cable: Cable | None
    port_ids: tuple[int, ...]
    cable_ids: tuple[int, ...]


def _physical(port: Port) -> Port:
    return port.parent if port.parent_id else port


def link_subject_port(*, user, project: Project, pk: int) -> LinkSubject:
    """A port of the project (a lane stands for its physical port), or 404."""
    ports = scope_to_user(Port.objects.filter(device__project=project), user, "device__project")
    port = _physical(get_object_or_404(ports.select_related("device", "parent__device"), pk=pk))
    ends = CableEnd.objects.filter(Q(port=port) | Q(port__parent=port)).select_related("cable")
    cables = sorted({end.cable for end in ends}, key=lambda c: c.pk)
    return LinkSubject(
        title=f"{port.device.name}:{port.name}",
        port=port,
        cable=cables[0] if len(cables) == 1 else None,
        port_ids=(port.pk,),
        cable_ids=tuple(c.pk for c in cables),
    )


def link_subject_cable(*, user, project: Project, pk: int) -> LinkSubject:
    cables = scope_to_user(Cable.objects.filter(project=project), user)
    cable = get_object_or_404(cables, pk=pk)
    ports = {end.port.parent_id or end.port_id for end in cable.ends.select_related("port")}
    return LinkSubject(title=f"cable {cable.label}", port=None, cable=cable, port_ids=tuple(sorted(ports)),
                       cable_ids=(cable.pk,))


def link_history(*, user, project: Project, subject: LinkSubject) -> QuerySet[CheckResult]:
    """Every result that concerns the port(s) or cable(s), across runs, newest first."""
    concerns = Q(port_id__in=subject.port_ids) | Q(peer_port_id__in=subject.port_ids)
    if subject.cable_ids:
        concerns |= Q(cable_id__in=subject.cable_ids)
    return (
        check_result_list_visible(user=user, project=project)
        .filter(concerns)
        .exclude(status=ResultStatus.PENDING)
        .order_by("-finished_at", "-id")
    )


@dataclass(frozen=True)
class LinkReading:
    """One link-health reading of a port, for the history chart."""

    result_id: int
    when: str
    label: str
    effective_ber: float | None
    symbol_ber: float | None
    symbol_errors: float | None
    link_down: float | None
    link_error_recovery: float | None


def link_readings(results) -> list[LinkReading]:
    """The link-health readings among a history's results, oldest first (a chart reads left to right)."""
    readings = []
    for result in results:
        counters = (result.metrics or {}).get("counters")
        if result.run.kind != CheckKind.LINK_HEALTH or not counters:
            continue
        when = result.finished_at.strftime("%Y-%m-%d %H:%M") if result.finished_at else ""
        readings.append(
            LinkReading(
                result_id=result.pk,
                when=when,
                label=result_label(result),
                effective_ber=_number(counters.get("effective_ber")),
                symbol_ber=_number(counters.get("symbol_ber")),
                symbol_errors=_number(counters.get("symbol_errors")),
                link_down=_number(counters.get("link_down")),
                link_error_recovery=_number(counters.get("link_error_recovery")),
            )
        )
    return list(reversed(readings))
