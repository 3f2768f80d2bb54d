"""The acceptance report as a PDF, drawn from its frozen snapshot (projects.reports) with reportlab's
platypus.

    render_pdf(source, target, edition="full", signature=None, on_progress=None)

The document: a cover (the project, the customer and the integrator in English and Chinese, the site, the
cluster's figures, the dates, the report's version and id), the contents with page numbers, then each
section in snapshot order, each on a new page: paragraphs, facts, charts (drawn by the drawer registered
for their kind) and tables, and the sign-off with its signature block. Every page has the project in its
header and the report's id, version and "Page n of N" in its footer; a signed copy says who signed on
every page, and its sign-off page quotes the signature and the SHA-256 of the original files.

Size: the 1,024-server report has about 90,000 table rows (1,600 pages). The snapshot is read twice, once
for the contents' titles and once to lay the body out, which happens once: page numbers are forms defined
at the end (pdf_contents.py); tables stream their rows a page at a time (pdf_tables.py); the story itself
is a generator (LazyStory), so memory holds one page of rows plus what reportlab keeps of the finished
pages until it writes the file. Output is byte-identical for the same snapshot and arguments
(reportlab's invariant mode, the PDF's dates being the report's generation time).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import IO

from reportlab.graphics.shapes import Drawing
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.platypus import BaseDocTemplate, CondPageBreak, Flowable, Frame, PageTemplate, Spacer
from reportlab.platypus import Paragraph as ParagraphFlowable
from reportlab.platypus.flowables import PageBreak, PageBreakIfNotEmpty

from core.fonts import Fonts, register_fonts
from delivery.reports.pdf_contents import (
    PAGES_TOTAL_FORM,
    SIGNOFF_KEY,
    SIGNOFF_TITLE,
    Contents,
    ContentsEntry,
    ContentsLine,
    FittedDrawing,
    Heading,
    LazyStory,
    PageBook,
    contents_of,
    define_page_forms,
    entry_title,
    section_key,
    table_key,
)
from delivery.reports.pdf_tables import RowCounter, RowSource, RowTable, table_layout
from delivery.reports.pdf_text import (
    NONE_SHOWN,
    clean_text,
    ellipsize,
    format_fact,
    format_moment,
    format_value,
    has_wide_characters,
    markup,
    pdf_date,
)
from projects.reports import Chart, Column, Facts, Paragraph, TableRecord, read_snapshot, report_registry

logger = logging.getLogger(__name__)

PDF_CONTENT_TYPE = "application/pdf"
EDITIONS = ("full", "summary")
PORTRAIT, LANDSCAPE = "portrait", "landscape"  # page templates; a section with a wide table is landscape
PAGE_SIZES = {PORTRAIT: A4, LANDSCAPE: landscape(A4)}
MARGIN_X = 42.0
MARGIN_TOP = 58.0
MARGIN_BOTTOM = 52.0
RUNNING_SIZE = 7.5  # header and footer text
HEADER_BASELINE = 30.0  # from the top edge
FOOTER_BASELINE = 28.0  # from the bottom edge
TOTAL_ROOM = 30.0  # points left after "Page n of " for the number of pages (a form, known at the end)
CHART_HEIGHT_SHARE = 0.42  # of the frame's width
MAX_PARAGRAPH_CHARS = 20_000  # a paragraph is prose; a longer one (a damaged snapshot) is cut, saying so
MUTED = colors.HexColor("#5b6677")
RULE = colors.HexColor("#c9ced6")
SIGNED_COLOUR = colors.HexColor("#1f5fbf")
CLUSTER_FIGURES = (("racks", "Racks"), ("servers", "Servers"), ("gpus", "GPUs"), ("switches", "Switches"),
                   ("cables", "Cables"), ("optics", "Optics"))
SIGNATURE_FIELDS = ("Name", "Title", "Signature", "Date")
# The exceptions an acceptance with exceptions lists on the signed copy's sign-off page.
EXCEPTION_ITEM_COLUMNS = [Column("id", "#", kind="int", width=5), Column("title", "Punch item", width=30),
                          Column("severity", "Severity", width=8), Column("status", "Status", width=12),
                          Column("object", "Concerns", width=14)]
EXCEPTION_WAIVER_COLUMNS = [Column("stage", "Stage", width=14), Column("items", "Items waived", width=14),
                            Column("reason", "Reason", width=34), Column("by", "Recorded by", width=12),
                            Column("at", "Recorded", width=12)]


def render_pdf(source: IO[bytes], target: IO[bytes], *, edition: str = "full", signature: dict | None = None,
               on_progress: Callable[[int], None] | None = None) -> None:
    """Write the report in the snapshot `source` (a binary file, read twice) to `target` as a PDF.
    `edition` "summary" prints each table's first `summary_rows` rows; `signature` (the signed copy)
    fills the sign-off block and marks every page; `on_progress(done_rows)` is called as table rows are
    drawn, with the number drawn so far."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {', '.join(EDITIONS)}, not {edition!r}.")
    if signature is not None and not isinstance(signature, dict):
        raise TypeError("signature must be a dict or None.")
    fonts = register_fonts()
    source.seek(0)
    contents = contents_of(source, narrow_width=_frame_size(PORTRAIT)[0])
    source.seek(0)
    records = read_snapshot(source)
    report = _Report(contents=contents, fonts=fonts, edition=edition, signature=signature,
                     counter=RowCounter(on_progress), book=PageBook())
    document = _ReportDocument(target, report)
    document.build(LazyStory(report.story(records.sections)))
    define_page_forms(document.canv, contents.entries, report.book, size=RUNNING_SIZE)
    document.canv.save()
    report.counter.report()


