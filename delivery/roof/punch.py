"""Writes of the punch list: opening an item by hand, updating it, moving its status, and the sync that
opens items from the evidence and verifies fixed ones.

The sync (`punch_items_sync_from_evidence`) runs in the gates recompute task (delivery.roof.tasks), so it
runs whenever evidence changes (delivery.evidence.evidence_changed), never on a page view:

- every check result that finished since the last sync (validation's CheckResult) and every link of the
  project's latest topology comparison that is not ok is a piece of evidence about one fault, named by a
  fingerprint ("link_health:cable:123", "topology:miswired:C00042"); only the newest evidence of each
  fingerprint counts;
- a failing one opens an item unless the fingerprint already has one (unique per project), so re-runs and
  re-syncs never duplicate; if that item was fixed or verified before this failure, it reopens;
- a passing one moves a fixed item (fixed before the evidence was taken) to verified. "Verified" is never
  set by hand. An item still open or in progress whose object passes again stays open, marked "passing
  since": a link that passes once after flapping is no proof that someone fixed it, so a person says
  "fixed" and the next passing check confirms it.

Evidence is applied once per item (`evidence_at`): a sync reading a result again changes nothing.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from core.choices import JobStatus
from delivery.access import Capability, can
from delivery.models import Project
from validation.choices import CheckKind, LinkState, ResultStatus, Verdict
from validation.models import CheckResult, TopologyComparison

from .choices import (
    PunchObjectKind,
    PunchSeverity,
    PunchSource,
    PunchStatus,
)
from .models import PunchItem, PunchSync

SERIOUS_LINK_STATES = (LinkState.MISWIRED, LinkState.MISSING)  # major items; unplanned or degraded: minor
FAILING_VERDICTS = (Verdict.FAIL, Verdict.ERROR)  # a warning is a working link, as the gates read it
# Results are read again from this long before the last sync's newest one: a result that finished just
# before it but committed after is not missed (reading one twice changes nothing).
RESULTS_OVERLAP = timedelta(minutes=10)
FINGERPRINT_LENGTH = PunchItem._meta.get_field("fingerprint").max_length
TITLE_LENGTH = PunchItem._meta.get_field("title").max_length
NOTE_LENGTH = PunchItem._meta.get_field("evidence_note").max_length
LABEL_LENGTH = PunchItem._meta.get_field("object_label").max_length
REASON_LENGTH = 2000
CHUNK = 500  # fingerprints per IN query (SQLite's variable limit)

# What a person may move an item to, and the capability it needs. Verified is not among them.
HAND_STATUSES = {
    PunchStatus.OPEN: Capability.RUN_CHECKS,
    PunchStatus.IN_PROGRESS: Capability.RUN_CHECKS,
    PunchStatus.FIXED: Capability.RUN_CHECKS,
    PunchStatus.WONT_FIX: Capability.MANAGE_PROJECT,
}


def _fit(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fingerprint(text: str) -> str:
    """The fingerprint as it fits the column: a longer one keeps its start and a digest of the whole."""
    if len(text) <= FINGERPRINT_LENGTH:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return f"{text[: FINGERPRINT_LENGTH - 17]}#{digest}"


def _require(user, capability: Capability, project: Project, refusal: str) -> None:
    if not can(user, capability, project):
        raise PermissionDenied(refusal)


def _save(item: PunchItem, *, user, why: str, fields: list[str] | None = None) -> PunchItem:
    item._history_user = user
    item._change_reason = _fit(why, 100)
    item.full_clean(validate_constraints=False)
    item.save(update_fields=fields)
    return item


# --- by hand ------------------------------------------------------------------------------------------


def _clean_fields(*, title: str, severity: str, description: str, due_date, assignee, project) -> dict:
    errors = {}
    title = _fit(title, 10_000)
    if not title:
        errors["title"] = "Say what is wrong."
    elif len(title) > TITLE_LENGTH:
        errors["title"] = f"At most {TITLE_LENGTH} characters."
    if severity not in PunchSeverity.values:
        errors["severity"] = f"One of: {', '.join(PunchSeverity.values)}."
    if len(description or "") > REASON_LENGTH * 5:
        errors["description"] = f"At most {REASON_LENGTH * 5} characters."
    if assignee is not None and not (can(assignee, Capability.RUN_CHECKS, project)):
        errors["assignee"] = "Assign a technician or a manager of this project."
    if errors:
        raise ValidationError(errors)
    return {"title": title, "severity": severity, "description": (description or "").strip(),
            "due_date": due_date, "assignee": assignee}


@transaction.atomic
def punch_item_open(*, project: Project, user, title: str, severity: str = PunchSeverity.MAJOR,
                    description: str = "", object_kind: str = "", object_id: int | None = None,
                    object_label: str = "", assignee=None, due_date=None, customer_visible: bool = False) -> PunchItem:
    """A technician or manager opens an item by hand, on an object (kind, id, label) or on none. Only a
    manager makes it visible to the customer."""
    _require(user, Capability.RUN_CHECKS, project, "Your role in this project does not allow opening punch items.")
    if customer_visible:
        _require(user, Capability.MANAGE_PROJECT, project, "Only a manager shows an item to the customer.")
    fields = _clean_fields(title=title, severity=severity, description=description, due_date=due_date,
                           assignee=assignee, project=project)
    if object_kind and object_kind not in PunchObjectKind.values:
        raise ValidationError({"object_kind": f"One of: {', '.join(PunchObjectKind.values)}."})
    item = PunchItem(project=project, **fields, customer_visible=customer_visible, object_kind=object_kind or "",
                     object_id=object_id if object_kind else None, object_label=_fit(object_label, LABEL_LENGTH),
                     source=PunchSource.MANUAL, opened_by=user, opened_at=timezone.now())
    return _save(item, user=user, why="opened")


@transaction.atomic
def punch_item_update(*, item: PunchItem, user, title: str, severity: str, description: str = "",
                      assignee=None, due_date=None, customer_visible: bool | None = None) -> PunchItem:
    """A technician or manager edits an item's title, severity, assignee and due date; only a manager
    changes whether the customer sees it."""
    project = item.project
    _require(user, Capability.RUN_CHECKS, project, "Your role in this project does not allow editing punch items.")
    item = PunchItem.objects.select_for_update().select_related("project").get(pk=item.pk)
    fields = _clean_fields(title=title, severity=severity, description=description, due_date=due_date,
                           assignee=assignee, project=project)
    if customer_visible is not None and customer_visible != item.customer_visible:
        _require(user, Capability.MANAGE_PROJECT, project, "Only a manager shows an item to the customer or hides it.")
        item.customer_visible = customer_visible
    for name, value in fields.items():
        setattr(item, name, value)
    return _save(item, user=user, why="edited")


@transaction.atomic
def punch_item_set_status(*, item: PunchItem, user, status: str, note: str = "") -> PunchItem:
    """Move an item by hand: open, in progress or fixed (a technician or manager; the note says what was
    done), or won't fix (a manager, with the reason in the note). Never verified: only a later passing
    check or comparison of the object verifies a fixed item (the sync)."""
    project = item.project
    if status == PunchStatus.VERIFIED:
        raise ValidationError({"status": "An item is verified by a later passing check of its object, not by hand. "
                                         "Mark it fixed; the next passing check verifies it."})
    if status not in HAND_STATUSES:
        raise ValidationError({"status": f"One of: {', '.join(HAND_STATUSES)}."})
    refusal = ("Only a manager closes an item as won't fix." if status == PunchStatus.WONT_FIX
               else "Your role in this project does not allow changing punch items.")
    _require(user, HAND_STATUSES[status], project, refusal)
    note = str(note or "").strip()
    if len(note) > REASON_LENGTH:
        raise ValidationError({"note": f"At most {REASON_LENGTH} characters."})
    if status == PunchStatus.WONT_FIX and not note:
        raise ValidationError({"note": "Say why this item will not be fixed."})
    item = PunchItem.objects.select_for_update().select_related("project").get(pk=item.pk)
    if item.status == status:
        raise ValidationError({"status": f"The item is already {item.get_status_display().lower()}."})
    item.status = status
    if status == PunchStatus.FIXED:
        item.fixed_at, item.fixed_by = timezone.now(), user
        item.resolution_note = note or item.resolution_note
    elif status == PunchStatus.WONT_FIX:
        item.wont_fix_reason = note
    else:  # back to work: what was fixed or verified no longer holds
        item.fixed_at = item.fixed_by = item.verified_at = item.verified_by = None
        if note:
            item.resolution_note = note
    item.passing_since = None if status == PunchStatus.FIXED else item.passing_since
    return _save(item, user=user, why=f"{item.get_status_display().lower()}" + (f": {note}" if note else ""))


# --- from the evidence --------------------------------------------------------------------------------


class Evidence:
    """The newest thing said about one fault: failing or passing, when, and what the item would show."""

    __slots__ = ("fingerprint", "failing", "at", "note", "title", "severity", "source", "object_kind",
                 "object_id", "object_label", "description")

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name, ""))


def _result_object(row: dict) -> tuple[str, int, str]:
    """(kind, id, label) of what a check result concerns: the cable of a link, else the port, the optic,
    the pair of nodes, the node, or the result itself."""
    if row["cable_id"]:
        return PunchObjectKind.CABLE, row["cable_id"], row["cable__label"]
    if row["port_id"]:
        return PunchObjectKind.PORT, row["port_id"], f"{row['port__device__name']}:{row['port__name']}"
    if row["optic_id"]:
        return PunchObjectKind.OPTIC, row["optic_id"], f"optic {row['optic__serial']}"
    if row["device_id"] and row["peer_device_id"]:
        return PunchObjectKind.NODE_PAIR, row["device_id"], f"{row['device__name']} ↔ {row['peer_device__name']}"
    if row["device_id"]:
        return PunchObjectKind.DEVICE, row["device_id"], row["device__name"]
    return PunchObjectKind.CHECK_RESULT, row["id"], row["target_key"]


def _result_fingerprint(row: dict, kind: str, object_id: int) -> str:
    if kind == PunchObjectKind.NODE_PAIR:
        pair = "-".join(str(n) for n in sorted((row["device_id"], row["peer_device_id"])))
        return _fingerprint(f"{row['run__kind']}:{kind}:{pair}")
    if kind == PunchObjectKind.CHECK_RESULT:  # stable across re-runs: the target, not the row
        return _fingerprint(f"{row['run__kind']}:target:{row['target_key']}")
    return _fingerprint(f"{row['run__kind']}:{kind}:{object_id}")


RESULT_FIELDS = ("id", "run_id", "run__kind", "target_key", "verdict", "reasons", "finished_at", "cable_id",
                 "cable__label", "port_id", "port__name", "port__device__name", "optic_id", "optic__serial",
                 "device_id", "device__name", "peer_device_id", "peer_device__name")


def _results_evidence(project: Project, since: datetime | None) -> tuple[dict[str, Evidence], datetime | None]:
    """The newest evidence per fingerprint among the results finished since `since` (less the overlap),
    and the newest finish time read. One query, rows streamed as values (no model instances)."""
    rows = (CheckResult.objects.filter(run__project=project, status__in=(ResultStatus.DONE, ResultStatus.ERROR),
                                       finished_at__isnull=False)
            .exclude(verdict="").exclude(run__kind=CheckKind.TOPOLOGY))
    if since is not None:
        rows = rows.filter(finished_at__gte=since - RESULTS_OVERLAP)
    found: dict[str, Evidence] = {}
    newest = since
    for row in rows.order_by("finished_at", "id").values(*RESULT_FIELDS).iterator(chunk_size=2000):
        kind, object_id, label = _result_object(row)
        failing = row["verdict"] in FAILING_VERDICTS
        check = CheckKind(row["run__kind"]).label if row["run__kind"] in CheckKind.values else row["run__kind"]
        verdict = Verdict(row["verdict"]).label.lower()
        reasons = [str(r.get("text", "")) for r in (row["reasons"] or []) if isinstance(r, dict)]
        found[_result_fingerprint(row, kind, object_id)] = Evidence(
            failing=failing, at=row["finished_at"], object_kind=kind, object_id=object_id,
            object_label=_fit(label, LABEL_LENGTH), source=PunchSource.CHECK_RESULT,
            note=_fit(f"{check} result #{row['id']} (run #{row['run_id']}): {verdict}.", NOTE_LENGTH),
            title=_fit(f"{label}: {check} {verdict}", TITLE_LENGTH),
            severity=PunchSeverity.MAJOR if row["verdict"] == Verdict.FAIL else PunchSeverity.MINOR,
            description="\n".join(reasons)[: REASON_LENGTH],
        )
        newest = row["finished_at"] if newest is None or row["finished_at"] > newest else newest
    for fingerprint, evidence in found.items():
        evidence.fingerprint = fingerprint
    return found, newest


def _topology_evidence(project: Project) -> dict[str, Evidence]:
    """The faults of the latest finished comparison (failing), and every topology item still being worked
    on that it no longer lists (passing: a comparison stores only the links that are not ok)."""
    latest = (TopologyComparison.objects.filter(project=project, status=JobStatus.DONE)
              .order_by("-created_at", "-id").first())
    if latest is None:
        return {}
    at = latest.finished_at or latest.created_at
    found: dict[str, Evidence] = {}
    for link in latest.links.exclude(state=LinkState.OK).order_by("id"):
        fingerprint = _fingerprint(f"topology:{link.state}:{link.key}")
        label = link.cable_label or link.key
        state = LinkState(link.state).label
        found[fingerprint] = Evidence(
            fingerprint=fingerprint, failing=True, at=at, object_kind=PunchObjectKind.MISWIRE, object_id=latest.pk,
            object_label=_fit(label, LABEL_LENGTH), source=PunchSource.TOPOLOGY,
            note=_fit(f"Topology comparison #{latest.pk}: {state.lower()}.", NOTE_LENGTH),
            title=_fit(f"{label}: {state.lower()}", TITLE_LENGTH),
            severity=PunchSeverity.MAJOR if link.state in SERIOUS_LINK_STATES else PunchSeverity.MINOR,
            description="\n".join(t for t in (link.note, link.advice) if t)[: REASON_LENGTH],
        )
    cleared = (PunchItem.objects.filter(project=project, source=PunchSource.TOPOLOGY)
               .exclude(fingerprint__in=list(found)).exclude(status=PunchStatus.WONT_FIX)
               .values_list("fingerprint", flat=True))
    for fingerprint in cleared:
        found[fingerprint] = Evidence(fingerprint=fingerprint, failing=False, at=at,
                                      note=_fit(f"Topology comparison #{latest.pk}: ok.", NOTE_LENGTH))
    return found


QUIET = ("still failing", "passing")  # evidence that changes no status


def _apply(item: PunchItem, evidence: Evidence) -> str | None:
    """Apply newer evidence to an existing item; the reason of the change (None: nothing to write)."""
    if item.evidence_at is not None and evidence.at <= item.evidence_at:
        return None  # read before: applying it again would undo what happened since
    item.evidence_at, item.evidence_note = evidence.at, evidence.note
    if evidence.object_kind == PunchObjectKind.MISWIRE:
        item.object_id = evidence.object_id  # the comparison that saw it last
    if evidence.failing:
        item.passing_since = None
        if item.status == PunchStatus.FIXED and item.fixed_at and evidence.at > item.fixed_at:
            item.status = PunchStatus.OPEN
            return "failed again after the fix"
        if item.status == PunchStatus.VERIFIED and item.verified_at and evidence.at > item.verified_at:
            item.status, item.fixed_at, item.fixed_by, item.verified_at = PunchStatus.OPEN, None, None, None
            return "failed again after it was verified"
        return "still failing"
    if item.status == PunchStatus.FIXED and item.fixed_at and evidence.at > item.fixed_at:
        item.status, item.verified_at, item.verified_by, item.passing_since = (
            PunchStatus.VERIFIED, timezone.now(), None, None)
        return "verified by a passing re-check"
    if item.status in (PunchStatus.OPEN, PunchStatus.IN_PROGRESS) and item.passing_since is None:
        item.passing_since = evidence.at
        return "passing again (not marked fixed yet)"
    return "passing"


def _open_from(project: Project, evidence: Evidence) -> PunchItem:
    item = PunchItem(project=project, title=evidence.title or evidence.fingerprint[:TITLE_LENGTH],
                     description=evidence.description, severity=evidence.severity, object_kind=evidence.object_kind,
                     object_id=evidence.object_id, object_label=evidence.object_label, source=evidence.source,
                     fingerprint=evidence.fingerprint, opened_at=timezone.now(), evidence_at=evidence.at,
                     evidence_note=evidence.note)
    return _save(item, user=None, why="opened from the evidence")


def _manual_items_verified(project: Project, evidence: dict[str, Evidence]) -> int:
    """Fixed items opened by hand on an object have no fingerprint: a passing result of the same object,
    taken after the fix, verifies them too."""
    fixed = list(PunchItem.objects.filter(project=project, source=PunchSource.MANUAL, status=PunchStatus.FIXED)
                 .exclude(object_kind=""))
    if not fixed:
        return 0
    passing: dict[tuple[str, int], Evidence] = {}
    for item in evidence.values():
        if not item.failing and item.object_kind:
            key = (item.object_kind, item.object_id)
            if key not in passing or item.at > passing[key].at:
                passing[key] = item
    failing = {(e.object_kind, e.object_id) for e in evidence.values() if e.failing and e.object_kind}
    verified = 0
    for item in fixed:
        proof = passing.get((item.object_kind, item.object_id))
        if proof and item.fixed_at and proof.at > item.fixed_at and (item.object_kind, item.object_id) not in failing:
            item.status, item.verified_at, item.verified_by = PunchStatus.VERIFIED, timezone.now(), None
            item.evidence_at, item.evidence_note = proof.at, proof.note
            _save(item, user=None, why="verified by a passing re-check")
            verified += 1
    return verified


@transaction.atomic
def punch_items_sync_from_evidence(*, project: Project) -> dict[str, int]:
    """Open, reopen and verify the project's punch items from the check results finished since the last
    sync and the latest topology comparison (see the module's docstring). Safe to run twice; two syncs of
    one project take turns (a row lock). Returns counts: opened, reopened, verified."""
    sync, _ = PunchSync.objects.get_or_create(project=project)
    sync = PunchSync.objects.select_for_update().get(pk=sync.pk)
    evidence, newest = _results_evidence(project, sync.results_through)
    evidence.update(_topology_evidence(project))
    counts = {"opened": 0, "reopened": 0, "verified": 0}
    fingerprints = list(evidence)
    for start in range(0, len(fingerprints), CHUNK):
        chunk = fingerprints[start: start + CHUNK]
        items = {i.fingerprint: i for i in PunchItem.objects.filter(project=project, fingerprint__in=chunk)}
        for fingerprint in chunk:
            found, item = evidence[fingerprint], items.get(fingerprint)
            if item is None:
                if found.failing:
                    _open_from(project, found)
                    counts["opened"] += 1
                continue
            before = item.status
            why = _apply(item, found)
            if why is None:
                continue
            if why in QUIET:  # no history row per re-run that says the same thing
                PunchItem.objects.filter(pk=item.pk).update(
                    evidence_at=item.evidence_at, evidence_note=item.evidence_note, object_id=item.object_id,
                    passing_since=item.passing_since)
                continue
            _save(item, user=None, why=why)
            if item.status == PunchStatus.VERIFIED and before != PunchStatus.VERIFIED:
                counts["verified"] += 1
            elif item.status == PunchStatus.OPEN and before in (PunchStatus.FIXED, PunchStatus.VERIFIED):
                counts["reopened"] += 1
    counts["verified"] += _manual_items_verified(project, evidence)
    sync.results_through, sync.synced_at = newest, timezone.now()
    sync.save(update_fields=["results_through", "synced_at"])
    return counts
