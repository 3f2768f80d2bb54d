"""Writes that matter for the inventory, by concept: devices with their NICs, ports and lanes
(devices.py), the rack units they claim (rack_units.py), racking a device on the floor (racking.py),
optics (optics.py), the GUIDs and MACs the fabric reports (identities.py), many devices at once for
the fabric planner (bulk.py), and the shared hardware catalogue from device-type YAML files
(catalogue.py). Keyword-only, atomic, validated with full_clean(). phrasing.py words a person and a moment
the way the floor reads them.

Callers import from here (`from inventory.services import device_create`), not from the modules."""

from .bulk import devices_create_bulk
from .catalogue import (
    CatalogueFile,
    CatalogueResult,
    catalogue_files_from_paths,
    catalogue_load,
    catalogue_load_shipped,
)
from .devices import device_create, device_update, port_rows_from_templates
from .identities import identities_record
from .optic_stock import optics_stock_bulk
from .optics import UNCHANGED, optic_install, optic_remove, optic_save
from .phrasing import moment, person
from .racking import CONFLICT, IN_A_RACK, device_rack

__all__ = [
    "CONFLICT",
    "IN_A_RACK",
    "UNCHANGED",
    "CatalogueFile",
    "CatalogueResult",
    "catalogue_files_from_paths",
    "catalogue_load",
    "catalogue_load_shipped",
    "device_create",
    "device_rack",
    "device_update",
    "devices_create_bulk",
    "identities_record",
    "moment",
    "optic_install",
    "optic_remove",
    "optic_save",
    "optics_stock_bulk",
    "person",
    "port_rows_from_templates",
]
