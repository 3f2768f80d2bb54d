"""Reads for the acceptance report's validation sections (validation.report_sections).

A report is about one project as a whole and delivery decides who may have it made, so these reads take
the project and are not scoped to a user (the page selectors in validation.selectors are). They are built
for a cluster of 1,024 servers: a fixed number of queries whatever the number of ports or runs, rows
streamed (`iterator(chunk_size=...)`) and never a list of every result in memory.

"The latest result of each port across runs" is one query: PostgreSQL's DISTINCT ON, or elsewhere (SQLite,
the embedded default) a ROW_NUMBER() window partitioned by port, both ordered newest first (the branch is
validation.sql's first_per_key_ids). Not a
correlated subquery per port: that is what makes validation.gates' link-checks gate take minutes on a
large fabric.

A report's table announces its row count before its rows, so the count and the rows must read the same
set although they run at different moments (the rows while the snapshot is written): every set here is
bounded by the highest result id when the section was built (`result_bound`), and a finished
result stays finished, so results arriving meanwhile do not change it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from django.db.models import Case, Count, F, IntegerField, Max, QuerySet, Value, When
from django.db.models.fields.json import KT

from core.choices import JobStatus
from inventory.models import Device
from projects.models import Project

from .choices import CheckKind, LinkChange, LinkState, ResultStatus, Verdict
from .models import AcceptanceProfile, CheckResult, CheckRun, SoakSample, SoakWindow, TopologyComparison
from .soak.maths import COUNTER_FIELDS
from .sql import first_per_key_ids
from .topology.selectors import STATE_ORDER

CHUNK = 2000  # rows per round trip while streaming
FINISHED = (ResultStatus.DONE, ResultStatus.ERROR)  # measured, or could not be: either is the port's latest word
SETTLED_RUN = (JobStatus.DONE, JobStatus.FAILED)  # as the benchmarks gate reads runs (validation.gates)

# Failures first, then warnings, then what could not be measured, then passes (and anything not judged).
SEVERITY_ORDER = (Verdict.FAIL, Verdict.WARN, Verdict.ERROR, Verdict.PASS)
_SEVERITY = Case(
    *(When(verdict=verdict, then=Value(rank)) for rank, verdict in enumerate(SEVERITY_ORDER)),
    default=Value(len(SEVERITY_ORDER)),
    output_field=IntegerField(),
)
_NEWEST_FIRST = (F("finished_at").desc(nulls_last=True), F("id").desc())


def acceptance_profile(project: Project) -> AcceptanceProfile:
    """The project's saved profile, or an unsaved one holding the defaults (a read creates no row)."""
    return AcceptanceProfile.objects.filter(project=project).first() or AcceptanceProfile(project=project)


def result_bound() -> int:
    """The highest result id now, the upper bound of every set a section reads: of every project, since
    the primary key's index answers that at once (a project's own maximum joins all its runs' results)."""
    return CheckResult.objects.aggregate(top=Max("id"))["top"] or 0


def stream(rows: QuerySet) -> Iterator:
    return rows.iterator(chunk_size=CHUNK)


# ---------------------------------------------------------------------------------------------------
# The latest result per port


def latest_per_port(*, project: Project, kinds: Sequence[str], bound: int) -> QuerySet[CheckResult]:
    """The newest finished result of each port among the project's results of `kinds` (any runner:
    executed runs and uploaded outputs alike), as one query."""
    results = CheckResult.objects.filter(
        run__project=project, run__kind__in=list(kinds), status__in=FINISHED, port__isnull=False, pk__lte=bound
    )
    newest = first_per_key_ids(rows=results, key="port_id", order=_NEWEST_FIRST)
    return CheckResult.objects.filter(pk__in=newest)


def failures_first(results: QuerySet[CheckResult]) -> QuerySet[CheckResult]:
    """Fail, warn, error, pass, then anything not judged yet; by node and port within each."""
    return results.alias(severity=_SEVERITY).order_by("severity", "device__name", "port__name", "id")


# What the link-health tables read of an mlxlink result, as JSON paths (the database extracts them, so
# neither the raw output nor the rest of the metrics travel).
LINK_FIGURES = (
    "metrics__counters__effective_ber",
    "metrics__counters__raw_ber",
    "metrics__module__temperature_c",
    "metrics__module__is_passive_copper",
    "metrics__module__ranges__temperature_c",
)
LINK_ROW = (
    "device__name", "port__name", "cable__label", "verdict", "reasons", "finished_at",
    "metrics__state", "metrics__physical_state", "metrics__speed", "metrics__width", "metrics__fec",
    "metrics__counters__effective_ber", "metrics__counters__raw_ber", "metrics__counters__symbol_errors",
    "metrics__counters__effective_physical_errors", "metrics__counters__link_down",
    "metrics__counters__link_error_recovery",
)
OPTIC_ROW = (
    "device__name", "port__name", "verdict", "metrics__module__is_passive_copper",
    "metrics__module__part_number", "metrics__module__serial", "metrics__module__temperature_c",
    "metrics__module__voltage_mv", "metrics__module__tx_power_dbm", "metrics__module__rx_power_dbm",
)
BANDWIDTH_FIGURES = ("metrics__bw_avg_gbps", "metrics__line_rate_gbps")
BANDWIDTH_ROW = (
    "device__name", "port__name", "peer_device__name", "peer_port__name", "target_key", "cable__label",
    "verdict", "reasons", "finished_at", "metrics__bw_avg_gbps", "metrics__bw_peak_gbps",
    "metrics__line_rate_gbps",
)


def latest_link_health(*, project: Project, bound: int) -> QuerySet[CheckResult]:
    return latest_per_port(project=project, kinds=[CheckKind.LINK_HEALTH], bound=bound)


