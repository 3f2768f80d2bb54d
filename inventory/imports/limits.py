"""What an import may unpack and read. Pure Python: no Django; the services read the overrides from the
settings (ImportLimits.from_settings(django.conf.settings)), whose names are the constants' own.

A file over any limit is refused as a whole with one error naming the file, the sheet and the limit; the
checks run before anything is unpacked (the file's size, an XLSX's zip directory) and again while it is
read (rows, columns, cells, characters), so a refusal costs bounded time and memory whatever the file
claims. Row errors are counted past IMPORT_MAX_ERRORS but not kept.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

MiB = 1024 * 1024

# The file as uploaded (the upload form refuses a larger one before storing it).
IMPORT_MAX_FILE_BYTES = 20 * MiB
# Everything an XLSX unpacks to, all its parts together (from its zip directory, before unpacking); and
# the text an import reads out of cells, any format.
IMPORT_MAX_UNPACKED_BYTES = 50 * MiB
# One sheet (or the shared strings) of an XLSX, unpacked. A 50,000-row devices sheet is about 28 MB.
IMPORT_MAX_SHEET_BYTES = 40 * MiB
# Any other XML part of an XLSX (styles, theme, workbook, relationships), unpacked: openpyxl builds
# objects for all of them, a style costing far more than a cell. Real ones are a few kilobytes; Excel's
# worst "style bloat" a few megabytes. (Binary parts such as images are held to the sheet limit.)
IMPORT_MAX_PART_BYTES = 2 * MiB
# How many times smaller than its unpacked size a part over 1 MiB may be packed. Real sheets pack 10 to
# 20 times; a decompression bomb hundreds of times.
IMPORT_MAX_COMPRESSION_RATIO = 100
# Files inside an XLSX (a workbook of four sheets holds about fifteen).
IMPORT_MAX_MEMBERS = 100
# Rows read, all sheets of the file together, blank rows included (a spreadsheet's row numbers).
IMPORT_MAX_ROWS = 50_000
# Columns of one row, up to its last non-blank cell (the widest kind has 10).
IMPORT_MAX_COLUMNS = 50
# Cells read, all sheets together.
IMPORT_MAX_CELLS = 1_000_000
# Characters in one cell (a CSV field); the longest value a column takes is a few hundred.
IMPORT_MAX_CELL_CHARS = 10_000
# Errors kept on a job (the last one says how many more there were).
IMPORT_MAX_ERRORS = 200

# Parts smaller than this are not held to the compression ratio: a small part cannot hurt, and a tiny
# XML file of repeated tags packs well.
RATIO_FLOOR_BYTES = 1 * MiB
# The most cell elements a row of an XLSX may hold, blank or not: the columns a sheet has (A to XFD).
XLSX_COLUMNS = 16_384


@dataclass(frozen=True)
class ImportLimits:
    max_file_bytes: int = IMPORT_MAX_FILE_BYTES
    max_unpacked_bytes: int = IMPORT_MAX_UNPACKED_BYTES
    max_sheet_bytes: int = IMPORT_MAX_SHEET_BYTES
    max_part_bytes: int = IMPORT_MAX_PART_BYTES
    max_compression_ratio: float = IMPORT_MAX_COMPRESSION_RATIO
    max_members: int = IMPORT_MAX_MEMBERS
    max_rows: int = IMPORT_MAX_ROWS
    max_columns: int = IMPORT_MAX_COLUMNS
    max_cells: int = IMPORT_MAX_CELLS
    max_cell_chars: int = IMPORT_MAX_CELL_CHARS
    max_errors: int = IMPORT_MAX_ERRORS

    @classmethod
    def from_settings(cls, settings) -> ImportLimits:
        """The limits with the overrides a settings object gives (IMPORT_MAX_ROWS for max_rows...)."""
        return cls(**{
            f.name: getattr(settings, f"IMPORT_{f.name.upper()}", f.default) for f in fields(cls)
        })

    @property
    def max_line_chars(self) -> int:
        """The longest line of a CSV: every column at its longest, with quotes and separators."""
        return self.max_columns * (self.max_cell_chars + 3)


class LimitExceeded(Exception):
    """A file over one of the limits: the message names the limit, the fields say where it was met."""

    def __init__(self, message: str, *, sheet: str = "", row: int | None = None):
        super().__init__(message)
        self.message, self.sheet, self.row = message, sheet, row


def size_text(size: float) -> str:
    """A size as people read it: '26 MB', '4.5 MB', '90 KB' (binary units, like the limits)."""
    if size >= MiB:
        value, unit = size / MiB, "MB"
    else:
        value, unit = size / 1024, "KB"
    text = f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"
    return f"{text} {unit}"


class ReadBudget:
    """Counts what a file has read so far, all its sheets together, and refuses the row that goes over
    a limit (LimitExceeded). The reader calls row() for every row it reads, blank ones included."""

    def __init__(self, limits: ImportLimits):
        self.limits = limits
        self.rows = 0
        self.cells = 0
        self.chars = 0

    def row(self, cells: list[str], *, sheet: str = "", number: int | None = None) -> None:
        limits = self.limits
        self.rows += 1
        if self.rows > limits.max_rows:
            raise LimitExceeded(f"more than {limits.max_rows:,} rows in the file (all sheets together); "
                                f"the limit is {limits.max_rows:,}", sheet=sheet)
        if len(cells) > limits.max_columns:
            raise LimitExceeded(f"{len(cells):,} columns; the limit is {limits.max_columns:,}",
                                sheet=sheet, row=number)
        self.cells += len(cells)
        if self.cells > limits.max_cells:
            raise LimitExceeded(f"more than {limits.max_cells:,} cells in the file (all sheets together); "
                                f"the limit is {limits.max_cells:,}", sheet=sheet, row=number)
        for position, cell in enumerate(cells, start=1):
            if len(cell) > limits.max_cell_chars:
                raise LimitExceeded(self.cell_too_long(position, len(cell)), sheet=sheet, row=number)
            self.chars += len(cell)
        if self.chars > limits.max_unpacked_bytes:
            raise LimitExceeded(f"more than {size_text(limits.max_unpacked_bytes)} of text in the file; "
                                f"the limit is {size_text(limits.max_unpacked_bytes)}", sheet=sheet, row=number)

    def cell_too_long(self, position: int | None = None, length: int | None = None) -> str:
        where = f"the cell in column {position}" if position else "a cell"
        size = f"{length:,} characters" if length else f"more than {self.limits.max_cell_chars:,} characters"
        return f"{where} holds {size}; the limit is {self.limits.max_cell_chars:,}"
