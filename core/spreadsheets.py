"""The one Excel writer, and the formula guard for every spreadsheet the project writes.

A cable label, a serial or a name typed by a customer may start with "=": written as it is, Excel
would run it as a formula. Every workbook goes through XlsxWriter, which stores such text as text (and
text that reads like an error code, "#N/A", as text too); every CSV cell goes through csv_safe, which
prefixes formula-leading text with an apostrophe (what spreadsheet programs show as plain text), and
csv_unsafe undoes exactly that on import.

Workbooks are written in openpyxl's write-only mode: rows stream to a temporary file, so a sheet of
50,000 cables costs the memory of one row. A writer given a `created` moment saves reproducibly: the
same rows give the same bytes (document dates and zip entry dates fixed), so a file's hash depends on
its content only.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from zipfile import ZIP_DEFLATED, ZipFile, ZipInfo

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE, Cell
from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill
from openpyxl.styles.numbers import is_date_format
from openpyxl.utils import get_column_letter
from openpyxl.utils.exceptions import IllegalCharacterError
from openpyxl.worksheet.hyperlink import Hyperlink
from openpyxl.writer.excel import ExcelWriter

XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV_CONTENT_TYPE = "text/csv; charset=utf-8"
# What a spreadsheet program may take as the start of a formula in a CSV cell (OWASP's list).
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
BOLD = Font(bold=True)
ITALIC = Font(italic=True, color="616161")
FILLS = {
    "pass": PatternFill("solid", fgColor="C8E6C9"),
    "warn": PatternFill("solid", fgColor="FFE0B2"),
    "fail": PatternFill("solid", fgColor="FFCDD2"),
    "error": PatternFill("solid", fgColor="E0E0E0"),
}
MAX_ROWS = 1_048_576  # Excel's limits of a sheet
MAX_COLUMNS = 16_384
SHEET_TITLE_LIMIT = 31
_TITLE_FORBIDDEN = re.compile(r"[\[\]:*?/\\\x00-\x1f]")
_RESERVED_TITLES = {"history"}  # Excel keeps that name for itself
_TIME_TYPES = (dt.datetime, dt.date, dt.time, dt.timedelta)
_PLAIN_TYPES = frozenset({str, int, float, bool, type(None)})  # values a shared cell takes as they are
ZIP_EPOCH = dt.datetime(1980, 1, 1)  # the earliest date a zip entry can carry


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


def legal_text(text: str) -> str:
    """Text without the control characters an xlsx file cannot hold (each becomes U+FFFD, so the reader
    sees that something was there)."""
    return ILLEGAL_CHARACTERS_RE.sub("\ufffd", text)


def sheet_title(text: str, taken: Iterable[str] = ()) -> str:
    """A sheet name Excel accepts, unique among `taken` (compared as Excel does, ignoring case): the
    characters []:*?/\\ become "-", no apostrophe at either end, at most 31 characters (a name cut short
    ends with "…"), and " (2)", " (3)"... when the name is taken already."""
    title = " ".join(_TITLE_FORBIDDEN.sub("-", str(text)).split()).strip("'").strip() or "Sheet"
    title = cut(title, SHEET_TITLE_LIMIT)
    used = {name.casefold() for name in taken} | _RESERVED_TITLES
    candidate, number = title, 1
    while candidate.casefold() in used:
        number += 1
        suffix = f" ({number})"
        candidate = cut(title, SHEET_TITLE_LIMIT - len(suffix)) + suffix
    return candidate


def cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, ending with "…" when it had to be cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def naive_utc(moment: dt.datetime) -> dt.datetime:
    """An aware moment as naive UTC (what Excel and zip files hold); a naive one is taken as UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment


@dataclass(frozen=True)
class Column:
    """A column of a sheet: its header (with the unit, e.g. "Length (m)"), width in characters, and an
    Excel number format for its values (e.g. "0.00E+00" for a BER)."""

    header: str
    width: float = 12
    number_format: str | None = None
    comment: str = ""  # shown on the header cell: what the column's values mean when it is not obvious


class _StyledCell(Cell):
    """A cell reused for every value written in one column with one style. Its style id is worked out
    once: openpyxl would hash the style again for every cell, and make a new cell object for each, which
    costs more than writing the cell's XML."""

    __slots__ = ("style_id",)
    has_style = True


