"""The delivery workflow: a project's stages (from a template), each with its gate as last computed, the
checklist of a stage people confirm by hand, and the waivers a manager records to complete a stage whose
gate does not pass."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from delivery.models import Project

from .choices import (
    CHECKLIST_GATE,
    PunchObjectKind,
    PunchSeverity,
    PunchSource,
    PunchStatus,
    StageStatus,
    StageWork,
)

STAGE_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_PERSON = {"on_delete": models.SET_NULL, "null": True, "blank": True, "related_name": "+"}
STAGE_FIELDS = {"key", "title", "gate", "depends_on", "work", "checklist"}
RESERVED_KEYS = frozenset({"create", "recompute"})  # the stages pages' own paths (delivery/roof/stage_urls.py)


def stage_list_errors(stages, *, known_gates) -> list[str]:
    """What is wrong with a template's stages (a list of {key, title, gate, depends_on, work, checklist},
    in order), each message naming the stage: keys unique, a dependency only on a stage before it (so no
    cycle), a gate some app registered or the checklist, a known kind of work."""
    if not isinstance(stages, list) or not stages:
        return ["A template needs a list of at least one stage."]
    errors, seen = [], set()
    for index, stage in enumerate(stages, start=1):
        if not isinstance(stage, dict):
            errors.append(f"Stage {index}: an object with key, title and gate.")
            continue
        key = stage.get("key")
        name = f"Stage {index} ({key})" if isinstance(key, str) else f"Stage {index}"
        unknown = sorted(set(stage) - STAGE_FIELDS)
        if unknown:
            errors.append(f"{name}: unknown field(s) {', '.join(unknown)}.")
        if not isinstance(key, str) or not STAGE_KEY.match(key) or key in RESERVED_KEYS:
            errors.append(f"{name}: key must be 1-40 lower-case letters, digits or _, starting with a letter.")
        elif key in seen:
            errors.append(f"{name}: key used twice.")
        title = stage.get("title")
        if not isinstance(title, str) or not title.strip() or len(title) > 100:
            errors.append(f"{name}: title of 1-100 characters.")
        gate = stage.get("gate")
        if gate != CHECKLIST_GATE and gate not in known_gates:
            errors.append(f"{name}: unknown gate {gate!r}.")
        depends = stage.get("depends_on", [])
        if not isinstance(depends, list) or any(d not in seen for d in depends):
            errors.append(f"{name}: depends_on lists only keys of stages before it.")
        if stage.get("work", "") not in ("", *StageWork.values):
            errors.append(f"{name}: unknown work {stage.get('work')!r}.")
        checklist = stage.get("checklist", [])
        if not isinstance(checklist, list) or any(not isinstance(t, str) or not t.strip() or len(t) > 200
                                                  for t in checklist):
            errors.append(f"{name}: checklist is a list of texts of 1-200 characters.")
        if isinstance(key, str):
            seen.add(key)
    return errors


class StageTemplate(models.Model):
    """The stages a project starts from, as data: order, dependencies, gates and work are not code."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    stages = models.JSONField(
        default=list,
        help_text='In order: [{"key": "racking", "title": "Racking", "gate": "inventory.racking", '
        '"depends_on": ["site_readiness"], "work": "", "checklist": []}, ...]',
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        from delivery.gates import gates

        errors = stage_list_errors(self.stages, known_gates=gates)
        if errors:
            raise ValidationError({"stages": errors})


