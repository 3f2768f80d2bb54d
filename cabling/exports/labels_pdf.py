"""The label sheet: one label per cable end, laid out for a common label stock.

Each label carries the cable label (bold), this end's `rack-U-device-port` tag, where the far end(s) go
("to ..."; every leg on the A end of a breakout), and a QR code and a Code 128 of this end's code:
`C00417/A`, `C00417/B`, or `C00417/B2` for leg 2 of a breakout (cabling.codes.cable_end_code). A scan
tells the floor which end it holds, not only which cable; the printed text still reads the label and the
tags. Labels printed before end codes held the bare label `C00417` in both codes: they keep resolving
(cabling.search), the end then told by the port the technician confirms.

Text is set in core.fonts' families, which `_fit` measures too: Helvetica for what it has (not embedded,
so a Latin sheet costs nothing more), Noto Sans for other Latin, Greek and Cyrillic, Noto Sans SC for
Chinese, both embedded as subsets of the glyphs used (a Chinese name is no longer a row of black boxes).

Stocks (`STOCKS`, chosen with ?stock=):
- `L7651` (default): Avery L7651 and compatibles, A4, 5 x 13 labels of 38.1 x 21.2 mm, 65 per sheet,
  4.75 mm side and 10.7 mm top margins, 40.6 mm across, 21.2 mm down. Print at 100 % (no "fit to page").
- `thermal-2x1`: a 2" x 1" (50.8 x 25.4 mm) thermal roll, one label per page.

Printed per network (?network=) or per rack (?rack=): with a rack, only the ends in that rack are
printed, so printing every rack in turn gives each end's label exactly once.

A direct download holds at most MAX_LABELS labels (62 L7651 sheets; about 15 s): reportlab's QR encoder
is pure Python (about 2.4 ms a code), and every end has its own code, so every label its own QR. A
network rack of the 1,024-server fabric (1,280 labels, each of another cable) takes 5 s. A larger
selection, up to the whole fabric, is a label sheet export (cabling.models.LabelSheetExport): a task
writes the same sheet to a file (`write_labels`), reporting its progress every PROGRESS_EVERY labels. The
whole 1,024-server fabric (57,344 labels) took 170 s with one code per cable; with one per end it encodes
2.3 times as many QR codes (bench/bench_label_export.py: an 11 MiB PDF, the process at 345 MiB; its time,
906 s, was measured on a 2-core machine busy with three other test runs, so it says little). The cables
come from one streamed query, but reportlab keeps the document until it writes the file.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.db.models import QuerySet
from reportlab.graphics.barcode.code128 import Code128
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import inch, mm
from reportlab.pdfgen.canvas import Canvas

from core.fonts import FontFamily, register_fonts

from ..choices import LabelStockName
from ..codes import cable_end_code
from ..models import Cable
from ..selectors import CableRow, cable_rows

PDF_CONTENT_TYPE = "application/pdf"
MIN_FONT_PT = 3.0  # below this a printed line is unreadable; longer lines are cut with an ellipsis
MAX_FAR_LINES = 4  # "to ..." lines on one label; more legs end with "+n more"
QR_BORDER_MODULES = 2  # the label margin adds to the quiet zone
MAX_BAR_PT = 0.75  # Code 128 module width: 0.26 mm (10 mil) when the label has room
MAX_LABELS = 4000  # in one direct download; an export has no cap
PROGRESS_EVERY = 250  # labels between two progress reports of an export


@dataclass(frozen=True)
class LabelStock:
    name: str
    page_size: tuple[float, float]  # points
    columns: int
    rows: int
    label_w: float
    label_h: float
    left: float  # page edge to the first column
    top: float  # page top to the first row
    pitch_x: float  # left edge to left edge
    pitch_y: float  # top edge to top edge
    padding: float = 1.2 * mm

    @property
    def per_page(self) -> int:
        return self.columns * self.rows

    def origin(self, slot: int) -> tuple[float, float]:
        """Bottom-left corner of the label in a page slot (filled row by row, top-left first)."""
        row, column = divmod(slot, self.columns)
        x = self.left + column * self.pitch_x
        y = self.page_size[1] - self.top - row * self.pitch_y - self.label_h
        return x, y


STOCKS = {
    LabelStockName.L7651: LabelStock(
        name=LabelStockName.L7651, page_size=A4, columns=5, rows=13, label_w=38.1 * mm, label_h=21.2 * mm,
        left=4.75 * mm, top=10.7 * mm, pitch_x=40.6 * mm, pitch_y=21.2 * mm,
    ),
    LabelStockName.THERMAL_2X1: LabelStock(
        name=LabelStockName.THERMAL_2X1, page_size=(2 * inch, 1 * inch), columns=1, rows=1, label_w=2 * inch,
        label_h=1 * inch, left=0, top=0, pitch_x=2 * inch, pitch_y=1 * inch, padding=1.5 * mm,
    ),
}
DEFAULT_STOCK = LabelStockName.L7651


@dataclass(frozen=True)
class EndLabel:
    """What one printed label says."""

    cable_pk: int
    label: str  # printed in bold
    leg: str  # A, B1, B2...
    tag: str  # this end
    far: tuple[str, ...]  # the other end(s)
    code: str = ""  # this end's code, the QR and Code 128 content: C00417/A, C00417/B, C00417/B2

    @property
    def lines(self) -> list[str]:
        far = [f"to {tag}" for tag in self.far]
        if len(far) > MAX_FAR_LINES:
            far = [*far[: MAX_FAR_LINES - 1], f"+{len(far) - MAX_FAR_LINES + 1} more"]
        return [f"{self.tag} ({self.leg})", *far]


def end_labels(cables: Iterable[CableRow], *, rack: str | None = None) -> Iterator[EndLabel]:
    """One label per end, in cable-label order, A before B1, B2...; with `rack`, only ends in that rack."""
    for cable in cables:
        for end in cable.ends:
            if rack and end.rack != rack:
                continue
            far = tuple(other.tag for other in cable.far_ends(end))
            code = cable_end_code(cable.label, end.side, end.position, b_ends=len(cable.b))
            yield EndLabel(cable_pk=cable.pk, label=cable.label, leg=end.leg, tag=end.tag, far=far, code=code)


def qr_widget(value: str, size: float) -> QrCodeWidget:
    return QrCodeWidget(value, barWidth=size, barHeight=size, barBorder=QR_BORDER_MODULES)


def draw_qr(canvas: Canvas, widget: QrCodeWidget, x: float, y: float) -> None:
    """Draw the widget's QR symbol as one filled path, with (x, y) the bottom-left of its square.

    The widget's own draw() builds a graphics shape per run of dark modules, which is most of the time of
    a 50,000-label sheet; its encoder (widget.qr) is used as is, so the symbol is the widget's. The path
    is written in module units, rows counted down from the top: each run of dark modules is four small
    integers rather than four point coordinates, a third of the bytes, and the QR codes are most of a
    large sheet's size, and of the memory reportlab holds until the file is written."""
    widget.qr.make()
    modules = widget.qr.modules
    count, border = len(modules), widget.barBorder
    box = widget.barWidth / (count + 2 * border)
    canvas.saveState()
    canvas.transform(box, 0, 0, -box, x, y + widget.barHeight)
    path = canvas.beginPath()
    for r, row in enumerate(modules):
        c = 0
        while c < count:
            if row[c]:
                start = c
                while c < count and row[c]:
                    c += 1
                path.rect(start + border, r + border, c - start, 1)
            else:
                c += 1
    canvas.drawPath(path, stroke=0, fill=1)
    canvas.restoreState()