class Sheet:
    """One write-only sheet: a bold, frozen header row, the widths of its columns, and an auto-filter
    over every row written once the writer is saved.

    Rows are written as they are appended (write-only mode), so a cell object may serve every row of a
    column: the sheet turns plain values into cells itself (`_cells`, in place of openpyxl's own
    conversion, which makes a cell and raises an exception for every styled value) and applies the
    formula guard to every text cell, plain or styled."""

    def __init__(self, workbook: Workbook, title: str, columns: Sequence[Column | str], *, freeze: bool = True,
                 widths: Sequence[float] = (), index: int | None = None):
        self._sheet = workbook.create_sheet(title=title[:SHEET_TITLE_LIMIT], index=index)
        if not callable(getattr(self._sheet, "_values_to_row", None)):  # what _cells stands in for
            raise RuntimeError("openpyxl's write-only sheet changed: core.spreadsheets.Sheet needs a look.")
        self._sheet._values_to_row = self._cells  # see the class's docstring
        self._plain = WriteOnlyCell(self._sheet)
        self._styled: dict[tuple[int, str | None], _StyledCell] = {}
        self.columns = [c if isinstance(c, Column) else Column(c, max(10, len(c) + 2)) for c in columns]
        self._formats = [(i, c.number_format) for i, c in enumerate(self.columns) if c.number_format]
        self._date_columns = {i for i, f in self._formats if is_date_format(f)}
        self.rows = 0  # data rows (what the auto-filter covers)
        self.position = 0  # every row written: data, headings, blanks and notes
        # Write-only sheets take their layout before the first row. A sheet of several small tables
        # (no header of its own) gives its widths directly.
        if freeze and self.columns:
            self._sheet.freeze_panes = "A2"
        for index_, width in enumerate(widths or [c.width for c in self.columns], start=1):
            self._sheet.column_dimensions[get_column_letter(index_)].width = width
        if self.columns:
            self._write([self.cell(c.header, bold=True, comment=c.comment) for c in self.columns])

    @property
    def title(self) -> str:
        return self._sheet.title

    @property
    def worksheet(self):
        """The openpyxl worksheet, for what this class does not wrap (a chart)."""
        return self._sheet

    def header(self, names: Iterable[str]) -> None:
        """A bold row (the sheet's own header, or the heading of a table further down)."""
        self._write([self.cell(name, bold=True) for name in names])

    def note(self, text: str) -> None:
        """A row of one grey italic cell: a caption, or what a table leaves out."""
        self._write([self.cell(text, italic=True)])

    def append(self, values: Sequence, *, verdict: str | None = None,
               fills: Mapping[int, str] | None = None) -> None:
        """A row of values. `verdict` (pass, warn, fail, error) fills the whole row with its colour;
        `fills` ({column index: verdict}) fills single cells. Values of a column with a number format
        get it; a value may also be a cell made by `cell()`."""
        row = list(values)
        if verdict in FILLS:
            row = [self._styled_value(i, v, verdict) for i, v in enumerate(row)]
        else:
            filled = {i: fill for i, fill in fills.items() if fill in FILLS and i < len(row)} if fills else {}
            for index, _ in self._formats:
                if index < len(row) and row[index] is not None and index not in filled:
                    row[index] = self._styled_value(index, row[index], None)
            for index, fill in filled.items():
                row[index] = self._styled_value(index, row[index], fill)
        self._write(row)
        self.rows += 1

    def blank(self) -> None:
        self._write([])

    def cell(self, value, *, bold: bool = False, italic: bool = False, number_format: str | None = None,
             fill: str | None = None, link_to_sheet: str | None = None, comment: str = "") -> Cell:
        """A cell of its own for a layout row (a cover, a heading, a link to another sheet): the formula
        guard applies as to any other cell."""
        cell = WriteOnlyCell(self._sheet)
        _bind(cell, value)
        if bold or italic:
            cell.font = BOLD if bold else ITALIC
        if number_format:
            cell.number_format = number_format
        if fill in FILLS:
            cell.fill = FILLS[fill]
        if link_to_sheet:
            quoted = link_to_sheet.replace("'", "''")
            cell.hyperlink = Hyperlink(ref="A1", location=f"'{quoted}'!A1", display=str(value))
            cell.font = Font(color="1565C0", underline="single", bold=bold)
        if comment:
            cell.comment = Comment(comment, "Bringup")
        return cell

    def print_marks(self, *, header: str = "", footer: str = "") -> None:
        """The text printed at the top and the bottom of every page of the sheet ("&" is Excel's
        escape there: written doubled). `&A`, `&P` and `&N` in `footer` are the sheet, page and pages."""
        if header:  # Excel takes 255 characters for a header, codes included
            self._sheet.oddHeader.center.text = cut(legal_text(header), 120).replace("&", "&&")
        if footer:
            self._sheet.oddFooter.center.text = cut(legal_text(footer), 120)

    def close(self) -> None:
        if self.columns:
            self._sheet.auto_filter.ref = f"A1:{get_column_letter(len(self.columns))}{self.rows + 1}"

    def _write(self, row: list) -> None:
        self._sheet.append(row)
        self.position += 1

    def _styled_value(self, index: int, value, fill: str | None):
        """`value` in the cell that column `index` keeps for its number format and `fill`."""
        cell = self._styled.get((index, fill))
        if cell is None:
            number_format = self.columns[index].number_format if index < len(self.columns) else None
            cell = self._styled[(index, fill)] = self._shared_cell(number_format, fill)
        if type(value) not in _PLAIN_TYPES:
            if isinstance(value, Cell):
                return value
            if isinstance(value, _TIME_TYPES) and index not in self._date_columns:
                # openpyxl gives a date its own format: a cell of its own, so the shared one keeps its style
                return self.cell(value, fill=fill)
        _bind(cell, value)
        return cell

    def _shared_cell(self, number_format: str | None, fill: str | None) -> _StyledCell:
        model = WriteOnlyCell(self._sheet)
        if number_format:
            model.number_format = number_format
        if fill:
            model.fill = FILLS[fill]
        cell = _StyledCell(self._sheet, row=1, column=1, style_array=model._style)
        cell.style_id = model.style_id
        return cell

    def _cells(self, values, row_index: int):
        """The cells of a row, as openpyxl's write-only sheet wants them from its `_values_to_row`: plain
        values go through one shared plain cell (guarded), cells as they are."""
        plain = self._plain
        for column, value in enumerate(values, 1):
            if value is None:
                continue
            if isinstance(value, Cell):
                cell = value
            else:
                cell = plain
                _bind(cell, value)
                if cell._style is not None:  # openpyxl gave the value a format (a date): keep it to this cell
                    plain = self._plain = WriteOnlyCell(self._sheet)
            cell.column = column
            cell.row = row_index
            if cell.hyperlink is not None:
                cell.hyperlink.ref = cell.coordinate
            yield cell


