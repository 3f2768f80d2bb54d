"""Writes of the delivery workflow: a project's stages from a template, starting, skipping and completing
a stage, waivers, checklist confirmations, and recomputing the gates (with what a regression does).

A stage's gate is never ticked by hand: `gates_recompute` stores each stage's outcome (projects.gates, or
its checklist) with when it was computed, and `stage_complete` reads that stored outcome. Recomputes run in
a task (delivery.tasks) queued when evidence changes (projects.signals.evidence_changed), at most one
queued per project at a time (`gates_recompute_request`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max, Q
from django.urls import reverse
from django.utils import timezone

from core.jobs import enqueue_on_commit
from core.sql import connection_scratch
from delivery.choices import CHECKLIST_GATE, SATISFIED_STAGE_STATUSES, NotificationKind, StageStatus
from delivery.models import (
    RESERVED_KEYS,
    ChecklistItem,
    GateRecompute,
    Stage,
    StageTemplate,
    Waiver,
    stage_list_errors,
)
from delivery.notifications.services import notification_send
from delivery.punch.services import punch_items_sync_from_evidence
from delivery.sql import gate_recompute_flag_claim, gate_recompute_flag_first_claim
from delivery.stages.data import DEFAULT_STAGES, DEFAULT_TEMPLATE_DESCRIPTION, DEFAULT_TEMPLATE_NAME
from delivery.stages.work import STAGE_RUNNERS, work_start
from projects.access import Capability, require
from projects.gates import MISSING_EXAMPLES, GateOutcome, MissingItem, gates
from projects.models import Project

RECOMPUTE_TASK = "delivery.tasks.gates_recompute_task"
REASON_LENGTH = Stage._meta.get_field("status_reason").max_length
WAIVER_REASON_LENGTH = 2000


def _managers_only(user, project: Project) -> None:
    require(user, Capability.MANAGE_PROJECT, project, "Only the project's managers may do this to a stage.")


def _fit(text: str, limit: int = REASON_LENGTH) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _save(stage: Stage, fields: list[str], *, user=None, why: str = "") -> None:
    """Save the stage's changed fields with a history row naming who (None: the system) and why."""
    stage._history_user = user
    if why:
        stage._change_reason = _fit(why, 100)
    stage.full_clean(validate_unique=False, validate_constraints=False)
    stage.save(update_fields=fields)


# --- templates and a project's stages ------------------------------------------------------------------


def stage_template_default() -> StageTemplate:
    """The default template (also loaded by delivery's migrations), created if missing."""
    template, _ = StageTemplate.objects.get_or_create(
        name=DEFAULT_TEMPLATE_NAME, defaults={"description": DEFAULT_TEMPLATE_DESCRIPTION, "stages": DEFAULT_STAGES}
    )
    return template


@transaction.atomic
def stages_create_from_template(*, project: Project, template: StageTemplate | None = None) -> list[Stage]:
    """Give `project` the stages of `template` (the default one when None), with their checklists. Stages
    the project already has (by key) are kept as they are, so applying a template twice writes nothing.
    Queues a first computation of the gates once the transaction commits."""
    template = template or stage_template_default()
    errors = stage_list_errors(template.stages, known_gates=gates)
    if errors:
        raise ValidationError({"template": errors})
    Project.objects.select_for_update().filter(pk=project.pk).first()  # two applications at once: one waits
    existing = set(Stage.objects.filter(project=project).values_list("key", flat=True))
    created = []
    for order, spec in enumerate(template.stages, start=1):
        if spec["key"] in existing:
            continue
        stage = Stage(project=project, key=spec["key"], title=spec["title"], order=order * 10,
                      depends_on=list(spec.get("depends_on", [])), gate_key=spec["gate"], work=spec.get("work", ""))
        stage.full_clean()
        stage.save()
        ChecklistItem.objects.bulk_create(
            [ChecklistItem(stage=stage, text=text.strip(), order=n) for n, text in enumerate(spec.get("checklist", []))]
        )
        created.append(stage)
    if created:
        transaction.on_commit(lambda: gates_recompute_request(project_id=project.pk))
    return created


