"""Many devices at once, for the fabric planner's apply: the same rows device_create writes one by one
(devices, NICs, ports, breakout lanes, rack unit claims, history), checked in memory first and then
written in bulk inserts, so a thousand devices cost a fixed number of queries per batch."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch
from simple_history.utils import bulk_create_with_history

from delivery.models import Project

from ..models import Device, DeviceUnit, HardwareModel, PortTemplate
from ..rack_space import rack_placement_errors, units_of
from .devices import PortsHook, components_create
from .rack_units import BULK_BATCH, units_claim_bulk

BULK_DEVICE_CHUNK = 250  # devices whose NICs and ports are built in memory at a time
MAX_BULK_ERRORS = 20

BulkProgress = Callable[[str, int, int], None]


def _capped(errors: list[str]) -> list[str]:
    if len(errors) <= MAX_BULK_ERRORS:
        return errors
    return errors[:MAX_BULK_ERRORS] + [f"... and {len(errors) - MAX_BULK_ERRORS} more like these"]


def _with_templates(devices: list[Device]) -> None:
    """Point every device at one shared copy of its hardware model with the templates prefetched, so
    ports_from_templates costs no query per device."""
    ids = {device.hardware_model_id for device in devices}
    templates = PortTemplate.objects.select_related("nic_template").order_by("id")
    models = HardwareModel.objects.filter(pk__in=ids).prefetch_related(
        Prefetch("port_templates", queryset=templates), "nic_templates"
    )
    by_id = {model.pk: model for model in models}
    for device in devices:
        device.hardware_model = by_id[device.hardware_model_id]


def _bulk_device_errors(project: Project, devices: list[Device]) -> list[str]:
    """What Device.full_clean() and the database would refuse, checked in memory for the whole batch with
    a fixed number of queries: fields, names and serials unique in the project, rack space free."""
    errors: list[str] = []
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
        try:
            # Foreign keys are checked below in memory; their own validation would cost a query each.
            device.clean_fields(exclude=["project", "rack", "hardware_model"])
        except ValidationError as exc:
            errors += [f"{device.name}: {field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items()]
        if device.project_id != project.pk:
            errors.append(f"{device.name}: belongs to another project")
        if device.name in names:
            errors.append(f"{device.name}: a device with this name already exists in the project")
        names.add(device.name)
        if device.serial and device.serial in serials:
            errors.append(f"{device.name}: another device of the project already has serial {device.serial}")
        serials.add(device.serial)
        if (device.rack_id is None) != (device.position_u is None):
            errors.append(f"{device.name}: a racked device needs both a rack and a position")
            continue
        if device.rack_id is None:
            continue
        if device.rack.project_id != project.pk:
            errors.append(f"{device.name}: rack {device.rack} belongs to another project")
            continue
        clash = rack_placement_errors(device, taken=taken[device.rack_id])
        errors += clash
        if not clash:
            for unit in units_of(device.position_u, device.hardware_model.height_u):
                for face in device.occupied_faces():
                    taken[device.rack_id][(unit, face)] = device.name
    return errors


@transaction.atomic
def devices_create_bulk(
    *,
    project: Project,
    devices: list[Device],
    user=None,
    prepare_ports: PortsHook | None = None,
    progress: BulkProgress | None = None,
) -> dict[tuple[str, str], int]:
    """Create many devices with their NICs, ports, breakout lanes and rack unit claims in bulk inserts (with
    history rows), as device_create does one by one. `devices` are unsaved Device objects of `project`.

    Everything is checked first (in memory, a fixed number of queries); any problem raises one
    ValidationError listing them and nothing is written. `prepare_ports(device, ports)` may adjust a
    device's unsaved ports (e.g. their planes) before they are inserted. `progress(step, done, total)` is
    told about "devices" and then "ports", each first with done = 0. Returns the new ports' ids by (device
    name, port name).
    """
    if not devices:
        return {}
    _with_templates(devices)
    errors = _bulk_device_errors(project, devices)
    if errors:
        raise ValidationError(_capped(errors))
    total = len(devices)
    if progress:
        progress("devices", 0, total)
    for start in range(0, total, BULK_BATCH):
        bulk_create_with_history(devices[start : start + BULK_BATCH], Device, batch_size=BULK_BATCH,
                                 default_user=user)
        if progress:
            progress("devices", min(start + BULK_BATCH, total), total)
    units_claim_bulk(devices=devices)
    if progress:
        progress("ports", 0, total)
    port_ids: dict[tuple[str, str], int] = {}
    for start in range(0, total, BULK_DEVICE_CHUNK):
        chunk = devices[start : start + BULK_DEVICE_CHUNK]
        port_ids.update(components_create(chunk, user=user, prepare_ports=prepare_ports))
        if progress:
            progress("ports", min(start + BULK_DEVICE_CHUNK, total), total)
    return port_ids
