"""The acceptance report as an Excel workbook, written from its frozen snapshot (projects.reports) by the one
Excel writer (core.spreadsheets: write-only, formula guard, fills).

    render_xlsx(source, target, edition="full", signature=None, on_progress=None)

The workbook: a cover (the project, the customer and the integrator in English and Chinese, the site, the
cluster's figures, the dates, the report's version and id, and the signature of a signed copy), the
contents (every sheet with what it holds and its row counts, linked), then each section in snapshot order.
A section's text, figures and chart data go on a sheet named after the section; each of its tables gets a
sheet of its own, "<Section> - <Table>", with its header in row 1, frozen and filtered, so a reader can
sort and filter any table in place. Values keep their type: numbers with the format of their column's
kind, dates and times as Excel dates in UTC (the header says so), a BER as the number read (shown in
scientific notation; below 1e-20 it means no errors, as the header's comment says), text as text whatever
it starts with. A warned or failed row is coloured whole, a passed one in its verdict cell.

Size: the 1,024-server report has about 90,000 table rows; the snapshot is read once, each row written as
it is read (openpyxl's write-only mode), so memory holds one row per sheet. Output is byte-identical for
the same snapshot and arguments: the document's dates are the report's (generation, signature) and the zip
entries carry the generation time.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import IO, Any

from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.utils import get_column_letter

from core.spreadsheets import MAX_COLUMNS, MAX_ROWS, Column, Sheet, XlsxWriter, cut, naive_utc
from projects.reports import BER_FLOOR, Chart, Facts, Paragraph, SectionRecord, TableRecord, read_snapshot

EDITIONS = ("full", "summary")
SIGNOFF_KEY = "signoff"
PROGRESS_EVERY = 1000  # table rows between two on_progress calls

# How each column kind is shown: an Excel number format, and the unit its header gets when the column
# names none (a percent column's values are percent points: 12.5 is 12.5 %, never 0.125).
KIND_FORMATS = {
    "int": "#,##0", "float": "0.00", "gbps": "0.0", "ber": "0.00E+00", "celsius": "0.0", "volts": "0.00",
    "dbm": "0.00", "percent": "0.0", "bytes": "#,##0", "seconds": "0.00", "date": "yyyy-mm-dd",
    "datetime": "yyyy-mm-dd hh:mm",
}
KIND_UNITS = {"gbps": "Gb/s", "celsius": "°C", "volts": "V", "dbm": "dBm", "percent": "%", "bytes": "bytes",
              "seconds": "s", "datetime": "UTC"}
KIND_COMMENTS = {
    "ber": f"Bit error rate as the tool read it. Below {BER_FLOOR:.0e} means no errors were counted (mlxlink "
           "prints 1.5e-254 then); the figure is kept so that a filter can use it.",
    "datetime": "Date and time in UTC.",
    "verdict": "pass, warn, fail or error. A row that warned, failed or erred is coloured whole.",
}
ROW_VERDICTS = ("warn", "fail", "error")  # colour the whole row; "pass" colours its verdict cell only
DATE_FORMAT, DATETIME_FORMAT = KIND_FORMATS["date"], KIND_FORMATS["datetime"]
EARLIEST_EXCEL_YEAR = 1900  # Excel cannot show a date before 1900: such a value stays text

SHEET_NAME_LIMIT = 31
TABLE_NAME_SHARE = 20  # characters of a table's sheet name kept for the table when the name must be cut
TEXT_WIDTH = 110  # characters per line of a paragraph on a section sheet (one line per row, no wrapping)
SECTION_WIDTHS = [34] + [14] * 25
COVER_WIDTHS = [28, 52, 40]
CONTENTS_COLUMNS = [Column("Section", 26), Column("Sheet", 36), Column("Holds", 34),
                    Column("Rows", 10, "#,##0"), Column("In this copy", 12, "#,##0"), Column("Note", 70)]
MAX_CHART_CELLS = 100_000  # chart data written per chart: a larger one is cut, with a note
MAX_CHART_DEPTH = 4
NATIVE_CHART_ROWS = (2, 500)  # an Excel chart is drawn next to chart data of that many rows
CHART_ROWS = 16  # rows an Excel chart (7.5 cm high) covers
CURVE_WORDS = ("curve", "line", "nccl", "soak", "series", "trend")


def render_xlsx(source: IO[bytes], target: IO[bytes], *, edition: str = "full", signature: dict | None = None,
                on_progress: Callable[[int], None] | None = None) -> None:
    """Write the report in the snapshot `source` (a binary file, read once) to `target` as an xlsx file.
    `edition` "summary" keeps each table's first `summary_rows` rows; `signature` (the signed copy) fills
    the signature block and marks every sheet's print header; `on_progress(done_rows)` is called as table
    rows are written, with the number written so far."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {', '.join(EDITIONS)}, not {edition!r}.")
    if signature is not None and not isinstance(signature, dict):
        raise TypeError("signature must be a dict or None.")
    source.seek(0)
    records = read_snapshot(source)
    workbook = _ReportWorkbook(records.meta, edition=edition, signature=signature, on_progress=on_progress)
    workbook.cover()
    for section in records.sections:
        workbook.section(section)
    workbook.contents()
    workbook.save(target)