@transaction.atomic
def stage_add_custom(*, project: Project, user, title: str, checklist: list[str], depends_on: list[str]) -> Stage:
    """A stage of the manager's own, gated by its manual checklist, placed after the stages it depends on."""
    _managers_only(user, project)
    title = " ".join(str(title or "").split())
    texts = [" ".join(str(t).split()) for t in checklist if str(t).strip()]
    stages = {s.key: s for s in Stage.objects.select_for_update().filter(project=project)}
    errors = {}
    if not title or len(title) > 100:
        errors["title"] = "A title of 1-100 characters."
    if not texts or any(len(t) > 200 for t in texts):
        errors["checklist"] = "At least one item, each of at most 200 characters (one per line)."
    unknown = [key for key in depends_on if key not in stages]
    if unknown:
        errors["depends_on"] = f"No stage {', '.join(unknown)} in this project."
    if errors:
        raise ValidationError(errors)
    base = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:30] or "custom"
    key = base if base[0].isalpha() and base not in RESERVED_KEYS else f"custom_{base}"
    n = 2
    while key in stages:
        key, n = f"{base[:30]}_{n}", n + 1
    after = max((stages[k].order for k in depends_on), default=0)
    stage = Stage(project=project, key=key, title=title, order=after + 5, depends_on=list(depends_on),
                  gate_key=CHECKLIST_GATE)
    stage._history_user = user
    stage.full_clean()
    stage.save()
    ChecklistItem.objects.bulk_create([ChecklistItem(stage=stage, text=t, order=i) for i, t in enumerate(texts)])
    transaction.on_commit(lambda: gates_recompute_request(project_id=project.pk))
    return stage


def _locked(stage: Stage) -> Stage:
    return Stage.objects.select_for_update().select_related("project").get(pk=stage.pk)


def unmet_dependencies(stage: Stage) -> list[Stage]:
    """The stages `stage` depends on that are neither done nor skipped."""
    if not stage.depends_on:
        return []
    return list(Stage.objects.filter(project_id=stage.project_id, key__in=stage.depends_on)
                .exclude(status__in=SATISFIED_STAGE_STATUSES).order_by("order"))


def _refuse_unmet(stage: Stage, doing: str) -> None:
    unmet = unmet_dependencies(stage)
    if unmet:
        names = ", ".join(f"{s.title} ({s.get_status_display().lower()})" for s in unmet)
        raise ValidationError(f"{stage.title} cannot {doing} before {names} is done or skipped.")


# --- starting, skipping, completing ---------------------------------------------------------------------


@transaction.atomic
def stage_start(*, stage: Stage, user, runner: str = STAGE_RUNNERS[0]) -> Stage:
    """Start a stage whose dependencies are done or skipped, and its work where it has some (validation's
    services enqueue it after commit): a refusal of the work (no GPU nodes, a soak already open) refuses
    the start, so nothing half-starts."""
    _managers_only(user, stage.project)
    stage = _locked(stage)
    if stage.status != StageStatus.NOT_STARTED:
        raise ValidationError(f"{stage.title} is already {stage.get_status_display().lower()}.")
    if runner not in STAGE_RUNNERS:
        raise ValidationError({"runner": f"Start the work with one of: {', '.join(STAGE_RUNNERS)}."})
    _refuse_unmet(stage, "start")
    jobs = work_start(work=stage.work, project=stage.project, user=user, runner=runner) if stage.work else []
    stage.status, stage.status_reason = StageStatus.IN_PROGRESS, ""
    stage.started_at, stage.started_by = timezone.now(), user
    stage.jobs = [*stage.jobs, *([job.job_type, job.pk] for job in jobs)]
    _save(stage, ["status", "status_reason", "started_at", "started_by", "jobs"], user=user, why="started")
    if jobs:
        _evidence_changed(stage.project_id)  # a soak window opened is evidence too ("open until ...")
    return stage


@transaction.atomic
def stage_skip(*, stage: Stage, user, reason: str) -> Stage:
    """Skip a stage that is not done, with the reason (required); the stages after it may then start."""
    _managers_only(user, stage.project)
    stage = _locked(stage)
    reason = " ".join(str(reason or "").split())
    if not reason:
        raise ValidationError({"reason": "Say why the stage is skipped."})
    if len(reason) > REASON_LENGTH:
        raise ValidationError({"reason": f"At most {REASON_LENGTH} characters."})
    if stage.status in SATISFIED_STAGE_STATUSES:
        raise ValidationError(f"{stage.title} is already {stage.get_status_display().lower()}.")
    stage.status, stage.skipped_reason, stage.status_reason = StageStatus.SKIPPED, reason, ""
    stage.completed_at, stage.completed_by = timezone.now(), user
    _save(stage, ["status", "skipped_reason", "status_reason", "completed_at", "completed_by"], user=user,
          why=f"skipped: {reason}")
    _unblock_dependents(stage, user=user)
    return stage


