"""Rack space rules shared by Device.clean(), the services, the import and the fabric planner's apply: a
device must fit inside its rack and must not overlap another device on a face it occupies.

Pure rules over what is already known: the caller says which units are taken (Device.clean() reads them
from the database, the import and the bulk creation keep them in memory while they fill a rack), so this
module needs no model and no query.
"""

from __future__ import annotations

from collections.abc import Mapping


def units_of(position_u: int, height_u: int) -> range:
    """The units a device of `height_u` at `position_u` occupies; a 0U device still claims one."""
    return range(position_u, position_u + max(height_u, 1))


def rack_placement_errors(device, *, taken: Mapping[tuple[int, str], str]) -> list[str]:
    """Why the device (a Device, saved or not, with its rack and hardware model) cannot sit at its rack
    and U, or an empty list. `taken` maps (unit, face) to the name of the device holding it there; the
    device's own units do not count against it."""
    rack, model = device.rack, device.hardware_model
    units = units_of(device.position_u, model.height_u)
    if units.stop - 1 > rack.height_u:
        return [
            f"{device.name} ({model.height_u}U at U{device.position_u}) sticks out of rack {rack.name} "
            f"({rack.height_u}U): its top would be U{units.stop - 1}."
        ]
    faces = device.occupied_faces()
    other = next(
        ((taken[(u, f)], u) for u in units for f in faces if (u, f) in taken and taken[(u, f)] != device.name),
        None,
    )
    if other:
        return [f"U{other[1]} of rack {rack.name} is already taken by {other[0]}."]
    return []
