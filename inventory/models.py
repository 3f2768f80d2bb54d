"""The physical inventory of a cluster: sites, racks, hardware models, devices, NICs, ports, optics.

Every project-owned row reaches its project in one hop (Site, Rack, Device, Optic) or through its
device (Nic, Port, DeviceUnit). HardwareModel and its templates are a shared catalogue.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Upper
from simple_history.models import HistoricalRecords

from core.choices import JobStatus
from core.models import Job
from projects.models import Project

from .choices import (
    DeviceRole,
    DeviceStatus,
    Face,
    FormFactor,
    HardwareKind,
    ImportKind,
    Network,
    OpticStatus,
    PortKind,
    PortStatus,
    RackStatus,
)
from .rack_space import rack_placement_errors, units_of


class Site(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sites")
    name = models.CharField(max_length=100)
    address = models.CharField(max_length=300, blank=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(
                fields=["project", "name"], name="site_name_unique_in_project",
                violation_error_message="A site with this name already exists in the project.",
            )]

    def __str__(self) -> str:
        return self.name


class Rack(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="racks")
    site = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="racks")
    name = models.CharField(max_length=50)
    row = models.CharField(max_length=20, help_text="Row in the data hall, e.g. A.")
    position = models.PositiveSmallIntegerField(
        help_text="Position in the row, from 1.", validators=[MinValueValidator(1)]
    )
    height_u = models.PositiveSmallIntegerField(default=48, validators=[MinValueValidator(1), MaxValueValidator(60)])
    power_budget_w = models.PositiveIntegerField(help_text="Power the rack's feeds may deliver, in W.")
    status = models.CharField(max_length=16, choices=RackStatus.choices, default=RackStatus.PLANNED)

    history = HistoricalRecords()

    class Meta:
        ordering = ["row", "position", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"], name="rack_name_unique_in_project",
                violation_error_message="A rack with this name already exists in the project.",
            ),
            models.UniqueConstraint(
                fields=["site", "row", "position"], name="rack_position_unique_in_site",
                violation_error_message="Another rack already stands at this row and position of the site.",
            ),
            models.CheckConstraint(condition=Q(height_u__gte=1), name="rack_height_positive"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        if self.site_id and self.project_id and self.site.project_id != self.project_id:
            raise ValidationError({"site": "The site belongs to another project."})
        self._refuse_height_below_devices()

    def _refuse_height_below_devices(self) -> None:
        """A rack cannot shrink below its highest claimed unit: the device up there would stick out."""
        if self.pk is None or not self.height_u:
            return
        highest = (
            DeviceUnit.objects.filter(rack_id=self.pk, unit__gt=self.height_u)
            .select_related("device")
            .order_by("-unit")
            .first()
        )
        if highest is not None:
            raise ValidationError({"height_u": (
                f"{highest.device.name} reaches U{highest.unit} of this rack; the rack must stay at least "
                f"{highest.unit}U high (move the device first)."
            )})


class HardwareModel(models.Model):
    vendor = models.CharField(max_length=100)
    model = models.CharField(max_length=100)
    part_number = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=HardwareKind.choices)
    height_u = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(0)])
    max_power_w = models.PositiveIntegerField(default=0, help_text="Nameplate maximum power, in W.")
    is_full_depth = models.BooleanField(
        default=True, help_text="Occupies both faces of the rack (servers, switches); a rear PDU does not."
    )
    os_port_format = models.CharField(
        max_length=40, blank=True, verbose_name="OS port name format",
        help_text="How the switch's own OS names port n, as LLDP and its CLI print it: swp{n} (Cumulus), "
        "Ethernet{n} (SONiC), eth1/{n} (NX-OS style). Blank: the OS prints our port names.",
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["vendor", "model"]

    def __str__(self) -> str:
        return f"{self.vendor} {self.model}"

    # Fields the rack-unit claims of every device of the model were computed from.
    SHAPE_FIELDS = ("height_u", "is_full_depth")

    def clean(self):
        self._refuse_shape_change_in_use()

    def _refuse_shape_change_in_use(self) -> None:
        """Devices claimed their rack units from the model's height and depth; changing either under them
        would leave those claims wrong, so a model in use keeps its shape (add a new model instead)."""
        if self.pk is None:
            return
        stored = HardwareModel.objects.filter(pk=self.pk).values(*self.SHAPE_FIELDS).first()
        if stored is None:
            return
        changed = [name for name in self.SHAPE_FIELDS if stored[name] != getattr(self, name)]
        if not changed:
            return
        in_use = self.devices.count()
        if in_use:
            noun = "device uses" if in_use == 1 else "devices use"
            message = (
                f"{in_use} {noun} this model, and their rack units were claimed with the current value; "
                "create a new hardware model instead."
            )
            raise ValidationError({name: message for name in changed})


class NicTemplate(models.Model):
    hardware_model = models.ForeignKey(HardwareModel, on_delete=models.CASCADE, related_name="nic_templates")
    slot = models.CharField(max_length=30)
    model = models.CharField(max_length=100)
    part_number = models.CharField(max_length=100, blank=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["hardware_model", "slot"]
        constraints = [models.UniqueConstraint(fields=["hardware_model", "slot"], name="nic_template_slot_unique")]

    def __str__(self) -> str:
        return f"{self.hardware_model} {self.slot}"


class PortTemplate(models.Model):
    hardware_model = models.ForeignKey(HardwareModel, on_delete=models.CASCADE, related_name="port_templates")
    nic_template = models.ForeignKey(
        NicTemplate, on_delete=models.CASCADE, null=True, blank=True, related_name="port_templates"
    )
    name = models.CharField(max_length=30)
    kind = models.CharField(max_length=16, choices=PortKind.choices)
    speed_gbps = models.PositiveIntegerField()
    network = models.CharField(max_length=16, choices=Network.choices, blank=True)
    breakout_lanes = models.PositiveSmallIntegerField(
        default=1, help_text="How many lanes the port splits into (1 = no breakout)."
    )
    lane_speed_gbps = models.PositiveIntegerField(null=True, blank=True)
    planes_per_lane = models.BooleanField(
        default=False, help_text="Lane k belongs to plane k (multi-plane NICs such as ConnectX-8 XDR)."
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["hardware_model", "id"]
        constraints = [
            models.UniqueConstraint(fields=["hardware_model", "name"], name="port_template_name_unique"),
            models.CheckConstraint(condition=Q(breakout_lanes__gte=1), name="port_template_lanes_positive"),
            models.CheckConstraint(
                condition=Q(breakout_lanes=1) | Q(lane_speed_gbps__isnull=False),
                name="port_template_breakout_has_lane_speed",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.hardware_model} {self.name}"

    def clean(self):
        if self.breakout_lanes > 1 and not self.lane_speed_gbps:
            raise ValidationError({"lane_speed_gbps": "A port that breaks out needs the speed of its lanes."})
        if self.nic_template_id and self.nic_template.hardware_model_id != self.hardware_model_id:
            raise ValidationError({"nic_template": "The NIC belongs to another hardware model."})


class Device(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="devices")
    rack = models.ForeignKey(Rack, on_delete=models.PROTECT, null=True, blank=True, related_name="devices")
    position_u = models.PositiveSmallIntegerField(
        null=True, blank=True, verbose_name="position (U)", validators=[MinValueValidator(1)],
        help_text="Lowest rack unit the device occupies, from 1 at the bottom.",
    )
    face = models.CharField(max_length=5, choices=Face.choices, default=Face.FRONT)
    hardware_model = models.ForeignKey(HardwareModel, on_delete=models.PROTECT, related_name="devices")
    name = models.CharField(max_length=64)
    role = models.CharField(max_length=16, choices=DeviceRole.choices, default=DeviceRole.OTHER)
    serial = models.CharField(max_length=100, blank=True)
    asset_tag = models.CharField(max_length=100, blank=True)
    oob_address = models.GenericIPAddressField(null=True, blank=True, verbose_name="out-of-band address")
    status = models.CharField(max_length=16, choices=DeviceStatus.choices, default=DeviceStatus.PLANNED)
    node_guid = models.CharField(
        max_length=40, blank=True, db_index=True, verbose_name="node GUID",
        help_text="The switch's (or host's) InfiniBand node GUID, as the fabric reports it; learned by a "
        "topology comparison and matched on from then on.",
    )
    racked_at = models.DateTimeField(null=True, blank=True, help_text="When a scan confirmed it in its rack.")
    racked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        # What a scan or the search box looks up whatever its case (cabling.search, `iexact`: UPPER(...)).
        indexes = [
            models.Index(F("project"), Upper("name"), name="device_name_upper"),
            models.Index(F("project"), Upper("serial"), name="device_serial_upper"),
            models.Index(F("project"), Upper("asset_tag"), name="device_asset_tag_upper"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"], name="device_name_unique_in_project",
                violation_error_message="A device with this name already exists in the project.",
            ),
            models.UniqueConstraint(
                fields=["project", "serial"], condition=~Q(serial=""), name="device_serial_unique_in_project",
                violation_error_message="Another device of the project already has this serial.",
            ),
            models.CheckConstraint(
                condition=Q(rack__isnull=True, position_u__isnull=True)
                | Q(rack__isnull=False, position_u__gte=1),
                name="device_rack_and_position_together",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def top_u(self) -> int | None:
        if self.position_u is None:
            return None
        return self.position_u + max(self.hardware_model.height_u, 1) - 1

    def occupied_faces(self) -> list[str]:
        return [Face.FRONT, Face.REAR] if self.hardware_model.is_full_depth else [self.face]

    def clean(self):
        if self.rack_id and self.project_id and self.rack.project_id != self.project_id:
            raise ValidationError({"rack": "The rack belongs to another project."})
        if (self.rack_id is None) != (self.position_u is None):
            raise ValidationError({"position_u": "A racked device needs both a rack and a position."})
        if self.rack_id and self.hardware_model_id:
            errors = rack_placement_errors(self, taken=self._units_taken_by_others())
            if errors:
                raise ValidationError({"position_u": errors})

    def _units_taken_by_others(self) -> dict[tuple[int, str], str]:
        """Who holds the units and faces this device wants, as the database has them (one query)."""
        claims = (
            DeviceUnit.objects.filter(
                rack_id=self.rack_id, unit__in=list(units_of(self.position_u, self.hardware_model.height_u)),
                face__in=self.occupied_faces(),
            )
            .exclude(device_id=self.pk)
            .values_list("unit", "face", "device__name")
        )
        return {(unit, face): name for unit, face, name in claims}


class DeviceUnit(models.Model):
    """One rack unit (and face) a device occupies. The unique constraint is how the database itself
    refuses two devices in the same U, whatever races happen; services keep these rows in step."""

    device = models.ForeignKey(Device, on_delete=models.CASCADE, related_name="units")
    rack = models.ForeignKey(Rack, on_delete=models.CASCADE, related_name="units")
    unit = models.PositiveSmallIntegerField()
    face = models.CharField(max_length=5, choices=Face.choices)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rack", "unit", "face"], name="rack_unit_face_taken_once")]

    def __str__(self) -> str:
        return f"{self.rack} U{self.unit} {self.face}: {self.device}"


class Nic(models.Model):
    device = models.ForeignKey(Device, on_delete=models.CASCADE, related_name="nics")
    slot = models.CharField(max_length=30)
    model = models.CharField(max_length=100)
    part_number = models.CharField(max_length=100, blank=True)
    serial = models.CharField(max_length=100, blank=True)
    firmware = models.CharField(max_length=50, blank=True)
    guid_mac = models.CharField(max_length=40, blank=True, verbose_name="GUID / MAC")

    history = HistoricalRecords()

    class Meta:
        ordering = ["device", "slot"]
        constraints = [models.UniqueConstraint(fields=["device", "slot"], name="nic_slot_unique_in_device")]

    def __str__(self) -> str:
        return f"{self.device} {self.slot}"


class Port(models.Model):
    device = models.ForeignKey(Device, on_delete=models.CASCADE, related_name="ports")
    # RESTRICT, not CASCADE: deleting a NIC alone must not silently take its ports (and their cables) with
    # it. Unlike PROTECT, deleting the device still takes both, as the device's ports go in the same delete.
    nic = models.ForeignKey(Nic, on_delete=models.RESTRICT, null=True, blank=True, related_name="ports")
    parent = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="lanes",
        help_text="The physical port this breakout lane belongs to.",
    )
    name = models.CharField(max_length=40)
    kind = models.CharField(max_length=16, choices=PortKind.choices)
    speed_gbps = models.PositiveIntegerField()
    network = models.CharField(max_length=16, choices=Network.choices, blank=True)
    plane = models.PositiveSmallIntegerField(null=True, blank=True)
    lane = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Lane number within the parent, from 0.")
    # Not indexed (migration 0010 says why): learning a whole fabric's MACs then rewrites no index entry (a HOT
    # update on PostgreSQL), and no read needs one.
    guid_mac = models.CharField(
        max_length=40, blank=True, verbose_name="GUID / MAC",
        help_text="The port's GUID (InfiniBand) or MAC (Ethernet), learned from the fabric.",
    )
    status = models.CharField(max_length=16, choices=PortStatus.choices, default=PortStatus.PLANNED)
    status_cause = models.CharField(
        max_length=200, blank=True, help_text="Why the port is in its status: the scan or check that moved it."
    )

    # Its history is read by port (id) and by date, never by device, NIC or parent: those columns of the history
    # table go unindexed (migration 0010), so each of the tens of thousands of history rows a comparison adds
    # writes three index entries fewer.
    history = HistoricalRecords(no_db_index=["device", "nic", "parent"])

    class Meta:
        ordering = ["device", "id"]
        indexes = [models.Index(F("device"), Upper("name"), name="port_name_upper")]  # a scanned port code
        constraints = [
            models.UniqueConstraint(fields=["device", "name"], name="port_name_unique_in_device"),
            models.CheckConstraint(
                condition=Q(parent__isnull=True, lane__isnull=True) | Q(parent__isnull=False, lane__isnull=False),
                name="port_lane_iff_parent",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.device}:{self.name}"

    def clean(self):
        if self.parent_id:
            self._check_parent()
        if self.nic_id and self.nic.device_id != self.device_id:
            raise ValidationError({"nic": "The NIC belongs to another device."})

    def _check_parent(self) -> None:
        """Breakout is one level deep: a lane's parent is a physical port of the same device."""
        if self.pk is not None and self.parent_id == self.pk:
            raise ValidationError({"parent": "A port cannot be a lane of itself."})
        if self.parent.device_id != self.device_id:
            raise ValidationError({"parent": "A lane belongs to a port of the same device."})
        if self.parent.parent_id is not None:
            message = f"{self.parent.name} is itself a lane; a lane's parent is a physical port."
            raise ValidationError({"parent": message})
        if self.pk is not None and Port.objects.filter(parent_id=self.pk).exists():
            message = f"{self.name} has breakout lanes of its own, so it cannot be a lane."
            raise ValidationError({"parent": message})