def _all_items_waiver_covers(stage: Stage, waiver: Waiver) -> bool:
    """A waiver of all items covers up to as many as were missing when it was recorded; and when it named
    every one of them (the gate lists up to ten), only those: a new fault in place of one fixed is not
    waived by a count."""
    if stage.gate_missing_count > waiver.missing_count:
        return False
    if waiver.missing_count == len(waiver.items):
        return {item.get("ref") for item in stage.gate_missing} <= set(waiver.items)
    return True


def waivers_cover(stage: Stage, waivers: list[Waiver]) -> bool:
    """Whether the waivers cover every item the stored gate misses: waivers of all items as
    _all_items_waiver_covers says; waivers of named items cover those refs, and only when the stored gate
    lists every item it misses (it lists up to ten)."""
    if stage.gate_passed:
        return True
    if any(w.all_items and _all_items_waiver_covers(stage, w) for w in waivers):
        return True
    refs = {item.get("ref") for item in stage.gate_missing}
    waived = {ref for w in waivers for ref in w.items}
    return stage.gate_missing_count == len(refs) and refs <= waived


def _missing_text(stage: Stage) -> str:
    shown = "; ".join(f"{i.get('label')}: {i.get('reason')}" for i in stage.gate_missing[:MISSING_EXAMPLES])
    more = stage.gate_missing_count - len(stage.gate_missing)
    return shown + (f"; and {more} more" if more > 0 else "")


@transaction.atomic
def stage_complete(*, stage: Stage, user) -> Stage:
    """Complete a stage: only when its stored gate passes, or when waivers cover every item it misses.
    Refused with the missing items otherwise (the gate as last computed, with when)."""
    _managers_only(user, stage.project)
    return stage_complete_on_behalf(stage=stage, user=user)


@transaction.atomic
def stage_complete_on_behalf(*, stage: Stage, user) -> Stage:
    """stage_complete without its managers-only check, for a stage completed by what someone else did: the
    acceptance stage when the customer signs the report (delivery.reports.services). The caller has
    decided who may; every other rule of stage_complete holds, and `user` is recorded as who completed it."""
    stage = _locked(stage)
    if stage.status in SATISFIED_STAGE_STATUSES:
        raise ValidationError(f"{stage.title} is already {stage.get_status_display().lower()}.")
    _refuse_unmet(stage, "complete")
    if stage.gate_passed is None:
        raise ValidationError(f"{stage.title}'s gate has not been computed yet; try again in a moment.")
    waivers = list(stage.waivers.all())
    if not waivers_cover(stage, waivers):
        raise ValidationError(
            f"{stage.title}'s gate does not pass ({stage.gate_missing_count} missing, computed "
            f"{timezone.localtime(stage.gate_computed_at):%Y-%m-%d %H:%M}): {_missing_text(stage)}. "
            "Fix them, or record a waiver that covers them."
        )
    waived = "" if stage.gate_passed else f" with {len(waivers)} waiver(s)"
    now = timezone.now()
    if stage.started_at is None:
        # Completed straight from "not started" (a gate that passed without work, like site readiness): it
        # started when it was done, so the stage's record and the report's dates stay whole.
        stage.started_at, stage.started_by = now, user
    stage.status, stage.status_reason = StageStatus.DONE, ""
    stage.completed_at, stage.completed_by = now, user
    _save(stage, ["status", "status_reason", "started_at", "started_by", "completed_at", "completed_by"], user=user,
          why=f"completed{waived}")
    _unblock_dependents(stage, user=user)
    notify_stage_completed(stage, user=user, waived=waived)
    return stage