# ---------------------------------------------------------------------------------------------------
# Values


def _part(meta: dict, name: str) -> dict:
    part = meta.get(name)
    return part if isinstance(part, dict) else {}


def excel_datetime(value):
    """ISO text as a naive UTC datetime Excel can hold; anything else (not ISO, before 1900) as it is."""
    if not isinstance(value, str):
        return value
    try:
        moment = naive_utc(datetime.fromisoformat(value))
    except ValueError:
        return value
    return moment if moment.year >= EARLIEST_EXCEL_YEAR else value


def excel_date(value):
    """ISO text (a date, or the date of a timestamp) as a date; anything else as it is."""
    if not isinstance(value, str):
        return value
    try:
        day = date.fromisoformat(value[:10])
    except ValueError:
        return value
    return day if day.year >= EARLIEST_EXCEL_YEAR else value


def text_lines(text: Any, width: int = TEXT_WIDTH) -> list[str]:
    """Text as lines of at most `width` characters (at spaces where it can), its own line breaks kept:
    one line per row reads well in any spreadsheet program, where a wrapped cell needs a row height."""
    lines = []
    for paragraph in str(text).splitlines() or [""]:
        lines.extend(textwrap.wrap(paragraph, width=width, break_on_hyphens=False) or [""])
    return lines


def table_sheet_name(section: str, table: str) -> str:
    """"<Section> - <Table>" in Excel's 31 characters. When too long, the table's name loses its qualifier
    first ("Ports, failures first": "Ports"), then keeps up to 20 characters and the section's is cut to
    the rest, at a word where it can ("Topology and cable… - Cable map")."""
    name = f"{section} - {table}"
    if len(name) <= SHEET_NAME_LIMIT:
        return name
    table = re.split(r",\s|\s\(|:\s", table, maxsplit=1)[0] or table
    name = f"{section} - {table}"
    if len(name) <= SHEET_NAME_LIMIT:
        return name
    table_part = shorten(table, TABLE_NAME_SHARE)
    return f"{shorten(section, SHEET_NAME_LIMIT - 3 - len(table_part))} - {table_part}"


