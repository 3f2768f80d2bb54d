"""Writes that matter for the inventory. Keyword-only, atomic, validated with full_clean()."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Prefetch
from simple_history.utils import bulk_create_with_history

from delivery.models import Project

from .choices import DeviceRole, DeviceStatus, Face, OpticStatus, PortStatus
from .models import Device, DeviceUnit, HardwareModel, Nic, Optic, Port, PortTemplate, Rack


def _occupancy_rows(device: Device) -> list[DeviceUnit]:
    if device.rack_id is None:
        return []
    from .rack_space import units_of

    return [
        DeviceUnit(device=device, rack_id=device.rack_id, unit=u, face=face)
        for u in units_of(device.position_u, device.hardware_model.height_u)
        for face in device.occupied_faces()
    ]


def _write_occupancy(device: Device) -> None:
    """Replace the device's unit claims. A concurrent claim of the same U makes the database refuse
    the insert; that becomes the same ValidationError clean() gives."""
    DeviceUnit.objects.filter(device=device).delete()
    try:
        with transaction.atomic():
            DeviceUnit.objects.bulk_create(_occupancy_rows(device))
    except IntegrityError as exc:
        raise ValidationError({"position_u": f"Rack {device.rack} U{device.position_u}: already taken."}) from exc


def ports_from_templates(device: Device, nics_by_slot: dict[str, Nic]) -> list[Port]:
    """Unsaved ports of a device built from its hardware model's port templates: each physical port,
    then its breakout lanes (lane k in plane k when the template says lanes are planes)."""
    ports: list[Port] = []
    for template in device.hardware_model.port_templates.all():
        nic = nics_by_slot.get(template.nic_template.slot) if template.nic_template_id else None
        parent = Port(
            device=device, nic=nic, name=template.name, kind=template.kind,
            speed_gbps=template.speed_gbps, network=template.network, status=PortStatus.PLANNED,
        )
        ports.append(parent)
        if template.breakout_lanes > 1:
            for lane in range(template.breakout_lanes):
                ports.append(
                    Port(
                        device=device, nic=nic, parent=parent, name=f"{template.name}/{lane}", lane=lane,
                        kind=template.kind, speed_gbps=template.lane_speed_gbps, network=template.network,
                        plane=lane if template.planes_per_lane else None, status=PortStatus.PLANNED,
                    )
                )
    return ports


def _create_components(device: Device) -> None:
    nics = bulk_create_with_history(
        [
            Nic(device=device, slot=t.slot, model=t.model, part_number=t.part_number)
            for t in device.hardware_model.nic_templates.all()
        ],
        Nic,
    )
    ports = ports_from_templates(device, {nic.slot: nic for nic in nics})
    parents = [p for p in ports if p.lane is None]
    parents = bulk_create_with_history(parents, Port)
    by_name = {p.name: p for p in parents}
    lanes = [p for p in ports if p.lane is not None]
    for lane in lanes:
        lane.parent = by_name[lane.parent.name]  # the saved parent, with its primary key
    bulk_create_with_history(lanes, Port)


@transaction.atomic
def device_create(
    *,
    project: Project,
    hardware_model: HardwareModel,
    name: str,
    rack: Rack | None = None,
    position_u: int | None = None,
    face: str = Face.FRONT,
    role: str = DeviceRole.OTHER,
    serial: str = "",
    asset_tag: str = "",
    oob_address: str | None = None,
    status: str = DeviceStatus.PLANNED,
) -> Device:
    """Create a device with its NICs, ports and breakout lanes from the hardware model's templates,
    and claim its rack units."""
    device = Device(
        project=project, hardware_model=hardware_model, name=name, rack=rack, position_u=position_u,
        face=face, role=role, serial=serial, asset_tag=asset_tag, oob_address=oob_address or None,
        status=status,
    )
    device.full_clean()
    device.save()
    _write_occupancy(device)
    _create_components(device)
    return device


@transaction.atomic
def device_update(*, device: Device, **fields) -> Device:
    """Change a device's fields; moving it (rack, U, face, model) re-claims its units."""
    for name, value in fields.items():
        setattr(device, name, value)
    device.full_clean()
    device.save()
    _write_occupancy(device)
    return device