def _unblock_dependents(stage: Stage, *, user) -> None:
    """Stages blocked by a reopened dependency go back to in progress once all theirs are satisfied."""
    blocked = Stage.objects.select_for_update().filter(project_id=stage.project_id, status=StageStatus.BLOCKED)
    for other in blocked:
        if stage.key in other.depends_on and not unmet_dependencies(other):
            other.status, other.status_reason = StageStatus.IN_PROGRESS, ""
            other.completed_at, other.completed_by = None, None
            _save(other, ["status", "status_reason", "completed_at", "completed_by"], user=user,
                  why=f"{stage.title} {stage.get_status_display().lower()}")


# --- waivers and checklists -----------------------------------------------------------------------------


@transaction.atomic
def waiver_record(*, stage: Stage, user, reason: str, items: list[str] | None = None,
                  all_items: bool = False) -> Waiver:
    """Record that `stage` may complete without some of its gate's missing items: those named by ref (as
    the stored gate lists them), or all of them as they stand (`all_items`). Reason required."""
    _managers_only(user, stage.project)
    stage = _locked(stage)
    reason = str(reason or "").strip()
    items = [str(ref) for ref in (items or [])]
    errors = {}
    if not reason:
        errors["reason"] = "Say why these items may be waived."
    elif len(reason) > WAIVER_REASON_LENGTH:
        errors["reason"] = f"At most {WAIVER_REASON_LENGTH} characters."
    listed = {item.get("ref") for item in stage.gate_missing}
    if stage.gate_passed is not False:
        errors["items"] = f"{stage.title}'s gate misses nothing to waive."
    elif not all_items and not items:
        errors["items"] = "Choose the items to waive, or waive all of them."
    elif not all_items and any(ref not in listed for ref in items):
        unknown = ", ".join(ref for ref in items if ref not in listed)[:200]
        errors["items"] = f"Not among the gate's missing items: {unknown}."
    if stage.status in SATISFIED_STAGE_STATUSES:
        errors["items"] = f"{stage.title} is already {stage.get_status_display().lower()}."
    if errors:
        raise ValidationError(errors)
    waiver = Waiver(stage=stage, items=sorted(set(items)) if not all_items else sorted(listed),
                    all_items=all_items, missing_count=stage.gate_missing_count, reason=reason,
                    recorded_by=user, recorded_at=timezone.now())
    waiver._history_user = user
    waiver.full_clean()
    waiver.save()
    _evidence_changed(stage.project_id)
    return waiver


@transaction.atomic
def checklist_item_confirm(*, item: ChecklistItem, user) -> ChecklistItem:
    """A technician or manager confirms one checklist item (who and when); confirmed once."""
    project = item.stage.project
    require(user, Capability.RUN_CHECKS, project, "Your role in this project does not allow confirming items.")
    item = ChecklistItem.objects.select_for_update(of=("self",)).select_related("confirmed_by").get(pk=item.pk)
    if item.confirmed_at is not None:
        who = item.confirmed_by.get_username() if item.confirmed_by else "someone"
        raise ValidationError(f"“{item.text}” was already confirmed by {who} at "
                              f"{timezone.localtime(item.confirmed_at):%Y-%m-%d %H:%M}.")
    item.confirmed_at, item.confirmed_by = timezone.now(), user
    item._history_user = user
    item.save(update_fields=["confirmed_at", "confirmed_by"])
    _evidence_changed(project.pk)
    return item


def _evidence_changed(project_id: int) -> None:
    gates_recompute_after_commit(project_id=project_id)


def gates_recompute_after_commit(*, project_id: int) -> None:
    """Ask for a recompute once the current transaction commits (nothing if it rolls back), once per
    transaction however many changes it makes: without a broker the task runs inside the request, and each
    further ask would claim the flag it just cleared and run it all again.

    Every change registers its own callback (so none is lost to a rolled-back savepoint); the callbacks of
    one transaction share a batch, and the first to run asks for all of them."""
    batches = connection_scratch(name="_gates_recompute_batches")  # one transaction's asks share a batch
    batch = batches.get(project_id)
    if batch is None or batch["asked"]:
        batch = batches[project_id] = {"asked": False}

    def request() -> None:
        if not batch["asked"]:
            batch["asked"] = True
            gates_recompute_request(project_id=project_id)

    request.gates_project_id = project_id
    transaction.on_commit(request)


# --- recomputing the gates ------------------------------------------------------------------------------


