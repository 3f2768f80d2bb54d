"""Reads of the validation engine, always scoped to what the user may see (delivery.access), with
the joins a page needs so its query count does not grow with the number of runs or results."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404

from delivery.access import scope_to_user, visible_projects
from delivery.models import Project
from inventory.models import Port

from . import criteria
from .choices import CheckKind, ResultStatus, Verdict
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
    """The newest run of each kind, for a project's validation overview (one query)."""
    latest: dict[str, CheckRun] = {}
    for run in check_run_list(user=user, project=project):
        latest.setdefault(run.kind, run)
    return latest


def check_result_list(
    *,
    user,
    run: CheckRun,
    verdict: str | None = None,
    network: str | None = None,
    plane: int | None = None,
    rack: int | str | None = None,
) -> QuerySet[CheckResult]:
    """A run's results, filterable by verdict, network and plane (of the port tested) and rack (of the
    node). Heavy columns (raw output) are deferred: a list never needs them."""
    results = scope_to_user(CheckResult.objects.filter(run=run), user, "run__project")
    if verdict:
        results = results.filter(verdict=verdict)
    if network:
        results = results.filter(port__network=network)
    if plane is not None and plane != "":
        # A physical port carries every plane of its lanes; match the port itself or one of its lanes.
        results = results.filter(Q(port__plane=plane) | Q(port__lanes__plane=plane)).distinct()
    if rack:
        results = results.filter(device__rack=rack)
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