def code128(value: str, width: float, height: float) -> Code128 | None:
    """A Code 128 of the value that fits the width, or None when the value cannot be encoded (non-ASCII)."""
    if not value.isascii():
        return None
    probe = Code128(value, barWidth=1, barHeight=height, humanReadable=False, quiet=1)
    return Code128(value, barWidth=min(MAX_BAR_PT, width / probe.width), barHeight=height, humanReadable=False,
                   quiet=1)


def _fit(text: str, font: FontFamily, size: float, width: float) -> tuple[str, float]:
    """Shrink to fit the width, down to MIN_FONT_PT; beyond that, cut the text and end it with an ellipsis.
    Measured in the faces the text is printed in (a Chinese name is wider than a Latin one)."""
    while size > MIN_FONT_PT and font.width(text, size) > width:
        size = max(MIN_FONT_PT, size - 0.25)
    while len(text) > 1 and font.width(text, size) > width:
        text = text[:-2] + "…"
    return text, size


class LabelSheet:
    """Draws EndLabels onto a canvas, slot after slot, page after page."""

    def __init__(self, canvas: Canvas, stock: LabelStock):
        self.canvas, self.stock = canvas, stock
        self.fonts = register_fonts()
        pad = stock.padding
        self.bar_h = stock.label_h * 0.2
        self.qr_size = min(stock.label_h - 2 * pad - self.bar_h - 1, stock.label_w * 0.4)
        self.text_x = pad + self.qr_size + 1.5
        self.text_w = stock.label_w - self.text_x - pad

    def _draw_codes(self, item: EndLabel) -> None:
        """The QR and the Code 128 of the end's code (each end has its own: no drawing is shared)."""
        stock, pad = self.stock, self.stock.padding
        value = item.code or item.label
        draw_qr(self.canvas, qr_widget(value, self.qr_size), pad, stock.label_h - pad - self.qr_size)
        bars = code128(value, stock.label_w - 2 * pad, self.bar_h)
        if bars is not None:
            bars.drawOn(self.canvas, pad + (stock.label_w - 2 * pad - bars.width) / 2, pad)

    def draw(self, item: EndLabel, slot: int) -> None:
        canvas, stock = self.canvas, self.stock
        x, y = stock.origin(slot)
        canvas.saveState()
        canvas.translate(x, y)
        self._draw_codes(item)
        top = stock.label_h - stock.padding
        bold, regular = self.fonts.bold, self.fonts.regular
        text, size = _fit(item.label, bold, stock.label_h * 0.13, self.text_w)
        top -= size
        bold.draw(canvas, self.text_x, top, text, size)
        bottom = stock.padding + self.bar_h + 0.5
        line_size = stock.label_h * 0.085
        for line in item.lines:
            text, size = _fit(line, regular, line_size, self.text_w)
            if top - size * 1.2 < bottom:
                break  # no room left above the bar code
            top -= size * 1.2
            regular.draw(canvas, self.text_x, top, text, size)
        canvas.restoreState()


