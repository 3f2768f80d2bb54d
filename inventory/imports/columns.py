"""The columns of the inventory import and export files. Pure Python (no Django), shared by the reader,
the validation and the export, so what we write is exactly what we read back.

A CSV file holds one kind, told apart by its header row (or given with --kind / the upload form).
An XLSX workbook holds one sheet per kind, named racks, devices, nics, optics; they are applied in
that order, all in one transaction. Row 1 is the header; column names are case-insensitive and may
come in any order; optional columns may be left out. Blank rows are skipped.

Text a spreadsheet program would run as a formula (it starts with =, +, -, @) stays text: an XLSX
export stores it as text, a CSV export writes it with a leading apostrophe, and the import takes off
exactly that apostrophe (core.spreadsheets.csv_safe / csv_unsafe).

Choice columns take the stored value or the label shown in the app (``gpu_node`` or ``GPU node``).
A row whose key matches an existing object updates it; a blank optional cell on such a row leaves
that field as it is. A blank cell on a new row takes the default.

racks (key: name)
    site            required. The site (data hall) the rack stands in; created if the project has none
                    of that name.
    name            required. Unique in the project, e.g. R01.
    row             required. Row in the data hall, e.g. A.
    position        required. Position in the row, from 1; unique per site and row.
    height_u        rack height in U, 1-60 (default 48).
    power_budget_w  required. Power the rack's feeds may deliver, in W.
    status          planned | installed | powered | active (default planned).

devices (key: name)
    name            required. Unique in the project.
    hardware_model  required. Part number of a hardware model in the catalogue; a new device gets its
                    NICs, ports and breakout lanes from that model's templates. It cannot change on an
                    existing device.
    rack            rack name (in the project or earlier in the same workbook); blank = not racked.
    position_u      lowest U the device occupies, from 1 at the bottom; needed with rack.
    face            front | rear (default front). Full-depth models take both faces.
    role            gpu_node | storage_node | leaf | spine | super_spine | mgmt_switch | head_node |
                    pdu | other (default other).
    serial          unique in the project when given.
    asset_tag
    oob_address     out-of-band (BMC) IPv4 or IPv6 address.
    status          planned | received | racked | powered | ready (default planned).

nics (key: device + slot)
    device          required. Device name (in the project or earlier in the same workbook).
    slot            required. A slot from the device's hardware model updates the NIC its template
                    created; another slot creates a NIC (then model is required).
    model, part_number, serial, firmware, guid_mac

optics (key: serial)
    vendor          required.
    part_number     required.
    serial          required. Unique in the project.
    form_factor     required. osfp | qsfp112 | qsfp_dd | qsfp56 | qsfp28 | sfp28 | sfp_plus | rj45.
    speed_gbps      required. Whole Gb/s, e.g. 800.
    device, port    where the optic sits (both or neither): a device name and one of its port names,
                    e.g. gpu-001 and ib0. One optic per port.
    status          in_stock | installed | faulty | rma (default installed when a port is given,
                    otherwise in_stock).
"""

from __future__ import annotations

KINDS: tuple[str, ...] = ("racks", "devices", "nics", "optics")

COLUMNS: dict[str, tuple[str, ...]] = {
    "racks": ("site", "name", "row", "position", "height_u", "power_budget_w", "status"),
    "devices": (
        "name", "hardware_model", "rack", "position_u", "face", "role", "serial", "asset_tag", "oob_address",
        "status",
    ),
    "nics": ("device", "slot", "model", "part_number", "serial", "firmware", "guid_mac"),
    "optics": ("vendor", "part_number", "serial", "form_factor", "speed_gbps", "device", "port", "status"),
}

REQUIRED: dict[str, tuple[str, ...]] = {
    "racks": ("site", "name", "row", "position", "power_budget_w"),
    "devices": ("name", "hardware_model"),
    "nics": ("device", "slot"),
    "optics": ("vendor", "part_number", "serial", "form_factor", "speed_gbps"),
}


def kind_from_header(header: list[str]) -> str | None:
    """The kind whose columns the header overlaps most, or None when that is not one clear kind.

    Overlap rather than "all required columns present", so a devices file that lacks its
    hardware_model column is still recognised as devices and then told which column is missing.
    """
    names = set(header)
    scores = {kind: len(names & set(columns)) for kind, columns in COLUMNS.items()}
    best = max(scores.values())
    winners = [kind for kind, score in scores.items() if score == best]
    if best == 0 or len(winners) > 1:
        return None
    return winners[0]
