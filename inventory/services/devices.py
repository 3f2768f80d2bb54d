"""Devices: created with their NICs, ports and breakout lanes from the hardware model's templates, and
changed (a move re-claims the rack units)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from core.bulk_history import insert_recorded
from projects.models import Project

from ..choices import DeviceRole, DeviceStatus, Face, PortStatus
from ..models import Device, HardwareModel, Nic, Port, Rack
from .rack_units import units_claim

PortsHook = Callable[[Device, list[dict]], None]  # a device and its port rows, before they are written


def port_rows_from_templates(device: Device, nic_ids_by_slot: dict[str, int]) -> list[dict]:
    """The ports of a device from its hardware model's port templates, as {field: value} rows for the bulk
    inserts (no model instance per port: a fabric has 100,000 of them): each physical port, then its breakout
    lanes (lane k in plane k when the template says lanes are planes). A lane's row names its parent in
    "parent_name"."""
    rows: list[dict] = []
    for template in device.hardware_model.port_templates.all():
        nic_id = nic_ids_by_slot.get(template.nic_template.slot) if template.nic_template_id else None
        common = {"device_id": device.pk, "nic_id": nic_id, "kind": template.kind, "network": template.network,
                  "status": PortStatus.PLANNED}
        rows.append({**common, "name": template.name, "speed_gbps": template.speed_gbps})
        if template.breakout_lanes > 1:
            for lane in range(template.breakout_lanes):
                rows.append({
                    **common, "name": f"{template.name}/{lane}", "lane": lane, "parent_name": template.name,
                    "speed_gbps": template.lane_speed_gbps, "plane": lane if template.planes_per_lane else None,
                })
    return rows


@transaction.atomic  # its ids are reserved before they are written (core.bulk_history.reserve_ids)
def components_create(
    devices: list[Device], *, user=None, prepare_ports: PortsHook | None = None,
    reason: str = "Created with its device", at: datetime | None = None,
) -> dict[tuple[str, str], int]:
    """The NICs, ports and breakout lanes of saved devices, from their models' templates, written as rows in
    bulk (core.bulk_history.insert_recorded: COPY on PostgreSQL) with a history row each copied by the
    database (by `user`, else the request's; with `reason`). `prepare_ports(device, rows)` may adjust a
    device's port rows ({field: value}, e.g. their "plane") first. Returns the new ports' ids by (device
    name, port name)."""
    recorded = {"user": user, "reason": reason, "at": at or timezone.now()}
    nic_rows = [
        {"device_id": device.pk, "slot": t.slot, "model": t.model, "part_number": t.part_number}
        for device in devices
        for t in device.hardware_model.nic_templates.all()
    ]
    nic_ids: dict[int, dict[str, int]] = {}
    for row, pk in zip(nic_rows, insert_recorded(Nic, nic_rows, **recorded), strict=True):
        nic_ids.setdefault(row["device_id"], {})[row["slot"]] = pk
    parents: list[dict] = []
    lanes: list[dict] = []
    for device in devices:
        rows = port_rows_from_templates(device, nic_ids.get(device.pk, {}))
        if prepare_ports:
            prepare_ports(device, rows)
        for row in rows:
            (lanes if "parent_name" in row else parents).append(row)
    by_name = {
        (row["device_id"], row["name"]): pk
        for row, pk in zip(parents, insert_recorded(Port, parents, **recorded), strict=True)
    }
    for lane in lanes:
        lane["parent_id"] = by_name[(lane["device_id"], lane["parent_name"])]
    by_name.update(
        ((row["device_id"], row["name"]), pk)
        for row, pk in zip(lanes, insert_recorded(Port, lanes, **recorded), strict=True)
    )
    names = {device.pk: device.name for device in devices}
    return {(names[device_id], name): pk for (device_id, name), pk in by_name.items()}


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
