"""Many devices at once, for the fabric planner's apply: the same rows device_create writes one by one
(devices, NICs, ports, breakout lanes, rack unit claims, history), checked in memory first and then
written in bulk inserts, so a thousand devices cost a fixed number of queries per batch."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from core.bulk_history import bulk_create_recorded
from projects.models import Project

from ..models import Device, DeviceUnit, HardwareModel, PortTemplate
from ..rack_space import rack_placement_errors, units_of
from .devices import PortsHook, components_create
from .rack_units import BULK_BATCH, DevicesRefused, units_claim_bulk

BULK_DEVICE_CHUNK = 250  # devices whose NICs and ports are built in memory at a time
MAX_BULK_ERRORS = 20  # messages a refusal shows (an import names every row in its own issues)

BulkProgress = Callable[[str, int, int], None]


def _with_templates(devices: list[Device]) -> None:
    """Point every device at one shared copy of its hardware model with the templates prefetched, so
    port_rows_from_templates costs no query per device."""
    ids = {device.hardware_model_id for device in devices}
    templates = PortTemplate.objects.select_related("nic_template").order_by("id")
    models = HardwareModel.objects.filter(pk__in=ids).prefetch_related(
        Prefetch("port_templates", queryset=templates), "nic_templates"
    )
    by_id = {model.pk: model for model in models}
    for device in devices:
        device.hardware_model = by_id[device.hardware_model_id]


def _bulk_device_errors(project: Project, devices: list[Device]) -> list[tuple[str, str]]:
    """What Device.full_clean() and the database would refuse, checked in memory for the whole batch with
    a fixed number of queries: fields, names and serials unique in the project, rack space free. Each
    refusal with the name of the device it is about."""
    errors: list[tuple[str, str]] = []
    existing = Device.objects.filter(project=project)
    names = set(existing.values_list("name", flat=True))
    serials = set(existing.exclude(serial="").values_list("serial", flat=True))
    rack_ids = {d.rack_id for d in devices if d.rack_id}
    taken: dict[int, dict[tuple[int, str], str]] = {rack_id: {} for rack_id in rack_ids}
    for rack_id, unit, face, name in DeviceUnit.objects.filter(rack_id__in=rack_ids).values_list(
        "rack_id", "unit", "face", "device__name"
    ):
        taken[rack_id][(unit, face)] = name
    for device in devices:
        errors += [(device.name, message) for message in _device_errors(project, device, names, serials, taken)]
        names.add(device.name)
        serials.add(device.serial)
    return errors


def _device_errors(project: Project, device: Device, names: set[str], serials: set[str],
                   taken: dict[int, dict[tuple[int, str], str]]) -> list[str]:
    """What is wrong with one device of the batch, against the names, serials and units taken so far; its
    units are added to `taken` when it fits."""
    errors: list[str] = []
    try:
        # Foreign keys are checked below in memory; their own validation would cost a query each.
        device.clean_fields(exclude=["project", "rack", "hardware_model"])
    except ValidationError as exc:
        errors += [f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items()]
    if device.project_id != project.pk:
        errors.append("belongs to another project")
    if device.name in names:
        errors.append("a device with this name already exists in the project")
    if device.serial and device.serial in serials:
        errors.append(f"another device of the project already has serial {device.serial}")
    if (device.rack_id is None) != (device.position_u is None):
        return [*errors, "a racked device needs both a rack and a position"]
    if device.rack_id is None:
        return errors
    if device.rack.project_id != project.pk:
        return [*errors, f"rack {device.rack} belongs to another project"]
    clash = rack_placement_errors(device, taken=taken[device.rack_id])
    if not clash:
        for unit in units_of(device.position_u, device.hardware_model.height_u):
            for face in device.occupied_faces():
                taken[device.rack_id][(unit, face)] = device.name
    return errors + clash


@transaction.atomic
def devices_create_bulk(
    *,
    project: Project,
    devices: list[Device],
    user=None,
    prepare_ports: PortsHook | None = None,
    progress: BulkProgress | None = None,
    reason: str = "Created in bulk",
    at: datetime | None = None,
) -> dict[tuple[str, str], int]:
    """Create many devices with their NICs, ports, breakout lanes and rack unit claims in bulk inserts, as
    device_create does one by one, with a history row per row copied by the database (core.bulk_history): by
    `user`, at `at` (now), with `reason` naming the bulk operation. `devices` are unsaved Device objects of
    `project`.

    Everything is checked first (in memory, a fixed number of queries); any problem raises one
    DevicesRefused (a ValidationError) listing them, each with its device's name, and nothing is written.
    `prepare_ports(device, rows)` may adjust a device's port rows ({field: value}, e.g. their "plane") before
    they are inserted. `progress(step, done, total)` is told about "devices" and then "ports", each first with
    done = 0. Returns the new ports' ids by (device name, port name).
    """
    if not devices:
        return {}
    _with_templates(devices)
    errors = _bulk_device_errors(project, devices)
    if errors:
        raise DevicesRefused(errors, shown=MAX_BULK_ERRORS)
    total = len(devices)
    recorded = {"user": user, "reason": reason, "at": at or timezone.now(), "batch_size": BULK_BATCH}
    if progress:
        progress("devices", 0, total)
    for start in range(0, total, BULK_BATCH):
        bulk_create_recorded(Device, devices[start : start + BULK_BATCH], **recorded)
        if progress:
            progress("devices", min(start + BULK_BATCH, total), total)
    units_claim_bulk(devices=devices, at=recorded["at"])
    if progress:
        progress("ports", 0, total)
    port_ids: dict[tuple[str, str], int] = {}
    for start in range(0, total, BULK_DEVICE_CHUNK):
        chunk = devices[start : start + BULK_DEVICE_CHUNK]
        port_ids.update(components_create(chunk, prepare_ports=prepare_ports, user=user, reason=reason,
                                          at=recorded["at"]))
        if progress:
            progress("ports", min(start + BULK_DEVICE_CHUNK, total), total)
    return port_ids