@transaction.atomic
def optic_install(*, optic: Optic, port: Port) -> Optic:
    """Seat an optic in a port. The port accepts one optic; the database refuses a second."""
    if hasattr(port, "optic") and port.optic.pk != optic.pk:
        raise ValidationError({"port": f"{port} already holds optic {port.optic.serial}."})
    optic.port = port
    optic.status = OpticStatus.INSTALLED
    optic.full_clean()
    optic.save()
    return optic


UNCHANGED = object()  # "leave the optic's port as it is" for optic_save; None means "take it out"


@transaction.atomic
def optic_save(*, optic: Optic, port: Port | None | object = UNCHANGED, **fields) -> Optic:
    """Create or change an optic. A port seats it (installed), None takes it out of its port (into the
    given status, in stock by default); the status and the port always stay in step."""
    status = fields.pop("status", None)
    for name, value in fields.items():
        setattr(optic, name, value)
    if port is not UNCHANGED and port is not None:
        return optic_install(optic=optic, port=port)
    if port is None and optic.port_id is not None:
        return optic_remove(optic=optic, status=status or OpticStatus.IN_STOCK)
    if status is not None:
        optic.status = status
    optic.full_clean()
    optic.save()
    return optic


@transaction.atomic
def optic_remove(*, optic: Optic, status: str = OpticStatus.IN_STOCK) -> Optic:
    optic.port = None
    optic.status = status
    optic.full_clean()
    optic.save()
    return optic


# --- many devices at once (the fabric planner's apply) ---------------------------------------------------

BULK_BATCH = 1000  # rows per INSERT
BULK_DEVICE_CHUNK = 250  # devices whose NICs and ports are built in memory at a time
MAX_BULK_ERRORS = 20

PortsHook = Callable[[Device, list[Port]], None]
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
    from .rack_space import rack_placement_errors, units_of

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
    _claim_units_bulk(devices)
    if progress:
        progress("ports", 0, total)
    port_ids: dict[tuple[str, str], int] = {}
    for start in range(0, total, BULK_DEVICE_CHUNK):
        chunk = devices[start : start + BULK_DEVICE_CHUNK]
        port_ids.update(_create_components_bulk(chunk, user=user, prepare_ports=prepare_ports))
        if progress:
            progress("ports", min(start + BULK_DEVICE_CHUNK, total), total)
    return port_ids


def _claim_units_bulk(devices: list[Device]) -> None:
    rows = [row for device in devices for row in _occupancy_rows(device)]
    try:
        with transaction.atomic():
            DeviceUnit.objects.bulk_create(rows, batch_size=BULK_BATCH)
    except IntegrityError as exc:  # a claim made since the check: the database has the last word
        raise ValidationError("A rack unit was taken by another device while these devices were created.") from exc


def _create_components_bulk(
    devices: list[Device], *, user=None, prepare_ports: PortsHook | None = None
) -> dict[tuple[str, str], int]:
    nics = [
        Nic(device=device, slot=t.slot, model=t.model, part_number=t.part_number)
        for device in devices
        for t in device.hardware_model.nic_templates.all()
    ]
    nics = bulk_create_with_history(nics, Nic, batch_size=BULK_BATCH, default_user=user)
    nics_by_device: dict[int, dict[str, Nic]] = {}
    for nic in nics:
        nics_by_device.setdefault(nic.device_id, {})[nic.slot] = nic
    parents: list[Port] = []
    lanes: list[Port] = []
    for device in devices:
        ports = ports_from_templates(device, nics_by_device.get(device.pk, {}))
        if prepare_ports:
            prepare_ports(device, ports)
        for port in ports:
            (parents if port.lane is None else lanes).append(port)
    parents = bulk_create_with_history(parents, Port, batch_size=BULK_BATCH, default_user=user)
    by_name = {(port.device_id, port.name): port for port in parents}
    for lane in lanes:
        lane.parent = by_name[(lane.device_id, lane.parent.name)]  # the saved parent, with its primary key
    lanes = bulk_create_with_history(lanes, Port, batch_size=BULK_BATCH, default_user=user)
    names = {device.pk: device.name for device in devices}
    return {(names[port.device_id], port.name): port.pk for port in (*parents, *lanes)}
