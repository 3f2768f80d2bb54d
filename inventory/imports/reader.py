"""Reads an inventory file (CSV or XLSX) into sheets of rows keyed by column name. Pure Python: no
Django, no database; what the rows mean is checked later (inventory.imports.validation).

Row numbers are the ones a spreadsheet shows: the header is row 1, the first data row is row 2, and
blank rows are skipped without renumbering what follows.

Text cells lose the apostrophe our exports put before formula-leading text (core.spreadsheets.csv_safe),
and only that one, so an exported file reads back exactly as it was written.

What a file may unpack and read is bounded (inventory.imports.limits): its size first; for an XLSX its
zip directory and its sheets' XML (inventory.imports.xlsx_guard) before openpyxl reads it; and, while
reading any file, its rows, columns, cells and characters. A CSV is decoded as it streams, a line at a
time, so neither the whole file nor an endless line is ever held in memory.
"""

from __future__ import annotations

import codecs
import csv
import datetime
import io
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import BinaryIO

from core.spreadsheets import csv_unsafe

from .columns import COLUMNS, KINDS, REQUIRED, kind_from_header
from .limits import ImportLimits, LimitExceeded, ReadBudget, size_text
from .xlsx_guard import check_xlsx

HEADER_ROW = 1


@dataclass(frozen=True)
class ImportIssue:
    """One problem with an import, placed as precisely as we can: file, sheet, row, column."""

    file: str
    message: str
    sheet: str = ""
    row: int | None = None
    column: str = ""
    more: int = 0  # on the last issue kept: how many more there were, not kept

    @classmethod
    def from_limit(cls, file: str, exc: LimitExceeded) -> ImportIssue:
        return cls(file, exc.message, sheet=exc.sheet, row=exc.row)

    def __str__(self) -> str:
        where = self.file
        if self.sheet:
            where += f" sheet {self.sheet}"
        if self.row is not None:
            where += f" row {self.row}"
        if self.column:
            where += f", column {self.column}"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict:
        values = {
            "file": self.file, "sheet": self.sheet, "row": self.row, "column": self.column,
            "message": self.message, "text": str(self),
        }
        if self.more:
            values["more"] = self.more
        return values


def bounded_issues(file: str, issues: list[ImportIssue], total: int, limit: int) -> list[ImportIssue]:
    """At most `limit` issues: when there were more (`total`), the first ones and a last one saying how
    many more there were."""
    if total <= limit:
        return list(issues[:limit])
    kept = list(issues[:max(limit - 1, 0)])
    more = total - len(kept)
    return [*kept, ImportIssue(file, f"... and {more:,} more errors, not listed", more=more)]


class ImportFileError(Exception):
    """The file cannot be read as an inventory file at all (or its headers are wrong)."""

    def __init__(self, issues: list[ImportIssue]):
        super().__init__("\n".join(str(issue) for issue in issues))
        self.issues = issues


@dataclass
class Row:
    number: int
    values: dict[str, str]


@dataclass
class Sheet:
    kind: str
    file: str
    name: str = ""  # the XLSX sheet name; blank for a CSV
    header: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)

    def issue(self, message: str, *, row: int | None = None, column: str = "") -> ImportIssue:
        return ImportIssue(file=self.file, sheet=self.name, row=row, column=column, message=message)


def read_inventory_file(
    filename: str, data: bytes | BinaryIO, kind: str | None = None, *, limits: ImportLimits | None = None
) -> list[Sheet]:
    """The file's sheets in apply order (racks, devices, nics, optics). `data` is the file's bytes or a
    binary file open at its start (read as it streams, never whole). Raises ImportFileError, with one
    issue naming the limit for a file over one of `limits` (the defaults of inventory.imports.limits)."""
    limits = limits or ImportLimits()
    if kind and kind not in KINDS:
        message = f'unknown kind "{kind}"; use one of {", ".join(KINDS)}'
        raise ImportFileError([ImportIssue(filename, message)])
    source = io.BytesIO(data) if isinstance(data, bytes | bytearray | memoryview) else data
    suffix = PurePath(filename).suffix.lower()
    if suffix not in (".csv", ".xlsx"):
        raise ImportFileError([ImportIssue(filename, "not a CSV or XLSX file (use a .csv or .xlsx file)")])
    try:
        _check_size(source, limits)
        budget = ReadBudget(limits)
        if suffix == ".csv":
            sheets = [_read_csv(filename, source, kind, budget)]
        else:
            sheets = _read_xlsx(filename, source, kind, budget)
    except LimitExceeded as exc:
        raise ImportFileError([ImportIssue.from_limit(filename, exc)]) from exc
    issues = [issue for sheet in sheets for issue in _header_issues(sheet)]
    if issues:
        raise ImportFileError(issues)
    return sorted(sheets, key=lambda sheet: KINDS.index(sheet.kind))


