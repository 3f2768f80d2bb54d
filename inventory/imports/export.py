"""Exports of the inventory in exactly the columns the import reads (inventory.imports.columns), so an
exported file re-imports without edits.

Both formats carry the formula guard of core.spreadsheets: a workbook is written by its XlsxWriter
(text that starts with "=" stays text), and every CSV cell goes through csv_safe (formula-leading text
gets an apostrophe). The reader takes that apostrophe off again with csv_unsafe, so a serial such as
"=HYPERLINK(...)" or "-2+3" comes back as it was."""

from __future__ import annotations

import csv
import io

from core.spreadsheets import XlsxWriter, csv_safe
from projects.models import Project

from ..models import Device, Nic, Optic, Rack
from .columns import COLUMNS, KINDS

FORMATS = ("csv", "xlsx")


def export_rows(project: Project, kind: str) -> list[list]:
    """The rows of one kind (without the header), in a stable order, with a fixed number of queries."""
    return [list(values) for values in _ROWS[kind](project)]


def export_csv(project: Project, kind: str) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS[kind])
    writer.writerows(
        [csv_safe("" if value is None else value) for value in row] for row in export_rows(project, kind)
    )
    return buffer.getvalue().encode("utf-8")


def export_xlsx(project: Project, kinds: list[str] | tuple[str, ...] = KINDS) -> bytes:
    """One sheet per kind, named after it. Text stays text (a serial of leading zeros keeps them)."""
    writer = XlsxWriter()
    for kind in kinds:
        sheet = writer.sheet(kind, COLUMNS[kind])
        for row in export_rows(project, kind):
            sheet.append(row)
    return writer.save()


def export_filename(project: Project, kind: str | None, file_format: str) -> str:
    return f"{project.code}-{kind or 'inventory'}.{file_format}"


def _racks(project: Project):
    racks = Rack.objects.filter(project=project).select_related("site").order_by("row", "position", "name")
    for r in racks:
        yield (r.site.name, r.name, r.row, r.position, r.height_u, r.power_budget_w, r.status)


def _devices(project: Project):
    devices = Device.objects.filter(project=project).select_related("hardware_model", "rack").order_by("name")
    for d in devices:
        yield (
            d.name, d.hardware_model.part_number, d.rack.name if d.rack_id else "", d.position_u, d.face,
            d.role, d.serial, d.asset_tag, d.oob_address or "", d.status,
        )


def _nics(project: Project):
    nics = Nic.objects.filter(device__project=project).select_related("device")
    nics = nics.order_by("device__name", "slot")
    for n in nics:
        yield (n.device.name, n.slot, n.model, n.part_number, n.serial, n.firmware, n.guid_mac)


def _optics(project: Project):
    optics = Optic.objects.filter(project=project).select_related("port__device").order_by("serial")
    for o in optics:
        device, port = (o.port.device.name, o.port.name) if o.port_id else ("", "")
        yield (o.vendor, o.part_number, o.serial, o.form_factor, o.speed_gbps, device, port, o.status)


_ROWS = {"racks": _racks, "devices": _devices, "nics": _nics, "optics": _optics}
