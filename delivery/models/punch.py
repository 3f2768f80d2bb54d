"""The punch list: what to fix before the customer signs, by hand or opened from the evidence, and how far the
sync has read the check results."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from delivery.choices import PunchObjectKind, PunchSeverity, PunchSource, PunchStatus
from projects.models import Project

_PERSON = {"on_delete": models.SET_NULL, "null": True, "blank": True, "related_name": "+"}


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
    (kind, id, label): delivery may read the domain apps, but a row of its own must not block their deletes."""

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