class Stage(models.Model):
    """One stage of one project. Its gate fields are the stored outcome of its gate (delivery.gates or
    the checklist), written by the recompute task only, with when it was computed."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="stages")
    key = models.CharField(max_length=40)
    title = models.CharField(max_length=100)
    order = models.PositiveSmallIntegerField()
    depends_on = models.JSONField(default=list, blank=True, help_text="Keys of the stages this one waits for.")
    gate_key = models.CharField(max_length=60, help_text='A registered gate (delivery.gates) or "checklist".')
    work = models.CharField(max_length=20, choices=StageWork.choices, blank=True)
    status = models.CharField(max_length=16, choices=StageStatus.choices, default=StageStatus.NOT_STARTED)
    status_reason = models.CharField(max_length=300, blank=True, help_text="Why it is blocked or was reopened.")
    skipped_reason = models.CharField(max_length=300, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, **_PERSON)
    completed_at = models.DateTimeField(null=True, blank=True)
    completed_by = models.ForeignKey(settings.AUTH_USER_MODEL, **_PERSON)
    jobs = models.JSONField(
        default=list, blank=True, help_text='Work started by the stage: [["validation.checkrun", 12]].'
    )
    gate_passed = models.BooleanField(null=True, blank=True, help_text="Blank: never computed.")
    gate_missing_count = models.PositiveIntegerField(default=0)
    gate_missing = models.JSONField(default=list, blank=True, help_text="Up to ten items: label, reason, ref, url.")
    gate_summary = models.CharField(max_length=300, blank=True)
    gate_computed_at = models.DateTimeField(null=True, blank=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["project", "order", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "key"], name="stage_key_unique_in_project")]

    def __str__(self) -> str:
        return f"{self.project.code} {self.title}"

    @property
    def is_checklist(self) -> bool:
        return self.gate_key == CHECKLIST_GATE


class ChecklistItem(models.Model):
    """One thing a person confirms by hand (the subnet manager runs, adaptive routing is on), with who
    and when."""

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="checklist")
    text = models.CharField(max_length=200)
    order = models.PositiveSmallIntegerField(default=0)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    confirmed_by = models.ForeignKey(settings.AUTH_USER_MODEL, **_PERSON)

    history = HistoricalRecords()

    class Meta:
        ordering = ["stage", "order", "id"]

    def __str__(self) -> str:
        return self.text


class Waiver(models.Model):
    """A manager's decision that a stage may complete without some of its gate's items: which (refs of
    the gate's missing items, or all of them as they stood), why, who and when. Waivers go into the
    acceptance report."""

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="waivers")
    items = models.JSONField(default=list, blank=True, help_text='Refs of the items it covers: ["cabling.cable:42"].')
    all_items = models.BooleanField(
        default=False, help_text="Covers every item the gate missed when it was recorded (up to missing_count).",
    )
    missing_count = models.PositiveIntegerField(default=0, help_text="How many items the gate missed then.")
    reason = models.TextField()
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, **_PERSON)
    recorded_at = models.DateTimeField()

    history = HistoricalRecords()

    class Meta:
        ordering = ["stage", "recorded_at", "id"]

    def __str__(self) -> str:
        return f"Waiver of {self.stage}"


class GateRecompute(models.Model):
    """One row per project: whether a recompute of its gates is already queued (so a burst of evidence
    queues one task, not one per scan) and when its gates were last computed."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="gate_recompute")
    pending = models.BooleanField(default=False)
    requested_at = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Gates of {self.project.code}"


# --- the punch list ---------------------------------------------------------------------------------------

# Where an item's object is shown: (URL name, the object id is its only argument after the project code).
# A node pair opens its first node; a miswire the comparison that last saw it.
PUNCH_OBJECT_URLS = {
    PunchObjectKind.DEVICE: "inventory:device-detail",
    PunchObjectKind.PORT: "cabling:port-trace",
    PunchObjectKind.CABLE: "cabling:cable-detail",
    PunchObjectKind.OPTIC: "inventory:optic-detail",
    PunchObjectKind.NODE_PAIR: "inventory:device-detail",
    PunchObjectKind.CHECK_RESULT: "validation:result-detail",
    PunchObjectKind.MISWIRE: "validation:topology-detail",
}


class PunchItem(models.Model):
    """Something to fix before the customer signs: by hand, or opened by the sync from a failed check result
    or a topology comparison's faulty link. An auto-opened item carries the fault's fingerprint
    ("link_health:cable:123", "topology:miswired:C00042"), unique in its project, so a fault re-seen by
    every re-run stays one item (reopened if it fails again after a fix). The object is a plain reference
    (kind, id, label): the roof may read the domain apps, but a row of its own must not block their deletes."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="punch_items")
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    severity = models.CharField(max_length=10, choices=PunchSeverity.choices, default=PunchSeverity.MAJOR)
    status = models.CharField(max_length=12, choices=PunchStatus.choices, default=PunchStatus.OPEN)
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, **_PERSON)
    due_date = models.DateField(null=True, blank=True)
    customer_visible = models.BooleanField(
        default=False, help_text="Shown to the project's customers; internal otherwise."
    )
    object_kind = models.CharField(max_length=14, choices=PunchObjectKind.choices, blank=True)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    object_label = models.CharField(max_length=255, blank=True)
    source = models.CharField(max_length=14, choices=PunchSource.choices, default=PunchSource.MANUAL)
    fingerprint = models.CharField(max_length=300, blank=True, help_text="The fault an auto-opened item tracks.")
    opened_by = models.ForeignKey(settings.AUTH_USER_MODEL, **_PERSON)
    opened_at = models.DateTimeField()
    fixed_by = models.ForeignKey(settings.AUTH_USER_MODEL, **_PERSON)
    fixed_at = models.DateTimeField(null=True, blank=True)
    resolution_note = models.TextField(blank=True)
    wont_fix_reason = models.TextField(blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, **_PERSON, help_text="Blank on a verified item: verified by the evidence (the sync)."
    )
    evidence_at = models.DateTimeField(null=True, blank=True, help_text="When the latest evidence applied was taken.")
    evidence_note = models.CharField(max_length=300, blank=True, help_text="What the latest evidence said.")
    passing_since = models.DateTimeField(
        null=True, blank=True, help_text="An item not yet fixed whose object passes again: since when."
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["project", "-opened_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "fingerprint"], condition=~models.Q(fingerprint=""),
                                    name="punch_fingerprint_unique_in_project"),
        ]
        indexes = [models.Index(fields=["project", "status", "severity"], name="punch_project_status_idx")]

    def __str__(self) -> str:
        return f"{self.project.code} #{self.pk} {self.title}"

    def clean(self):
        if bool(self.object_kind) != (self.object_id is not None):
            raise ValidationError({"object_id": "An object needs both its kind and its id."})

    @property
    def object_url(self) -> str:
        """The page of the object the item concerns ("" when it names none)."""
        from django.urls import NoReverseMatch, reverse

        name = PUNCH_OBJECT_URLS.get(self.object_kind)
        if not name or self.object_id is None:
            return ""
        try:
            return reverse(name, args=[self.project.code, self.object_id])
        except NoReverseMatch:
            return ""


class PunchSync(models.Model):
    """One row per project: how far the punch list's sync has read the check results (by finish time), so a
    sync reads only what finished since, not every result of the project."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="punch_sync")
    results_through = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Punch sync of {self.project.code}"


# Models kept in their own packages, re-exported here so that Django finds them in the app's models module.
from .handover.models import *  # noqa: E402,F403
from .notifications import NotificationPreference  # noqa: E402,F401
from .reports.models import *  # noqa: E402,F403