def gates_recompute_request(*, project_id: int) -> bool:
    """Queue a recompute of the project's gates unless one is already queued, so a burst of scans queues one
    task. Called after the evidence's transaction committed, by every accepted scan (200 a second on the
    floor), so the usual answer, "queued already", must cost one statement that writes nothing: the claim is
    an UPDATE of the flag only where it is not pending (no row matched, no row locked, nothing to flush at
    commit), which says at the same time whether the flag row exists. Only a project whose row does not
    exist yet pays a second statement, which makes it (for a project with stages; one without asks for
    nothing). Both written out in delivery.sql. True when this call queued it."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.GATES_RECOMPUTE_STALE_S)
    claimed, present = gate_recompute_flag_claim(project_id=project_id, now=now, stale_before=stale_before)
    if not claimed and not present:
        claimed = gate_recompute_flag_first_claim(project_id=project_id, now=now)
    if claimed:  # run after a delay: the scans arriving meanwhile find it queued and ask for nothing more
        enqueue_on_commit(RECOMPUTE_TASK, project_id, countdown=settings.GATES_RECOMPUTE_DELAY_S)
    return claimed


def gates_recompute_run(*, project_id: int) -> list[Stage]:
    """The task's body: clear the pending flag first (evidence arriving while this computes queues the next
    run), then recompute, then sync the punch list from the same evidence. Safe to run twice: a second
    run stores the same outcomes and reopens nothing new."""
    GateRecompute.objects.filter(project_id=project_id).update(pending=False)
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return []
    regressed = gates_recompute(project=project)
    # The same evidence opens and verifies punch items (delivery.punch.services); after the gates, in its own
    # transaction, so a punch list problem never holds back the stages.
    punch_items_sync_from_evidence(project=project)
    return regressed


def _checklist_outcomes(stages: list[Stage]) -> dict[int, GateOutcome]:
    ids = [s.pk for s in stages if s.is_checklist]
    if not ids:
        return {}
    counts = {row["stage_id"]: row for row in ChecklistItem.objects.filter(stage_id__in=ids).values("stage_id")
              .annotate(total=Count("id"), open=Count("id", filter=Q(confirmed_at=None)))}
    open_items: dict[int, list[ChecklistItem]] = defaultdict(list)
    for item in ChecklistItem.objects.filter(stage_id__in=ids, confirmed_at=None).order_by("stage_id", "order", "id"):
        open_items[item.stage_id].append(item)
    outcomes = {}
    for stage_id in ids:
        total, left = counts.get(stage_id, {}).get("total", 0), counts.get(stage_id, {}).get("open", 0)
        if not total:
            outcomes[stage_id] = GateOutcome(False, 1, [MissingItem("Checklist", "The stage has no checklist items.",
                                                                    "gate:empty-checklist")], "No checklist items.")
        elif not left:
            outcomes[stage_id] = GateOutcome(True, 0, [], f"All {total} checklist items confirmed.")
        else:
            missing = [MissingItem(item.text, "Not confirmed yet.", f"delivery.checklistitem:{item.pk}")
                       for item in open_items[stage_id][:MISSING_EXAMPLES]]
            outcomes[stage_id] = GateOutcome(False, left, missing, f"{left} of {total} checklist items not confirmed.")
    return outcomes


def _depends_on_any(stage: Stage, keys: set[str], by_key: dict[str, Stage]) -> bool:
    """Whether `stage` depends, directly or through others, on a stage in `keys`."""
    seen, todo = set(), list(stage.depends_on)
    while todo:
        key = todo.pop()
        if key in keys:
            return True
        if key not in seen and key in by_key:
            seen.add(key)
            todo.extend(by_key[key].depends_on)
    return False


@transaction.atomic
def gates_recompute(*, project: Project) -> list[Stage]:
    """Compute every stage's gate and store it with computed_at (no history row for a plain refresh).
    A done stage whose gate now fails, with items no waiver of it covers, has regressed: it reopens (in
    progress), the stages that depend on it (directly or not) that were started or done are blocked, each
    with why, and the project's managers and technicians get one email after commit (delivery.notifications.services,
    unless they turned regressions off). Returns the stages that regressed."""
    stages = list(Stage.objects.select_for_update().filter(project=project).order_by("order", "id"))
    if not stages:
        return []
    now = timezone.now()
    outcomes = _checklist_outcomes(stages)
    waivers: dict[int, list[Waiver]] = defaultdict(list)
    for waiver in Waiver.objects.filter(stage__project=project):
        waivers[waiver.stage_id].append(waiver)
    regressed = []
    for stage in stages:
        outcome = outcomes.get(stage.pk) or gates.compute(stage.gate_key, project)
        stage.gate_passed, stage.gate_missing_count = outcome.passed, outcome.missing_count
        stage.gate_missing, stage.gate_summary = outcome.missing_json(), _fit(outcome.summary)
        stage.gate_computed_at = now
        Stage.objects.filter(pk=stage.pk).update(
            gate_passed=stage.gate_passed, gate_missing_count=stage.gate_missing_count,
            gate_missing=stage.gate_missing, gate_summary=stage.gate_summary, gate_computed_at=now,
        )
        if stage.status == StageStatus.DONE and not waivers_cover(stage, waivers[stage.pk]):
            regressed.append(stage)
    GateRecompute.objects.filter(project=project).update(computed_at=now)
    if regressed:
        blocked = _reopen(stages, regressed)
        _notify_regression(project, regressed, blocked)  # sent once this transaction commits
    return regressed


def _reopen(stages: list[Stage], regressed: list[Stage]) -> list[Stage]:
    by_key = {s.key: s for s in stages}
    keys = {s.key for s in regressed}
    blocked = []
    for stage in regressed:
        if not _depends_on_any(stage, keys, by_key):
            stage.status, stage.completed_at, stage.completed_by = StageStatus.IN_PROGRESS, None, None
            stage.status_reason = _fit(f"Reopened {timezone.localtime():%Y-%m-%d %H:%M}: {stage.gate_summary}")
            _save(stage, ["status", "status_reason", "completed_at", "completed_by"], why="gate regressed")
    for stage in stages:
        if stage.status in (StageStatus.DONE, StageStatus.IN_PROGRESS) and _depends_on_any(stage, keys, by_key):
            causes = ", ".join(s.title for s in regressed if _depends_on_any(stage, {s.key}, by_key))
            own = f" Its own gate: {stage.gate_summary}" if stage in regressed else ""
            stage.status, stage.completed_at, stage.completed_by = StageStatus.BLOCKED, None, None
            stage.status_reason = _fit(f"Waits for {causes}, reopened {timezone.localtime():%Y-%m-%d %H:%M}.{own}")
            _save(stage, ["status", "status_reason", "completed_at", "completed_by"], why="a dependency regressed")
            blocked.append(stage)
    return blocked


def _notify_regression(project: Project, regressed: list[Stage], blocked: list[Stage]) -> None:
    """One email to the project's managers and technicians naming what reopened, why, and what it blocks."""
    lines = [f"Stages of {project.code} ({project.name}) reopened because their gate no longer passes:", ""]
    for stage in regressed:
        lines.append(f"- {stage.title}: {stage.gate_summary}")
        lines += [f"    {item.get('label')}: {item.get('reason')}" for item in stage.gate_missing[:MISSING_EXAMPLES]]
    if blocked:
        lines += ["", "Blocked until they are done again: " + ", ".join(s.title for s in blocked) + "."]
    notification_send(project=project, kind=NotificationKind.STAGE_REGRESSED,
                      subject="Reopened: " + ", ".join(s.title for s in regressed), body="\n".join(lines),
                      link=reverse("delivery:activity", args=[project.code]))


def notify_stage_completed(stage: Stage, *, user, waived: str = "") -> None:
    """The project's members hear that a stage is done (after commit), with who completed it."""
    project = stage.project
    who = (user.get_full_name() or user.get_username()) if user is not None else "the system"
    body = (f"{stage.title} of {project.code} ({project.name}) was completed{waived} by {who} on "
            f"{timezone.localtime(stage.completed_at):%Y-%m-%d %H:%M}.")
    notification_send(project=project, kind=NotificationKind.STAGE_COMPLETED, subject=f"Completed: {stage.title}",
                      body=body, link=reverse("delivery:activity", args=[project.code]))


def last_gate_computation(project: Project):
    """When the project's gates were last computed (None: never)."""
    return Stage.objects.filter(project=project).aggregate(at=Max("gate_computed_at"))["at"]
