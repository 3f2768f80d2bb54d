"""Writes that matter for the inventory. Keyword-only, atomic, validated with full_clean()."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from simple_history.utils import bulk_create_with_history

from delivery.models import Project

from .choices import DeviceRole, DeviceStatus, Face, OpticStatus, PortStatus
from .models import Device, DeviceUnit, HardwareModel, Nic, Optic, Port, Rack


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


@transaction.atomic
def optic_remove(*, optic: Optic, status: str = OpticStatus.IN_STOCK) -> Optic:
    optic.port = None
    optic.status = status
    optic.full_clean()
    optic.save()
    return optic
