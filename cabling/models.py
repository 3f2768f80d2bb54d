"""Cables and their ends. One end per port, enforced by the database: a port can never carry two
cables, whatever races happen. A breakout cable has one A end and several B ends. And the two job rows
of the app: a fabric plan being previewed and applied, and a label sheet being rendered."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Upper
from django.utils.text import slugify
from simple_history.models import HistoricalRecords

from core.choices import JobStatus
from core.models import Job
from inventory.choices import Network
from inventory.models import Device, Optic, Port
from projects.models import Project

from .choices import (
    CableStatus,
    CableType,
    FabricPlanSource,
    FabricState,
    LabelScope,
    LabelStockName,
    RmaState,
    ScanAction,
    ScanResult,
    ScanSource,
    Side,
    SwapKind,
)


class Cable(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="cables")
    label = models.CharField(max_length=120, help_text="Printed on both ends; deterministic from the plan.")
    network = models.CharField(max_length=16, choices=Network.choices)
    plane = models.PositiveSmallIntegerField(null=True, blank=True)
    cable_type = models.CharField(max_length=8, choices=CableType.choices)
    length_m = models.DecimalField(max_digits=6, decimal_places=1)
    speed_gbps = models.PositiveIntegerField()
    part_number = models.CharField(max_length=100, blank=True)
    serial = models.CharField(
        max_length=100, blank=True,
        help_text="The physical cable's manufacturer serial, recorded when it is swapped (blank: not recorded).",
    )
    optic_part_a = models.CharField(max_length=100, blank=True, help_text="Transceiver needed at the A end.")
    optic_part_b = models.CharField(max_length=100, blank=True, help_text="Transceiver needed at each B end.")
    status = models.CharField(max_length=16, choices=CableStatus.choices, default=CableStatus.PLANNED)
    status_cause = models.CharField(
        max_length=200, blank=True, help_text="Why the cable is in its status: the scan, check or person that moved it."
    )
    verified_at = models.DateTimeField(null=True, blank=True, help_text="When a scan confirmed its last end.")
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    fabric_state = models.CharField(max_length=16, choices=FabricState.choices, blank=True)
    fabric_checked_at = models.DateTimeField(
        null=True, blank=True, help_text="When the topology comparison that set fabric_state ran."
    )
    # The burn-up dates a fabric-verified cable by this, not by fabric_checked_at, which every comparison moves.
    fabric_verified_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When the topology comparison that verified it by the fabric's word ran; cleared when it "
                  "leaves verified or a scan verifies it.",
    )
    removed_from_plan = models.BooleanField(
        default=False,
        help_text="Installed when a re-plan dropped it, and kept on purpose: take it out, then delete the row.",
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["label"]
        # The scan field and the search box look labels up whatever their case (cabling.search, `iexact`,
        # which PostgreSQL runs as UPPER(label)): without this a scan reads every cable of the table.
        indexes = [models.Index(F("project"), Upper("label"), name="cable_label_upper")]
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
    confirmed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a scan confirmed this end in its planned port."
    )
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
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


class FabricPlan(Job):
    """One cluster spec submitted for a project: its text, what the planner made of it (summary), what
    applying it would change (diff, as previewed, then as applied), and who confirmed it and when.

    A job row (core.models.Job): it is born `waiting` (the preview a manager must confirm) or `failed`
    (the project cannot take the plan); confirming queues it; a task applies it (`running`, then `done`
    or `failed`) while the plan page polls its progress. `requested_by` submitted the spec."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="fabric_plans")
    name = models.CharField(max_length=200, blank=True, help_text="The spec's name, once read.")
    spec_text = models.TextField(help_text="The cluster spec (YAML) exactly as submitted.")
    source = models.CharField(max_length=16, choices=FabricPlanSource.choices, default=FabricPlanSource.FORM)
    keep_installed = models.BooleanField(
        default=False, help_text="Confirmed with: keep installed cables and racked switches the plan drops."
    )
    summary = models.JSONField(default=dict, blank=True, help_text="Plan.summary(): counts and BOM.")
    diff = models.JSONField(default=dict, blank=True, help_text="What applying changes, as previewed or applied.")
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    STATUS_LABELS = {JobStatus.WAITING: "Ready to confirm", JobStatus.DONE: "Applied"}

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="fabric_plan_project_recent")]

    def __str__(self) -> str:
        return f"{self.project.code} plan {self.pk} ({self.name or 'unnamed'})"