def _check_size(source: BinaryIO, limits: ImportLimits) -> None:
    source.seek(0, io.SEEK_END)
    size = source.tell()
    source.seek(0)
    if size > limits.max_file_bytes:
        raise LimitExceeded(f"the file is {size_text(size)}; the limit is {size_text(limits.max_file_bytes)}")


def cell_text(value) -> str:
    """A cell as the text a person would type: whole numbers without '.0', dates as ISO, text without the
    formula guard's apostrophe."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, str):
        return csv_unsafe(value.strip())
    return str(value).strip()


CSV_CHUNK = 64 * 1024


def _read_csv(filename: str, source: BinaryIO, kind: str | None, budget: ReadBudget) -> Sheet:
    lines = _csv_lines(filename, source, budget.limits)
    first_line = next(lines, "")
    # Spreadsheets in some locales save CSV with semicolons; accept both.
    delimiter = ";" if ";" in first_line and "," not in first_line else ","
    records: list[list[str]] = []
    try:
        # csv's own field limit (csv.field_size_limit(), 128 KiB unless changed) ends a quoted field that
        # runs over many lines; a longer line never reaches csv (_csv_lines).
        for record in csv.reader(itertools.chain([first_line], lines), delimiter=delimiter):
            cells = [cell_text(cell) for cell in record]
            budget.row(_trimmed(cells), number=len(records) + 1)
            records.append(cells)
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise LimitExceeded(budget.cell_too_long(), row=len(records) + 1) from exc
        raise ImportFileError([ImportIssue(filename, f"not a readable CSV file: {exc}")]) from exc
    if not any(any(record) for record in records):
        raise ImportFileError([ImportIssue(filename, "the file is empty")])
    return _sheet_from_records(filename, "", records, kind)


def _csv_lines(filename: str, source: BinaryIO, limits: ImportLimits) -> Iterator[str]:
    """The file's lines (each with its "\n"), decoded as UTF-8 a chunk at a time. Refuses binary data,
    text that is not UTF-8, a file larger than it said and a line longer than any row may be."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    pending = ""
    line_number = 1
    read = 0
    while True:
        chunk = source.read(CSV_CHUNK)
        read += len(chunk)
        if read > limits.max_file_bytes:
            raise LimitExceeded(f"the file is larger than {size_text(limits.max_file_bytes)}, the limit")
        if b"\x00" in chunk:
            raise ImportFileError([ImportIssue(filename, "not a CSV file: it holds binary data")])
        try:
            pending += decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            message = "not a UTF-8 text CSV file; save it as CSV UTF-8"
            raise ImportFileError([ImportIssue(filename, message)]) from exc
        *complete, pending = pending.split("\n")
        for line in complete:
            yield line + "\n"
        line_number += len(complete)
        if len(pending) > limits.max_line_chars:
            raise LimitExceeded(
                f"the line is longer than {limits.max_line_chars:,} characters ({limits.max_columns:,} "
                f"columns of at most {limits.max_cell_chars:,} characters)", row=line_number,
            )
        if not chunk:
            break
    if pending:
        yield pending


def _trimmed(cells: list) -> list:
    """A row without its trailing blank cells: what counts as its width."""
    end = len(cells)
    while end and cells[end - 1] in (None, ""):
        end -= 1
    return cells[:end]


def _read_xlsx(filename: str, source: BinaryIO, kind: str | None, budget: ReadBudget) -> list[Sheet]:
    import openpyxl

    try:
        check_xlsx(source, budget.limits)
        workbook = openpyxl.load_workbook(source, read_only=True, data_only=True, keep_links=False)
    except LimitExceeded:
        raise
    except Exception as exc:  # noqa: BLE001 - zipfile and openpyxl raise many types for a file that is not a workbook
        raise ImportFileError([ImportIssue(filename, "not a readable XLSX workbook")]) from exc
    try:
        contents = {
            worksheet.title: _worksheet_records(filename, worksheet, budget) for worksheet in workbook.worksheets
        }
    finally:
        workbook.close()
    non_empty = {title: records for title, records in contents.items() if any(any(r) for r in records)}
    if not non_empty:
        raise ImportFileError([ImportIssue(filename, "the file is empty")])
    named = {title: records for title, records in non_empty.items() if title.strip().lower() in KINDS}
    if kind:
        return [_xlsx_sheet_for_kind(filename, kind, named, non_empty)]
    if named:
        others = [title for title in non_empty if title not in named]
        if others:
            message = f"not a sheet this import knows; name the sheets {', '.join(KINDS)}"
            raise ImportFileError([ImportIssue(filename, message, sheet=title) for title in others])
        return [_sheet_from_records(filename, t, records, t.strip().lower()) for t, records in named.items()]
    sheets = [_sheet_from_records(filename, title, records, None) for title, records in non_empty.items()]
    _refuse_repeated_kinds(filename, sheets)
    return sheets


