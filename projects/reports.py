"""The acceptance report's registry and its frozen snapshot: what each app contributes, and the one file
format both renderers read.

`delivery` cannot import the domain apps, so, like the gates (`projects.gates`), each app registers the
sections it owns in its `AppConfig.ready()`:

    from projects.reports import Section, Table, Column, register_report_section
    register_report_section("inventory", inventory_section, order=30, title="Inventory")

A provider is `(project) -> Section | None` (None: nothing to say for this project, the section is left
out). Its tables' rows are iterables, read once while the snapshot is written, so a provider hands over
`queryset.values_list(...).iterator()`-like generators and never holds 24,576 cables in memory.

The snapshot is a gzip file of JSON lines, written once per report version and never again:

    {"t": "meta", "schema": 1, ...cover data...}
    {"t": "section", "key": "inventory", "title": "Inventory", "order": 30}
    {"t": "paragraph", "text": "..."}
    {"t": "facts", "title": "...", "items": [["Servers", 1024], ...]}
    {"t": "chart", "kind": "validation.histogram", "title": "...", "data": {...}}
    {"t": "table", "key": "cables", "title": "...", "columns": [...], "row_count": 24576, "summary_rows": 50, ...}
    {"t": "row", "v": ["C00001", "gpu-001:p1", ...]}          (row_count of them, straight after their table)
    {"t": "end"}

Renderers (`delivery.reports`) stream it with `read_snapshot`: the PDF and the Excel file are made
from the same records, so they always say the same thing, and re-rendering an old version gives the same
content whatever the database holds now. Values are JSON scalars only (text, numbers, booleans, null);
a column's `kind` says how to show them (dates and datetimes travel as ISO text).
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

SNAPSHOT_SCHEMA = 1

# How a column's values are shown. Renderers know each one; a provider picks one per column.
COLUMN_KINDS = (
    "text",  # free text (a label, a serial): never a formula in Excel, escaped in PDF
    "int",  # a count
    "float",  # a plain number, 2 decimals
    "gbps",  # bandwidth in Gb/s, 1 decimal
    "ber",  # a bit error rate: scientific notation, "< 1e-20" below BER_FLOOR
    "celsius", "volts", "dbm", "percent", "bytes", "seconds",
    "date", "datetime",  # ISO text in the snapshot
    "verdict",  # pass / warn / fail / error: coloured
    "bool",
)
VERDICTS = ("pass", "warn", "fail", "error")
BER_FLOOR = 1e-20  # mlxlink prints 1.5e-254 for "no errors": shown as "< 1e-20"


@dataclass(frozen=True)
class Column:
    key: str
    label: str  # the header without the unit: "Length"
    unit: str = ""  # "m", "Gb/s", "°C", "dBm": renderers write "Length (m)"
    kind: str = "text"
    width: float = 12  # relative width (characters in Excel; PDF scales the widths to the page)

    @property
    def header(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label


@dataclass
class Paragraph:
    text: str


@dataclass
class Facts:
    """Label-value pairs: a block of key figures ("Average bus bandwidth", 382.1)."""

    items: Sequence[tuple[str, Any]]
    title: str = ""


@dataclass
class Chart:
    """A chart as data: `kind` names a drawer in the chart registry (below), `data` holds plain numbers
    and labels only, so the snapshot freezes the figures and the drawing is made at render time."""

    kind: str
    title: str
    data: dict
    caption: str = ""


@dataclass
class Table:
    """A table streamed into the snapshot. `rows` is read exactly once and must yield `row_count` rows of
    `len(columns)` scalars, in the order a reader wants them (failures first where there are verdicts).
    The summary edition prints the first `summary_rows` rows and says how many more the full one has.
    `verdict_column` names the column whose pass/warn/fail colours the whole row."""

    key: str
    title: str
    columns: Sequence[Column]
    rows: Iterable[Sequence[Any]]
    row_count: int
    summary_rows: int = 50
    verdict_column: str = ""
    note: str = ""


Block = Paragraph | Facts | Chart | Table


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)


SectionProvider = Callable[[object], Section | None]
ChartDrawer = Callable[..., Any]  # (data: dict, *, width: float, height: float) -> reportlab Drawing


@dataclass(frozen=True)
class RegisteredSection:
    key: str
    title: str
    order: int
    provider: SectionProvider


class ReportRegistry:
    """The sections of the report and the chart drawers, filled by each app's ready()."""

    def __init__(self) -> None:
        self._sections: dict[str, RegisteredSection] = {}
        self._charts: dict[str, ChartDrawer] = {}

    def register_section(self, key: str, provider: SectionProvider, *, order: int, title: str) -> None:
        """Register (or, when ready() runs again in a test, replace) the section named `key`."""
        self._sections[key] = RegisteredSection(key=key, title=title, order=order, provider=provider)

    def register_chart(self, kind: str, drawer: ChartDrawer) -> None:
        self._charts[kind] = drawer

    def sections(self) -> list[RegisteredSection]:
        return sorted(self._sections.values(), key=lambda s: (s.order, s.key))

    def chart_drawer(self, kind: str) -> ChartDrawer | None:
        return self._charts.get(kind)