# ---------------------------------------------------------------------------------------------------
# The document: page furniture, metadata


class _ReportDocument(BaseDocTemplate):
    def __init__(self, target: IO[bytes], report: _Report) -> None:
        project = report.project
        super().__init__(
            target, pagesize=PAGE_SIZES[PORTRAIT], leftMargin=MARGIN_X, rightMargin=MARGIN_X, topMargin=MARGIN_TOP,
            bottomMargin=MARGIN_BOTTOM, invariant=1, pageCompression=1, creator="Bringup",
            title=f"Acceptance report: {_text(project.get('name'))} ({_text(project.get('code'))})",
            author=_text(report.meta_part("integrator").get("name")),
            subject=f"Report {_text(report.report.get('id'))}, version {_text(report.report.get('version'))}",
        )
        self.addPageTemplates([
            PageTemplate(id=name, pagesize=size, onPage=report.draw_page_furniture,
                         frames=[Frame(MARGIN_X, MARGIN_BOTTOM, *_frame_size(name), id=name, leftPadding=0,
                                       rightPadding=0, topPadding=0, bottomPadding=0)])
            for name, size in PAGE_SIZES.items()
        ])
        self.report = report
        self._doSave = 0  # render_pdf defines the page-number forms, then saves

    def beforeDocument(self):
        # invariant=1 fixes the PDF's dates to 2000-01-01; the report's generation time says more.
        when = pdf_date(self.report.report.get("generated_at"))
        if when:
            self.canv.setDateFormatter(lambda *_parts: when)
        self.canv.showOutline()


def _frame_size(template: str) -> tuple[float, float]:
    width, height = PAGE_SIZES[template]
    return width - 2 * MARGIN_X, height - MARGIN_TOP - MARGIN_BOTTOM


def _text(value) -> str:
    return NONE_SHOWN if value is None or value == "" else clean_text(str(value))


# ---------------------------------------------------------------------------------------------------
# The story


@dataclass
class _Styles:
    body: ParagraphStyle
    body_wide: ParagraphStyle  # Chinese text: lines break between any two characters
    note: ParagraphStyle
    h1: ParagraphStyle
    h2: ParagraphStyle
    h3: ParagraphStyle
    kicker: ParagraphStyle
    cover_title: ParagraphStyle
    cover_subtitle: ParagraphStyle
    cover_code: ParagraphStyle
    signed: ParagraphStyle