def figures_of(results: QuerySet[CheckResult], fields: Iterable[str]) -> Iterator[dict]:
    """One dict per result (verdict, time, run and `fields`), streamed in no particular order."""
    return stream(results.order_by().values("verdict", "finished_at", "run_id", *fields))


def rows_of(results: QuerySet[CheckResult], fields: Iterable[str]) -> Iterator[dict]:
    """One dict per result with `fields`, failures first, streamed."""
    return stream(failures_first(results).values(*fields))


# ---------------------------------------------------------------------------------------------------
# Bandwidth matrix


def latest_run(*, project: Project, kind: str) -> CheckRun | None:
    """The newest settled run of `kind`: the one the benchmarks gate judges. A settled run's results are
    final, so its sets need no bound."""
    return (
        CheckRun.objects.filter(project=project, kind=kind, status__in=SETTLED_RUN)
        .select_related("requested_by")
        .defer("log")
        .order_by("-created_at", "-id")
        .first()
    )


def matrix_nodes(run: CheckRun) -> list[str]:
    """The names of the nodes a matrix run paired (either side of a pair): the devices of each side, as
    one UNION. Not `id IN (...) OR id IN (...)`, which PostgreSQL runs as a scan of the run's results per
    device (two minutes for 1,024 nodes), nor a UNION of the names joined on every pair (seconds): 0.2 s."""
    pairs = run.results.order_by()
    nodes = Device.objects.filter(pk__in=pairs.values("device_id")).order_by().values_list("name", flat=True)
    peers = Device.objects.filter(pk__in=pairs.values("peer_device_id")).order_by().values_list("name", flat=True)
    return list(nodes.union(peers))


def matrix_pairs(run: CheckRun) -> Iterator[tuple[str, str, str | None, str]]:
    """(node, peer, slowest rail Gb/s as the JSON's text, verdict) of every pair the run measured, streamed.
    The figure comes as text (->>): decoding half a million JSON values in Python takes three times as long
    as the whole query."""
    pairs = run.results.filter(device__isnull=False, peer_device__isnull=False).order_by()
    return stream(pairs.values_list("device__name", "peer_device__name", KT("metrics__min_gbps"), "verdict"))


def matrix_flagged(run: CheckRun) -> QuerySet[CheckResult]:
    """The pairs of a matrix run that did not pass, failures first."""
    return failures_first(run.results.exclude(verdict=Verdict.PASS))


MATRIX_ROW = (
    "device__name", "peer_device__name", "target_key", "verdict", "reasons", "metrics__min_gbps",
    "metrics__mean_gbps",
)


# ---------------------------------------------------------------------------------------------------
# NCCL


def nccl_results(run: CheckRun) -> list[dict]:
    """The run's results (one per group of nodes) with their parsed tables: a few per run, each a few
    dozen message sizes, so they are read at once."""
    return list(
        run.results.order_by("target_key", "id").values("id", "target_key", "verdict", "reasons", "status", "metrics")
    )


# ---------------------------------------------------------------------------------------------------
# Soak


def latest_soak_window(project: Project) -> SoakWindow | None:
    return (
        SoakWindow.objects.filter(project=project)
        .select_related("run", "started_by")
        .order_by("-started_at", "-id")
        .first()
    )


def soak_ports(window: SoakWindow) -> QuerySet[CheckResult]:
    return CheckResult.objects.filter(run_id=window.run_id)


def verdict_counts(results: QuerySet[CheckResult]) -> Counter:
    """verdict -> results, in one grouped query ("" for those not judged yet)."""
    return Counter(dict(results.order_by().values_list("verdict").annotate(n=Count("id"))))


SOAK_ROW = (
    "id", "device__name", "port__name", "target_key", "cable__label", "verdict", "reasons",
    "metrics__counters", "metrics__last_sweep", "metrics__growth",
)


def soak_baselines(window: SoakWindow) -> dict[int, dict]:
    """Each port's first good reading (result id -> counters): the baseline sample where it read, else the
    earliest later one. Two queries; the second streams only the ports whose baseline could not be read."""
    counters = ("result_id", "sweep", *COUNTER_FIELDS)
    samples = SoakSample.objects.filter(window=window, error="")
    first = {row["result_id"]: row for row in samples.filter(sweep=0).values(*counters)}
    read_at_zero = samples.filter(sweep=0).values("result_id")
    late = samples.exclude(result_id__in=read_at_zero)
    for row in stream(late.order_by("result_id", "sweep").values(*counters)):
        first.setdefault(row["result_id"], row)
    return first


# ---------------------------------------------------------------------------------------------------
# Topology comparison


def latest_comparison(project: Project) -> TopologyComparison | None:
    """The newest finished comparison: the one the cabling gate judges."""
    return (
        TopologyComparison.objects.filter(project=project, status=JobStatus.DONE)
        .select_related("requested_by", "run")
        .defer("log")
        .order_by("-created_at", "-id")
        .first()
    )


def _state_rank() -> Case:
    return Case(*(When(state=state, then=Value(rank)) for rank, state in enumerate(STATE_ORDER)),
                default=Value(len(STATE_ORDER)), output_field=IntegerField())


def faulty_links(comparison: TopologyComparison):
    """The links the comparison did not find ok (those fixed since the previous one are left out), worst
    first."""
    links = comparison.links.exclude(state=LinkState.OK).exclude(change=LinkChange.FIXED)
    return links.alias(rank=_state_rank()).order_by("rank", "key")


LINK_FAULT_ROW = (
    "state", "cable_label", "planned_a", "planned_b", "observed_a", "observed_b", "change", "note", "advice",
)
