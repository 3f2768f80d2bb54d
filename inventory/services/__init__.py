"""Writes that matter for the inventory, by concept: devices with their NICs, ports and lanes
(devices.py), the rack units they claim (rack_units.py), optics (optics.py), and many devices at once
for the fabric planner (bulk.py). Keyword-only, atomic, validated with full_clean().

Callers import from here (`from inventory.services import device_create`), not from the modules."""

from .bulk import devices_create_bulk
from .devices import device_create, device_update, ports_from_templates
from .optics import UNCHANGED, optic_install, optic_remove, optic_save

__all__ = [
    "UNCHANGED",
    "device_create",
    "device_update",
    "devices_create_bulk",
    "optic_install",
    "optic_remove",
    "optic_save",
    "ports_from_templates",
]
