"""Checks an XLSX before openpyxl reads it. Pure Python: no Django.

An XLSX is a zip of XML parts. A few kilobytes can unpack to gigabytes (a decompression bomb), hold
thousands of parts, or describe a sheet of a million rows in a few megabytes of XML, and openpyxl would
unpack and parse whatever it is given. So, in this order, each check reading no more than the one before
let through:

1. the zip's end record (the last bytes of the file): how many parts, and how large their directory is;
2. the zip directory (zipfile): the declared unpacked size of every part and of all together, how many
   times each part is compressed, and no archive inside the archive. zipfile stops reading a part at its
   declared size, so a part cannot unpack to more than the directory says;
3. the sheets' XML, streamed through expat with a constant memory: rows, cells, columns, and no DTD or
   entity declarations (which no spreadsheet program writes).

Each refusal is a LimitExceeded naming the sheet (or the part) and the limit; a file that is not a zip is
NotAWorkbook.
"""

from __future__ import annotations

import posixpath
import struct
import zipfile
from dataclasses import dataclass
from typing import BinaryIO
from xml.etree import ElementTree
from xml.parsers import expat

from .limits import RATIO_FLOOR_BYTES, XLSX_COLUMNS, ImportLimits, LimitExceeded, size_text

END_RECORD = struct.Struct("<4s4H2LH")
END_RECORD_SIGNATURE = b"PK\x05\x06"
ZIP64_LOCATOR = struct.Struct("<4sLQL")
ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
ZIP64_END_RECORD = struct.Struct("<4sQ2H2L4Q")
ZIP64_END_RECORD_SIGNATURE = b"PK\x06\x06"
# A directory entry is 46 bytes and its name; the names in a workbook are short. A directory larger than
# this per permitted part holds more parts than its end record admits.
DIRECTORY_BYTES_PER_MEMBER = 1024

# How archives and compressed streams begin (tar's mark sits at offset 257).
ARCHIVE_MAGIC = (
    b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c",
    b"Rar!\x1a\x07", b"\x28\xb5\x2f\xfd",
)
ARCHIVE_SUFFIXES = (
    ".zip", ".xlsx", ".xlsm", ".xlsb", ".xltx", ".docx", ".docm", ".pptx", ".jar", ".gz", ".tgz", ".bz2",
    ".xz", ".7z", ".rar", ".tar", ".zst",
)
PEEK_BYTES = 264

SPREADSHEET_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELATIONSHIPS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
OFFICE_RELATIONSHIPS_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
WORKBOOK = "xl/workbook.xml"
SHARED_STRINGS = "xl/sharedStrings.xml"
SHEETS_FOLDER = "xl/worksheets/"
XML_SUFFIXES = (".xml", ".rels", ".vml")
SCAN_CHUNK = 64 * 1024


class NotAWorkbook(Exception):
    """The file is not a zip, or a part of it cannot be read."""


@dataclass
class Part:
    """A part of the workbook and what it is to a reader: a sheet (with its title when the workbook names
    it), the shared strings, or any other part."""

    info: zipfile.ZipInfo
    is_sheet: bool = False
    title: str = ""
    is_shared_strings: bool = False

    @property
    def is_other_xml(self) -> bool:
        """An XML part openpyxl parses whole (styles, theme, workbook, relationships)."""
        return not (self.is_sheet or self.is_shared_strings) and self.info.filename.lower().endswith(XML_SUFFIXES)

    def describe(self) -> str:
        """How a message names the part: nothing for a titled sheet (the issue names the sheet)."""
        if self.title:
            return ""
        if self.is_shared_strings:
            return f"its shared strings ({self.info.filename}) "
        return f"the part {self.info.filename} "


