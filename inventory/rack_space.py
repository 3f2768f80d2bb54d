"""Rack space rules shared by Device.clean(), the services and the import: a device must fit inside
its rack and must not overlap another device on a face it occupies."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import Device


def units_of(position_u: int, height_u: int) -> range:
    return range(position_u, position_u + max(height_u, 1))


def rack_placement_errors(device: Device, *, taken: dict | None = None) -> list[str]:
    """Why the device cannot sit at its rack/U, or an empty list.

    `taken` maps (unit, face) to a device name for a rack being filled in memory (the import);
    without it the database is asked.
    """
    from .models import DeviceUnit

    rack, model = device.rack, device.hardware_model
    units = units_of(device.position_u, model.height_u)
    if units.stop - 1 > rack.height_u:
        return [
            f"{device.name} ({model.height_u}U at U{device.position_u}) sticks out of rack {rack.name} "
            f"({rack.height_u}U): its top would be U{units.stop - 1}."
        ]
    faces = device.occupied_faces()
    if taken is None:
        clashes = (
            DeviceUnit.objects.filter(rack=rack, unit__in=list(units), face__in=faces)
            .exclude(device_id=device.pk)
            .select_related("device")
            .order_by("unit")
        )
        clash = clashes.first()
        other = (clash.device.name, clash.unit) if clash else None
    else:
        other = next(
            ((taken[(u, f)], u) for u in units for f in faces if (u, f) in taken and taken[(u, f)] != device.name),
            None,
        )
    if other:
        return [f"U{other[1]} of rack {rack.name} is already taken by {other[0]}."]
    return []
