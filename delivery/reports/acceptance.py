"""What the acceptance of a report version reads (the writes are delivery.reports.services'):

- `issue_blockers`: why a version may not be issued for acceptance yet, one message per stage before
  acceptance whose stored gate fails with no waiver covering it (delivery.stages.services.waivers_cover);
- `acceptance_exceptions`: what an acceptance with exceptions records, as it stands when the customer signs:
  every open punch item the customer sees, how many internal ones are open, and every waiver;
- `changes_since_acceptance`: how many swaps and RMA moves were recorded since the accepted version was
  signed (what the reports page tells the manager an as-built addendum would list);
- `addendum_section`: the section an as-built addendum opens with, listing those changes from the swaps and
  their history.

Each costs a fixed handful of queries, however many stages, items, waivers or swaps there are.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Case, IntegerField, Value, When
from django.utils import timezone

from cabling.choices import RmaState, SwapKind
from cabling.models import Swap
from delivery.choices import UNRESOLVED_PUNCH_STATUSES, PunchSeverity, PunchStatus, ReportState, StageStatus
from delivery.models import PunchItem, ReportVersion, Stage, Waiver
from delivery.reports.gates import ACCEPTANCE_SIGNED
from delivery.reports.sections import person
from delivery.stages.services import waivers_cover
from projects.models import Project
from projects.reports import Column, Paragraph, Section, Table

ADDENDUM = "addendum"
ADDENDUM_ORDER = 10  # before the summary (20): the first thing an addendum's reader sees


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def _moment(value: datetime | None) -> str:
    return f"{timezone.localtime(value):%Y-%m-%d %H:%M}" if value else ""


# --- issuing ---------------------------------------------------------------------------------------------


def stages_before_acceptance(project: Project) -> list[Stage]:
    """The project's stages before its acceptance stage (all but the acceptance stages when it has none), in
    order, each with its waivers in `stage.waivers_list`. Two queries."""
    stages = list(Stage.objects.filter(project=project).order_by("order", "id"))
    acceptance = [stage.order for stage in stages if stage.gate_key == ACCEPTANCE_SIGNED]
    limit = min(acceptance) if acceptance else None
    before = [stage for stage in stages
              if stage.gate_key != ACCEPTANCE_SIGNED and (limit is None or stage.order < limit)]
    waivers: dict[int, list[Waiver]] = defaultdict(list)
    for waiver in Waiver.objects.filter(stage__in=[stage.pk for stage in before]):
        waivers[waiver.stage_id].append(waiver)
    for stage in before:
        stage.waivers_list = waivers[stage.pk]
    return before


def stage_blocker(stage: Stage) -> str:
    """Why this stage holds back issuing ("" when it does not): a gate never computed, or one that fails
    with items no waiver covers. A skipped stage holds back nothing: a manager skipped it, with the reason
    the report prints."""
    if stage.status == StageStatus.SKIPPED:
        return ""
    if stage.gate_passed is None:
        return f"{stage.title}: its gate has not been computed yet."
    if waivers_cover(stage, getattr(stage, "waivers_list", None) or list(stage.waivers.all())):
        return ""
    summary = stage.gate_summary.rstrip(".") or "its gate does not pass"
    waived = " (its waivers do not cover them all)" if getattr(stage, "waivers_list", None) else ""
    return f"{stage.title}: {summary} ({stage.gate_missing_count:,} missing{waived})."


def issue_blockers(project: Project) -> list[str]:
    """One message per stage before acceptance whose stored gate fails with no waiver covering it (or was
    never computed), in order: what is left before a version may be issued. Empty: nothing holds it back."""
    return [text for text in map(stage_blocker, stages_before_acceptance(project)) if text]


def gates_computed_at(stages: list[Stage]) -> datetime | None:
    return max((stage.gate_computed_at for stage in stages if stage.gate_computed_at), default=None)


# --- the exceptions an acceptance records ----------------------------------------------------------------

_SEVERITY_RANK = Case(*(When(severity=value, then=Value(rank)) for rank, value in enumerate(
    [PunchSeverity.CRITICAL, PunchSeverity.MAJOR, PunchSeverity.MINOR])), default=Value(3),
    output_field=IntegerField())


def _waiver_items(waiver: Waiver) -> str:
    if waiver.all_items:
        return f"all {_plural(waiver.missing_count, 'missing item')}"
    return _plural(len(waiver.items), "item")


def acceptance_exceptions(project: Project) -> dict:
    """Every open punch item the customer sees (the most severe first), the number of open internal ones (the
    customer is told how many, not what they are), and every waiver recorded, as plain JSON: what an
    acceptance with exceptions records in its signature and prints on the signed copy. Three queries."""
    items = (PunchItem.objects.filter(project=project, status__in=UNRESOLVED_PUNCH_STATUSES)
             .annotate(severity_rank=_SEVERITY_RANK).order_by("severity_rank", "opened_at", "pk"))
    visible = [
        {"id": item.pk, "title": item.title, "severity": item.severity,
         "severity_label": PunchSeverity(item.severity).label, "status": item.status,
         "status_label": PunchStatus(item.status).label, "object": item.object_label,
         "opened_at": item.opened_at.isoformat() if item.opened_at else None}
        for item in items.filter(customer_visible=True)
    ]
    internal = items.filter(customer_visible=False).count()
    waivers = [
        {"id": waiver.pk, "stage": waiver.stage.title, "items": _waiver_items(waiver), "reason": waiver.reason,
         "recorded_by": person(waiver.recorded_by.first_name, waiver.recorded_by.last_name,
                               waiver.recorded_by.username) if waiver.recorded_by else "",
         "recorded_at": waiver.recorded_at.isoformat() if waiver.recorded_at else None}
        for waiver in Waiver.objects.filter(stage__project=project).select_related("stage", "recorded_by")
        .order_by("stage__order", "recorded_at", "pk")
    ]
    return {"punch_items": visible, "internal_punch_items": internal, "waivers": waivers}


@dataclass(frozen=True)
class ExceptionCounts:
    punch_items: int  # open, shown to the customer
    internal_punch_items: int
    waivers: int

    @property
    def total(self) -> int:
        return self.punch_items + self.internal_punch_items + self.waivers

    def __bool__(self) -> bool:
        return self.total > 0

    @property
    def text(self) -> str:
        """"2 open punch items (1 internal) and 3 waivers"."""
        parts = []
        items = self.punch_items + self.internal_punch_items
        if items:
            internal = f" ({self.internal_punch_items:,} internal)" if self.internal_punch_items else ""
            parts.append(_plural(items, "open punch item") + internal)
        if self.waivers:
            parts.append(_plural(self.waivers, "waiver"))
        return " and ".join(parts) or "no open punch item and no waiver"


def exception_counts(exceptions: dict | None) -> ExceptionCounts:
    exceptions = exceptions if isinstance(exceptions, dict) else {}
    return ExceptionCounts(punch_items=len(exceptions.get("punch_items") or []),
                           internal_punch_items=int(exceptions.get("internal_punch_items") or 0),
                           waivers=len(exceptions.get("waivers") or []))


# --- changes since the acceptance --------------------------------------------------------------------------


def accepted_at(version: ReportVersion) -> datetime | None:
    """When an accepted version was signed (None for any other)."""
    signature = version.signature_or_none
    return signature.signed_at if version.is_accepted and signature is not None else None


@dataclass(frozen=True)
class ChangesSinceAcceptance:
    swaps: int  # parts replaced since the acceptance
    rma_updates: int  # RMA moves recorded since (on any swap, older ones included)

    def __bool__(self) -> bool:
        return bool(self.swaps or self.rma_updates)

    @property
    def text(self) -> str:
        """"3 swaps and 1 RMA update"."""
        parts = [_plural(self.swaps, "swap")]
        if self.rma_updates:
            parts.append(_plural(self.rma_updates, "RMA update"))
        return " and ".join(parts)


def _swaps_since(project: Project, since: datetime):
    return Swap.objects.filter(project=project, recorded_at__gt=since)


def _rma_moves_since(project: Project, since: datetime):
    """The history rows of the project's swaps that changed their RMA after `since` (a swap's own creation is
    not one: it is a swap)."""
    return Swap.history.filter(project_id=project.pk, history_type="~", history_date__gt=since)


def changes_since(project: Project, since: datetime) -> ChangesSinceAcceptance:
    """The swaps and RMA moves recorded after `since`: two counts, two queries."""
    return ChangesSinceAcceptance(swaps=_swaps_since(project, since).count(),
                                  rma_updates=_rma_moves_since(project, since).count())


def changes_since_acceptance(project: Project, version: ReportVersion) -> ChangesSinceAcceptance:
    """What changed on the floor since `version` (the accepted one) was signed."""
    since = accepted_at(version)
    if since is None:
        return ChangesSinceAcceptance(swaps=0, rma_updates=0)
    return changes_since(project, since)


SWAP_COLUMNS = [
    Column("recorded", "Recorded", kind="datetime", width=14),
    Column("part", "Part", width=7),
    Column("where", "Where", width=18),
    Column("old_serial", "Serial out", width=14),
    Column("new_serial", "Serial in", width=14),
    Column("reason", "Reason", width=30),
    Column("rma", "RMA", width=16),
    Column("by", "Recorded by", width=12),
]
RMA_COLUMNS = [
    Column("when", "When", kind="datetime", width=14),
    Column("swap", "Swap", width=22),
    Column("where", "Where", width=18),
    Column("change", "Change", width=30),
    Column("rma", "RMA now", width=18),
    Column("by", "By", width=12),
]


def _where(swap) -> str:
    if swap.kind == SwapKind.CABLE:
        return f"Cable {swap.cable.label}" if swap.cable_id and swap.cable else ""
    port = swap.port if swap.port_id else None
    return f"{port.device.name} {port.name}" if port is not None else ""


def _rma_text(swap) -> str:
    if swap.rma_state == RmaState.NONE:
        return RmaState.NONE.label
    label = RmaState(swap.rma_state).label
    return f"{swap.rma_case} · {label}" if swap.rma_case else label


def _user_name(user) -> str:
    return person(user.first_name, user.last_name, user.username) if user is not None else ""


def addendum_section(version: ReportVersion) -> Section:
    """The first section of an as-built addendum: which accepted version it adds to (with the SHA-256 of its
    full PDF, unchanged), then every swap recorded since that acceptance and every RMA move since, from the
    swaps and their history. The rest of the addendum is the report as the project stands now."""
    accepted = version.addendum_to
    since = accepted_at(accepted)
    signature = accepted.signature
    project = version.project
    swaps = list(_swaps_since(project, since).select_related("cable", "port__device", "recorded_by")
                 .order_by("recorded_at", "pk"))
    moves = list(_rma_moves_since(project, since).select_related("cable", "port__device", "history_user")
                 .order_by("history_date", "history_id"))
    decision = ("accepted with exceptions" if accepted.state == ReportState.ACCEPTED_WITH_EXCEPTIONS else "accepted")
    blocks = [Paragraph(
        f"As-built addendum to version {accepted.number}, which {signature.name} ({signature.title}) "
        f"{decision} on {_moment(since)}. Version {accepted.number} and its files are unchanged (its full PDF's "
        f"SHA-256: {accepted.pdf_sha256}). Since then {_plural(len(swaps), 'part')} were replaced and "
        f"{_plural(len(moves), 'RMA update')} recorded, listed below; the rest of this addendum is the project "
        "as it stands now."
    )]
    if swaps:
        rows = [[swap.recorded_at, SwapKind(swap.kind).label, _where(swap), swap.old_serial, swap.new_serial,
                 swap.reason, _rma_text(swap), _user_name(swap.recorded_by)] for swap in swaps]
        blocks.append(Table(key="swaps_since_acceptance", title="Parts replaced since the acceptance",
                            columns=SWAP_COLUMNS, rows=iter(rows), row_count=len(rows), summary_rows=len(rows),
                            note=f"Swaps recorded after version {accepted.number} was signed, oldest first."))
    if moves:
        rows = [[move.history_date, f"{move.old_serial or '?'} → {move.new_serial}", _where(move),
                 move.history_change_reason or "", _rma_text(move), _user_name(move.history_user)]
                for move in moves]
        blocks.append(Table(key="rma_since_acceptance", title="RMA updates since the acceptance",
                            columns=RMA_COLUMNS, rows=iter(rows), row_count=len(rows), summary_rows=len(rows),
                            note="Each RMA case moving on (authorised, shipped, replaced, credited...), oldest first."))
    return Section(title=addendum_title(accepted.number), blocks=blocks)


def addendum_title(number: int) -> str:
    return f"As-built changes since version {number}"
