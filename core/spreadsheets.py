"""The one Excel writer, and the formula guard for every spreadsheet the project writes.

A cable label, a serial or a name typed by a customer may start with "=": written as it is, Excel
would run it as a formula. Every workbook goes through XlsxWriter, which stores such text as text; every
CSV cell goes through csv_safe, which prefixes formula-leading text with an apostrophe (what
spreadsheet programs show as plain text), and csv_unsafe undoes exactly that on import.

Workbooks are written in openpyxl's write-only mode: rows stream to a temporary file, so a sheet of
50,000 cables costs the memory of one row.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import Cell
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV_CONTENT_TYPE = "text/csv; charset=utf-8"
# What a spreadsheet program may take as the start of a formula in a CSV cell (OWASP's list).
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
BOLD = Font(bold=True)
FILLS = {
    "pass": PatternFill("solid", fgColor="C8E6C9"),
    "warn": PatternFill("solid", fgColor="FFE0B2"),
    "fail": PatternFill("solid", fgColor="FFCDD2"),
    "error": PatternFill("solid", fgColor="E0E0E0"),
}


def csv_safe(value):
    """A CSV cell that no spreadsheet program runs: formula-leading text gets a leading apostrophe, and
    so does text that starts with an apostrophe already (so "'=x" comes back as itself)."""
    if isinstance(value, str) and value.startswith((*FORMULA_LEADS, "'")):
        return "'" + value
    return value


def csv_unsafe(value: str) -> str:
    """Undo csv_safe exactly: an apostrophe is dropped only where csv_safe would have put it (before a
    formula lead or another apostrophe); any other leading apostrophe is the cell's own."""
    if value.startswith("'") and value[1:].startswith((*FORMULA_LEADS, "'")):
        return value[1:]
    return value


@dataclass(frozen=True)
class Column:
    """A column of a sheet: its header (with the unit, e.g. "Length (m)"), width in characters, and an
    Excel number format for its values (e.g. "0.00E+00" for a BER)."""

    header: str
    width: float = 12
    number_format: str | None = None


class Sheet:
    """One write-only sheet: a bold, frozen header row, the widths of its columns, and an auto-filter
    over every row written once the writer is saved."""

    def __init__(self, workbook: Workbook, title: str, columns: Sequence[Column | str], *, freeze: bool = True,
                 widths: Sequence[float] = ()):
        self._sheet = workbook.create_sheet(title=title[:31])
        self.columns = [c if isinstance(c, Column) else Column(c, max(10, len(c) + 2)) for c in columns]
        self._formats = [(i, c.number_format) for i, c in enumerate(self.columns) if c.number_format]
        self.rows = 0
        # Write-only sheets take their layout before the first row. A sheet of several small tables
        # (no header of its own) gives its widths directly.
        if freeze and self.columns:
            self._sheet.freeze_panes = "A2"
        for index, width in enumerate(widths or [c.width for c in self.columns], start=1):
            self._sheet.column_dimensions[get_column_letter(index)].width = width
        if self.columns:
            self.header([c.header for c in self.columns])

    def header(self, names: Iterable[str]) -> None:
        """A bold row (the sheet's own header, or the heading of a table further down)."""
        cells = []
        for name in names:
            cell = WriteOnlyCell(self._sheet, value=name)
            cell.font = BOLD
            cells.append(cell)
        self._sheet.append(cells)

    def append(self, values: Sequence, *, verdict: str | None = None) -> None:
        """A row of values; `verdict` (pass, warn, fail, error) fills the row with its colour. Only the
        cells that need it get a cell object: building one per value would cost a tenth of a big sheet."""
        row = [self._text(v) for v in values]
        for index, number_format in self._formats:
            if index < len(row) and row[index] is not None and not isinstance(row[index], Cell):
                cell = WriteOnlyCell(self._sheet, value=row[index])
                cell.number_format = number_format
                row[index] = cell
        if verdict in FILLS:
            row = [self._filled(v, FILLS[verdict]) for v in row]
        self._sheet.append(row)
        self.rows += 1

    def blank(self) -> None:
        self._sheet.append([])

    def close(self) -> None:
        if self.columns:
            self._sheet.auto_filter.ref = f"A1:{get_column_letter(len(self.columns))}{self.rows + 1}"

    def _text(self, value):
        """Text that starts with "=" is kept as text, never run as a formula (openpyxl treats only
        that lead as a formula; "+", "-" and "@" are stored as text already)."""
        if not (isinstance(value, str) and value.startswith("=")):
            return value
        cell = WriteOnlyCell(self._sheet, value=value)
        cell.data_type = "s"
        return cell

    def _filled(self, value, fill):
        cell = value if isinstance(value, Cell) else WriteOnlyCell(self._sheet, value=value)
        cell.fill = fill
        return cell


class XlsxWriter:
    """`writer = XlsxWriter(); sheet = writer.sheet("Cables", columns); sheet.append(row); writer.save()`"""

    def __init__(self):
        self.workbook = Workbook(write_only=True)
        self._sheets: list[Sheet] = []

    def sheet(self, title: str, columns: Sequence[Column | str] = (), *, freeze: bool = True,
              widths: Sequence[float] = ()) -> Sheet:
        sheet = Sheet(self.workbook, title, columns, freeze=freeze, widths=widths)
        self._sheets.append(sheet)
        return sheet

    def save(self, target=None) -> bytes | None:
        """Write the workbook to `target` (a path or a binary file), or return its bytes."""
        for sheet in self._sheets:
            sheet.close()
        if target is not None:
            self.workbook.save(target)
            return None
        buffer = io.BytesIO()
        self.workbook.save(buffer)
        return buffer.getvalue()
