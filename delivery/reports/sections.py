"""Delivery's own sections of the acceptance report (registered in delivery.apps): the summary (20), the
punch list with the waivers (90) and the sign-off page (100).

Each provider reads the project as it is now; the snapshot freezes what it returns. Counts are aggregate
queries and tables stream `values_list(...).iterator()` rows, so the 1,024-server project costs the same
handful of queries as a lab. The same figures feed the version's list (`summary_figures`), read in the
snapshot's transaction, so the list and the report always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Case, Count, IntegerField, OuterRef, Q, Subquery, Value, When
from django.utils import timezone

from core.choices import JobStatus
from delivery.choices import (
    SATISFIED_STAGE_STATUSES,
    UNRESOLVED_PUNCH_STATUSES,
    PunchSeverity,
    PunchStatus,
    StageStatus,
)
from delivery.models import PunchItem, Stage, Waiver
from delivery.reports.gates import ACCEPTANCE_SIGNED
from projects.models import Project
from projects.reports import Column, Facts, Paragraph, Section, Table
from validation.choices import EXECUTING_RUNNERS, CheckKind, Verdict
from validation.kinds import STARTABLE_CHECK_KINDS
from validation.models import CheckRun
from validation.selectors import with_verdict_counts

SUMMARY, PUNCH, SIGNOFF = "summary", "punch", "signoff"
SECTION_TITLES = {SUMMARY: "Summary", PUNCH: "Punch list and waivers", SIGNOFF: "Sign-off"}
SECTION_ORDERS = {SUMMARY: 20, PUNCH: 90, SIGNOFF: 100}

READY, NOT_READY = "ready", "not_ready"


def person(first: str | None, last: str | None, username: str | None) -> str:
    """A user as the report names them: their full name, else their username ("" for nobody)."""
    full = f"{first or ''} {last or ''}".strip()
    return full or username or ""


def _person_fields(prefix: str) -> tuple[str, str, str]:
    return f"{prefix}__first_name", f"{prefix}__last_name", f"{prefix}__username"


# --- the figures -------------------------------------------------------------------------------------------


def latest_check_runs(project: Project):
    """The newest executed run of each startable kind, with its verdict counts (one query): the state of the
    cluster as the checks last saw it. Uploads and soak windows are left out, as validation's overview does
    (validation.selectors.latest_runs_by_kind, which needs a user; the report is the system's read)."""
    # Settled runs only (as the gates read them): a rerun still queued or running, or one cancelled, must not
    # hide the failures of the last run that finished.
    executed = CheckRun.objects.filter(project=project, runner__in=EXECUTING_RUNNERS, kind__in=STARTABLE_CHECK_KINDS,
                                       status__in=(JobStatus.DONE, JobStatus.FAILED))
    newest = executed.filter(kind=OuterRef("kind")).order_by("-created_at", "-id").values("pk")[:1]
    return with_verdict_counts(executed.filter(pk=Subquery(newest))).order_by("kind")


@dataclass(frozen=True)
class SummaryFigures:
    passed: int
    warned: int
    failed: int
    errored: int
    open_punch_items: int
    waivers: int
    stages_total: int
    stages_unsatisfied: list[str]  # titles of the stages before acceptance not done or skipped
    verdict: str  # READY or NOT_READY

    def as_json(self) -> dict:
        return {"pass": self.passed, "warn": self.warned, "fail": self.failed, "error": self.errored,
                "open_punch_items": self.open_punch_items, "waivers": self.waivers, "verdict": self.verdict,
                "stages_total": self.stages_total, "stages_unsatisfied": self.stages_unsatisfied}


def _customer_items(project: Project):
    """The punch items the report shows: the ones marked customer-visible (the report goes to the customer)."""
    return PunchItem.objects.filter(project=project, customer_visible=True)


def summary_figures(project: Project, *, runs=None, stages=None) -> SummaryFigures:
    """Pass / warn / fail / error across the latest runs, open customer-visible punch items, waivers, and the
    verdict: ready when every stage before acceptance is done or skipped, no latest result fails or could
    not be measured, and no punch item the customer sees is open."""
    runs = list(latest_check_runs(project)) if runs is None else runs
    stages = list(Stage.objects.filter(project=project).order_by("order", "id")) if stages is None else stages
    totals = {name: sum(getattr(run, name) for run in runs) for name in ("passed", "warned", "failed", "errored")}
    open_items = _customer_items(project).filter(status__in=UNRESOLVED_PUNCH_STATUSES).count()
    waivers = Waiver.objects.filter(stage__project=project).count()
    unsatisfied = [s.title for s in stages
                   if s.gate_key != ACCEPTANCE_SIGNED and s.status not in SATISFIED_STAGE_STATUSES]
    ready = not unsatisfied and not totals["failed"] and not totals["errored"] and not open_items and bool(runs)
    return SummaryFigures(passed=totals["passed"], warned=totals["warned"], failed=totals["failed"],
                          errored=totals["errored"], open_punch_items=open_items, waivers=waivers,
                          stages_total=len(stages), stages_unsatisfied=unsatisfied,
                          verdict=READY if ready else NOT_READY)


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def verdict_text(project: Project, figures: SummaryFigures) -> str:
    """The verdict in one paragraph of plain words."""
    if figures.verdict == READY:
        opening = (f"{project.name} is ready for acceptance: every stage of the delivery is done, and the latest "
                   f"checks found {_plural(figures.passed, 'result')} passing")
        opening += f" and {_plural(figures.warned, 'warning')}." if figures.warned else "."
        if figures.waivers:
            opening += f" {_plural(figures.waivers, 'waiver')} recorded by the project's managers are listed " \
                       "with the punch list."
        return opening
    reasons = []
    if figures.stages_unsatisfied:
        reasons.append(f"{_plural(len(figures.stages_unsatisfied), 'stage')} not done yet "
                       f"({', '.join(figures.stages_unsatisfied)})")
    if figures.failed or figures.errored:
        reasons.append(f"the latest checks have {_plural(figures.failed, 'failing result')}"
                       + (f" and {_plural(figures.errored, 'result')} that could not be measured"
                          if figures.errored else ""))
    if figures.open_punch_items:
        reasons.append(f"{_plural(figures.open_punch_items, 'punch item')} still open")
    if not figures.passed and not figures.failed and not figures.errored:
        reasons.append("no check has been run yet")
    return f"{project.name} is not yet ready for acceptance: " + "; ".join(reasons) + "."


# --- summary (20) ------------------------------------------------------------------------------------------

STAGE_COLUMNS = [
    Column("stage", "Stage", width=18),
    Column("status", "Status", width=10),
    Column("gate", "Gate", kind="verdict", width=7),
    Column("missing", "Missing", kind="int", width=7),
    Column("evidence", "Gate evidence", width=34),
    Column("started", "Started", kind="date", width=10),
    Column("completed", "Completed", kind="date", width=10),
    Column("completed_by", "Completed by", width=14),
]
RUN_COLUMNS = [
    Column("kind", "Check", width=18),
    Column("finished", "Finished", kind="datetime", width=14),
    Column("pass", "Pass", kind="int", width=7),
    Column("warn", "Warn", kind="int", width=7),
    Column("fail", "Fail", kind="int", width=7),
    Column("error", "Not measured", kind="int", width=9),
]


def _gate_verdict(stage: Stage) -> str | None:
    """pass: the gate passes; warn: the stage is done or skipped without it (waived, skipped); fail: not met."""
    if stage.gate_passed:
        return Verdict.PASS.value
    if stage.status in SATISFIED_STAGE_STATUSES:
        return Verdict.WARN.value
    return None if stage.gate_passed is None else Verdict.FAIL.value


def _local_date(moment):
    return timezone.localtime(moment).date() if moment else None


def _stage_rows(stages: list[Stage]):
    for stage in stages:
        evidence = stage.skipped_reason and f"Skipped: {stage.skipped_reason}" or stage.gate_summary
        who = stage.completed_by
        yield [stage.title, StageStatus(stage.status).label, _gate_verdict(stage),
               stage.gate_missing_count if stage.gate_passed is False else 0, evidence,
               _local_date(stage.started_at), _local_date(stage.completed_at),
               person(who.first_name, who.last_name, who.username) if who else ""]


def _run_rows(runs: list[CheckRun]):
    for run in runs:
        yield [CheckKind(run.kind).label, run.finished_at, run.passed, run.warned, run.failed, run.errored]


def summary_section(project: Project) -> Section:
    stages = list(Stage.objects.filter(project=project).select_related("completed_by").order_by("order", "id"))
    runs = list(latest_check_runs(project))
    figures = summary_figures(project, runs=runs, stages=stages)
    blocks = [
        Paragraph(verdict_text(project, figures)),
        Facts(title="Results of the latest checks", items=[
            ("Pass", figures.passed), ("Warn", figures.warned), ("Fail", figures.failed),
            ("Not measured", figures.errored), ("Open punch items", figures.open_punch_items),
            ("Waivers", figures.waivers),
        ]),
    ]
    if stages:
        blocks.append(Table(key="stages", title="Stages of the delivery", columns=STAGE_COLUMNS,
                            rows=_stage_rows(stages), row_count=len(stages), summary_rows=len(stages),
                            verdict_column="gate"))
    if runs:
        blocks.append(Table(key="latest_runs", title="Latest check runs", columns=RUN_COLUMNS, rows=_run_rows(runs),
                            row_count=len(runs), summary_rows=len(runs),
                            note="The newest run of each kind; uploaded outputs and soak windows are not counted."))
    return Section(title=SECTION_TITLES[SUMMARY], blocks=blocks)


# --- punch list and waivers (90) ---------------------------------------------------------------------------

PUNCH_COLUMNS = [
    Column("number", "#", kind="int", width=6),
    Column("title", "Item", width=30),
    Column("severity", "Severity", width=8),
    Column("status", "Status", width=12),
    Column("object", "Concerns", width=16),
    Column("opened", "Opened", kind="date", width=10),
    Column("resolved", "Resolved", kind="date", width=10),
    Column("resolution", "Resolution", width=30),
]
WAIVER_COLUMNS = [
    Column("stage", "Stage", width=16),
    Column("items", "Items waived", width=16),
    Column("reason", "Reason", width=40),
    Column("recorded_by", "Recorded by", width=14),
    Column("recorded_at", "Recorded", kind="date", width=10),
]
PUNCH_SUMMARY_ROWS = 30

# Unresolved first (the worst severity first), then the resolved ones; each by opening date.
_STATUS_ORDER = [PunchStatus.OPEN, PunchStatus.IN_PROGRESS, PunchStatus.FIXED, PunchStatus.WONT_FIX,
                 PunchStatus.VERIFIED]
_SEVERITY_ORDER = [PunchSeverity.CRITICAL, PunchSeverity.MAJOR, PunchSeverity.MINOR]


def _rank(field: str, values: list[str]):
    return Case(*(When(**{field: value}, then=Value(rank)) for rank, value in enumerate(values)),
                default=Value(len(values)), output_field=IntegerField())


def _punch_rows(items):
    for pk, title, severity, status, label, opened, fixed, verified, note, reason in items.iterator(chunk_size=2000):
        resolved = {PunchStatus.VERIFIED: verified or fixed, PunchStatus.FIXED: fixed}.get(status)
        resolution = reason if status == PunchStatus.WONT_FIX else note
        yield [pk, title, PunchSeverity(severity).label, PunchStatus(status).label, label, _local_date(opened),
               _local_date(resolved), resolution]


def _waiver_rows(waivers):
    for waiver in waivers:
        items = (f"all {waiver.missing_count:,} missing" if waiver.all_items
                 else _plural(len(waiver.items), "item"))
        who = waiver.recorded_by
        yield [waiver.stage.title, items, waiver.reason,
               person(who.first_name, who.last_name, who.username) if who else "", _local_date(waiver.recorded_at)]


def punch_section(project: Project) -> Section:
    items = _customer_items(project)
    counts = items.aggregate(total=Count("pk"), open=Count("pk", filter=Q(status__in=UNRESOLVED_PUNCH_STATUSES)))
    rows = (items.annotate(status_rank=_rank("status", _STATUS_ORDER), severity_rank=_rank("severity", _SEVERITY_ORDER))
            .order_by("status_rank", "severity_rank", "opened_at", "pk")
            .values_list("pk", "title", "severity", "status", "object_label", "opened_at", "fixed_at", "verified_at",
                         "resolution_note", "wont_fix_reason"))
    waivers = list(Waiver.objects.filter(stage__project=project).select_related("stage", "recorded_by")
                   .order_by("stage__order", "recorded_at", "pk"))
    blocks = [Paragraph(
        f"{_plural(counts['total'], 'punch item')} shared with the customer, {counts['open']:,} of them still open; "
        f"{_plural(len(waivers), 'waiver')}."
    )]
    if counts["total"]:
        blocks.append(Table(key="punch_items", title="Punch list", columns=PUNCH_COLUMNS, rows=_punch_rows(rows),
                            row_count=counts["total"], summary_rows=PUNCH_SUMMARY_ROWS,
                            note="Open items first, the most severe first."))
    if waivers:
        blocks.append(Table(key="waivers", title="Waivers", columns=WAIVER_COLUMNS, rows=_waiver_rows(waivers),
                            row_count=len(waivers), summary_rows=len(waivers),
                            note="A stage completed without some of its gate's items, by a manager's decision."))
    return Section(title=SECTION_TITLES[PUNCH], blocks=blocks)


# --- sign-off (100) ----------------------------------------------------------------------------------------


def acceptance_statement(project: Project) -> str:
    """The statement the customer signs (the default one; a signer may word their own). The project's name is
    quoted as it is: a name that already says "cluster" ("72-node B300 post-training cluster") is not followed
    by the word again."""
    return (f"On behalf of {project.customer_name}, I accept “{project.name}” ({project.code}) as "
            f"delivered by {settings.INTEGRATOR_NAME} and described in this report, subject to the punch items "
            "and waivers it lists.")


def acceptance_statement_zh(project: Project) -> str:
    """The statement in Chinese, when the project has its Chinese names ("" otherwise)."""
    if not (project.customer_name_zh or project.name_zh):
        return ""
    customer = project.customer_name_zh or project.customer_name
    name = project.name_zh or project.name
    return (f"本人代表{customer}确认验收由{settings.INTEGRATOR_NAME_ZH}交付的{name}（{project.code}），"
            "其状况如本报告所述，并以报告所列的待办事项和豁免为准。")


def acceptance_statement_default(project: Project) -> str:
    """The statement a signer signs unless they word their own: as the sign-off page prints it."""
    return "\n".join(filter(None, [acceptance_statement(project), acceptance_statement_zh(project)]))


def signoff_section(project: Project) -> Section:
    """The statement to sign, in English and (with the project's Chinese names) Chinese. The signature block
    after it is the renderers': blank lines in the document to sign, filled in a signed copy."""
    blocks = [Paragraph(acceptance_statement(project))]
    chinese = acceptance_statement_zh(project)
    if chinese:
        blocks.append(Paragraph(chinese))
    return Section(title=SECTION_TITLES[SIGNOFF], blocks=blocks)


PROVIDERS = {SUMMARY: summary_section, PUNCH: punch_section, SIGNOFF: signoff_section}


def register() -> None:
    """Called from delivery's AppConfig.ready()."""
    from projects.reports import register_report_section

    for key, provider in PROVIDERS.items():
        register_report_section(key, provider, order=SECTION_ORDERS[key], title=SECTION_TITLES[key])