def write_labels(
    target, cables: QuerySet[Cable], *, stock: LabelStock, rack: str | None = None, title: str = "",
    progress: Callable[[int], None] | None = None,
) -> int:
    """Draw the label sheet of a scoped, filtered cable queryset into `target` (a path or a binary file)
    from one streamed query; `progress(done)` hears every PROGRESS_EVERY labels. Returns the count."""
    canvas = Canvas(target, pagesize=stock.page_size, pageCompression=1)
    canvas.setTitle(title or "Cable labels")
    canvas.setCreator("Bringup")
    sheet = LabelSheet(canvas, stock)
    slot = done = 0
    for item in end_labels(cable_rows(cables), rack=rack):
        if slot == stock.per_page:
            canvas.showPage()
            slot = 0
        sheet.draw(item, slot)
        slot += 1
        done += 1
        if progress is not None and done % PROGRESS_EVERY == 0:
            progress(done)
    if done == 0:  # nothing to print: say so rather than hand out an empty file
        sheet.fonts.regular.draw(canvas, 10, stock.page_size[1] / 2, "No cable ends match.", 8)
    canvas.showPage()
    canvas.save()
    return done


def labels_pdf(cables: QuerySet[Cable], *, stock: LabelStock, rack: str | None = None, title: str = "") -> bytes:
    """The label sheet of a scoped, filtered cable queryset, as the bytes of a direct download."""
    buffer = io.BytesIO()
    write_labels(buffer, cables, stock=stock, rack=rack, title=title)
    return buffer.getvalue()