report_registry = ReportRegistry()
register_report_section = report_registry.register_section
register_report_chart = report_registry.register_chart


# ---------------------------------------------------------------------------------------------------
# Writing and reading the snapshot


class SnapshotError(ValueError):
    """A snapshot file that does not follow the format (damaged, or written by a newer schema)."""


def json_scalar(value: Any) -> Any:
    """A value as the snapshot stores it: JSON scalars only; NaN and infinities (which JSON cannot carry)
    become None, and anything else (a date, a Decimal) its text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _dump(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode()


class SnapshotWriter:
    """Writes the records to a binary file object as gzip JSON lines. `on_rows(n)` is called every
    `progress_every` table rows written, so a job can report progress while a big table streams."""

    def __init__(self, target: IO[bytes], *, on_rows: Callable[[int], None] | None = None,
                 progress_every: int = 2000) -> None:
        # mtime=0: the same records give the same bytes, so a snapshot's hash depends on its content only.
        self._gzip = gzip.GzipFile(fileobj=target, mode="wb", mtime=0)
        self._on_rows = on_rows
        self._progress_every = progress_every
        self._rows_since = 0

    def meta(self, meta: dict) -> None:
        self._gzip.write(_dump({"t": "meta", "schema": SNAPSHOT_SCHEMA, **meta}))

    def section(self, key: str, title: str, order: int, section: Section) -> None:
        self._gzip.write(_dump({"t": "section", "key": key, "title": section.title or title, "order": order}))
        for block in section.blocks:
            self._block(block)

    def _block(self, block: Block) -> None:
        if isinstance(block, Paragraph):
            self._gzip.write(_dump({"t": "paragraph", "text": block.text}))
        elif isinstance(block, Facts):
            items = [[str(label), json_scalar(value)] for label, value in block.items]
            self._gzip.write(_dump({"t": "facts", "title": block.title, "items": items}))
        elif isinstance(block, Chart):
            self._gzip.write(_dump({"t": "chart", "kind": block.kind, "title": block.title,
                                    "caption": block.caption, "data": block.data}))
        elif isinstance(block, Table):
            self._table(block)
        else:
            raise TypeError(f"Not a report block: {block!r}")

    def _table(self, table: Table) -> None:
        for column in table.columns:
            if column.kind not in COLUMN_KINDS:
                raise ValueError(f"Table {table.key}: column {column.key} has unknown kind {column.kind!r}.")
        self._gzip.write(_dump({
            "t": "table", "key": table.key, "title": table.title, "row_count": table.row_count,
            "summary_rows": table.summary_rows, "verdict_column": table.verdict_column, "note": table.note,
            "columns": [{"key": c.key, "label": c.label, "unit": c.unit, "kind": c.kind, "width": c.width}
                        for c in table.columns],
        }))
        width = len(table.columns)
        written = 0
        for row in table.rows:
            if len(row) != width:
                raise ValueError(f"Table {table.key}, row {written + 1}: {len(row)} values for {width} columns.")
            self._gzip.write(_dump({"t": "row", "v": [json_scalar(value) for value in row]}))
            written += 1
            self._rows_since += 1
            if self._on_rows and self._rows_since >= self._progress_every:
                self._on_rows(self._rows_since)
                self._rows_since = 0
        if written != table.row_count:
            raise ValueError(f"Table {table.key}: announced {table.row_count} rows, wrote {written}.")

    def close(self) -> None:
        self._gzip.write(_dump({"t": "end"}))
        self._gzip.close()
        if self._on_rows and self._rows_since:
            self._on_rows(self._rows_since)


# What a reader gets back: plain objects mirroring the records, tables with a one-pass row iterator.


@dataclass
class TableRecord:
    key: str
    title: str
    columns: list[Column]  # read back as written
    row_count: int
    summary_rows: int
    verdict_column: str
    note: str
    rows: Iterator[list]  # one pass; must be consumed (or drained by the reader) before the next block


@dataclass
class SectionRecord:
    key: str
    title: str
    order: int
    blocks: Iterator[Paragraph | Facts | Chart | TableRecord]


@dataclass
class SnapshotRecords:
    meta: dict
    sections: Iterator[SectionRecord]


def _records(source: IO[bytes]) -> Iterator[dict]:
    with gzip.GzipFile(fileobj=source, mode="rb") as lines:
        number = 0
        while True:
            try:
                line = lines.readline()
            except (EOFError, OSError, zlib.error) as error:  # cut short, or not gzip at all
                raise SnapshotError(f"Snapshot after line {number}: the file is damaged ({error}).") from None
            if not line:
                return
            number += 1
            try:
                record = json.loads(line)
            except ValueError as error:
                raise SnapshotError(f"Snapshot line {number}: not JSON ({error}).") from None
            if not isinstance(record, dict) or "t" not in record:
                raise SnapshotError(f"Snapshot line {number}: not a record.")
            yield record


class _Cursor:
    """One look-ahead over the records, shared by the nested section/block/row iterators."""

    def __init__(self, records: Iterator[dict]) -> None:
        self._records = records
        self.current: dict | None = next(records, None)

    def advance(self) -> dict | None:
        self.current = next(self._records, None)
        return self.current


def read_snapshot(source: IO[bytes]) -> SnapshotRecords:
    """The snapshot in `source` (a binary file object) as nested one-pass iterators, in file order.
    Sections, blocks and rows must be consumed in order; a table's rows left unread are skipped when
    the next block is asked for. Memory stays at one record whatever the snapshot's size."""
    cursor = _Cursor(_records(source))
    meta = cursor.current
    if meta is None or meta.get("t") != "meta":
        raise SnapshotError("Snapshot line 1: the meta record is missing.")
    if meta.get("schema") != SNAPSHOT_SCHEMA:
        raise SnapshotError(f"Snapshot schema {meta.get('schema')!r} is not {SNAPSHOT_SCHEMA}.")
    cursor.advance()
    return SnapshotRecords(meta={k: v for k, v in meta.items() if k != "t"}, sections=_sections(cursor))


