"""Reads of the project dashboard and the portfolio: each stage's progress from its stored gate result,
progress on the floor (cabling's selectors), the burn-up of cables verified and links passing counted by
day in the database, today's activity and the check runs in progress.

The dashboard costs the same handful of queries for a lab as for the 1,024-server project (at most 20 in
all, the test and bench/bench_dashboard.py hold it to that): aggregates and group-bys only, never a row
loaded per cable. The portfolio costs the same for one project as for fifty.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.db.models import Case, Count, F, Max, Min, Q, When
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from cabling.choices import CableStatus
from cabling.models import Cable, CableEnd
from cabling.selectors import FloorProgress, TechnicianDay, floor_progress, work_since
from core.choices import ACTIVE_JOB_STATUSES
from delivery.choices import SATISFIED_STAGE_STATUSES, UNRESOLVED_PUNCH_STATUSES, StageStatus
from delivery.dashboard.charts import RATE_WINDOW_DAYS, Series, forecast_finish
from delivery.models import ChecklistItem, PunchItem, Stage
from delivery.punch.selectors import punch_item_list
from delivery.stages.selectors import current_stage, stage_list
from inventory.choices import DeviceRole, HardwareKind, Network
from inventory.gates import RACKING, SITE_READINESS
from inventory.models import Device, HardwareModel, Port
from projects.access import scope_to_user
from projects.models import Project
from projects.selectors import project_list
from validation.choices import CheckKind, ResultStatus
from validation.gates import CABLING, LINK_CHECKS, OS_DRIVERS, PASSING
from validation.models import CheckResult, CheckRun

CABLES_SERIES = "cables verified"
LINKS_SERIES = "links passing"
# The stages whose work has a rate the dashboard measures: each forecasts from its own series only. The others
# have no rate ("not enough data"), whatever the other stages' pace.
STAGE_SERIES = {CABLING: CABLES_SERIES, LINK_CHECKS: LINKS_SERIES}
BLOCKERS_SHOWN = 3  # the first items a stage's gate misses, in the headline
PUNCH_SHOWN = 5  # the oldest unresolved punch items; the punch list has the rest
RUNS_SHOWN = 20  # check runs in progress and finished today, each; more are on the checks page


def start_of_today() -> datetime:
    return timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)


# --- stages ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StageProgress:
    """A stage with how much of its gate is met: `total` items, `missing` of them still missing (the
    stored gate result's count). A gate that does not count items (benchmarks, soak, acceptance) is one
    item: met or not."""

    stage: Stage
    total: int
    missing: int
    forecast: date | None = None  # at its own rate, for a stage whose work a series counts

    @property
    def done(self) -> int:
        if self.stage.status in SATISFIED_STAGE_STATUSES or self.stage.gate_passed:
            return self.total
        if _cannot_count(self.stage):
            return 0
        return max(self.total - self.missing, 0)

    @property
    def percent(self) -> int:
        return int(self.done * 100 / self.total) if self.total else 0


# A gate's "gate:..." item says it could not count its items yet (no versions pinned, no links planned):
# nothing is done then, whatever the count says. The cabling gate's missing comparison is the exception: one
# item among the cables (`_gate_totals` counts it).
COUNTED_GATE_ITEMS = frozenset({"gate:no-topology-comparison"})


def _cannot_count(stage: Stage) -> bool:
    return any(str(item.get("ref", "")).startswith("gate:") and item.get("ref") not in COUNTED_GATE_ITEMS
               for item in stage.gate_missing or [] if isinstance(item, dict))


def _gate_totals(*, floor: FloorProgress, gpu_nodes: int, cables: Series, links: Series) -> dict[str, int]:
    """How many items each counting gate checks, from the domain's own counts: the stored gate result says
    how many are missing, not of how many. The cabling gate also checks the topology comparison."""
    return {
        SITE_READINESS: len(floor.racks),
        RACKING: floor.total.devices,
        CABLING: cables.total + 1 if cables.total else 0,
        OS_DRIVERS: gpu_nodes,
        LINK_CHECKS: links.total,
    }


def stage_progress(stages: list[Stage], *, totals: dict[str, int], checklist_sizes: dict[int, int],
                   forecasts: dict[str, date | None] | None = None):
    """Each stage's bar: how much of its gate's work is done of how much, and its forecast by gate key."""
    rows = []
    for stage in stages:
        if stage.is_checklist:
            total = checklist_sizes.get(stage.pk, 0)
        else:
            total = totals.get(stage.gate_key) or 1
        missing = stage.gate_missing_count if stage.gate_passed is False else (0 if stage.gate_passed else total)
        rows.append(StageProgress(stage=stage, total=total, missing=min(missing, total),
                                  forecast=(forecasts or {}).get(stage.gate_key)))
    return rows


def _checklist_sizes(stages: list[Stage]) -> dict[int, int]:
    ids = [s.pk for s in stages if s.is_checklist]
    if not ids:
        return {}
    rows = ChecklistItem.objects.filter(stage_id__in=ids).order_by().values("stage_id").annotate(n=Count("pk"))
    return {row["stage_id"]: row["n"] for row in rows}


# --- the burn-up ------------------------------------------------------------------------------------------


def _series(name: str, rows) -> Series:
    """A Series from rows of (day, n, done) grouped by the day each was done (None: not done, or done
    without a date)."""
    by_day, total, undated = {}, 0, 0
    for row in rows:
        total += row["n"]
        if row["day"] is None:
            undated += row["done"]
        else:
            by_day[row["day"]] = row["done"]
    return Series(name=name, by_day=by_day, total=total, undated=undated)


def _cables_planned(user, project: Project):
    return scope_to_user(Cable.objects.filter(project=project, removed_from_plan=False), user)


def _verified_on():
    """When a cable became verified: the scan that confirmed its last end, or the topology comparison
    that verified it by the fabric's word (no verified_at). Not fabric_checked_at: every comparison moves
    that to its own time, and the burn-up's history would collapse onto the latest one."""
    return Coalesce("verified_at", "fabric_verified_at")


def cables_verified_series(*, user, project: Project) -> Series:
    """Planned cables verified, by the day they were: one grouped query."""
    verified = Q(status=CableStatus.VERIFIED)
    rows = (_cables_planned(user, project).annotate(day=TruncDate(Case(When(verified, then=_verified_on()))))
            .order_by().values("day").annotate(n=Count("pk"), done=Count("pk", filter=verified)))
    return _series(CABLES_SERIES, rows)


def gpu_nodes_of(devices):
    """The GPU nodes among `devices`: by role, or by a hardware model that is a GPU server (a subquery on
    the few models, not a join: PostgreSQL then knows which devices it keeps)."""
    servers = HardwareModel.objects.filter(kind=HardwareKind.GPU_SERVER).values("pk")
    return devices.filter(Q(role=DeviceRole.GPU_NODE) | Q(hardware_model__in=servers))


def planned_links_of(cables, *, project_ids):
    """The links a link-health run measures (validation.gates.planned_links): compute cables with an end
    on a GPU node's port, of the projects `project_ids` (the portfolio asks once for all its projects).

    Nested semi-joins from the nodes inward (their ports, the ends on those ports), not an EXISTS per cable
    (seconds on the 1,024-server project) nor a join of every end to its port and device with the node test
    made last (the ends of the switches' side joined for nothing)."""
    nodes = gpu_nodes_of(Device.objects.filter(project_id__in=project_ids)).values("pk")
    ends = CableEnd.objects.filter(port__in=Port.objects.filter(device__in=nodes).values("pk"))
    return cables.filter(network=Network.COMPUTE, pk__in=ends.values("cable_id"))


def links_passing_now(results):
    """One row per link measured whose latest link-health result (done or errored, as the link checks gate
    reads them) passes, with when it first passed (`first_pass`) and its project: one grouped query over the
    results, the test on the latest made by the database (HAVING), not a subquery per link (a second on the
    1,024-server project) nor a row per link measured sent to Python to be tested there. A link-health run
    measures the GPU nodes' compute ports, so its results' cables are planned links; removed cables are
    left out."""
    passing = Q(verdict__in=PASSING)
    return (results.filter(run__kind=CheckKind.LINK_HEALTH, status__in=(ResultStatus.DONE, ResultStatus.ERROR),
                           cable__network=Network.COMPUTE, cable__removed_from_plan=False)
            .order_by().values("cable_id", project_id=F("run__project_id"))
            .annotate(latest=Max("finished_at"), latest_pass=Max("finished_at", filter=passing),
                      first_pass=Min("finished_at", filter=passing))
            .filter(latest_pass__gte=F("latest")))


def links_passing_series(*, user, project: Project) -> Series:
    """Planned links whose latest link-health result passes, by the day they first passed: two queries (the
    links counted; the passing ones' first days, one date per link, counted here)."""
    links = planned_links_of(_cables_planned(user, project), project_ids=[project.pk])
    results = scope_to_user(CheckResult.objects.filter(run__project=project), user, "run__project")
    first_days = links_passing_now(results).annotate(first_day=TruncDate("first_pass"))
    by_day = Counter(first_days.values_list("first_day", flat=True))
    return Series(name=LINKS_SERIES, by_day=dict(by_day), total=links.count())


@dataclass(frozen=True)
class BurnupRow:
    day: date
    cables: int
    links: int


def burnup_rows(series: list[Series], *, limit: int = 30) -> list[BurnupRow]:
    """The table beside the chart: each day something was done (newest first, the latest `limit`), with
    the running counts by the end of it."""
    days = sorted({d for s in series for d in s.by_day})[-limit:]
    cables, links = (s.cumulative(days) for s in series)
    return [BurnupRow(day=d, cables=c, links=n) for d, c, n in reversed(list(zip(days, cables, links, strict=True)))]


# --- the dashboard ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """Where the delivery stands, first on the dashboard: the current stage, what holds it, and when it
    finishes at its own rate (None: not enough data, no rate of its own or nothing done lately)."""

    stage: Stage | None
    blockers: list[str]
    forecast: date | None
    has_rate: bool  # the stage's work is counted by a series (cabling, link checks)
    target: date | None

    @property
    def late_by(self) -> int | None:
        """Days the forecast lies past the target (0 or less: on time); None without either."""
        if self.forecast is None or self.target is None:
            return None
        return (self.forecast - self.target).days


def stage_blockers(stage: Stage, stages: list[Stage]) -> list[str]:
    """What holds a stage, in words: its reason when blocked, the stages it waits for, its gate's summary and
    the first items the gate misses."""
    done = {s.key for s in stages if s.status in SATISFIED_STAGE_STATUSES}
    titles = {s.key: s.title for s in stages}
    found = [stage.status_reason] if stage.status == StageStatus.BLOCKED and stage.status_reason else []
    waits = [titles.get(key, key) for key in stage.depends_on or [] if key not in done]
    if waits:
        found.append(f"Waits for {', '.join(waits)}.")
    if stage.gate_passed is False:
        if stage.gate_summary and stage.gate_summary not in found:
            found.append(stage.gate_summary)
        for item in (stage.gate_missing or [])[:BLOCKERS_SHOWN]:
            if isinstance(item, dict) and item.get("label"):
                found.append(f"{item['label']}: {item.get('reason', '')}".rstrip(": "))
    return found


def headline_of(stages: list[Stage], forecasts: dict[str, date | None], *, target: date | None) -> Headline:
    current = current_stage(stages)
    series = STAGE_SERIES.get(current.gate_key) if current else None
    return Headline(stage=current, blockers=stage_blockers(current, stages) if current else [],
                    forecast=forecasts.get(series) if series else None, has_rate=series is not None, target=target)


@dataclass
class Dashboard:
    stages: list[StageProgress]
    current: Stage | None
    floor: FloorProgress
    series: list[Series]
    forecasts: dict[str, date | None]  # by series
    headline: Headline
    stage_forecasts: dict[str, date | None]  # by stage key, for the stages with a series of their own
    first_day: date
    today: date
    people: list[TechnicianDay] | None  # None: not shown to this role
    scans_today: int
    runs_active: list[CheckRun] = field(default_factory=list)
    runs_finished_today: list[CheckRun] = field(default_factory=list)
    punch: list[PunchItem] = field(default_factory=list)


def _gpu_node_count(user, project: Project) -> int:
    return gpu_nodes_of(scope_to_user(Device.objects.filter(project=project), user)).count()


def _check_runs(user, project: Project, since: datetime) -> tuple[list[CheckRun], list[CheckRun]]:
    """(runs in progress, runs finished since `since`): one query, the latest RUNS_SHOWN of each kind
    at most in practice (a project runs a handful at a time)."""
    runs = scope_to_user(CheckRun.objects.filter(project=project), user).filter(
        Q(status__in=ACTIVE_JOB_STATUSES) | Q(finished_at__gte=since)
    ).select_related("requested_by").order_by("-created_at", "-id")[: 2 * RUNS_SHOWN]
    active, finished = [], []
    for run in runs:
        (active if run.status in ACTIVE_JOB_STATUSES else finished).append(run)
    return active[:RUNS_SHOWN], finished[:RUNS_SHOWN]


def oldest_punch_items(*, user, project: Project, limit: int = PUNCH_SHOWN) -> list[PunchItem]:
    """The unresolved items open the longest (a customer's: those shown to customers only), one query."""
    items = punch_item_list(user=user, project=project).filter(status__in=UNRESOLVED_PUNCH_STATUSES)
    return list(items.order_by("opened_at", "id")[:limit])


def project_dashboard(*, user, project: Project, show_people: bool = True) -> Dashboard:
    """Everything the dashboard shows, in a fixed number of queries whatever the project's size."""
    today_start = start_of_today()
    today = today_start.date()
    stages = list(stage_list(user=user, project=project))
    floor = floor_progress(user=user, project=project)
    cables = cables_verified_series(user=user, project=project)
    links = links_passing_series(user=user, project=project)
    totals = _gate_totals(floor=floor, gpu_nodes=_gpu_node_count(user, project), cables=cables, links=links)
    forecasts = {s.name: forecast_finish(done=s.done, total=s.total, recent=s.recent(today), today=today)
                 for s in (cables, links)}
    worked = [d for s in (cables, links) for d in s.by_day]
    people = work_since(user=user, project=project, since=today_start)
    active, finished = _check_runs(user, project, today_start)
    return Dashboard(
        stages=stage_progress(stages, totals=totals, checklist_sizes=_checklist_sizes(stages),
                              forecasts={key: forecasts[name] for key, name in STAGE_SERIES.items()}),
        current=current_stage(stages), floor=floor, series=[cables, links], forecasts=forecasts,
        headline=headline_of(stages, forecasts, target=project.target_date),
        stage_forecasts={s.key: forecasts[STAGE_SERIES[s.gate_key]] for s in stages if s.gate_key in STAGE_SERIES},
        first_day=min(worked, default=project.start_date or today),
        today=today, people=people if show_people else None, scans_today=sum(p.scans for p in people),
        runs_active=active, runs_finished_today=finished, punch=oldest_punch_items(user=user, project=project),
    )


# --- the portfolio ----------------------------------------------------------------------------------------


@dataclass
class PortfolioRow:
    project: Project
    stage_count: int = 0
    stages_done: int = 0
    current: Stage | None = None
    blocked: list[Stage] = field(default_factory=list)
    forecasts: list[date | None] = field(default_factory=list)  # cables verified, links passing
    today: date | None = None

    @property
    def forecast(self) -> date | None:
        """When the current stage finishes at its own rate (None: no rate of its own, or none lately)."""
        series = STAGE_SERIES.get(self.current.gate_key) if self.current else None
        if series is None or len(self.forecasts) < 2:
            return None
        return self.forecasts[0 if series == CABLES_SERIES else 1]

    @property
    def late_by(self) -> int | None:
        """Days the forecast lies past the target date (0 or less: on time); None without either."""
        if self.forecast is None or self.project.target_date is None:
            return None
        return (self.forecast - self.project.target_date).days


def _rates_by_project(cables, *, done: Q, done_at, since: datetime) -> dict[int, tuple[int, int, int]]:
    """{project id: (total, done, done since `since`)} in one grouped query."""
    rows = cables.annotate(done_at=done_at).order_by().values("project_id").annotate(
        total=Count("pk"), done=Count("pk", filter=done), recent=Count("pk", filter=done & Q(done_at__gte=since)))
    return {row["project_id"]: (row["total"], row["done"], row["recent"]) for row in rows}


def _link_rates_by_project(links, results, *, since: datetime) -> dict[int, tuple[int, int, int]]:
    """{project id: (planned links, passing now, of which first passed since `since`)}: two queries."""
    rates = {row["project_id"]: [row["n"], 0, 0]
             for row in links.order_by().values("project_id").annotate(n=Count("pk"))}
    for row in links_passing_now(results).values("project_id", "first_pass"):
        if row["project_id"] in rates:
            rates[row["project_id"]][1] += 1
            rates[row["project_id"]][2] += row["first_pass"] >= since
    return {project_id: tuple(rate) for project_id, rate in rates.items()}


def portfolio(*, user) -> list[PortfolioRow]:
    """One row per project the user sees: its current stage, what blocks it, and when its cabling and link
    checks finish at their current rates. Five queries whatever the number of projects."""
    rows = {p.pk: PortfolioRow(project=p) for p in project_list(user=user)}
    if not rows:
        return []
    today_start = start_of_today()
    today, since = today_start.date(), today_start - timedelta(days=RATE_WINDOW_DAYS - 1)
    by_project = defaultdict(list)
    for stage in Stage.objects.filter(project_id__in=rows).order_by("project_id", "order", "id"):
        by_project[stage.project_id].append(stage)
    for project_id, stages in by_project.items():
        row = rows[project_id]
        row.stage_count, row.current = len(stages), current_stage(stages)
        row.stages_done = sum(1 for s in stages if s.status in SATISFIED_STAGE_STATUSES)
        row.blocked = [s for s in stages if s.status == StageStatus.BLOCKED or (
            s.status == StageStatus.IN_PROGRESS and s.gate_passed is False)]
    cables = Cable.objects.filter(project_id__in=rows, removed_from_plan=False)
    verified = Q(status=CableStatus.VERIFIED)
    cable_rates = _rates_by_project(cables, done=verified, done_at=_verified_on(), since=since)
    link_rates = _link_rates_by_project(planned_links_of(cables, project_ids=list(rows)),
                                        CheckResult.objects.filter(run__project_id__in=rows), since=since)
    for project_id, row in rows.items():
        row.today = today
        for rates in (cable_rates, link_rates):
            total, done, recent = rates.get(project_id, (0, 0, 0))
            row.forecasts.append(forecast_finish(done=done, total=total, recent=recent, today=today))
    return list(rows.values())