class LabelSheetExport(Job):
    """A label sheet rendered in the background: the whole fabric, one rack or one network, on one stock.
    A task fills `output` with the PDF and reports its progress on the row; any member may download it
    once done. Unlike the direct download, it has no cap on the number of labels."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="label_exports")
    scope = models.CharField(max_length=16, choices=LabelScope.choices, default=LabelScope.ALL)
    rack = models.CharField(max_length=50, blank=True, help_text="The rack whose cable ends are printed.")
    network = models.CharField(max_length=16, choices=Network.choices, blank=True,
                               help_text="The network whose cables are printed.")
    stock = models.CharField(max_length=16, choices=LabelStockName.choices, default=LabelStockName.L7651)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="label_export_project_recent")]

    def __str__(self) -> str:
        return f"{self.project.code} labels {self.pk} ({self.scope_text})"

    def clean(self) -> None:
        """A rack for the rack scope, a network for the network scope, and nothing the scope does not use."""
        wanted = {LabelScope.RACK: "rack", LabelScope.NETWORK: "network"}.get(self.scope)
        errors = {}
        for name in ("rack", "network"):
            if name == wanted and not getattr(self, name):
                errors[name] = f"Choose the {name} to print."
            elif name != wanted and getattr(self, name):
                errors[name] = f"Only a label sheet of one {name} names a {name}."
        if errors:
            raise ValidationError(errors)

    @property
    def scope_text(self) -> str:
        if self.scope == LabelScope.RACK:
            return f"rack {self.rack}"
        if self.scope == LabelScope.NETWORK:
            return f"{self.network} network"
        return "whole fabric"

    @property
    def download_name(self) -> str:
        """`<CODE>-labels-<scope>-<stock>-<id>.pdf`, e.g. ACME-72-labels-rack-n01-l7651-12.pdf."""
        scope = {LabelScope.RACK: f"rack-{self.rack}", LabelScope.NETWORK: self.network}.get(self.scope, "all")
        return f"{self.project.code}-labels-{slugify(scope, allow_unicode=True)}-{slugify(self.stock)}-{self.pk}.pdf"


class ScanEvent(models.Model):
    """One scan on the floor, kept forever: who, when, in which project, the code as it was read, what it
    resolved to, what was made of it and why. A scan sent twice (a replay from a tablet that lost its
    network) carries the same idempotency key and is recorded once: (project, idempotency_key) is
    unique."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="scans")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When the server recorded it.")
    scanned_at = models.DateTimeField(
        null=True, blank=True, help_text="When the tablet read it (sent with an offline scan; the tablet's clock)."
    )
    idempotency_key = models.CharField(max_length=64, blank=True, help_text="Chosen by the client, once per scan.")
    source = models.CharField(max_length=8, choices=ScanSource.choices, default=ScanSource.PAGE)
    action = models.CharField(max_length=12, choices=ScanAction.choices)
    raw_code = models.CharField(max_length=512, help_text="The code exactly as read (cut at 512 characters).")
    result = models.CharField(max_length=10, choices=ScanResult.choices)
    reason = models.TextField(blank=True, help_text="What happened, in the technician's words.")
    # What the scan resolved to and acted on (whichever apply).
    device = models.ForeignKey(Device, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    optic = models.ForeignKey(Optic, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    port = models.ForeignKey(Port, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    cable = models.ForeignKey(Cable, on_delete=models.SET_NULL, null=True, blank=True, related_name="scans")
    cable_end = models.ForeignKey(CableEnd, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    context = models.JSONField(default=dict, blank=True, help_text="What came with the code (rack and U, port).")

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "idempotency_key"], condition=~Q(idempotency_key=""),
                name="scan_idempotency_key_unique_in_project",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "-created_at"], name="scan_project_recent"),
            models.Index(fields=["user", "-created_at"], name="scan_user_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} scan {self.pk}: {self.raw_code} ({self.result})"


class Swap(models.Model):
    """One part replaced on the floor: an optic in its port, or a cable between its ends. It keeps the
    serial that went out and the one that came in, why, who and when, and the RMA case of the part sent
    back with where it stands. Written by cabling.swaps.services (which also sends the port's cable back
    through verification); only the RMA fields change afterwards. An optic swap names the optic that
    went out (`optic`, kept: PROTECT) and its port; a cable swap names the cable: exactly the right one
    is set (the check constraint)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="swaps")
    kind = models.CharField(max_length=8, choices=SwapKind.choices)
    optic = models.ForeignKey(
        Optic, on_delete=models.PROTECT, null=True, blank=True, related_name="swaps_out",
        help_text="The optic taken out (optic swaps).",
    )
    new_optic = models.ForeignKey(
        Optic, on_delete=models.PROTECT, null=True, blank=True, related_name="swaps_in",
        help_text="The optic put in its place (optic swaps).",
    )
    port = models.ForeignKey(
        Port, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        help_text="The port (cage) the optic was replaced in (optic swaps).",
    )
    cable = models.ForeignKey(
        Cable, on_delete=models.CASCADE, null=True, blank=True, related_name="swaps",
        help_text="The cable replaced (cable swaps).",
    )
    old_serial = models.CharField(max_length=100, blank=True, help_text="The serial that went out.")
    new_serial = models.CharField(max_length=100, help_text="The serial that came in.")
    reason = models.TextField(help_text="Why it was replaced: what was seen on the floor or in a check.")
    rma_case = models.CharField(max_length=100, blank=True, help_text="The vendor's RMA number.")
    rma_state = models.CharField(max_length=10, choices=RmaState.choices, default=RmaState.NONE)
    rma_updated_at = models.DateTimeField(null=True, blank=True, help_text="When the RMA fields last changed.")
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    recorded_at = models.DateTimeField()

    history = HistoricalRecords()

    class Meta:
        ordering = ["-recorded_at", "-id"]
        indexes = [
            models.Index(fields=["project", "-recorded_at"], name="swap_project_recent"),
            models.Index(fields=["project", "rma_state"], name="swap_project_rma_state"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(Q(kind=SwapKind.OPTIC, optic__isnull=False, port__isnull=False, cable__isnull=True)
                           | Q(kind=SwapKind.CABLE, cable__isnull=False, optic__isnull=True, new_optic__isnull=True,
                               port__isnull=True)),
                name="swap_names_what_it_replaced",
                violation_error_message="An optic swap names the optic and its port; a cable swap names the cable.",
            ),
            models.CheckConstraint(condition=~Q(new_serial=""), name="swap_new_serial_given"),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} swap {self.pk}: {self.old_serial or '?'} -> {self.new_serial}"

    @property
    def serials_text(self) -> str:
        """'FS123 -> FS456' as the punch list and the pages name a swap."""
        return f"{self.old_serial or 'unrecorded serial'} → {self.new_serial}"
