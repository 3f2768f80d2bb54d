"""Writes of the punch list: opening an item by hand, updating it, moving its status, and the sync that
opens items from the evidence and verifies fixed ones.

The sync (`punch_items_sync_from_evidence`) runs in the gates recompute task (delivery.tasks), so it
runs whenever evidence changes (projects.evidence.evidence_changed), never on a page view:

- every check result that finished since the last sync (validation's CheckResult) and every link of the
  project's latest topology comparison that is not ok is a piece of evidence about one fault, named by a
  fingerprint ("link_health:cable:123", "topology:miswired:C00042"); only the newest evidence of each
  fingerprint counts;
- a failing one opens an item unless the fingerprint already has one (unique per project), so re-runs and
  re-syncs never duplicate; if that item was fixed or verified before this failure, it reopens;
- a passing one moves a fixed item (fixed before the evidence was taken) to verified. "Verified" is never
  set by hand. An item still open or in progress whose object passes again stays open, marked "passing
  since": a link that passes once after flapping is no sign that someone fixed it, so a person says
  "fixed" and the next passing check confirms it.

Evidence is applied once per item (`evidence_at`): a sync reading a result again changes nothing.

Swaps (cabling's Swap: an optic or a cable replaced on the floor) are read by the same sync, before the
evidence: an open or in-progress item whose object is the part replaced (the optic, the cable, or the port,
with the cage's lanes and the cables in it) becomes fixed, its resolution note naming the swap (serial out
-> serial in, the RMA case). The swap does not show that the link works: the item becomes verified only the
usual way, when a later check or comparison of its object passes. A swap is applied to an item at most once:
an item already fixed since the swap was recorded (by it or by hand) and reopened afterwards stays open.

A scan of every end of a cable (its `verified_at`) is passing evidence too, for the items opened by hand on
that cable: a crushed cable replaced is proved in place by its scans (an out-of-band cable never gets a link
check). An item opened by a failed check still needs a passing check.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from cabling.choices import CableStatus, RmaState, SwapKind
from cabling.models import Cable, CableEnd, Swap
from core.choices import JobStatus
from delivery.choices import (
    PunchObjectKind,
    PunchSeverity,
    PunchSource,
    PunchStatus,
)
from delivery.models import PunchItem, PunchSync
from projects.access import Capability, can, require
from projects.models import Project
from validation.choices import CheckKind, LinkState, ResultStatus, Verdict
from validation.models import CheckResult, TopologyComparison

SERIOUS_LINK_STATES = (LinkState.MISWIRED, LinkState.MISSING)  # major items; unplanned or degraded: minor
FAILING_VERDICTS = (Verdict.FAIL, Verdict.ERROR)  # a warning is a working link, as the gates read it
# Swaps are read again from this long before the last sync as well (a swap committed late is not missed).
SWAPS_OVERLAP = timedelta(minutes=10)
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
    # A browser sends a textarea's lines ending in CR LF: stored as the sync and the API write them (LF), so
    # saving a form with an untouched description changes nothing.
    description = (description or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    return {"title": title, "severity": severity, "description": description, "due_date": due_date,
            "assignee": assignee}


@transaction.atomic
def punch_item_open(*, project: Project, user, title: str, severity: str = PunchSeverity.MAJOR,
                    description: str = "", object_kind: str = "", object_id: int | None = None,
                    object_label: str = "", assignee=None, due_date=None, customer_visible: bool = False) -> PunchItem:
    """A technician or manager opens an item by hand, on an object (kind, id, label) or on none. Only a
    manager makes it visible to the customer."""
    require(user, Capability.RUN_CHECKS, project, "Your role in this project does not allow opening punch items.")
    if customer_visible:
        require(user, Capability.MANAGE_PROJECT, project, "Only a manager shows an item to the customer.")
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
    require(user, Capability.RUN_CHECKS, project, "Your role in this project does not allow editing punch items.")
    item = PunchItem.objects.select_for_update().select_related("project").get(pk=item.pk)
    fields = _clean_fields(title=title, severity=severity, description=description, due_date=due_date,
                           assignee=assignee, project=project)
    changed = [name for name, value in fields.items() if getattr(item, name) != value]
    if customer_visible is not None and customer_visible != item.customer_visible:
        require(user, Capability.MANAGE_PROJECT, project, "Only a manager shows an item to the customer or hides it.")
        item.customer_visible = customer_visible
        changed.append("customer_visible")
    if not changed:
        return item  # nothing changed: no save, and no history row saying something did
    for name in changed:
        setattr(item, name, fields.get(name, getattr(item, name)))
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
    require(user, HAND_STATUSES[status], project, refusal)
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
                 "object_id", "object_label", "description", "check", "pair", "refresh")

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name, ""))


# A node in this many failing pairs of one check is the cause: one item for the node, listing its pairs,
# instead of one item per pair (a slow node fails every pair it is in).
NODE_CAUSE_PAIRS = 2
PAIRS_LISTED = 40  # in the node's item; the count says how many there are


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
            description="\n".join(reasons)[: REASON_LENGTH], check=row["run__kind"],
            pair=((row["device_id"], row["device__name"]), (row["peer_device_id"], row["peer_device__name"]))
            if kind == PunchObjectKind.NODE_PAIR else "",
        )
        newest = row["finished_at"] if newest is None or row["finished_at"] > newest else newest
    for fingerprint, evidence in found.items():
        evidence.fingerprint = fingerprint
    return _pairs_by_cause(found), newest


def _pairs_by_cause(found: dict[str, Evidence]) -> dict[str, Evidence]:
    """A node in NODE_CAUSE_PAIRS or more failing pairs of one check is their cause: its pairs' evidence
    becomes one item's, the node's ("gpu-055: 23 pairs fail"), listing them. The node in most failing pairs
    is taken first, and the pairs it explains leave the count, so a pair of two healthy nodes that fails only
    with the slow one is not blamed on them. A node whose pairs all pass gives its item passing evidence.
    Pairs with no such node stay items of their own."""
    failing = [evidence for evidence in found.values() if evidence.pair and evidence.failing]
    passing = [evidence for evidence in found.values() if evidence.pair and not evidence.failing]
    names = {node_id: name for evidence in (*failing, *passing) for node_id, name in evidence.pair}
    grouped = dict(found)
    blamed = set()  # (check, node id) with failing pairs, whether grouped or not
    for check in {evidence.check for evidence in failing}:
        left = [evidence for evidence in failing if evidence.check == check]
        blamed |= {(check, node_id) for evidence in left for node_id, _ in evidence.pair}
        while left:
            counts = Counter(node_id for evidence in left for node_id, _ in evidence.pair)
            node_id, count = min(counts.items(), key=lambda item: (-item[1], names[item[0]]))
            if count < NODE_CAUSE_PAIRS:
                break
            pairs = [evidence for evidence in left if node_id in (evidence.pair[0][0], evidence.pair[1][0])]
            left = [evidence for evidence in left if evidence not in pairs]
            for evidence in pairs:
                grouped.pop(evidence.fingerprint, None)
            grouped.update(_node_evidence(check, node_id, names[node_id], pairs, failing=True))
    passing_nodes: dict[tuple[str, int], list[Evidence]] = {}
    for evidence in passing:
        for node_id, _ in evidence.pair:
            passing_nodes.setdefault((evidence.check, node_id), []).append(evidence)
    for (check, node_id), pairs in passing_nodes.items():
        if (check, node_id) not in blamed:
            grouped.update(_node_evidence(check, node_id, names[node_id], pairs, failing=False))
    return grouped


def _node_evidence(check: str, node_id: int, name: str, pairs: list[Evidence], *, failing: bool) -> dict:
    label = CheckKind(check).label if check in CheckKind.values else check
    newest = max(pairs, key=lambda evidence: evidence.at)
    others = sorted(other for evidence in pairs for other_id, other in evidence.pair if other_id != node_id)
    listed = ", ".join(others[:PAIRS_LISTED]) + (f" and {len(others) - PAIRS_LISTED} more" if len(others) > PAIRS_LISTED
                                                 else "")
    fingerprint = _fingerprint(f"{check}:node:{node_id}")
    verdict = "fail" if failing else "pass"
    evidence = Evidence(
        fingerprint=fingerprint, failing=failing, at=newest.at, object_kind=PunchObjectKind.DEVICE, object_id=node_id,
        object_label=_fit(name, LABEL_LENGTH), source=PunchSource.CHECK_RESULT, check=check, refresh=failing,
        note=_fit(f"{label}: {len(pairs)} pair{'s' if len(pairs) != 1 else ''} with {name} {verdict}.", NOTE_LENGTH),
        title=_fit(f"{name}: {label} fails on {len(pairs)} pairs (the node is the common cause)", TITLE_LENGTH),
        severity=max((evidence.severity for evidence in pairs), key=lambda s: s == PunchSeverity.MAJOR),
        description=_fit(f"Every failing pair of {label} with {name}: {listed}.\n\n{newest.description}",
                         REASON_LENGTH),
    )
    return {fingerprint: evidence}


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
    if evidence.refresh:  # an item for a cause (a node's pairs): the latest run says which pairs, how many
        item.title, item.description = evidence.title, evidence.description
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


SCAN_EVIDENCE = "scan:cable:"  # the fingerprint of a scan's evidence (never an item's: it only verifies)


def _scans_evidence(project: Project, since: datetime | None) -> dict[str, Evidence]:
    """Passing evidence about the cables a scan of every end verified since `since` (less the overlap): the
    cable is in place as planned. One query."""
    cables = Cable.objects.filter(project=project, status=CableStatus.VERIFIED, verified_at__isnull=False)
    if since is not None:
        cables = cables.filter(verified_at__gte=since - SWAPS_OVERLAP)
    found = {}
    for pk, label, at in cables.values_list("pk", "label", "verified_at").iterator(chunk_size=2000):
        fingerprint = f"{SCAN_EVIDENCE}{pk}"
        found[fingerprint] = Evidence(fingerprint=fingerprint, failing=False, at=at, object_kind=PunchObjectKind.CABLE,
                                      object_id=pk, note=_fit(f"{label} verified by a scan of every end.", NOTE_LENGTH))
    return found


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
    # The newest failure of each object: one seen after the fix says the fix did not hold (a failure from
    # before it, read again within the overlap, says nothing about the fix).
    failing: dict[tuple[str, int], datetime] = {}
    for e in evidence.values():
        key = (e.object_kind, e.object_id)
        if e.failing and e.object_kind and (key not in failing or e.at > failing[key]):
            failing[key] = e.at
    verified = 0
    for item in fixed:
        key = (item.object_kind, item.object_id)
        passed, failed_at = passing.get(key), failing.get(key)
        if passed and item.fixed_at and passed.at > item.fixed_at and not (failed_at and failed_at > item.fixed_at):
            item.status, item.verified_at, item.verified_by = PunchStatus.VERIFIED, timezone.now(), None
            item.evidence_at, item.evidence_note = passed.at, passed.note
            why = "verified by a scan of every end" if passed.fingerprint.startswith(SCAN_EVIDENCE) else \
                "verified by a passing re-check"
            _save(item, user=None, why=why)
            verified += 1
    return verified


# --- swaps -----------------------------------------------------------------------------------------------

WORKED_ON = (PunchStatus.OPEN, PunchStatus.IN_PROGRESS)


def _swap_note(swap: Swap) -> str:
    """'Optic in gpu-001:ib0 replaced: MT-1 → MT-2 (swap #3 by Tomas, 2026-12-03 14:05; RMA 7781, shipped).'
    The swap's own reason stays on the swap: a customer-visible item's note reaches the customer and the
    report."""
    where = (f"Optic in {swap.port.device.name}:{swap.port.name}" if swap.kind == SwapKind.OPTIC
             else f"Cable {swap.cable.label}")
    who = (swap.recorded_by.get_full_name() or swap.recorded_by.get_username()) if swap.recorded_by else "someone"
    rma = (f"; RMA {swap.rma_case or '(no case number yet)'}, {swap.get_rma_state_display().lower()}"
           if swap.rma_state != RmaState.NONE else "")
    when = timezone.localtime(swap.recorded_at).strftime("%Y-%m-%d %H:%M")
    return _fit(f"{where} replaced: {swap.serials_text} (swap #{swap.pk} by {who}, {when}{rma}).", REASON_LENGTH)


def _swapped_objects(swaps: list[Swap]) -> dict[tuple[str, int], list[Swap]]:
    """What each swap replaced, as punch item objects: (kind, id) -> the swaps, oldest first. An optic swap
    names the optic, its port (the cage) and the cage's lanes, and every cable plugged into them; a cable
    swap names the cable and the ports of its ends. Two queries whatever the number of swaps."""
    found: dict[tuple[str, int], list[Swap]] = {}

    def add(kind: str, object_id: int, swap: Swap) -> None:
        found.setdefault((kind, object_id), []).append(swap)

    by_cage = {swap.port_id: swap for swap in swaps if swap.kind == SwapKind.OPTIC}
    by_cable = {swap.cable_id: swap for swap in swaps if swap.kind == SwapKind.CABLE}
    for swap in swaps:
        if swap.kind == SwapKind.OPTIC:
            add(PunchObjectKind.OPTIC, swap.optic_id, swap)
            add(PunchObjectKind.PORT, swap.port_id, swap)
        else:
            add(PunchObjectKind.CABLE, swap.cable_id, swap)
    if by_cage:
        rows = (CableEnd.objects.filter(Q(port_id__in=list(by_cage)) | Q(port__parent_id__in=list(by_cage)))
                .values_list("cable_id", "port_id", "port__parent_id"))
        for cable_id, port_id, parent_id in rows:
            cage = port_id if port_id in by_cage else parent_id
            for swap in (s for s in swaps if s.kind == SwapKind.OPTIC and s.port_id == cage):
                add(PunchObjectKind.CABLE, cable_id, swap)
                if port_id != cage:
                    add(PunchObjectKind.PORT, port_id, swap)
    if by_cable:
        ends = CableEnd.objects.filter(cable_id__in=list(by_cable)).values_list("cable_id", "port_id")
        for cable_id, port_id in ends:
            for swap in (s for s in swaps if s.kind == SwapKind.CABLE and s.cable_id == cable_id):
                add(PunchObjectKind.PORT, port_id, swap)
    for listed in found.values():
        listed.sort(key=lambda s: (s.recorded_at, s.pk))
    return found


def _items_fixed_by_swaps(project: Project, since: datetime | None) -> int:
    """Mark fixed the open and in-progress items on what the swaps recorded since `since` (less the overlap)
    replaced (module docstring). Returns how many."""
    swaps = Swap.objects.filter(project=project).select_related("port__device", "cable", "recorded_by")
    if since is not None:
        swaps = swaps.filter(recorded_at__gte=since - SWAPS_OVERLAP)
    swaps = list(swaps.order_by("recorded_at", "id"))
    if not swaps:
        return 0
    replaced = _swapped_objects(swaps)
    wanted = Q()
    for kind in {kind for kind, _ in replaced}:
        wanted |= Q(object_kind=kind, object_id__in=sorted(pk for k, pk in replaced if k == kind))
    items = list(PunchItem.objects.filter(wanted, project=project, status__in=WORKED_ON).order_by("id"))
    if not items:
        return 0
    fixed_since = {}  # item id -> the times it was marked fixed since the oldest swap read
    for item_id, at in (PunchItem.history.filter(id__in=[i.pk for i in items], status=PunchStatus.FIXED,
                                                 history_date__gte=swaps[0].recorded_at)
                        .values_list("id", "history_date")):
        fixed_since.setdefault(item_id, []).append(at)
    fixed = 0
    for item in items:
        seen = item.evidence_at or item.opened_at  # when the fault was last heard of
        news = [swap for swap in replaced[(item.object_kind, item.object_id)]
                if swap.recorded_at > seen and not any(at >= swap.recorded_at for at in fixed_since.get(item.pk, ()))]
        if not news:
            continue
        swap = news[-1]
        item.status, item.fixed_at, item.fixed_by, item.passing_since = (
            PunchStatus.FIXED, swap.recorded_at, swap.recorded_by, None)
        item.resolution_note = _swap_note(swap)
        _save(item, user=swap.recorded_by, why=f"fixed by swap #{swap.pk}: {swap.serials_text}")
        fixed += 1
    return fixed


@transaction.atomic
def punch_items_sync_from_evidence(*, project: Project) -> dict[str, int]:
    """Fix items on parts swapped since the last sync, then open, reopen and verify the project's punch
    items from the check results finished since the last sync and the latest topology comparison (see the
    module's docstring). Safe to run twice; two syncs of one project take turns (a row lock). Returns
    counts: opened, reopened, verified (the items a swap fixed are in the items' history, not counted)."""
    sync, _ = PunchSync.objects.get_or_create(project=project)
    sync = PunchSync.objects.select_for_update().get(pk=sync.pk)
    # Swaps first: the evidence read below may then verify (or reopen) what a swap fixed.
    _items_fixed_by_swaps(project, sync.synced_at)
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
                    passing_since=item.passing_since, title=item.title, description=item.description)
                continue
            _save(item, user=None, why=why)
            if item.status == PunchStatus.VERIFIED and before != PunchStatus.VERIFIED:
                counts["verified"] += 1
            elif item.status == PunchStatus.OPEN and before in (PunchStatus.FIXED, PunchStatus.VERIFIED):
                counts["reopened"] += 1
    # An item opened by hand on a cable is also verified by a scan of every end taken after the fix (a cable
    # on the out-of-band network never gets a link check); one opened by a failed check needs a passing check.
    scans = _scans_evidence(project, sync.synced_at)
    counts["verified"] += _manual_items_verified(project, {**evidence, **scans})
    sync.results_through, sync.synced_at = newest, timezone.now()
    sync.save(update_fields=["results_through", "synced_at"])
    return counts
