"""The delivery workflow: a project's stages (from a template), each with its gate as last computed, the
checklist of a stage people confirm by hand, and the waivers a manager records to complete a stage whose
gate does not pass."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from delivery.choices import (
    CHECKLIST_GATE,
    StageStatus,
    StageWork,
)
from projects.models import Project

STAGE_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_PERSON = {"on_delete": models.SET_NULL, "null": True, "blank": True, "related_name": "+"}
STAGE_FIELDS = {"key", "title", "gate", "depends_on", "work", "checklist"}
RESERVED_KEYS = frozenset({"create", "recompute"})  # the stages pages' own paths (delivery/stages/urls.py)


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
        from projects.gates import gates

        errors = stage_list_errors(self.stages, known_gates=gates)
        if errors:
            raise ValidationError({"stages": errors})


class Stage(models.Model):
    """One stage of one project. Its gate fields are the stored outcome of its gate (projects.gates or
    the checklist), written by the recompute task only, with when it was computed."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="stages")
    key = models.CharField(max_length=40)
    title = models.CharField(max_length=100)
    order = models.PositiveSmallIntegerField()
    depends_on = models.JSONField(default=list, blank=True, help_text="Keys of the stages this one waits for.")
    gate_key = models.CharField(max_length=60, help_text='A registered gate (projects.gates) or "checklist".')
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
