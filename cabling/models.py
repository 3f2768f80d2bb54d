"""Cables and their ends. One end per port, enforced by the database: a port can never carry two
cables, whatever races happen. A breakout cable has one A end and several B ends."""

from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from delivery.models import Project
from inventory.choices import Network
from inventory.models import Port

from .choices import CableStatus, CableType, Side


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

    history = HistoricalRecords()

    class Meta:
        ordering = ["cable", "side", "position"]
        constraints = [
            models.UniqueConstraint(fields=["cable", "side", "position"], name="cable_end_leg_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.cable.label} {self.side}{self.position}: {self.port}"
