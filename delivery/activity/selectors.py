"""A project's activity feed, newest first, merged from the rows the delivery already keeps (no event table):
stages started, completed, skipped and reopened (the stage's fields and its history), waivers, punch items
opened, fixed and verified, report versions rendered, issued and signed or rejected, finished check runs and
topology comparisons, and scans per day.

Each source is one query reading at most as many rows as the requested page could need, so a page costs
the same number of queries whatever the project holds. What a customer reads is narrower: only punch items
shown to customers, no reasons a stage reopened (internal), and scans as day totals without who scanned (as
the dashboard shows them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, Q
from django.db.models.functions import TruncDate
from django.urls import reverse

from cabling.models import ScanEvent
from core.choices import ACTIVE_JOB_STATUSES, JobStatus
from delivery.choices import ReportDecision
from delivery.models import ReportSignature, ReportVersion, Stage, Waiver
from delivery.punch.selectors import punch_item_list
from projects.choices import Role
from projects.models import Project
from validation.models import CheckRun, TopologyComparison

PAGE_SIZE = 50
MAX_PAGE = 20  # deeper than 1,000 events: the feed is for what happened lately; the pages of each kind keep the rest
# The history reasons delivery.stages.services writes when a stage reopens, and when it waits for one that did.
REOPENED = "gate regressed"
BLOCKED = "a dependency regressed"


@dataclass(frozen=True)
class Event:
    at: datetime
    kind: str  # a CSS-friendly word: stage, waiver, punch, report, check, topology, scan
    text: str
    who: str = ""
    url: str = ""


@dataclass
class ActivityPage:
    events: list[Event]
    page: int
    has_next: bool

    @property
    def has_previous(self) -> bool:
        return self.page > 1


def _name(user) -> str:
    return (user.get_full_name() or user.get_username()) if user is not None else ""


def _stage_event(row, team: bool) -> tuple[str, str]:
    """What one history row of a stage says happened, and who did it ("" for the system)."""
    reason = row.history_change_reason
    who = _name(row.history_user)
    if reason == "started":
        return f"{row.title} started", who
    if reason.startswith("completed"):
        return f"{row.title} {reason}", who
    if reason.startswith("skipped"):
        return f"{row.title} skipped ({row.skipped_reason})", who
    if reason == BLOCKED:
        why = f": {row.status_reason}" if team and row.status_reason else ""
        return f"{row.title} blocked, a stage it depends on reopened{why}", ""
    why = f": {row.gate_summary}" if team and row.gate_summary else ""
    return f"{row.title} reopened, its gate no longer passes{why}", ""


def _stage_events(project: Project, limit: int, team: bool) -> list[Event]:
    """From the stages' history (what a stage went through stays there after it reopens): started,
    completed, skipped, reopened and blocked, as delivery.stages.services names those changes."""
    said = Q(history_change_reason__in=("started", REOPENED, BLOCKED)) | Q(
        history_change_reason__startswith="completed") | Q(history_change_reason__startswith="skipped")
    rows = (Stage.history.filter(said, project_id=project.pk).select_related("history_user")
            .order_by("-history_date", "-history_id")[:limit])
    events = []
    for row in rows:
        text, who = _stage_event(row, team)
        events.append(Event(row.history_date, "stage", text, who,
                            reverse("stages:detail", args=[project.code, row.key])))
    return events


def _waiver_events(project: Project, limit: int) -> list[Event]:
    waivers = (Waiver.objects.filter(stage__project=project).select_related("stage", "recorded_by")
               .order_by("-recorded_at", "-id")[:limit])
    return [Event(w.recorded_at, "waiver", f"Waiver recorded on {w.stage.title}: {w.reason[:200]}",
                  _name(w.recorded_by), reverse("stages:detail", args=[project.code, w.stage.key]))
            for w in waivers]


def _punch_events(user, project: Project, limit: int) -> list[Event]:
    items = punch_item_list(user=user, project=project)
    events = []
    for field, verb, who in (("opened_at", "opened", "opened_by"), ("fixed_at", "fixed", "fixed_by"),
                             ("verified_at", "verified", "verified_by")):
        for item in items.filter(**{f"{field}__isnull": False}).order_by(f"-{field}", "-id")[:limit]:
            events.append(Event(getattr(item, field), "punch", f"Punch item #{item.pk} {verb}: {item.title}",
                                _name(getattr(item, who)), reverse("punch:detail", args=[project.code, item.pk])))
    return events


def _report_events(project: Project, limit: int) -> list[Event]:
    def url(number: int) -> str:
        return reverse("reports:version", args=[project.code, number])

    events = [Event(v.finished_at, "report", f"Acceptance report version {v.number} rendered", _name(v.requested_by),
                    url(v.number))
              for v in ReportVersion.objects.filter(project=project, status=JobStatus.DONE, finished_at__isnull=False)
              .select_related("requested_by").order_by("-finished_at", "-id")[:limit]]
    events += [Event(v.issued_at, "report", f"Acceptance report version {v.number} issued for acceptance",
                     _name(v.issued_by), url(v.number))
               for v in ReportVersion.objects.filter(project=project, issued_at__isnull=False)
               .select_related("issued_by").order_by("-issued_at", "-id")[:limit]]
    events += [Event(s.signed_at, "report", f"Acceptance report version {s.version.number} "
                     f"{_DECIDED.get(s.decision, 'signed')} by {s.name} ({s.title})", _name(s.signed_by),
                     url(s.version.number))
               for s in ReportSignature.objects.filter(version__project=project)
               .select_related("version", "signed_by").order_by("-signed_at", "-id")[:limit]]
    return events


# How the feed words the customer's decision on a version.
_DECIDED = {ReportDecision.ACCEPTED: "signed", ReportDecision.ACCEPTED_WITH_EXCEPTIONS: "signed with exceptions",
            ReportDecision.REJECTED: "rejected"}


def _finished(model, project: Project, limit: int):
    return (model.objects.filter(project=project, finished_at__isnull=False).exclude(status__in=ACTIVE_JOB_STATUSES)
            .select_related("requested_by").order_by("-finished_at", "-id")[:limit])


def _check_events(project: Project, limit: int) -> list[Event]:
    events = [Event(run.finished_at, "check", f"{run.get_kind_display()} run #{run.pk} {run.status_label.lower()}",
                    _name(run.requested_by), reverse("validation:run-detail", args=[project.code, run.pk]))
              for run in _finished(CheckRun, project, limit)]
    for comparison in _finished(TopologyComparison, project, limit):
        counts = comparison.counts or {}
        faults = sum(counts.get(state, 0) for state in ("missing", "miswired", "unplanned", "degraded"))
        what = f"{faults:,} link(s) not as planned" if faults else "matches the plan"
        if comparison.status != JobStatus.DONE:
            what = comparison.status_label.lower()
        events.append(Event(comparison.finished_at, "topology", f"Topology comparison #{comparison.pk}: {what}",
                            _name(comparison.requested_by),
                            reverse("validation:topology-detail", args=[project.code, comparison.pk])))
    return events


def _scan_events(project: Project, limit: int, team: bool) -> list[Event]:
    """Scans per day (and per person for the delivery team), dated by the day's last scan."""
    by = ["day", "user__first_name", "user__last_name", "user__username"] if team else ["day"]
    rows = (ScanEvent.objects.filter(project=project).annotate(day=TruncDate("created_at"))
            .values(*by).annotate(scans=Count("id"), last=Max("created_at")).order_by("-day", "-last")[:limit])
    events = []
    for row in rows:
        who = " ".join(p for p in (row.get("user__first_name"), row.get("user__last_name")) if p)
        who = who or row.get("user__username") or ""
        events.append(Event(row["last"], "scan", f"{row['scans']:,} scan(s) on {row['day']:%Y-%m-%d}", who,
                            reverse("cabling:progress", args=[project.code])))
    return events


def project_activity(*, user, project: Project, role: str | None, page: int = 1,
                     page_size: int = PAGE_SIZE) -> ActivityPage:
    """One page of the project's activity as `user` (of `role` in it, already allowed to view it) may see
    it, newest first. A fixed number of queries: each source reads at most page * page_size + 1 rows."""
    page = min(max(int(page), 1), MAX_PAGE)
    limit = page * page_size + 1
    team = role in (Role.MANAGER, Role.TECHNICIAN)
    events = [
        *_stage_events(project, limit, team), *_waiver_events(project, limit), *_punch_events(user, project, limit),
        *_report_events(project, limit), *_check_events(project, limit), *_scan_events(project, limit, team),
    ]
    events.sort(key=lambda e: e.at, reverse=True)
    start = (page - 1) * page_size
    return ActivityPage(events=events[start:start + page_size], page=page,
                        has_next=len(events) > page * page_size and page < MAX_PAGE)

