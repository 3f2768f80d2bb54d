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
the workbook of a 30,000-cable fabric costs two queries; it is written by the one Excel writer
(core.spreadsheets.XlsxWriter: write-only, so the memory stays flat, and text starting with "=" is
kept as text).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import QuerySet

from core.spreadsheets import Column, Sheet, XlsxWriter

from ..models import Cable
from ..selectors import SWITCH_ROLES, CableRow, EndRow, cable_rows, widest_breakout

CABLE_COLUMNS = ("Label", "Network", "Plane", "Type", "Length (m)", "Speed (Gb/s)", "Part number", "Status")
END_COLUMNS = ("rack", "U (top)", "device", "port", "lane", "plane", "optic part")
# Widths in characters: the longest expected value, so nobody has to widen a column on the floor.
CABLE_WIDTHS = (12, 10, 7, 8, 11, 13, 22, 10)
END_WIDTHS = (8, 8, 18, 9, 6, 6, 22)
BOM_WIDTHS = (12, 28, 20, 10, 8, 8)


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


def write_bom(sheet: Sheet, bom: Bom) -> None:
    sheet.header(["Cables"])
    sheet.header(["Network", "Plane", "Type", "Length (m)", "Legs", "Count"])
    for (network, plane, kind, length, legs), count in sorted(
        bom.cables.items(), key=lambda item: (item[0][0], -1 if item[0][1] is None else item[0][1], *item[0][2:])
    ):
        sheet.append([network, plane, kind, float(Decimal(length)), legs, count])
    sheet.blank()
    sheet.header(["Optics"])
    sheet.header(["Part number", "Count"])
    for part, count in sorted(bom.optics.items()):
        sheet.append([part, count])
    sheet.blank()
    sheet.header(["Switches"])
    sheet.header(["Model", "Part number", "Role", "Count"])
    for (model, part, role), count in sorted(bom.switch_counts().items()):
        sheet.append([model, part, role, count])


def cutsheet_xlsx(cables: QuerySet[Cable]) -> bytes:
    """The workbook for a scoped, filtered cable queryset."""
    widest = widest_breakout(cables)
    widths = [*CABLE_WIDTHS, *END_WIDTHS * len(end_legs(widest))]
    writer = XlsxWriter()
    sheet = writer.sheet("Cables", [Column(h, w) for h, w in zip(cable_header(widest), widths, strict=True)])
    bom = Bom()
    for cable in cable_rows(cables):
        sheet.append(cable_values(cable, widest))
        bom.add(cable)
    # Sections with their own headings: no sheet header, so the widths are given directly.
    write_bom(writer.sheet("BOM", freeze=False, widths=BOM_WIDTHS), bom)
    return writer.save()