def shorten(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, cut after a whole word where that keeps half of it, and
    ending with "…" when cut."""
    if len(text) <= limit:
        return text
    head = text[: max(limit - 1, 0)]
    if not text[len(head)].isspace():
        space = head.rfind(" ")
        if space >= limit // 2:
            head = head[:space]
    return head.rstrip(" ,;:-") + "…"


def header_of(column) -> str:
    """The column's header with its unit: the snapshot's, or the one its kind implies (times are UTC)."""
    unit = column.unit or KIND_UNITS.get(column.kind, "")
    if column.kind == "datetime" and column.unit and "UTC" not in column.unit:
        unit = f"{column.unit}, UTC"
    return f"{column.label} ({unit})" if unit else str(column.label)


# ---------------------------------------------------------------------------------------------------
# Chart data as small tables


@dataclass
class DataTable:
    """A piece of a chart's data laid out as rows: a key-value list, lists side by side, a matrix, or a
    list of records. `series`: the columns an Excel chart may plot against `category` (a column index, or
    None for plain 1, 2, 3...); no series: nothing to plot."""

    title: str
    header: list[str]
    rows: list[list]
    series: list[int] = field(default_factory=list)
    category: int | None = None
    left_out: int = 0


# Names for the columns of lists of lists the report's charts hold (histogram bins, threshold lines, curve
# points, fabric states); other matrices are written without a header.
MATRIX_HEADERS = {"bins": ("From", "To", "Count"), "thresholds": ("Value", "Level", "Label"),
                  "points": ("x", "y"), "states": ("State", "Label")}


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers(values: Iterable) -> bool:
    return all(_number(v) or v is None for v in values)


def _scalar_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(_scalar(v) for v in value)


def _as_cell(value):
    """A value of chart data as a cell's: scalars as they are, a list of scalars joined, the rest as JSON."""
    if _scalar(value):
        return value
    if isinstance(value, list) and all(_scalar(v) for v in value):
        return ", ".join("" if v is None else str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))[:2000]


def _path(path: str, key) -> str:
    return f"{path} › {key}" if path else str(key)


def _name_of(record: dict, index: int) -> str:
    """What a record is called in a column header or an "of" cell: its name, title or first text."""
    for key in ("name", "title", "label"):
        if isinstance(record.get(key), str):
            return record[key]
    return next((v for v in record.values() if isinstance(v, str)), str(index))


