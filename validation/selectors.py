"""Reads of the validation engine, always scoped to what the user may see (projects.access), with
the joins a page needs so its query count does not grow with the number of runs or results."""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
from array import array
from dataclasses import dataclass

from django.db.models import (
    Case,
    Count,
    F,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from cabling.models import Cable, CableEnd
from inventory.models import Device, Port
from projects.access import scope_to_user, visible_projects
from projects.models import Project

from . import criteria
from .choices import EXECUTING_RUNNERS, CheckKind, ResultStatus, Verdict
from .kinds import STARTABLE_CHECK_KINDS
from .models import (
    SEVERITY_RANK,
    SLOWEST_GBPS,
    SLOWEST_GBPS_OR_NONE,
    AcceptanceProfile,
    CheckResult,
    CheckRun,
    JSONNumber,
)

_COUNTED = {"passed": Verdict.PASS, "warned": Verdict.WARN, "failed": Verdict.FAIL, "errored": Verdict.ERROR}


def _stored_or_live_count(name: str, verdict: str):
    """A finished run's stored count (CheckRun.summary_*), else its results of `verdict` counted by a
    subquery that the database runs only for a run without stored figures (a CASE evaluates the branch
    it takes): a finished run's page or list row never counts its results."""
    live = (
        CheckResult.objects.filter(run=OuterRef("pk"), verdict=verdict)
        .order_by()
        .values("run")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Case(
        When(summarised_at__isnull=False, then=F(CheckRun.SUMMARY_COUNTS[name])),
        default=Coalesce(Subquery(live, output_field=IntegerField()), Value(0)),
        output_field=IntegerField(),
    )


def with_verdict_counts(runs: QuerySet[CheckRun]) -> QuerySet[CheckRun]:
    """Annotate passed / warned / failed / errored counts for progress bars and badges: stored for a
    finished run, counted for one still running."""
    return runs.annotate(**{name: _stored_or_live_count(name, verdict) for name, verdict in _COUNTED.items()})


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


def worst_first(results: QuerySet[CheckResult]) -> QuerySet[CheckResult]:
    """Failures, then errors, warnings, passes and targets still pending; in run order within each."""
    return results.alias(severity=SEVERITY_RANK).order_by("severity", "round", "id")


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


# -- run pages at scale (issue 11): figures aggregated on the server, a constant number of queries -------

BER_FLOOR = 1e-20  # below it a BER counts no errors (mlxlink prints 1.5e-254): one bucket, "< 1e-20"
BER_DECADES = tuple(range(-20, 0))  # the decades a page draws: [1e-20, 1e-19) ... [0.1, 1]; a BER is at most 1
BER_BELOW, BER_NONE = "below", "none"  # the buckets that are no decade: below the floor, no reading


def ber_bucket(value: float | None) -> str:
    """The bucket a port's effective BER falls in, as the results filter names it: "below", "none" or the
    decade k (10^k <= value < 10^(k+1), as text), the last decade holding everything from 0.1 up. Decided by
    comparing with powers of ten, exactly as the filter's SQL does, so a bar's count is its filter's rows."""
    if value is None:
        return BER_NONE
    if value < BER_FLOOR:
        return BER_BELOW
    for k in reversed(BER_DECADES):
        if value >= 10.0**k:
            return str(k)
    return str(BER_DECADES[0])  # not reached: the floor is 10^BER_DECADES[0]


# The effective BER as the database reads it: a number, or NULL for no reading (the key missing, JSON null, or
# text such as "N/A": a number's place only holds a number, so text never reaches a cast, see JSONNumber).
EFFECTIVE_BER = JSONNumber("metrics__counters__effective_ber")


def ber_bucket_filter(bucket: str) -> Q:
    """The condition on the annotation `effective_ber_value` (see with_effective_ber) for one bucket: the
    rows run_ber_decades counts in it (a result not measured yet is in no bucket)."""
    if bucket == BER_NONE:
        return Q(effective_ber_value__isnull=True) & ~Q(status=ResultStatus.PENDING)
    if bucket == BER_BELOW:
        return Q(effective_ber_value__lt=BER_FLOOR)
    k = int(bucket)
    condition = Q(effective_ber_value__gte=10.0**k)
    return condition if k == BER_DECADES[-1] else condition & Q(effective_ber_value__lt=10.0 ** (k + 1))


def with_effective_ber(results: QuerySet[CheckResult]) -> QuerySet[CheckResult]:
    """The effective BER of a link-health result as a number the database compares, NULL when there is no
    number (mlxlink's parser stores a number or null; an upload or an older row may hold text)."""
    return results.alias(effective_ber_value=EFFECTIVE_BER)


@dataclass(frozen=True)
class BerDecades:
    """How many measured ports of a run fall in each BER bucket (ber_bucket's names)."""

    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def count(self, bucket: str) -> int:
        return self.counts.get(bucket, 0)


def run_ber_decades(*, user, run: CheckRun) -> BerDecades:
    """Ports per effective-BER bucket of a link-health run: one query reading one number per result (the
    database extracts it from the metrics), whatever the run's size."""
    results = scope_to_user(run.results.exclude(status=ResultStatus.PENDING), user, "run__project")
    counts: dict[str, int] = {}
    for value in results.order_by().values_list(EFFECTIVE_BER, flat=True):
        bucket = ber_bucket(value)  # the number the filter compares: text is "none" in both
        counts[bucket] = counts.get(bucket, 0) + 1
    return BerDecades(counts)


def check_run_get(*, user, project: Project, pk: int) -> CheckRun:
    """One run of the project without its counts or log (for an image or a text file), or 404."""
    runs = scope_to_user(CheckRun.objects.filter(project=project), user)
    return get_object_or_404(runs.defer("log", "options"), pk=pk)


def check_run_log(*, user, project: Project, pk: int) -> CheckRun:
    runs = scope_to_user(CheckRun.objects.filter(project=project), user)
    return get_object_or_404(runs.only("id", "project_id", "log"), pk=pk)


def _matrix_pairs(user, run: CheckRun) -> QuerySet[CheckResult]:
    results = scope_to_user(run.results.all(), user, "run__project")
    return results.filter(device__isnull=False, peer_device__isnull=False).order_by()


def _matrix_devices(user, run: CheckRun) -> list[tuple[int, str]]:
    """(id, name) of the nodes a matrix run paired, in natural order of their names (the heat map's rows and
    columns): a UNION of the devices on either side of a pair (see report_selectors.matrix_nodes for why
    not an OR), then their names."""
    pairs = _matrix_pairs(user, run)
    ids = [row["device_id"] for row in pairs.values("device_id").union(pairs.values("peer_device_id"))]
    devices = Device.objects.filter(pk__in=ids).values_list("pk", "name")
    return sorted(devices, key=lambda device: _natural_key(device[1]))


def matrix_nodes(*, user, run: CheckRun) -> list[str]:
    return [name for _, name in _matrix_devices(user, run)]


@dataclass(frozen=True)
class MatrixScale:
    lo_gbps: float | None
    hi_gbps: float | None


def matrix_scale(*, user, run: CheckRun) -> MatrixScale:
    """The slowest and the fastest pair's slowest rail: the heat map's colour scale. A finished run's are
    stored on it (no query; `run` was read scoped to the user); a running run's are one aggregate."""
    if run.has_summary:
        return MatrixScale(lo_gbps=run.summary_figure_lo, hi_gbps=run.summary_figure_hi)
    figures = _matrix_pairs(user, run).aggregate(lo=Min(SLOWEST_GBPS), hi=Max(SLOWEST_GBPS))
    return MatrixScale(lo_gbps=figures["lo"], hi_gbps=figures["hi"])


def worst_pairs_first(results: QuerySet[CheckResult]) -> QuerySet[CheckResult]:
    """A matrix run's results with the worst pairs first: failures, errors, warnings, then the slowest
    slowest-rail (a pair without a figure before any with one), so the first page of the results lists
    the pairs to look at. The order is the index checkresult_worst_pairs_idx's (the same expressions, from
    models), so a page is read from the index instead of sorting every pair."""
    return results.alias(severity=SEVERITY_RANK, slowest=SLOWEST_GBPS_OR_NONE).order_by("severity", "slowest", "id")


@dataclass(frozen=True)
class MatrixCells:
    """Every measured pair of a matrix run as indexes into `nodes`, its slowest rail (NaN: none) and its
    level (0 pass, 1 warn, 2 fail: charts.LEVEL_CODES), in compact arrays (half a million pairs at 1,024
    nodes: a few MB, not a list of objects)."""

    nodes: list[str]
    rows: array
    cols: array
    values: array
    levels: bytearray


_LEVEL_OF_VERDICT = {Verdict.WARN: 1, Verdict.FAIL: 2, Verdict.ERROR: 2}


def node_indexes(count: int) -> array:
    """An empty array for indexes into `count` nodes: two bytes each while they fit (65,535), else four (an
    index past it would raise OverflowError in a two-byte array)."""
    return array("H" if count <= 2**16 else "I")


def matrix_cells(*, user, run: CheckRun) -> MatrixCells:
    """The matrix image's figures: the nodes (one query), then every pair streamed with its figure as the
    JSON's text (decoding the JSON of half a million results in Python would take most of the time)."""
    devices = _matrix_devices(user, run)
    device_index = {pk: index for index, (pk, _) in enumerate(devices)}
    nodes = [name for _, name in devices]
    rows, cols, values, levels = node_indexes(len(nodes)), node_indexes(len(nodes)), array("d"), bytearray()
    pairs = _matrix_pairs(user, run).values_list("device_id", "peer_device_id", KT("metrics__min_gbps"), "verdict")
    for device_id, peer_id, figure, verdict in pairs.iterator(chunk_size=10_000):
        a, b = device_index.get(device_id), device_index.get(peer_id)
        if a is None or b is None:
            continue
        value = _number(figure)
        rows.append(a)
        cols.append(b)
        values.append(math.nan if value is None else value)
        levels.append(_LEVEL_OF_VERDICT.get(verdict, 0))
    return MatrixCells(nodes=nodes, rows=rows, cols=cols, values=values, levels=levels)
