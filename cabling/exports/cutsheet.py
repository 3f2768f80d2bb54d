"""The cut sheet: an Excel workbook the floor team cuts, routes and checks cables from.

Sheet "Cables": one row per cable: label, network, plane, type, length, speed, part number and status,
then for each end (A, then B1, B2... up to the widest breakout of the selection) its rack, the device's
top U (the U of the label tag), device, port, lane, plane and the optic part number that end needs.
Frozen header row, auto filter over every column, widths that fit the values.

Sheet "BOM": cables by network, plane, type, length and legs; optics by part number (the transceivers
each end accounts for, one per cage as the planner counts them, on the ends that name a part: the cable's
optic_part_a on the A end, optic_part_b on every B end); switches by model (every switch at an end of a
selected cable, counted once).

Rows come from selectors.cable_rows (one streamed query) and the BOM is tallied in the same pass, so
the workbook of a 30,000-cable fabric costs three queries; openpyxl's write-only mode keeps the
memory flat.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import QuerySet
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from ..models import Cable
from ..selectors import SWITCH_ROLES, CableRow, EndRow, cable_rows, widest_breakout

XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CABLE_COLUMNS = ("Label", "Network", "Plane", "Type", "Length (m)", "Speed (Gb/s)", "Part number", "Status")
END_COLUMNS = ("rack", "U (top)", "device", "port", "lane", "plane", "optic part")
# Widths in characters: the longest expected value, so nobody has to widen a column on the floor.
CABLE_WIDTHS = (12, 10, 7, 8, 11, 13, 22, 10)
END_WIDTHS = (8, 8, 18, 9, 6, 6, 22)
BOLD = Font(bold=True)


def end_legs(widest: int) -> list[str]:
    return ["A", *(f"B{k}" for k in range(1, max(widest, 1) + 1))]


def cable_header(widest: int) -> list[str]:
    return [*CABLE_COLUMNS, *(f"{leg} {column}" for leg in end_legs(widest) for column in END_COLUMNS)]


def _end_values(end: EndRow | None) -> list:
    if end is None:
        return [None] * len(END_COLUMNS)
    return [end.rack, end.top_u, end.device, end.port, end.lane, end.plane, end.optic_part or None]


def cable_values(cable: CableRow, widest: int) -> list:
    """One row of the Cables sheet; a cable with fewer legs than the widest leaves its extra columns empty."""
    legs = [cable.a, *cable.b, *[None] * (max(widest, 1) - len(cable.b))]
    values = [
        cable.label, cable.network, cable.plane, cable.cable_type, float(cable.length_m), cable.speed_gbps,
        cable.part_number or None, cable.status,
    ]
    for end in legs:
        values += _end_values(end)
    return values


@dataclass
class Bom:
    cables: Counter = field(default_factory=Counter)  # (network, plane, type, length, legs)
    optics: Counter = field(default_factory=Counter)  # part number
    switches: dict = field(default_factory=dict)  # device name -> (model, part number, role)

    def add(self, cable: CableRow) -> None:
        self.cables[(cable.network, cable.plane, cable.cable_type, cable.length_m, len(cable.b))] += 1
        for end in cable.ends:
            if end.optic_part:
                self.optics[end.optic_part] += end.optic_count
            if end.device_role in SWITCH_ROLES:
                self.switches[end.device] = (end.device_model, end.device_part, end.device_role)

    def switch_counts(self) -> Counter:
        return Counter(self.switches.values())


def _text_cell(sheet, value):
    """A value as written; text that starts with "=" is kept as text, never run as a formula. Only
    those get a cell object: building one per value would cost a tenth of a 30,000-row sheet."""
    if not (isinstance(value, str) and value.startswith("=")):
        return value
    cell = WriteOnlyCell(sheet, value=value)
    cell.data_type = "s"
    return cell


def _header_cells(sheet, names):
    cells = []
    for name in names:
        cell = WriteOnlyCell(sheet, value=name)
        cell.font = BOLD
        cells.append(cell)
    return cells


def _set_widths(sheet, widths) -> None:
    for index, width in enumerate(widths, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width


def write_bom(sheet, bom: Bom) -> None:
    _set_widths(sheet, (12, 28, 20, 10, 8, 8))
    sheet.append(_header_cells(sheet, ["Cables"]))
    sheet.append(_header_cells(sheet, ["Network", "Plane", "Type", "Length (m)", "Legs", "Count"]))
    for (network, plane, kind, length, legs), count in sorted(
        bom.cables.items(), key=lambda item: (item[0][0], -1 if item[0][1] is None else item[0][1], *item[0][2:])
    ):
        sheet.append([network, plane, kind, float(Decimal(length)), legs, count])
    sheet.append([])
    sheet.append(_header_cells(sheet, ["Optics"]))
    sheet.append(_header_cells(sheet, ["Part number", "Count"]))
    for part, count in sorted(bom.optics.items()):
        sheet.append([_text_cell(sheet, part), count])
    sheet.append([])
    sheet.append(_header_cells(sheet, ["Switches"]))
    sheet.append(_header_cells(sheet, ["Model", "Part number", "Role", "Count"]))
    for (model, part, role), count in sorted(bom.switch_counts().items()):
        sheet.append([model, _text_cell(sheet, part), role, count])


def cutsheet_xlsx(cables: QuerySet[Cable]) -> bytes:
    """The workbook for a scoped, filtered cable queryset."""
    widest = widest_breakout(cables)
    header = cable_header(widest)
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(title="Cables")
    # Write-only sheets take their layout before the first row.
    sheet.freeze_panes = "A2"
    _set_widths(sheet, [*CABLE_WIDTHS, *END_WIDTHS * len(end_legs(widest))])
    sheet.append(_header_cells(sheet, header))
    bom = Bom()
    rows = 0
    for cable in cable_rows(cables):
        sheet.append([_text_cell(sheet, v) for v in cable_values(cable, widest)])
        bom.add(cable)
        rows += 1
    sheet.auto_filter.ref = f"A1:{get_column_letter(len(header))}{rows + 1}"
    write_bom(workbook.create_sheet(title="BOM"), bom)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()
