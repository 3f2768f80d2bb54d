"""The report's tables in the PDF: a flowable that streams a snapshot table's rows onto as many pages as
they need, with the header repeated on each page.

reportlab's own Table keeps every cell and re-measures what is left of it at each page break, which is
quadratic in the rows: 49,000 link-health rows would not finish. A `RowTable` instead holds an iterator
over the snapshot's rows and, when platypus asks it to fit a page, reads just enough rows to fill it
(`wrap`), hands back that page's rows as a piece and itself with the rows still to come (`split`). Memory
stays at one page of rows whatever the table's length, and each row is formatted and measured once.

Cells are drawn straight onto the canvas in one text object per page piece, run by run in core.fonts'
faces, so a Chinese name needs no Paragraph. Text wraps onto at most MAX_CELL_LINES lines and is then cut
with an ellipsis; numbers are right-aligned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from reportlab.lib import colors
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import Flowable

from core.fonts import Face, FontFamily, Fonts
from delivery.reports.pdf_text import MAX_CELL_CHARS, RIGHT_ALIGNED_KINDS, fit_lines, format_value, is_finite_number
from validation.charts import LEVEL_COLOURS

FONT_SIZE = 7.0
LEADING = 8.6
PAD_X = 2.5
PAD_Y = 1.8
MAX_CELL_LINES = 3
MAX_HEADER_LINES = 3
MIN_HEADER_SIZE = 5.5
# A column needs about this many points per unit of its relative width (a character, as in Excel), and
# never fewer than MIN_COLUMN_POINTS: a table that needs more than a portrait page's width is laid out on
# landscape pages.
POINTS_PER_WIDTH_UNIT = 5.0
MIN_COLUMN_POINTS = 24.0
MAX_ROWS_PER_WRAP = 400  # however tall a frame a caller offers, one piece reads at most this many rows
HEADER_FILL = colors.HexColor("#e4e8ee")
ZEBRA_FILL = colors.HexColor("#f5f6f8")
RULE_COLOUR = colors.HexColor("#9aa3ae")
TEXT_COLOUR = colors.HexColor("#1d232b")
# A row whose verdict column is not "pass" is tinted, so failures stand out on a page of passes.
ROW_TINTS = {"fail": colors.HexColor("#fbe3e1"), "error": colors.HexColor("#e9ebef"),
             "warn": colors.HexColor("#fdf0d9")}
VERDICT_COLOURS = {name.upper(): colors.HexColor(value) for name, value in LEVEL_COLOURS.items()}


@dataclass(frozen=True)
class TableColumn:
    header: str
    kind: str
    width: float  # points
    right: bool  # right-aligned (numbers)


@dataclass(frozen=True)
class TableLayout:
    """How one table is laid out on the frame: its columns' widths, its header's lines."""

    columns: tuple[TableColumn, ...]
    fonts: Fonts
    header_lines: tuple[tuple[str, ...], ...]  # per column; empty when the table shows no header
    header_sizes: tuple[float, ...]  # per column: smaller than FONT_SIZE where a word would not fit
    header_height: float
    verdict_index: int | None  # the column whose verdict tints the row

    @property
    def width(self) -> float:
        return sum(column.width for column in self.columns)


def comfortable_width(columns: Sequence) -> float:
    """The width in points the columns (projects.reports.Column) need to be read without cramping."""
    return sum(max(_weight(column) * POINTS_PER_WIDTH_UNIT, MIN_COLUMN_POINTS) for column in columns)


def _weight(column) -> float:
    return float(column.width) if is_finite_number(column.width) and column.width > 0 else 0.0


def table_layout(columns: Sequence, *, width: float, fonts: Fonts, verdict_column: str = "",
                 header: bool = True) -> TableLayout:
    """A layout for snapshot columns (projects.reports.Column): their relative widths scaled to
    `width`; a width that is not a positive number counts as the average of the others."""
    weights = [_weight(column) for column in columns]
    known = [weight for weight in weights if weight]
    default = sum(known) / len(known) if known else 1.0
    weights = [weight or default for weight in weights]
    total = sum(weights) or 1.0
    laid_out = tuple(
        TableColumn(header=_header_text(column), kind=column.kind, width=width * weight / total,
                    right=column.kind in RIGHT_ALIGNED_KINDS)
        for column, weight in zip(columns, weights, strict=True)
    )
    header_lines: tuple[tuple[str, ...], ...] = ()
    header_sizes: tuple[float, ...] = ()
    header_height = 0.0
    if header and laid_out:
        header_sizes = tuple(_header_size(column.header, fonts.bold, _inner(column.width)) for column in laid_out)
        header_lines = tuple(
            tuple(fit_lines(column.header, fonts.bold, size, _inner(column.width), MAX_HEADER_LINES))
            for column, size in zip(laid_out, header_sizes, strict=True)
        )
        header_height = max(len(lines) for lines in header_lines) * LEADING + 2 * PAD_Y
    keys = [column.key for column in columns]
    verdict_index = keys.index(verdict_column) if verdict_column and verdict_column in keys else None
    return TableLayout(columns=laid_out, fonts=fonts, header_lines=header_lines, header_sizes=header_sizes,
                       header_height=header_height, verdict_index=verdict_index)


def _header_size(header: str, bold: FontFamily, width: float) -> float:
    """The header's font size: FONT_SIZE, or less (down to MIN_HEADER_SIZE) so that its longest word
    ("Temperature") is not broken in a narrow column."""
    longest = max((bold.width(word, FONT_SIZE) for word in header.split()), default=0.0)
    if longest <= width:
        return FONT_SIZE
    return max(MIN_HEADER_SIZE, FONT_SIZE * width / longest)


def _header_text(column) -> str:
    header = column.header
    return f"{header} (UTC)" if column.kind == "datetime" else header


def _inner(width: float) -> float:
    return max(width - 2 * PAD_X, 1.0)


# A cell line as drawn: its runs (core.fonts face, text) and its width, measured once when the row is read.
CellLine = tuple[tuple[tuple[Face, str], ...], float]


@dataclass(frozen=True)
class PreparedRow:
    cells: tuple[tuple[colors.Color, tuple[CellLine, ...]], ...]  # each cell's text colour and lines
    height: float
    tint: colors.Color | None


def prepare_row(layout: TableLayout, values: Sequence) -> PreparedRow:
    """A snapshot row formatted and fitted to the layout; a row with too few values (a damaged snapshot)
    shows the missing ones as empty, extra values are dropped."""
    cells = []
    fonts = layout.fonts
    for index, column in enumerate(layout.columns):
        text = format_value(values[index] if index < len(values) else None, column.kind)
        verdict_colour = VERDICT_COLOURS.get(text) if column.kind == "verdict" else None
        family = fonts.regular if verdict_colour is None else fonts.bold
        cells.append((verdict_colour or TEXT_COLOUR, fitted_lines(text, family, _inner(column.width))))
    lines = max((len(lines) for _, lines in cells), default=1)
    tint = None
    if layout.verdict_index is not None and layout.verdict_index < len(values):
        tint = ROW_TINTS.get(str(values[layout.verdict_index]))
    return PreparedRow(cells=tuple(cells), height=lines * LEADING + 2 * PAD_Y, tint=tint)


def fitted_lines(text: str, family: FontFamily, width: float) -> tuple[CellLine, ...]:
    """The text's lines in `width` (pdf_text.fit_lines), each measured: most cells are one short line,
    measured once and drawn as measured."""
    if "\n" not in text and len(text) < MAX_CELL_CHARS:
        line = _measured(text, family)
        if line[1] <= width:
            return (line,)
    return tuple(_measured(line, family) for line in fit_lines(text, family, FONT_SIZE, width, MAX_CELL_LINES))


def _measured(text: str, family: FontFamily) -> CellLine:
    runs = tuple(family.runs(text))
    return runs, sum(stringWidth(part, face.name, FONT_SIZE) for face, part in runs)


class RowCounter:
    """Counts the table rows drawn and calls `on_progress(done_rows)` every `every` rows."""

    def __init__(self, on_progress: Callable[[int], None] | None, every: int = 1000) -> None:
        self.on_progress = on_progress
        self.every = every
        self.done = 0
        self._reported = 0

    def add(self, rows: int) -> None:
        self.done += rows
        if self.on_progress and self.done - self._reported >= self.every:
            self.report()

    def report(self) -> None:
        if self.on_progress and self.done != self._reported:
            self._reported = self.done
            self.on_progress(self.done)


class RowSource:
    """A snapshot table's row iterator, shared by a RowTable and the continuations it splits into, so
    whoever laid the table out can tell when all its rows were read and how many."""

    def __init__(self, rows: Iterator[Sequence]) -> None:
        self._rows = rows
        self.exhausted = False
        self.read = 0

    def next(self) -> Sequence | None:
        if self.exhausted:
            return None
        values = next(self._rows, None)
        if values is None:
            self.exhausted = True
            return None
        self.read += 1
        return values if isinstance(values, (list, tuple)) else [values]


class RowTable(Flowable):
    """A table, or what is left of it: the rows already read and formatted (`pending`) and, unless this
    is one page's piece, the source of the others. `first_index` (the first pending row's index in the
    table) keeps the stripes alternating across pages; `counter` counts the rows drawn."""

    def __init__(self, layout: TableLayout, source: RowSource | None, *, counter: RowCounter,
                 pending: list[PreparedRow] | None = None, first_index: int = 0) -> None:
        super().__init__()
        self.layout = layout
        self._source = source
        self._pending = pending or []
        self._counter = counter
        self._first_index = first_index

    def _more_to_read(self) -> bool:
        return self._source is not None and not self._source.exhausted

    def _pending_height(self) -> float:
        return self.layout.header_height + sum(row.height for row in self._pending)

    def _read_until(self, height: float) -> None:
        """Read rows until those pending are taller than `height` or the rows run out."""
        total = self._pending_height()
        while self._more_to_read() and total <= height and len(self._pending) < MAX_ROWS_PER_WRAP:
            values = self._source.next()
            if values is None:
                break
            row = prepare_row(self.layout, values)
            self._pending.append(row)
            total += row.height

    def wrap(self, availWidth, availHeight):  # platypus names its arguments so
        self._read_until(availHeight)
        self.width = self.layout.width
        self.height = self._pending_height() if self._pending else 0.0  # no rows: nothing is drawn
        if self._more_to_read() and self.height <= availHeight:
            self.height = availHeight + 1  # more rows to come than were read: ask to be split
        return self.width, self.height

    def split(self, availWidth, availHeight):
        self._read_until(availHeight)
        room = availHeight - self.layout.header_height
        fitting = 0
        for row in self._pending:
            if row.height > room:
                break
            room -= row.height
            fitting += 1
        if not fitting:
            return []  # not one row fits under the header here: platypus moves us to the next frame
        page = RowTable(self.layout, None, counter=self._counter, pending=self._pending[:fitting],
                        first_index=self._first_index)
        rest = RowTable(self.layout, self._source, counter=self._counter, pending=self._pending[fitting:],
                        first_index=self._first_index + fitting)
        return [page, rest]

    def draw(self):
        if not self._pending:
            return
        canvas = self.canv
        layout = self.layout
        top = self.height
        canvas.saveState()
        if layout.header_height:
            self._draw_header(top)
            top -= layout.header_height
        text = canvas.beginText()
        state = _TextState(text)
        for offset, row in enumerate(self._pending):
            self._draw_row_background(row, top, (self._first_index + offset) % 2 == 1)
            self._add_row_text(state, row, top)
            top -= row.height
        canvas.drawText(text)
        canvas.setStrokeColor(RULE_COLOUR)
        canvas.setLineWidth(0.4)
        canvas.line(0, top, layout.width, top)
        canvas.restoreState()
        self._counter.add(len(self._pending))

    def _draw_header(self, top: float) -> None:
        canvas, layout = self.canv, self.layout
        canvas.setFillColor(HEADER_FILL)
        canvas.rect(0, top - layout.header_height, layout.width, layout.header_height, stroke=0, fill=1)
        canvas.setFillColor(TEXT_COLOUR)
        bold = layout.fonts.bold
        x = 0.0
        for column, lines, size in zip(layout.columns, layout.header_lines, layout.header_sizes, strict=True):
            baseline = top - PAD_Y - FONT_SIZE
            for line in lines:
                left = x + column.width - PAD_X - bold.width(line, size) if column.right else x + PAD_X
                bold.draw(canvas, left, baseline, line, size)
                baseline -= LEADING
            x += column.width
        canvas.setStrokeColor(RULE_COLOUR)
        canvas.setLineWidth(0.6)
        canvas.line(0, top - layout.header_height, layout.width, top - layout.header_height)

    def _draw_row_background(self, row: PreparedRow, top: float, striped: bool) -> None:
        fill = row.tint or (ZEBRA_FILL if striped else None)
        if fill is not None:
            self.canv.setFillColor(fill)
            self.canv.rect(0, top - row.height, self.layout.width, row.height, stroke=0, fill=1)

    def _add_row_text(self, state: _TextState, row: PreparedRow, top: float) -> None:
        x = 0.0
        for column, (colour, lines) in zip(self.layout.columns, row.cells, strict=True):
            baseline = top - PAD_Y - FONT_SIZE
            for runs, width in lines:
                if width:
                    state.write(runs, x + column.width - PAD_X - width if column.right else x + PAD_X, baseline,
                                colour)
                baseline -= LEADING
            x += column.width


class _TextState:
    """One PDF text object for a page of cells, setting the font and colour only when they change."""

    def __init__(self, text) -> None:
        self.text = text
        self._font: str | None = None
        self._colour = None

    def write(self, runs, x: float, y: float, colour) -> None:
        if colour is not self._colour:
            self.text.setFillColor(colour)
            self._colour = colour
        self.text.setTextOrigin(x, y)
        for face, part in runs:
            if face.name != self._font:
                self.text.setFont(face.name, FONT_SIZE, LEADING)
                self._font = face.name
            self.text.textOut(part)