def chart_tables(data: Any) -> list[DataTable]:
    """The chart's data (plain JSON: numbers, labels, lists, records) as tables a reader can check the
    drawing against. Bounded: MAX_CHART_CELLS cells in all, nesting followed MAX_CHART_DEPTH deep."""
    tables: list[DataTable] = []
    if isinstance(data, dict):
        _dict_tables(data, "", tables, depth=0)
    elif isinstance(data, list):
        _dict_tables({"values": data}, "", tables, depth=0)
    elif data is not None:
        tables.append(DataTable("", [], [[_as_cell(data)]]))
    budget = MAX_CHART_CELLS
    for table in tables:
        width = max(len(table.header), max((len(row) for row in table.rows), default=0), 1)
        keep = max(budget // width, 0)
        if len(table.rows) > keep:
            table.left_out, table.rows = len(table.rows) - keep, table.rows[:keep]
        budget -= len(table.rows) * width
    return [table for table in tables if table.rows or table.left_out]


def _dict_tables(data: dict, path: str, tables: list[DataTable], *, depth: int) -> None:
    """A dict's scalars as one key-value table; its lists of scalars of one length side by side, with
    the lists of the records beside them that are as long (a series per record); lists of lists as
    matrices; lists of records as tables of records; nested dicts in turn."""
    scalars = [[str(key), _as_cell(value)] for key, value in data.items() if _scalar(value)]
    if scalars:
        tables.append(DataTable(path, [], scalars))
    columns = {str(key): value for key, value in data.items() if _scalar_list(value)}
    pivoted: set[tuple[str, str]] = set()  # (records key, field) written as series beside the lists
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            pivoted |= _series_columns(str(key), value, columns)
    _side_by_side(columns, path, tables)
    for key, value in data.items():
        key = str(key)
        if not isinstance(value, list) or not value or key in columns:
            continue
        if all(isinstance(row, list) for row in value):
            labels = next((v for k, v in columns.items() if len(v) == len(value) and k in data), None)
            tables.append(_matrix(_path(path, key), key, value, labels))
        elif all(isinstance(row, dict) for row in value):
            skip = {f for k, f in pivoted if k == key}
            _records(_path(path, key), value, tables, depth=depth, skip=skip)
        else:
            tables.append(DataTable(_path(path, key), [key], [[_as_cell(v)] for v in value]))
    if depth < MAX_CHART_DEPTH:
        for key, value in data.items():
            if isinstance(value, dict):
                _dict_tables(value, _path(path, key), tables, depth=depth + 1)


def _series_columns(key: str, records: list[dict], columns: dict[str, list]) -> set[tuple[str, str]]:
    """Lists of numbers in records as long as a list of the dict (counts per decade beside the decades)
    join the dict's lists as one column per record; the (records key, field) pairs taken."""
    lengths = {len(v) for v in columns.values()}
    taken = set()
    for index, record in enumerate(records, start=1):
        for field_name, value in record.items():
            if _scalar_list(value) and len(value) in lengths and _numbers(value):
                name = _name_of(record, index)
                header = name if field_name in ("counts", "values") else f"{name} {field_name}"
                while header in columns:
                    header += " "
                columns[header] = value
                taken.add((key, str(field_name)))
    return taken


def _side_by_side(columns: dict[str, list], path: str, tables: list[DataTable]) -> None:
    by_length: dict[int, list[str]] = {}
    for key, values in columns.items():
        by_length.setdefault(len(values), []).append(key)
    for length, keys in by_length.items():
        keys.sort(key=lambda k: _numbers(columns[k]))  # text (labels) first, else in the data's order
        rows = [[columns[key][index] for key in keys] for index in range(length)]
        category = 0 if len(keys) > 1 else None
        first = 1 if category == 0 else 0
        series = [i for i in range(first, len(keys)) if _numbers(columns[keys[i]])]
        tables.append(DataTable(path, keys, rows, series=series, category=category))


def _matrix(title: str, key: str, rows: list[list], labels: list | None) -> DataTable:
    """Rows of values: named columns where the key is known (bins: from, to, count), row and column
    labels where the dict has a list of labels as long (a heat map's nodes)."""
    width = min(max((len(row) for row in rows), default=0), MAX_COLUMNS - 1)
    known = MATRIX_HEADERS.get(key)
    if known is not None and width <= len(known):
        header = list(known[:width])
        series = [width - 1] if key == "bins" and width == 3 else []
        return DataTable(title, header, [[_as_cell(v) for v in row[:width]] for row in rows], series=series,
                         category=0 if series else None)
    if labels is not None and width <= len(labels):
        header = ["", *(str(label) for label in labels[:width])]
        return DataTable(title, header, [[labels[i], *(_as_cell(v) for v in row[:width])]
                                         for i, row in enumerate(rows)])
    return DataTable(title, [], [[_as_cell(v) for v in row[:width]] for row in rows])


def _records(title: str, records: list[dict], tables: list[DataTable], *, depth: int,
             skip: set[str] = frozenset()) -> None:
    """Records as rows under the union of their keys (less those written as series elsewhere). A key
    holding records or rows of values becomes a table of its own below, each row led by the record it
    belongs to; curve points the records share the x values of become one column per record."""
    keys: list[str] = []
    nested: list[str] = []
    for record in records:
        for key, value in record.items():
            key = str(key)
            if key in keys or key in nested or key in skip:
                continue
            deeper = (isinstance(value, list) and value and all(isinstance(v, (dict, list)) for v in value)
                      and depth < MAX_CHART_DEPTH)
            (nested if deeper else keys).append(key)
    if keys:
        tables.append(DataTable(title, keys, [[_as_cell(record.get(key)) for key in keys] for record in records]))
    for key in nested:
        owned = [(_name_of(record, i), record.get(key)) for i, record in enumerate(records, start=1)]
        owned = [(name, value) for name, value in owned if isinstance(value, list)]
        if all(all(isinstance(v, list) for v in value) for _, value in owned):
            tables.append(_curves(_path(title, key), key, owned))
        else:
            children = [{"of": name, **child} for name, value in owned for child in value if isinstance(child, dict)]
            _records(_path(title, key), children, tables, depth=depth + 1)


def _curves(title: str, key: str, owned: list[tuple[str, list[list]]]) -> DataTable:
    """Rows of values per record (curve points): one x column and a y column per record when they all have
    the same x values, else rows led by the record they belong to."""
    xs = [[point[0] if point else None for point in points] for _, points in owned]
    if xs and all(x == xs[0] for x in xs) and all(len(point) == 2 for _, points in owned for point in points):
        header = [MATRIX_HEADERS.get(key, ("x",))[0], *(name for name, _ in owned)]
        rows = [[x, *(points[i][1] for _, points in owned)] for i, x in enumerate(xs[0])]
        return DataTable(title, header, [[_as_cell(v) for v in row] for row in rows],
                         series=list(range(1, len(header))), category=0)
    width = max((len(point) for _, points in owned for point in points), default=0)
    names = MATRIX_HEADERS.get(key, ())
    header = ["Of", *(names[i] if i < len(names) else str(i + 1) for i in range(width))]
    return DataTable(title, header, [[name, *(_as_cell(v) for v in point)] for name, points in owned
                                     for point in points])


def _native_chart(kind: str, title: str, sheet: Sheet, table: DataTable, header_row: int) -> bool:
    """An Excel chart beside the table just written from `header_row` (its header), when the table has
    series to plot: bars for most kinds, lines for a curve. Whether one was drawn."""
    if not (table.series and table.header and NATIVE_CHART_ROWS[0] <= len(table.rows) <= NATIVE_CHART_ROWS[1]):
        return False
    chart = LineChart() if any(word in kind.lower() for word in CURVE_WORDS) else BarChart()
    chart.title = cut(title, 80) or None
    chart.height, chart.width = 7.5, 16
    last_row = header_row + len(table.rows)
    worksheet = sheet.worksheet
    for index in table.series[:10]:
        chart.add_data(Reference(worksheet, min_col=index + 1, min_row=header_row, max_row=last_row),
                       titles_from_data=True)
    if table.category is not None:
        chart.set_categories(Reference(worksheet, min_col=table.category + 1, min_row=header_row + 1,
                                       max_row=last_row))
    worksheet.add_chart(chart, f"{get_column_letter(min(len(table.header) + 2, MAX_COLUMNS))}{header_row}")
    return True


# ---------------------------------------------------------------------------------------------------
# The workbook


@dataclass
class _ContentsLine:
    section: str
    sheet: str
    holds: str
    rows: int | None = None
    shown: int | None = None
    note: str = ""


@dataclass
class _SectionSheets:
    """The sheets of the section being written: its own (made at its first block that is not a table)
    and its tables', in order."""

    record: SectionRecord
    own: Sheet | None = None
    lines: list[_ContentsLine] = field(default_factory=list)
    first_table_title: str | None = None


class _ReportWorkbook:
    """The workbook being written: the cover first, then the sections as the snapshot streams them, the
    contents last (placed second); the lines of the contents and the rows written so far."""

    def __init__(self, meta: dict, *, edition: str, signature: dict | None,
                 on_progress: Callable[[int], None] | None) -> None:
        self.meta = meta
        self.edition = edition
        self.signature = signature
        self.on_progress = on_progress
        self.project, self.report = _part(meta, "project"), _part(meta, "report")
        generated = excel_datetime(self.report.get("generated_at"))
        signed = excel_datetime((signature or {}).get("signed_at"))
        self.writer = XlsxWriter(
            created=generated if isinstance(generated, datetime) else datetime(2000, 1, 1),
            modified=signed if isinstance(signed, datetime) else None,
            title=f"Acceptance report: {self.project.get('name') or self.project.get('code') or ''}",
            creator=str(self.report.get("generated_by") or ""),
        )
        self.lines: list[_ContentsLine] = []
        self.done_rows = 0
        self._reported_rows = 0

    # Sheets ---------------------------------------------------------------------------------------

    def new_sheet(self, title: str, columns=(), *, widths=(), index: int | None = None) -> Sheet:
        sheet = self.writer.sheet(title, columns, freeze=bool(columns), widths=widths, index=index)
        sheet.print_marks(header=self.print_header(), footer="&A: page &P of &N")
        return sheet

    def print_header(self) -> str:
        if self.signature:
            return f"Signed {self.moment_text(self.signature.get('signed_at'))} by {self.signature.get('name', '')}"
        code = self.project.get("code") or ""
        return f"{code} acceptance report, version {self.report.get('version', '')}".strip()

    @staticmethod
    def moment_text(value) -> str:
        moment = excel_datetime(value)
        return f"{moment:%Y-%m-%d %H:%M} UTC" if isinstance(moment, datetime) else str(value or "")

    def save(self, target: IO[bytes]) -> None:
        self.writer.save(target)
        self.report_progress()

    # Cover ----------------------------------------------------------------------------------------

    def cover(self) -> None:
        sheet = self.new_sheet("Cover", widths=COVER_WIDTHS)
        project, integrator = self.project, _part(self.meta, "integrator")
        sheet.header(["Acceptance report"])
        if self.signature:
            sheet.append([sheet.cell(self.print_header(), bold=True, fill="pass")])
        sheet.blank()
        sheet.header(["", "English", "中文"])
        sheet.append(["Project", project.get("name"), project.get("name_zh")])
        sheet.append(["Customer", project.get("customer_name"), project.get("customer_name_zh")])
        sheet.append(["Integrator", integrator.get("name"), integrator.get("name_zh")])
        sheet.append(["Project code", project.get("code")])
        sheet.append(["Site", project.get("site")])
        sheet.append(["Status", project.get("status")])
        for label, key in (("Start date", "start_date"), ("Target date", "target_date")):
            sheet.append([label, self.date_cell(sheet, project.get(key), DATE_FORMAT)])
        sheet.blank()
        sheet.header(["Cluster"])
        cluster = _part(self.meta, "cluster")
        for label, key in (("Racks", "racks"), ("Servers", "servers"), ("GPUs", "gpus"), ("Switches", "switches"),
                           ("Cables", "cables"), ("Optics", "optics")):
            sheet.append([label, sheet.cell(cluster.get(key), number_format="#,##0")])
        sheet.blank()
        sheet.header(["Report"])
        sheet.append(["Version", self.report.get("version")])
        sheet.append(["Report id", self.report.get("id")])
        sheet.append(["Generated (UTC)", self.date_cell(sheet, self.report.get("generated_at"), DATETIME_FORMAT)])
        sheet.append(["Generated by", self.report.get("generated_by")])
        sheet.append(["Edition", "Summary: each table's first rows; the full edition has them all"
                      if self.edition == "summary" else "Full"])
        sheet.blank()
        self.signature_rows(sheet)

    def date_cell(self, sheet: Sheet, value, number_format: str):
        converted = (excel_date if number_format == DATE_FORMAT else excel_datetime)(value)
        if isinstance(converted, (date, datetime)):
            return sheet.cell(converted, number_format=number_format)
        return converted

    def signature_rows(self, sheet: Sheet) -> None:
        sheet.header(["Signature"])
        signature = self.signature
        if not signature:
            sheet.append(["Not signed", "This is the copy to sign; the signed copy shows the customer's signature "
                                        "here and on every printed page."])
            return
        sheet.append(["Signed by", signature.get("name")])
        sheet.append(["Title", signature.get("title")])
        for index, line in enumerate(text_lines(signature.get("statement") or "", 90)):
            sheet.append(["Statement" if index == 0 else None, line])
        sheet.append(["Signed (UTC)", self.date_cell(sheet, signature.get("signed_at"), DATETIME_FORMAT)])
        sheet.append(["Signed version", signature.get("version")])
        hashes = signature.get("original_sha256")
        hashes = hashes if isinstance(hashes, dict) else {}
        sheet.append(["Original PDF (SHA-256)", hashes.get("pdf")])
        sheet.append(["Original Excel (SHA-256)", hashes.get("xlsx")])
        self.decision_rows(sheet, signature)

    @staticmethod
    def decision_rows(sheet: Sheet, signature: dict) -> None:
        """The customer's decision under the signature: accepted, or accepted with exceptions with every open
        punch item and waiver the signature recorded, and their comments (nothing for a signature made before
        decisions were recorded)."""
        if not signature.get("decision"):
            return
        sheet.append(["Decision", signature.get("decision_label") or signature.get("decision")])
        for index, line in enumerate(text_lines(signature.get("comments") or "", 90)):
            sheet.append(["Comments" if index == 0 else None, line])
        exceptions = signature.get("exceptions") if isinstance(signature.get("exceptions"), dict) else {}
        items, waivers = exceptions.get("punch_items") or [], exceptions.get("waivers") or []
        internal = exceptions.get("internal_punch_items") or 0
        if not (items or waivers or internal):
            sheet.append(["Exceptions", "None: no punch item was open and no waiver recorded when it was signed."])
            return
        sheet.append(["Exceptions", f"{len(items)} open punch item(s) shown to the customer, {internal} internal "
                                    f"open punch item(s) (counted, not listed), {len(waivers)} waiver(s)"])
        for item in items:
            sheet.append([f"Punch item #{item.get('id')}", f"{item.get('title')} · "
                          f"{item.get('severity_label') or item.get('severity')} · "
                          f"{item.get('status_label') or item.get('status')}"
                          + (f" · {item['object']}" if item.get("object") else "")])
        for waiver in waivers:
            sheet.append([f"Waiver: {waiver.get('stage')}", f"{waiver.get('items')} · {waiver.get('reason')} · "
                                                             f"{waiver.get('recorded_by') or ''}"])

    # Sections -------------------------------------------------------------------------------------

    def section(self, record: SectionRecord) -> None:
        current = _SectionSheets(record)
        for block in record.blocks:
            if isinstance(block, TableRecord):
                self.table(current, block)
                continue
            sheet = self.own_sheet(current)
            if isinstance(block, Paragraph):
                for line in text_lines(block.text):
                    sheet.append([line])
                sheet.blank()
            elif isinstance(block, Facts):
                self.facts(sheet, block)
            elif isinstance(block, Chart):
                self.chart(sheet, block)
        if current.own is None and not current.lines:
            self.own_sheet(current).note("Nothing to report in this section.")
        if record.key == SIGNOFF_KEY:
            self.signature_rows(self.own_sheet(current))
        self.lines.extend(current.lines)

    def own_sheet(self, current: _SectionSheets) -> Sheet:
        """The section's own sheet, made at its first use and placed before the section's tables (a table
        may come first in the snapshot: its link is written now, at the top)."""
        if current.own is not None:
            return current.own
        title = str(current.record.title or current.record.key)
        index = None
        if current.first_table_title is not None:
            index = self.writer.workbook.sheetnames.index(current.first_table_title)
        sheet = current.own = self.new_sheet(title, widths=SECTION_WIDTHS, index=index)
        current.lines.insert(0, _ContentsLine(title, sheet.title, "Text, figures and chart data"))
        sheet.header([title])
        sheet.blank()
        for line in current.lines[1:]:
            self.table_link(sheet, line)
        return sheet

    def table_link(self, sheet: Sheet, line: _ContentsLine) -> None:
        rows = f"{line.rows:,} row{'' if line.rows == 1 else 's'}" if line.rows is not None else ""
        sheet.append([sheet.cell(f"Table: {line.holds}", link_to_sheet=line.sheet), f"Sheet {line.sheet}", rows])
        sheet.blank()

    def facts(self, sheet: Sheet, block: Facts) -> None:
        if block.title:
            sheet.header([block.title])
        for item in block.items:
            item = tuple(item) if isinstance(item, (list, tuple)) else (item,)
            sheet.append([item[0] if item else "", item[1] if len(item) > 1 else None])
        sheet.blank()

    def chart(self, sheet: Sheet, block: Chart) -> None:
        """The chart's title, caption and data, and an Excel chart of the first table it can plot."""
        sheet.header([block.title or str(block.kind)])
        for line in text_lines(block.caption) if block.caption else []:
            sheet.note(line)
        tables = chart_tables(block.data)
        if not tables:
            sheet.note("This chart holds no data.")
        drawn = False
        for table in tables:
            if table.title:
                sheet.note(table.title)
            header_row = sheet.position + 1
            if table.header:
                sheet.header(table.header)
            for row in table.rows:
                sheet.append(row)
            if table.left_out:
                sheet.note(f"{table.left_out:,} more rows of this chart's data are left out here.")
            if not drawn and _native_chart(str(block.kind), str(block.title), sheet, table, header_row):
                drawn = True
                for _ in range(max(CHART_ROWS - len(table.rows), 0)):  # room for the chart beside the table
                    sheet.blank()
            sheet.blank()

    # Tables ---------------------------------------------------------------------------------------

    def table(self, current: _SectionSheets, table: TableRecord) -> None:
        section_title = str(current.record.title or current.record.key)
        table_title = str(table.title or table.key)
        columns = table.columns[:MAX_COLUMNS]
        sheet = self.new_sheet(table_sheet_name(section_title, table_title), [
            Column(header_of(c), _width(c), KIND_FORMATS.get(c.kind), KIND_COMMENTS.get(c.kind, ""))
            for c in columns])
        if current.first_table_title is None:
            current.first_table_title = sheet.title
        row_count = _count(table.row_count)
        limit = _count(table.summary_rows) if self.edition == "summary" else row_count
        shown = self.table_rows(sheet, table, columns, min(limit, MAX_ROWS - 3))  # room for the note
        more = row_count - shown
        if more > 0:
            sheet.blank()
            where = "in the full edition" if self.edition == "summary" else "beyond what a sheet can hold"
            sheet.note(f"{more:,} more rows {where} ({row_count:,} in all).")
        line = _ContentsLine(section_title, sheet.title, table_title, row_count, shown, str(table.note or ""))
        current.lines.append(line)
        if current.own is not None:
            self.table_link(current.own, line)

    def table_rows(self, sheet: Sheet, table: TableRecord, columns, limit: int) -> int:
        """Write up to `limit` of the table's rows; the number written."""
        width = len(columns)
        converters = [(index, excel_date if c.kind == "date" else excel_datetime)
                      for index, c in enumerate(columns) if c.kind in ("date", "datetime")]
        keys = [c.key for c in columns]
        verdict_at = keys.index(table.verdict_column) if table.verdict_column in keys else None
        verdict_cells = [index for index, c in enumerate(columns) if c.kind == "verdict"]
        shown = 0
        for values in table.rows:
            if shown >= limit:
                break
            if not isinstance(values, list):  # a damaged snapshot: the row is its one value
                values = [values]
            row = [None if value == "" else value for value in values[:width]]
            for index, convert in converters:
                if index < len(row) and row[index] is not None:
                    row[index] = convert(row[index])
            verdict = row[verdict_at] if verdict_at is not None and verdict_at < len(row) else None
            if verdict in ROW_VERDICTS:
                sheet.append(row, verdict=verdict)
            elif verdict_cells:
                sheet.append(row, fills={index: row[index] for index in verdict_cells if index < len(row)})
            else:
                sheet.append(row)
            shown += 1
            self.done_rows += 1
            if self.done_rows - self._reported_rows >= PROGRESS_EVERY:
                self.report_progress()
        return shown

    def report_progress(self) -> None:
        if self.on_progress and self.done_rows != self._reported_rows:
            self._reported_rows = self.done_rows
            self.on_progress(self.done_rows)

    # Contents -------------------------------------------------------------------------------------

    def contents(self) -> None:
        """The contents, written last (it lists every sheet) and placed second, after the cover."""
        sheet = self.new_sheet("Contents", CONTENTS_COLUMNS, index=1)
        for line in self.lines:
            sheet.append([line.section, sheet.cell(line.sheet, link_to_sheet=line.sheet), line.holds, line.rows,
                          line.shown, line.note])


def _count(value) -> int:
    """A row count of the snapshot as a count (a damaged one counts nothing)."""
    return max(value, 0) if isinstance(value, int) and not isinstance(value, bool) else 0


def _width(column) -> float:
    """The column's width in characters, wide enough for its header and the filter's button."""
    try:
        width = float(column.width)
    except (TypeError, ValueError):
        width = 12
    return max(min(width, 80), min(len(header_of(column)) + 3, 40), 4)

