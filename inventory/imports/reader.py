"""Reads an inventory file (CSV or XLSX) into sheets of rows keyed by column name. Pure Python: no
Django, no database; what the rows mean is checked later (inventory.imports.validation).

Row numbers are the ones a spreadsheet shows: the header is row 1, the first data row is row 2, and
blank rows are skipped without renumbering what follows.

Text cells lose the apostrophe our exports put before formula-leading text (core.spreadsheets.csv_safe),
and only that one, so an exported file reads back exactly as it was written.
"""

from __future__ import annotations

import csv
import datetime
import io
from dataclasses import dataclass, field
from pathlib import PurePath

from core.spreadsheets import csv_unsafe

from .columns import COLUMNS, KINDS, REQUIRED, kind_from_header

HEADER_ROW = 1


@dataclass(frozen=True)
class ImportIssue:
    """One problem with an import, placed as precisely as we can: file, sheet, row, column."""

    file: str
    message: str
    sheet: str = ""
    row: int | None = None
    column: str = ""

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
        return {
            "file": self.file, "sheet": self.sheet, "row": self.row, "column": self.column,
            "message": self.message, "text": str(self),
        }


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


def read_inventory_file(filename: str, data: bytes, kind: str | None = None) -> list[Sheet]:
    """The file's sheets in apply order (racks, devices, nics, optics). Raises ImportFileError."""
    if kind and kind not in KINDS:
        message = f'unknown kind "{kind}"; use one of {", ".join(KINDS)}'
        raise ImportFileError([ImportIssue(filename, message)])
    suffix = PurePath(filename).suffix.lower()
    if suffix == ".csv":
        sheets = [_read_csv(filename, data, kind)]
    elif suffix == ".xlsx":
        sheets = _read_xlsx(filename, data, kind)
    else:
        raise ImportFileError([ImportIssue(filename, "not a CSV or XLSX file (use a .csv or .xlsx file)")])
    issues = [issue for sheet in sheets for issue in _header_issues(sheet)]
    if issues:
        raise ImportFileError(issues)
    return sorted(sheets, key=lambda sheet: KINDS.index(sheet.kind))


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


def _read_csv(filename: str, data: bytes, kind: str | None) -> Sheet:
    if b"\x00" in data:
        raise ImportFileError([ImportIssue(filename, "not a CSV file: it holds binary data")])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        message = "not a UTF-8 text CSV file; save it as CSV UTF-8"
        raise ImportFileError([ImportIssue(filename, message)]) from exc
    first_line = text.split("\n", 1)[0]
    # Spreadsheets in some locales save CSV with semicolons; accept both.
    delimiter = ";" if ";" in first_line and "," not in first_line else ","
    try:
        reader = csv.reader(io.StringIO(text), delimiter=delimiter)
        records = [[cell_text(cell) for cell in record] for record in reader]
    except csv.Error as exc:
        raise ImportFileError([ImportIssue(filename, f"not a readable CSV file: {exc}")]) from exc
    if not any(any(record) for record in records):
        raise ImportFileError([ImportIssue(filename, "the file is empty")])
    return _sheet_from_records(filename, "", records, kind)


def _read_xlsx(filename: str, data: bytes, kind: str | None) -> list[Sheet]:
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many types for a file that is not a workbook
        raise ImportFileError([ImportIssue(filename, "not a readable XLSX workbook")]) from exc
    try:
        contents = {worksheet.title: _worksheet_records(filename, worksheet) for worksheet in workbook.worksheets}
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


def _worksheet_records(filename: str, worksheet) -> list[list[str]]:
    """The sheet's cells as text. openpyxl parses a read-only sheet row by row while we iterate, so a
    damaged cell (a shared-string index out of range, text in a number cell) raises here, in the row
    after the last one read."""
    records: list[list[str]] = []
    try:
        for row in worksheet.iter_rows(values_only=True):
            records.append([cell_text(c) for c in row])
    except Exception as exc:  # noqa: BLE001 - openpyxl raises IndexError, ValueError, KeyError... for bad cells
        message = (
            "a cell of this row cannot be read (the file is damaged or was edited by hand); "
            "open it in a spreadsheet program and save it again"
        )
        issue = ImportIssue(filename, message, sheet=worksheet.title, row=len(records) + 1)
        raise ImportFileError([issue]) from exc
    return records


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