def _bind(cell: Cell, value) -> None:
    """Set a cell's value under the formula guard: text stays text even when it starts with "=" or
    reads like an error code; control characters an xlsx file cannot hold are replaced, and a value
    of a type Excel has no cell for is written as its text."""
    try:
        cell.value = value
    except IllegalCharacterError:
        cell.value = legal_text(value)
    except ValueError:  # a type Excel has none for (a list, a dict): its text
        text = json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (list, dict)) else str(value)
        cell.value = legal_text(text)
    if cell.data_type in ("f", "e"):
        cell.data_type = "s"


class _ReproducibleZip(ZipFile):
    """A zip whose entries all carry one date and the same permissions, so the same files give the same
    bytes (ZipFile stamps each entry with the time it was written, or its temporary file's)."""

    def __init__(self, file, *, date_time: dt.datetime) -> None:
        super().__init__(file, "w", ZIP_DEFLATED, allowZip64=True)
        self._date_time = max(date_time, ZIP_EPOCH).timetuple()[:6]

    def _info(self, name: str) -> ZipInfo:
        info = ZipInfo(name, date_time=self._date_time)
        info.compress_type = ZIP_DEFLATED
        info.external_attr = 0o600 << 16
        return info

    def writestr(self, zinfo_or_arcname, data, compress_type=None, compresslevel=None):
        if not isinstance(zinfo_or_arcname, ZipInfo):
            zinfo_or_arcname = self._info(zinfo_or_arcname)
        super().writestr(zinfo_or_arcname, data, compress_type, compresslevel)

    def write(self, filename, arcname=None, compress_type=None, compresslevel=None):
        info = self._info(arcname or os.path.basename(filename))
        info.file_size = os.path.getsize(filename)  # as ZipFile.write: decides whether ZIP64 is needed
        with open(filename, "rb") as source, self.open(info, "w") as entry:
            shutil.copyfileobj(source, entry, 1024 * 1024)


class XlsxWriter:
    """`writer = XlsxWriter(); sheet = writer.sheet("Cables", columns); sheet.append(row); writer.save()`

    With `created` (and optionally `modified`), the document's dates are those and the file is saved
    reproducibly (see the module's docstring); without, it carries the time it was saved."""

    def __init__(self, *, created: dt.datetime | None = None, modified: dt.datetime | None = None,
                 title: str = "", creator: str = ""):
        self.workbook = Workbook(write_only=True)
        self._sheets: list[Sheet] = []
        self.created = naive_utc(created) if created else None
        properties = self.workbook.properties
        if self.created:
            properties.created = self.created
            properties.modified = naive_utc(modified) if modified else self.created
        if title:
            properties.title = legal_text(title)
        if creator:
            properties.creator = legal_text(creator)

    def sheet(self, title: str, columns: Sequence[Column | str] = (), *, freeze: bool = True,
              widths: Sequence[float] = (), index: int | None = None) -> Sheet:
        """A new sheet named `title` (made acceptable and unique with sheet_title), at the end or at
        `index` among the sheets."""
        title = sheet_title(title, (s.title for s in self._sheets))
        sheet = Sheet(self.workbook, title, columns, freeze=freeze, widths=widths, index=index)
        self._sheets.append(sheet)
        return sheet

    def save(self, target=None) -> bytes | None:
        """Write the workbook to `target` (a path or a binary file), or return its bytes."""
        for sheet in self._sheets:
            sheet.close()
        buffer = io.BytesIO() if target is None else None
        destination = target if target is not None else buffer
        if self.created is None:
            self.workbook.save(destination)
        else:
            if not self.workbook.worksheets:
                self.workbook.create_sheet()
            archive = _ReproducibleZip(destination, date_time=self.created)
            ExcelWriter(self.workbook, archive).save()  # what Workbook.save does, bar the clock
        return buffer.getvalue() if buffer is not None else None