def _styles() -> _Styles:
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=9.5, leading=13, spaceAfter=6)
    return _Styles(
        body=body,
        body_wide=ParagraphStyle("body_wide", parent=body, wordWrap="CJK"),
        note=ParagraphStyle("note", parent=body, fontName="Helvetica-Oblique", fontSize=8, leading=10.5,
                            textColor=MUTED, spaceAfter=5, wordWrap="CJK"),
        h1=ParagraphStyle("h1", fontName="Helvetica-Bold", fontSize=16, leading=20, spaceAfter=10, wordWrap="CJK"),
        h2=ParagraphStyle("h2", fontName="Helvetica-Bold", fontSize=11.5, leading=14.5, spaceBefore=10,
                          spaceAfter=4, wordWrap="CJK"),
        h3=ParagraphStyle("h3", fontName="Helvetica-Bold", fontSize=9.5, leading=12, spaceBefore=8, spaceAfter=4,
                          wordWrap="CJK"),
        kicker=ParagraphStyle("kicker", fontName="Helvetica-Bold", fontSize=10, leading=14, textColor=MUTED,
                              spaceAfter=14),
        cover_title=ParagraphStyle("cover_title", fontName="Helvetica-Bold", fontSize=24, leading=29,
                                   spaceAfter=6, wordWrap="CJK"),
        cover_subtitle=ParagraphStyle("cover_subtitle", fontName="Helvetica", fontSize=18, leading=24,
                                      spaceAfter=6, wordWrap="CJK"),
        cover_code=ParagraphStyle("cover_code", fontName="Helvetica", fontSize=13, leading=17, textColor=MUTED,
                                  spaceAfter=22),
        signed=ParagraphStyle("signed", fontName="Helvetica-Bold", fontSize=10, leading=14,
                              textColor=SIGNED_COLOUR, spaceBefore=14, wordWrap="CJK"),
    )