def _sections(cursor: _Cursor) -> Iterator[SectionRecord]:
    while cursor.current is not None and cursor.current["t"] == "section":
        record = cursor.current
        cursor.advance()
        yield SectionRecord(key=record["key"], title=record["title"], order=record["order"],
                            blocks=_blocks(cursor))
        while cursor.current is not None and cursor.current["t"] not in ("section", "end"):
            cursor.advance()  # blocks the consumer did not read
    if cursor.current is None or cursor.current["t"] != "end":
        raise SnapshotError("The snapshot ends before its end record: the file is truncated.")


def _blocks(cursor: _Cursor) -> Iterator[Paragraph | Facts | Chart | TableRecord]:
    while cursor.current is not None and cursor.current["t"] not in ("section", "end"):
        record = cursor.current
        kind = record["t"]
        cursor.advance()
        if kind == "paragraph":
            yield Paragraph(text=record["text"])
        elif kind == "facts":
            yield Facts(items=[tuple(item) for item in record["items"]], title=record.get("title", ""))
        elif kind == "chart":
            yield Chart(kind=record["kind"], title=record["title"], data=record["data"],
                        caption=record.get("caption", ""))
        elif kind == "table":
            yield TableRecord(
                key=record["key"], title=record["title"], row_count=record["row_count"],
                summary_rows=record["summary_rows"], verdict_column=record.get("verdict_column", ""),
                note=record.get("note", ""), columns=[Column(**column) for column in record["columns"]],
                rows=_rows(cursor),
            )
            while cursor.current is not None and cursor.current["t"] == "row":
                cursor.advance()  # rows the consumer did not read
        elif kind == "row":
            raise SnapshotError("A row record outside a table.")
        else:
            raise SnapshotError(f"Unknown record type {kind!r}.")


def _rows(cursor: _Cursor) -> Iterator[list]:
    while cursor.current is not None and cursor.current["t"] == "row":
        values = cursor.current["v"]
        cursor.advance()
        yield values