def check_xlsx(source: BinaryIO, limits: ImportLimits) -> None:
    """Refuse (LimitExceeded) a workbook over the limits, before openpyxl reads it; NotAWorkbook when it
    is not a zip. Leaves the source at its start."""
    _check_end_record(source, limits)
    source.seek(0)
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise NotAWorkbook(str(exc)) from exc
    try:
        infos = archive.infolist()
        if len(infos) > limits.max_members:
            raise LimitExceeded(f"holds {len(infos):,} files inside; the limit is {limits.max_members:,}")
        parts = _parts(archive, infos)
        _check_sizes(parts, limits)
        for part in parts:
            _check_content(archive, part)
        _scan_sheets(archive, parts, limits)
    finally:
        archive.close()
        source.seek(0)


def _check_end_record(source: BinaryIO, limits: ImportLimits) -> None:
    """How many parts the zip holds, from its end record, before zipfile reads the whole directory."""
    source.seek(0, 2)
    size = source.tell()
    tail_size = min(size, END_RECORD.size + 0xFFFF)
    source.seek(size - tail_size)
    tail = source.read(tail_size)
    at = tail.rfind(END_RECORD_SIGNATURE)
    if at < 0 or len(tail) - at < END_RECORD.size:
        raise NotAWorkbook("no zip end record")
    record = END_RECORD.unpack(tail[at:at + END_RECORD.size])
    members, directory_size = record[4], record[5]
    if members == 0xFFFF or directory_size == 0xFFFFFFFF:  # a zip64 end record says how many
        locator_at = at - ZIP64_LOCATOR.size
        if locator_at < 0:
            raise NotAWorkbook("no zip64 locator")
        locator = ZIP64_LOCATOR.unpack(tail[locator_at:at])
        if locator[0] != ZIP64_LOCATOR_SIGNATURE or locator[2] > size - ZIP64_END_RECORD.size:
            raise NotAWorkbook("bad zip64 locator")
        source.seek(locator[2])
        record64 = ZIP64_END_RECORD.unpack(source.read(ZIP64_END_RECORD.size))
        if record64[0] != ZIP64_END_RECORD_SIGNATURE:
            raise NotAWorkbook("bad zip64 end record")
        members, directory_size = record64[7], record64[8]
    if members > limits.max_members or directory_size > limits.max_members * DIRECTORY_BYTES_PER_MEMBER:
        if members > limits.max_members:
            raise LimitExceeded(f"holds {members:,} files inside; the limit is {limits.max_members:,}")
        raise LimitExceeded(f"holds more than {limits.max_members:,} files inside (its zip directory is "
                            f"{size_text(directory_size)}); the limit is {limits.max_members:,}")