class _Report:
    """What the story and the page furniture need: the contents, the fonts and styles, the edition, the
    signature, the row counter and the book of pages."""

    def __init__(self, *, contents: Contents, fonts: Fonts, edition: str, signature: dict | None,
                 counter: RowCounter, book: PageBook) -> None:
        self.contents = contents
        self.fonts = fonts
        self.edition = edition
        self.signature = signature
        self.counter = counter
        self.book = book
        self.styles = _styles()
        self.frame_width, self.frame_height = _frame_size(PORTRAIT)
        self.project = self.meta_part("project")
        self.report = self.meta_part("report")
        self._entries: Iterator[ContentsEntry] = iter(contents.entries)

    def meta_part(self, name: str) -> dict:
        part = self.contents.meta.get(name)
        return part if isinstance(part, dict) else {}

    # Text helpers --------------------------------------------------------------------------------

    def para(self, text, style: ParagraphStyle | None = None, *, bold: bool = False) -> ParagraphFlowable:
        text = clean_text(str(text))
        style = style or (self.styles.body_wide if has_wide_characters(text) else self.styles.body)
        return ParagraphFlowable(markup(text, self.fonts.bold if bold else self.fonts.regular), style)

    def note(self, text: str) -> ParagraphFlowable:
        return self.para(text, self.styles.note)

    def heading(self, entry: ContentsEntry, style: ParagraphStyle) -> Heading:
        if next(self._entries, None) != entry:
            raise RuntimeError(f"The snapshot changed between its two readings (at {entry.title!r}).")
        return Heading(markup(entry.title, self.fonts.bold), style, entry=entry, book=self.book)

    def facts_table(self, rows: list[tuple[str, str]], *, label_share: float = 0.38) -> RowTable:
        columns = [Column("label", "", "", "text", label_share), Column("value", "", "", "text",
                                                                                     1 - label_share)]
        layout = table_layout(columns, width=self.frame_width, fonts=self.fonts, header=False)
        return RowTable(layout, RowSource(iter(rows)), counter=RowCounter(None))

    # The story ------------------------------------------------------------------------------------

    def story(self, sections) -> Iterator[Flowable]:
        yield from self.cover()
        yield PageBreak()
        yield from self.contents_pages()
        for section_index, section in enumerate(sections):
            key = section_key(section_index)
            yield self.new_page(LANDSCAPE if key in self.contents.wide_sections else PORTRAIT)
            yield self.heading(ContentsEntry(key, entry_title(section.title, section.key), 0), self.styles.h1)
            yield from self.section_blocks(section_index, section.blocks)
            if section.key == SIGNOFF_KEY:
                yield from self.signature_block()
        if not self.contents.has_signoff:
            yield self.new_page(PORTRAIT)
            yield self.heading(ContentsEntry(SIGNOFF_KEY, SIGNOFF_TITLE, 0), self.styles.h1)
            yield from self.signature_block()

    def new_page(self, template: str) -> PageBreakIfNotEmpty:
        """A page break to a page of `template` (none when the current page is still empty: it takes the
        template), the frame's size for what follows."""
        self.frame_width, self.frame_height = _frame_size(template)
        return PageBreakIfNotEmpty(nextTemplate=template)

    def section_blocks(self, section_index: int, blocks) -> Iterator[Flowable]:
        table_index = 0
        for block in blocks:
            if isinstance(block, Paragraph):
                yield self.paragraph(block.text)
            elif isinstance(block, Facts):
                yield from self.facts(block)
            elif isinstance(block, Chart):
                yield from self.chart(block)
            elif isinstance(block, TableRecord):
                entry = ContentsEntry(table_key(section_index, table_index), entry_title(block.title, block.key), 1)
                yield from self.table(block, entry)
                table_index += 1

    def paragraph(self, text) -> ParagraphFlowable:
        text = clean_text(str(text))
        if len(text) > MAX_PARAGRAPH_CHARS:
            left_out = len(text) - MAX_PARAGRAPH_CHARS
            text = f"{text[:MAX_PARAGRAPH_CHARS]}… ({left_out:,} more characters left out)"
        return self.para(text)

    def facts(self, block: Facts) -> Iterator[Flowable]:
        if block.title:
            yield CondPageBreak(60)
            yield self.para(entry_title(block.title, ""), self.styles.h3, bold=True)
        rows = []
        for item in block.items:
            item = tuple(item) if isinstance(item, (list, tuple)) else (item,)
            label = clean_text(str(item[0])) if item else ""
            rows.append((label, format_fact(item[1] if len(item) > 1 else None)))
        yield self.facts_table(rows, label_share=0.5)
        yield Spacer(1, 8)

    def chart(self, block: Chart) -> Iterator[Flowable]:
        width = self.frame_width
        height = round(width * CHART_HEIGHT_SHARE)
        yield CondPageBreak(height + 40)
        yield self.para(entry_title(block.title, block.kind), self.styles.h3, bold=True)
        drawing = self.drawing(block, width=width, height=height)
        if isinstance(drawing, str):
            yield self.note(drawing)
            return
        yield FittedDrawing(drawing, max_width=width, max_height=self.frame_height * 0.8)
        if block.caption:
            yield self.note(block.caption)
        yield Spacer(1, 8)

    def drawing(self, block: Chart, *, width: float, height: float) -> Drawing | str:
        """The chart's drawing, or the note printed instead: a kind nobody draws (a snapshot older or newer
        than the code), or data its drawer cannot draw, leaves a note, never a failed report."""
        drawer = report_registry.chart_drawer(block.kind)
        if drawer is None:
            return f"This chart ({clean_text(str(block.kind))}) cannot be drawn by this version of Bringup."
        try:
            drawing = drawer(block.data, width=width, height=height)
        except Exception:  # a drawer's bug or odd data must not cost the customer the whole report
            logger.exception("Report chart %r could not be drawn", block.kind)
            return "This chart could not be drawn from its data."
        if not isinstance(drawing, Drawing):
            return "This chart could not be drawn from its data."
        return drawing

    def table(self, block: TableRecord, entry: ContentsEntry) -> Iterator[Flowable]:
        yield CondPageBreak(110)
        yield self.heading(entry, self.styles.h2)
        count = block.row_count if isinstance(block.row_count, int) else 0
        described = f"{count:,} row{'' if count == 1 else 's'}."
        yield self.note(f"{described} {clean_text(str(block.note))}" if block.note else described)
        if not block.columns:
            yield self.note("This table has no columns.")
            return
        layout = table_layout(block.columns, width=self.frame_width, fonts=self.fonts,
                              verdict_column=block.verdict_column)
        shown = block.summary_rows if isinstance(block.summary_rows, int) else 0
        rows = block.rows if self.edition == "full" else islice(block.rows, max(shown, 0))
        source = RowSource(rows)
        yield RowTable(layout, source, counter=self.counter)
        # platypus asks for the next flowable only once the table's last piece is laid out; the snapshot
        # reader skips unread rows when the next block is read, so a table cut short here would lose rows.
        if not source.exhausted:
            raise RuntimeError(f"Table {block.key!r} was not laid out to its end.")
        if source.read == 0:
            yield self.note("This table has no rows.")
        elif self.edition == "summary" and count > source.read:
            yield self.note(f"Showing the first {source.read:,} of {count:,} rows: {count - source.read:,} more "
                            f"rows in the full edition.")
        yield Spacer(1, 8)

    # Cover, contents, signature --------------------------------------------------------------------

    def cover(self) -> Iterator[Flowable]:
        project, styles = self.project, self.styles
        cover_entry = ContentsEntry("cover", "Cover", 0)
        yield Heading(markup("ACCEPTANCE REPORT · 验收报告", self.fonts.bold), styles.kicker, entry=cover_entry)
        yield self.para(_text(project.get("name")), styles.cover_title, bold=True)
        if project.get("name_zh"):
            yield self.para(project["name_zh"], styles.cover_subtitle)
        yield self.para(_text(project.get("code")), styles.cover_code)
        yield self.facts_table(self.cover_facts())
        yield Spacer(1, 18)
        yield self.para("Cluster", styles.h3, bold=True)
        yield self.cluster_table()
        if self.signature is not None:
            yield self.para(self.signed_mark(), styles.signed, bold=True)

    def cover_facts(self) -> list[tuple[str, str]]:
        project, report = self.project, self.report
        customer, integrator = self.bilingual(project, "customer_name"), self.bilingual(self.meta_part("integrator"),
                                                                                       "name")
        generated = format_moment(report.get("generated_at"))
        if report.get("generated_by"):
            generated = f"{generated} by {_text(report['generated_by'])}"
        edition = "Full" if self.edition == "full" else "Summary: the first rows of each table"
        return [
            ("Customer", customer), ("Integrator", integrator), ("Site", _text(project.get("site"))),
            ("Start date", format_value(project.get("start_date"), "date")),
            ("Target date", format_value(project.get("target_date"), "date")),
            ("Report version", _text(report.get("version"))), ("Report id", _text(report.get("id"))),
            ("Generated", generated), ("Edition", edition),
        ]

    @staticmethod
    def bilingual(part: dict, field: str) -> str:
        names = [clean_text(str(part[key])) for key in (field, f"{field}_zh") if part.get(key)]
        return "\n".join(names) or NONE_SHOWN

    def cluster_table(self) -> RowTable:
        cluster = self.meta_part("cluster")
        columns = [Column(key, label, "", "int", 1) for key, label in CLUSTER_FIGURES]
        layout = table_layout(columns, width=self.frame_width, fonts=self.fonts)
        row = [cluster.get(key) for key, _ in CLUSTER_FIGURES]
        return RowTable(layout, RowSource(iter([row])), counter=RowCounter(None))

    def contents_pages(self) -> Iterator[Flowable]:
        yield Heading(markup("Contents", self.fonts.bold), self.styles.h1,
                      entry=ContentsEntry("contents", "Contents", 0))
        for entry in self.contents.entries:
            yield ContentsLine(entry, self.fonts)

    def signed_mark(self) -> str:
        signature = self.signature or {}
        return f"Signed {format_moment(signature.get('signed_at'))} by {_text(signature.get('name'))}"

    def signature_block(self) -> Iterator[Flowable]:
        yield CondPageBreak(200)
        yield self.para("Signature", self.styles.h2, bold=True)
        if self.signature is None:
            yield self.note("To be signed by the customer's representative.")
            yield SignatureLines(SIGNATURE_FIELDS, self.fonts)
            return
        signature = self.signature
        hashes = signature.get("original_sha256")
        hashes = hashes if isinstance(hashes, dict) else {}
        yield self.para(self.signed_mark(), self.styles.signed, bold=True)
        if signature.get("statement"):
            yield self.para(signature["statement"])
        yield self.facts_table([
            ("Signed by", _text(signature.get("name"))), ("Title", _text(signature.get("title"))),
            ("Signed at", format_moment(signature.get("signed_at"))),
            ("Report version signed", _text(signature.get("version"))),
            ("Original PDF, SHA-256", _text(hashes.get("pdf"))),
            ("Original Excel workbook, SHA-256", _text(hashes.get("xlsx"))),
        ], label_share=0.32)
        yield from self.decision_block(signature)
        yield self.note("This signed copy repeats the report it was signed on; the SHA-256 above identify the "
                        "original files, which the project keeps unchanged.")

    def decision_block(self, signature: dict) -> Iterator[Flowable]:
        """The customer's decision on the signed copy: accepted, or accepted with exceptions listing every open
        punch item and waiver recorded in the signature, and their comments. Nothing for a signature made
        before decisions were recorded."""
        if not signature.get("decision"):
            return
        exceptions = signature.get("exceptions") if isinstance(signature.get("exceptions"), dict) else {}
        items, waivers = exceptions.get("punch_items") or [], exceptions.get("waivers") or []
        internal = exceptions.get("internal_punch_items") or 0
        yield Spacer(1, 6)
        yield self.para(f"Decision: {_text(signature.get('decision_label') or signature['decision'])}",
                        self.styles.h3, bold=True)
        if signature.get("comments"):
            yield self.para(f"Comments: {signature['comments']}")
        if not (items or waivers or internal):
            yield self.note("No punch item was open and no waiver recorded when it was signed.")
            return
        yield self.note(f"Accepted with these exceptions, as they stood when it was signed: {len(items):,} open "
                        f"punch item(s) shown to the customer, {internal:,} internal open punch item(s) (counted, "
                        f"not listed), {len(waivers):,} waiver(s).")
        if items:
            yield self.para("Open punch items", self.styles.h3, bold=True)
            yield self.exception_table(EXCEPTION_ITEM_COLUMNS, (
                [item.get("id"), item.get("title"), item.get("severity_label") or item.get("severity"),
                 item.get("status_label") or item.get("status"), item.get("object")] for item in items))
        if waivers:
            yield self.para("Waivers", self.styles.h3, bold=True)
            yield self.exception_table(EXCEPTION_WAIVER_COLUMNS, (
                [waiver.get("stage"), waiver.get("items"), waiver.get("reason"), waiver.get("recorded_by"),
                 format_moment(waiver.get("recorded_at"))] for waiver in waivers))

    def exception_table(self, columns: list[Column], rows) -> RowTable:
        layout = table_layout(columns, width=self.frame_width, fonts=self.fonts)
        return RowTable(layout, RowSource(iter(rows)), counter=RowCounter(None))

    # Page furniture -------------------------------------------------------------------------------

    def draw_page_furniture(self, canvas, document) -> None:
        """Header (the project; the signature or the document's name) and footer (the report's id and
        version, the edition, "Page n of N") on every page."""
        self.book.last_page = max(self.book.last_page, canvas.getPageNumber())
        width, height = document.pageTemplate.pagesize
        regular, bold = self.fonts.regular, self.fonts.bold
        left, right = MARGIN_X, width - MARGIN_X
        canvas.saveState()
        header_right = self.signed_mark() if self.signature is not None else "Acceptance report"
        header_right = ellipsize(header_right, regular, RUNNING_SIZE, (right - left) / 2)
        header_right_width = regular.width(header_right, RUNNING_SIZE)
        if self.signature is not None:
            canvas.setFillColor(SIGNED_COLOUR)
        regular.draw(canvas, right - header_right_width, height - HEADER_BASELINE, header_right, RUNNING_SIZE)
        canvas.setFillColor(colors.black)
        project_line = ellipsize(self.project_line(), bold, RUNNING_SIZE, right - left - header_right_width - 16)
        bold.draw(canvas, left, height - HEADER_BASELINE, project_line, RUNNING_SIZE)
        canvas.setStrokeColor(RULE)
        canvas.setLineWidth(0.6)
        canvas.line(left, height - HEADER_BASELINE - 6, right, height - HEADER_BASELINE - 6)
        canvas.line(left, FOOTER_BASELINE + 11, right, FOOTER_BASELINE + 11)
        canvas.setFillColor(MUTED)
        regular.draw(canvas, left, FOOTER_BASELINE, self.footer_line(), RUNNING_SIZE)
        page_text = f"Page {canvas.getPageNumber()} of "
        total_at = right - TOTAL_ROOM
        regular.draw(canvas, total_at - regular.width(page_text, RUNNING_SIZE), FOOTER_BASELINE, page_text,
                     RUNNING_SIZE)
        canvas.translate(total_at, FOOTER_BASELINE)
        canvas.doForm(PAGES_TOTAL_FORM)
        canvas.restoreState()

    def project_line(self) -> str:
        project = self.project
        names = [str(project[key]) for key in ("name", "name_zh", "code") if project.get(key)]
        return clean_text(" · ".join(names)) or NONE_SHOWN

    def footer_line(self) -> str:
        return (f"Report {_text(self.report.get('id'))} · version {_text(self.report.get('version'))} · "
                f"{self.edition} edition")


class SignatureLines(Flowable):
    """The blank block the customer signs on paper: a label and a line for each field."""

    LINE_HEIGHT = 30.0

    def __init__(self, fields: tuple[str, ...], fonts: Fonts) -> None:
        super().__init__()
        self.fields = fields
        self.fonts = fonts

    def wrap(self, availWidth, availHeight):
        self.width = availWidth
        self.height = self.LINE_HEIGHT * len(self.fields)
        return self.width, self.height

    def draw(self):
        canvas = self.canv
        canvas.setStrokeColor(MUTED)
        canvas.setLineWidth(0.6)
        for index, field in enumerate(self.fields):
            baseline = self.height - (index + 1) * self.LINE_HEIGHT + 8
            self.fonts.regular.draw(canvas, 0, baseline, field, 9.5)
            canvas.line(90, baseline - 2, self.width * 0.75, baseline - 2)