def _worksheet_records(filename: str, worksheet, budget: ReadBudget) -> list[list[str]]:
    """The sheet's cells as text, each row counted against the limits as it is read. openpyxl parses a
    read-only sheet row by row while we iterate, so a damaged cell (a shared-string index out of range,
    text in a number cell) raises here, in the row after the last one read.

    The sheet's own dimension is ignored (reset_dimensions): a sheet claiming A1:XFD1048576 would
    otherwise be padded to that size row after row."""
    records: list[list[str]] = []
    worksheet.reset_dimensions()
    rows = worksheet.iter_rows(values_only=True)
    while True:
        try:
            row = next(rows, None)
        except Exception as exc:  # noqa: BLE001 - openpyxl raises IndexError, ValueError, KeyError... for bad cells
            message = (
                "a cell of this row cannot be read (the file is damaged or was edited by hand); "
                "open it in a spreadsheet program and save it again"
            )
            issue = ImportIssue(filename, message, sheet=worksheet.title, row=len(records) + 1)
            raise ImportFileError([issue]) from exc
        if row is None:
            return records
        cells = [cell_text(c) for c in _trimmed(row)]
        budget.row(cells, sheet=worksheet.title, number=len(records) + 1)
        records.append(cells)


def _xlsx_sheet_for_kind(filename: str, kind: str, named: dict, non_empty: dict) -> Sheet:
    for title, records in named.items():
        if title.strip().lower() == kind:
            return _sheet_from_records(filename, title, records, kind)
    if not named and len(non_empty) == 1:
        title, records = next(iter(non_empty.items()))
        return _sheet_from_records(filename, title, records, kind)
    raise ImportFileError([ImportIssue(filename, f'no sheet named "{kind}"')])


def _refuse_repeated_kinds(filename: str, sheets: list[Sheet]) -> None:
    seen: dict[str, str] = {}
    for sheet in sheets:
        if sheet.kind in seen:
            message = f'holds {sheet.kind} like sheet "{seen[sheet.kind]}"; name sheets {", ".join(KINDS)}'
            raise ImportFileError([sheet.issue(message)])
        seen[sheet.kind] = sheet.name


def _sheet_from_records(filename: str, sheet_name: str, records: list[list[str]], kind: str | None) -> Sheet:
    header = [name.strip().lower() for name in (records[0] if records else [])]
    while header and not header[-1]:
        header.pop()
    if not header:
        where = ImportIssue(filename, "row 1 must be the header row (column names)", sheet=sheet_name, row=1)
        raise ImportFileError([where])
    detected = kind or kind_from_header(header)
    if detected is None:
        message = (
            "cannot tell what the file holds from its header row; expected the columns of one of "
            f"{', '.join(KINDS)} (or give the kind)"
        )
        raise ImportFileError([ImportIssue(filename, message, sheet=sheet_name, row=HEADER_ROW)])
    sheet = Sheet(kind=detected, file=filename, name=sheet_name, header=header)
    for number, record in enumerate(records[1:], start=HEADER_ROW + 1):
        if not any(record):
            continue
        values = {name: (record[i] if i < len(record) else "") for i, name in enumerate(header) if name}
        sheet.rows.append(Row(number=number, values=values))
    return sheet


def _header_issues(sheet: Sheet) -> list[ImportIssue]:
    known = COLUMNS[sheet.kind]
    issues = []
    for name in sorted({n for n in sheet.header if n and sheet.header.count(n) > 1}):
        issues.append(sheet.issue(f'column "{name}" appears more than once', row=HEADER_ROW, column=name))
    for name in [n for n in sheet.header if n and n not in known]:
        message = f'unknown column "{name}" for {sheet.kind}; expected {", ".join(known)}'
        issues.append(sheet.issue(message, row=HEADER_ROW))
    if "" in sheet.header:
        position = sheet.header.index("") + 1
        issues.append(sheet.issue(f"column {position} has no name in the header row", row=HEADER_ROW))
    for name in REQUIRED[sheet.kind]:
        if name not in sheet.header:
            issues.append(sheet.issue(f'missing required column "{name}"', row=HEADER_ROW, column=name))
    return issues