class Optic(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="optics")
    vendor = models.CharField(max_length=100)
    part_number = models.CharField(max_length=100)
    serial = models.CharField(max_length=100)
    form_factor = models.CharField(max_length=10, choices=FormFactor.choices)
    speed_gbps = models.PositiveIntegerField()
    port = models.OneToOneField(Port, on_delete=models.PROTECT, null=True, blank=True, related_name="optic")
    status = models.CharField(max_length=16, choices=OpticStatus.choices, default=OpticStatus.IN_STOCK)
    dom_temperature_c = models.FloatField(null=True, blank=True)
    dom_voltage_v = models.FloatField(null=True, blank=True)
    dom_tx_power_dbm = models.JSONField(default=list, blank=True, help_text="Per lane.")
    dom_rx_power_dbm = models.JSONField(default=list, blank=True, help_text="Per lane.")
    dom_bias_ma = models.JSONField(default=list, blank=True, help_text="Per lane.")
    dom_read_at = models.DateTimeField(null=True, blank=True)
    installed_at = models.DateTimeField(null=True, blank=True, help_text="When it was seated in its port.")
    installed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["part_number", "serial"]
        indexes = [models.Index(F("project"), Upper("serial"), name="optic_serial_upper")]  # a scanned serial
        constraints = [
            models.UniqueConstraint(
                fields=["project", "serial"], name="optic_serial_unique_in_project",
                violation_error_message="Another optic of the project already has this serial.",
            ),
            models.CheckConstraint(
                condition=Q(status=OpticStatus.INSTALLED, port__isnull=False)
                | (~Q(status=OpticStatus.INSTALLED) & Q(port__isnull=True)),
                name="optic_in_port_iff_installed",
                violation_error_message="An optic is in a port exactly when it is installed.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.part_number} {self.serial}"

    def clean(self):
        if self.status == OpticStatus.INSTALLED and not self.port_id:
            raise ValidationError({"port": "An installed optic sits in a port."})
        if self.port_id and self.status != OpticStatus.INSTALLED:
            status = OpticStatus(self.status).label if self.status in OpticStatus.values else self.status
            raise ValidationError({"status": (
                f"An optic in a port is installed, not {status.lower()}; take it out of the port first."
            )})
        if self.port_id and self.project_id and self.port.device.project_id != self.project_id:
            raise ValidationError({"port": "The port belongs to another project."})


def import_upload_path(job: "ImportJob", filename: str) -> str:
    return f"imports/{job.project.code}/{filename}"


class ImportJob(Job):
    """One uploaded inventory file on its way in: checked as a dry run by a task (the preview, which ends
    waiting for a person), then applied by another once someone confirms. The raw file is kept whatever
    happens, so a bad upload can be looked at later. Its errors are the file's issues, each placed by
    sheet, row and column (ImportIssue.as_dict())."""

    STATUS_LABELS = {JobStatus.WAITING: "Ready to confirm", JobStatus.DONE: "Applied"}

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    file = models.FileField(upload_to=import_upload_path, max_length=300)
    original_name = models.CharField(max_length=255)
    kind = models.CharField(
        max_length=16, choices=ImportKind.choices, blank=True,
        help_text="Kind asked for at upload; blank = from the header row or the sheet names.",
    )
    kinds = models.JSONField(default=list, blank=True, help_text="Kinds found in the file, in apply order.")
    summary = models.JSONField(default=dict, blank=True)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="import_job_project_recent")]

    def __str__(self) -> str:
        return f"{self.project.code} import {self.pk} ({self.original_name})"
