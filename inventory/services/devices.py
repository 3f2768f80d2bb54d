"""Devices: created with their NICs, ports and breakout lanes from the hardware model's templates, and
changed (a move re-claims the rack units)."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from simple_history.utils import bulk_create_with_history

from delivery.models import Project

from ..choices import DeviceRole, DeviceStatus, Face, PortStatus
from ..models import Device, HardwareModel, Nic, Port, Rack
from .rack_units import BULK_BATCH, units_claim

PortsHook = Callable[[Device, list[Port]], None]


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


def components_create(
    devices: list[Device], *, user=None, prepare_ports: PortsHook | None = None
) -> dict[tuple[str, str], int]:
    """The NICs, ports and breakout lanes of saved devices, from their models' templates, in bulk inserts
    with history rows (by `user`, else the request's). `prepare_ports(device, ports)` may adjust a
    device's unsaved ports (e.g. their planes) first. Returns the new ports' ids by (device name, port
    name)."""
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
    units_claim(device=device)
    components_create([device])
    return device


@transaction.atomic
def device_update(*, device: Device, **fields) -> Device:
    """Change a device's fields; moving it (rack, U, face, model) re-claims its units."""
    for name, value in fields.items():
        setattr(device, name, value)
    device.full_clean()
    device.save()
    units_claim(device=device)
    return device
