"""Cables and their ends. One end per port, enforced by the database: a port can never carry two
cables, whatever races happen. A breakout cable has one A end and several B ends."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from delivery.models import Project
from inventory.choices import Network
from inventory.models import Port

from .choices import CableStatus, CableType, FabricPlanSource, FabricPlanStatus, Side


class Cable(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="cables")
    label = models.CharField(max_length=120, help_text="Printed on both ends; deterministic from the plan.")
    network = models.CharField(max_length=16, choices=Network.choices)
    plane = models.PositiveSmallIntegerField(null=True, blank=True)
    cable_type = models.CharField(max_length=8, choices=CableType.choices)
    length_m = models.DecimalField(max_digits=6, decimal_places=1)
    speed_gbps = models.PositiveIntegerField()
    part_number = models.CharField(max_length=100, blank=True)
    optic_part_a = models.CharField(max_length=100, blank=True, help_text="Transceiver needed at the A end.")
    optic_part_b = models.CharField(max_length=100, blank=True, help_text="Transceiver needed at each B end.")
    status = models.CharField(max_length=16, choices=CableStatus.choices, default=CableStatus.PLANNED)
    removed_from_plan = models.BooleanField(
        default=False,
        help_text="Installed when a re-plan dropped it, and kept on purpose: take it out, then delete the row.",
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["label"]
        constraints = [
            models.UniqueConstraint(fields=["project", "label"], name="cable_label_unique_in_project"),
            models.CheckConstraint(condition=Q(length_m__gt=0), name="cable_length_positive"),
        ]

    def __str__(self) -> str:
        return self.label


class CableEnd(models.Model):
    cable = models.ForeignKey(Cable, on_delete=models.CASCADE, related_name="ends")
    side = models.CharField(max_length=1, choices=Side.choices)
    position = models.PositiveSmallIntegerField(default=0, help_text="Leg of a breakout, from 0.")
    port = models.OneToOneField(Port, on_delete=models.PROTECT, related_name="cable_end")
    optic_count = models.PositiveSmallIntegerField(
        default=1,
        help_text="Transceivers this end accounts for: 0 where it shares a twin-port cage whose transceiver "
        "another end counts (the planner counts one per cage), 1 otherwise.",
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["cable", "side", "position"]
        constraints = [
            models.UniqueConstraint(fields=["cable", "side", "position"], name="cable_end_leg_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.cable.label} {self.side}{self.position}: {self.port}"


class FabricPlan(models.Model):
    """One cluster spec submitted for a project: its text, what the planner made of it (summary), what
    applying it would change (diff, as previewed, then as applied), and who confirmed it and when. The
    apply runs in a task; the plan page polls its progress on this row."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="fabric_plans")
    name = models.CharField(max_length=200, blank=True, help_text="The spec's name, once read.")
    spec_text = models.TextField(help_text="The cluster spec (YAML) exactly as submitted.")
    source = models.CharField(max_length=16, choices=FabricPlanSource.choices, default=FabricPlanSource.FORM)
    status = models.CharField(max_length=16, choices=FabricPlanStatus.choices, default=FabricPlanStatus.PREVIEW)
    keep_installed = models.BooleanField(
        default=False, help_text="Confirmed with: keep installed cables and racked switches the plan drops."
    )
    summary = models.JSONField(default=dict, blank=True, help_text="Plan.summary(): counts and BOM.")
    diff = models.JSONField(default=dict, blank=True, help_text="What applying changes, as previewed or applied.")
    errors = models.JSONField(default=list, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    progress_step = models.CharField(max_length=40, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When the preview or the apply ended.")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="fabric_plan_project_recent")]

    def __str__(self) -> str:
        return f"{self.project.code} plan {self.pk} ({self.name or 'unnamed'})"

    @property
    def is_finished(self) -> bool:
        """Nothing more happens without someone acting (the poller stops here)."""
        return self.status in {FabricPlanStatus.PREVIEW, FabricPlanStatus.APPLIED, FabricPlanStatus.FAILED}