def _parts(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> list[Part]:
    """Every part, the sheets with their titles. The titles come from the workbook's small XML parts,
    read only when their declared size is small."""
    titles = _sheet_titles(archive)
    return [
        Part(
            info, title=titles.get(info.filename, ""), is_shared_strings=info.filename == SHARED_STRINGS,
            is_sheet=info.filename in titles or (
                info.filename.startswith(SHEETS_FOLDER) and info.filename.endswith(".xml")
            ),
        )
        for info in infos
    ]


def _sheet_titles(archive: zipfile.ZipFile) -> dict[str, str]:
    """{part name: sheet title} from xl/workbook.xml and its relationships; {} when they are missing,
    too large to be a workbook's or not readable (openpyxl then says what is wrong)."""
    rels_name = "xl/_rels/workbook.xml.rels"
    try:
        infos = [archive.getinfo(WORKBOOK), archive.getinfo(rels_name)]
        if any(info.file_size > RATIO_FLOOR_BYTES for info in infos):
            return {}
        workbook = _parse_small_xml(archive.read(WORKBOOK))
        rels = _parse_small_xml(archive.read(rels_name))
    except (KeyError, zipfile.BadZipFile, OSError, ValueError, RuntimeError, NotImplementedError, NotAWorkbook):
        return {}
    targets = {}
    for rel in rels.iter(f"{{{RELATIONSHIPS_NS}}}Relationship"):
        target = rel.get("Target", "")
        path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
        targets[rel.get("Id")] = path
    titles = {}
    for sheet in workbook.iter(f"{{{SPREADSHEET_NS}}}sheet"):
        path = targets.get(sheet.get(f"{{{OFFICE_RELATIONSHIPS_NS}}}id"))
        if path:
            titles[path] = sheet.get("name", "")
    return titles


def _parse_small_xml(data: bytes) -> ElementTree.Element:
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise NotAWorkbook("DTD in a workbook part")
    try:
        return ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise NotAWorkbook(str(exc)) from exc


def _check_sizes(parts: list[Part], limits: ImportLimits) -> None:
    """The declared sizes: each part, all together, and how many times each part is compressed."""
    total = 0
    for part in parts:
        info = part.info
        limit = limits.max_part_bytes if part.is_other_xml else limits.max_sheet_bytes
        if info.file_size > limit:
            raise LimitExceeded(
                f"{part.describe()}unpacks to {size_text(info.file_size)}; the limit is {size_text(limit)}",
                sheet=part.title,
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FLOOR_BYTES and ratio > limits.max_compression_ratio:
            raise LimitExceeded(
                f"{part.describe()}unpacks to {size_text(info.file_size)} from {size_text(info.compress_size)} "
                f"({ratio:,.0f} times), as a decompression bomb does; the limit is "
                f"{limits.max_compression_ratio:,.0f} times",
                sheet=part.title,
            )
        total += info.file_size
    if total > limits.max_unpacked_bytes:
        raise LimitExceeded(
            f"unpacks to {size_text(total)} in all; the limit is {size_text(limits.max_unpacked_bytes)}"
        )


def _check_content(archive: zipfile.ZipFile, part: Part) -> None:
    """No archive inside the archive (by name or by its first bytes), and no part openpyxl cannot open."""
    name = part.info.filename
    if name.lower().endswith(ARCHIVE_SUFFIXES):
        raise LimitExceeded(f"holds another archive inside ({name}); an inventory workbook holds none")
    if part.info.is_dir() or part.info.file_size == 0:
        return
    try:
        with archive.open(part.info) as stream:
            head = stream.read(PEEK_BYTES)
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
        raise NotAWorkbook(f"{name}: {exc}") from exc  # encrypted, an unknown compression, damaged
    if head.startswith(ARCHIVE_MAGIC) or head[257:262] == b"ustar":
        raise LimitExceeded(f"holds another archive inside ({name}); an inventory workbook holds none")


class _SheetScan:
    """Counts one sheet's rows and cells as expat streams its XML: constant memory, whatever its size.
    Called for every element, so it does as little as it can: a cell's column is only compared with the
    limit when the cell holds a value, by its letters first ("C" < "AX")."""

    def __init__(self, part: Part, limits: ImportLimits, rows_before: int, cells_before: int):
        self.part, self.limits = part, limits
        self.rows_before, self.cells = rows_before, cells_before
        self.row = 0  # the row being read, as numbered in the sheet
        self.cells_in_row = 0
        self.reference = ""  # the last cell reference given in this row ("AB12")
        self.after_reference = 0  # cells since that reference (cells may leave theirs out)
        self.limit_letters = _column_letters(limits.max_columns)
        self.tags: dict[str, str] = {}  # element name (with its prefix, if any) -> what it is to us

    def refuse(self, message: str, row: int | None = None) -> None:
        raise LimitExceeded(message, sheet=self.part.title, row=row)

    def start(self, name: str, attributes: dict) -> None:
        tag = self.tags.get(name)
        if tag is None:
            tag = self.tags[name] = _TAGS.get(name.rpartition(":")[2], "")
        if tag == "c":
            self.start_cell(attributes.get("r"))
        elif tag == "value":
            self.check_column()
        elif tag == "row":
            self.start_row(attributes.get("r"))

    def start_row(self, number: str | None) -> None:
        try:
            self.row = int(float(number)) if number else self.row + 1
        except ValueError:
            self.row += 1  # openpyxl says what is wrong with it
        self.cells_in_row = 0
        self.reference, self.after_reference = "", 0
        if self.rows_before + self.row > self.limits.max_rows:
            rows = self.limits.max_rows
            self.refuse(f"more than {rows:,} rows in the file (all sheets together, blank rows included); "
                        f"the limit is {rows:,}")

    def start_cell(self, reference: str | None) -> None:
        self.cells += 1
        self.cells_in_row += 1
        if reference:
            self.reference, self.after_reference = reference, 0
        else:
            self.after_reference += 1
        if self.cells_in_row > XLSX_COLUMNS:
            self.refuse(f"more than {XLSX_COLUMNS:,} cells in one row, more than a sheet has", row=self.row)
        if self.cells > self.limits.max_cells:
            cells = self.limits.max_cells
            self.refuse(f"more than {cells:,} cells in the file (all sheets together); the limit is {cells:,}",
                        row=self.row)

    def check_column(self) -> None:
        """The cell being read holds a value: its column must be within the limit."""
        if self.reference and not self.after_reference:
            letters = self.reference.rstrip("0123456789")
            limit = self.limit_letters
            if len(letters) < len(limit) or (len(letters) == len(limit) and letters <= limit):
                return
        column = _column_number(self.reference) + self.after_reference
        if column > self.limits.max_columns:
            self.refuse(f"a value in column {column:,}; the limit is {self.limits.max_columns:,} columns",
                        row=self.row)


# The elements the scan counts, by local name: a row, a cell, and what gives a cell its value.
_TAGS = {"row": "row", "c": "c", "v": "value", "is": "value", "f": "value"}


def _column_number(reference: str) -> int:
    """The column of a cell reference: "C7" -> 3, "AB12" -> 28; 0 for none."""
    number = 0
    for letter in reference.rstrip("0123456789$").upper():
        if not "A" <= letter <= "Z":
            return 0  # not a reference: openpyxl says what is wrong with it
        number = number * 26 + ord(letter) - 64
    return number


def _column_letters(number: int) -> str:
    """The letters of a column: 3 -> "C", 50 -> "AX"."""
    letters = ""
    while number > 0:
        number, remainder = divmod(number - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


def _refuse_declarations(*args) -> None:
    raise NotAWorkbook("a DTD or an entity declaration in a sheet")


def _scan_sheets(archive: zipfile.ZipFile, parts: list[Part], limits: ImportLimits) -> None:
    """Stream every sheet's XML (and count the shared strings), stopping at the first limit met."""
    rows = cells = 0
    for part in parts:
        if part.is_shared_strings:
            _scan_shared_strings(archive, part, limits)
        if not part.is_sheet:
            continue
        scan = _SheetScan(part, limits, rows, cells)
        _stream(archive, part, scan.start)
        rows += scan.row
        cells = scan.cells


def _scan_shared_strings(archive: zipfile.ZipFile, part: Part, limits: ImportLimits) -> None:
    """A string nobody reads still costs memory: no more of them than the cells a file may hold."""
    count = 0

    def start(name: str, attributes: dict) -> None:
        nonlocal count
        if name.rpartition(":")[2] == "si":
            count += 1
            if count > limits.max_cells:
                raise LimitExceeded(f"{part.describe()}holds more than {limits.max_cells:,} strings; the limit "
                                    f"is {limits.max_cells:,}, the cells a file may hold")

    _stream(archive, part, start)


def _stream(archive: zipfile.ZipFile, part: Part, start) -> None:
    """Feed the part to expat a chunk at a time, `start` called for each element (by its name with any
    namespace prefix, as written)."""
    parser = expat.ParserCreate()
    parser.StartElementHandler = start
    parser.StartDoctypeDeclHandler = _refuse_declarations
    parser.EntityDeclHandler = _refuse_declarations
    try:
        with archive.open(part.info) as stream:
            while chunk := stream.read(SCAN_CHUNK):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise NotAWorkbook(f"{part.info.filename}: {exc}") from exc
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise NotAWorkbook(f"{part.info.filename}: {exc}") from exc
