"""The report's table of contents, bookmarks and page numbers, in one pass over the layout.

platypus's TableOfContents needs the whole document laid out twice (multiBuild), and each pass of the
1,024-server report lays out 90,000 table rows. Here instead:

1. the snapshot is read once without laying anything out (`contents_of`): its sections and tables, in
   order, are the contents' entries, so the contents pages have their final length before the body;
2. each entry's page number is printed as a PDF form XObject (`page_number_form`), drawn by name where
   the number goes and defined once the body is laid out and every title's page is known
   (`define_page_forms`); "Page n of N" prints N the same way;
3. each title (`Heading`) bookmarks where it lands and adds its outline entry as it is drawn.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from reportlab.graphics import renderPDF
from reportlab.lib import colors
from reportlab.platypus import Flowable, Paragraph

from core.fonts import Fonts
from delivery.reports.pdf_tables import comfortable_width
from delivery.reports.pdf_text import clean_text, ellipsize
from projects.reports import TableRecord, read_snapshot

SIGNOFF_KEY = "signoff"
SIGNOFF_TITLE = "Sign-off"
MAX_TITLE_CHARS = 240  # a title is one or two lines: a longer one (a damaged snapshot) is cut
PAGES_TOTAL_FORM = "pages-total"
NUMBER_FONT = "Helvetica"
NUMBER_ROOM = 48  # points kept at the right of a contents line for its page number
CONTENTS_SIZES = {0: 10.0, 1: 8.5}
CONTENTS_HEIGHTS = {0: 17.0, 1: 13.0}
CONTENTS_INDENT = 14.0
LEADER_COLOUR = colors.HexColor("#9aa3ae")


@dataclass(frozen=True)
class ContentsEntry:
    """A section (level 0) or a table (level 1): its title, and the name of its bookmark."""

    key: str
    title: str
    level: int


@dataclass(frozen=True)
class Contents:
    meta: dict
    entries: tuple[ContentsEntry, ...]
    has_signoff: bool  # the snapshot has a sign-off section, which the signature block closes
    wide_sections: frozenset[str] = frozenset()  # keys of the sections laid out on landscape pages


def entry_title(title, fallback: str) -> str:
    text = " ".join(clean_text(str(title or "")).split())
    return text[:MAX_TITLE_CHARS] if text else fallback


def section_key(index: int) -> str:
    return f"section-{index}"


def table_key(section_index: int, table_index: int) -> str:
    return f"table-{section_index}-{table_index}"


def contents_of(source, *, narrow_width: float) -> Contents:
    """The entries of the snapshot in `source`, in the order the body prints them, and the sections with
    a table wider than `narrow_width` (a portrait frame). Reads every record (a table's rows are skipped
    by the reader) and keeps only the titles."""
    records = read_snapshot(source)
    entries: list[ContentsEntry] = []
    wide: set[str] = set()
    has_signoff = False
    for section_index, section in enumerate(records.sections):
        key = section_key(section_index)
        entries.append(ContentsEntry(key, entry_title(section.title, section.key), 0))
        has_signoff = has_signoff or section.key == SIGNOFF_KEY
        tables = (block for block in section.blocks if isinstance(block, TableRecord))
        for table_index, table in enumerate(tables):
            entries.append(ContentsEntry(table_key(section_index, table_index), entry_title(table.title, table.key), 1))
            if comfortable_width(table.columns) > narrow_width:
                wide.add(key)
    if not has_signoff:
        entries.append(ContentsEntry(SIGNOFF_KEY, SIGNOFF_TITLE, 0))
    return Contents(meta=records.meta, entries=tuple(entries), has_signoff=has_signoff, wide_sections=frozenset(wide))


def page_number_form(key: str) -> str:
    return f"page-of-{key}"


class PageBook:
    """The page each entry landed on, filled as titles are drawn."""

    def __init__(self) -> None:
        self.pages: dict[str, int] = {}
        self.last_page = 0

    def landed(self, key: str, page: int) -> None:
        self.pages.setdefault(key, page)


class Heading(Paragraph):
    """A title that is also a destination: where it is drawn, it bookmarks itself, adds its outline entry
    and tells the PageBook its page. It never splits (a title moves whole to the next page)."""

    def __init__(self, text: str, style, *, entry: ContentsEntry | None = None, book: PageBook | None = None,
                 outline_level: int | None = None) -> None:
        super().__init__(text, style)
        self.entry = entry
        self.book = book
        self.outline_level = entry.level if outline_level is None and entry else outline_level

    def split(self, availWidth, availHeight):  # platypus names its arguments so
        return []

    def draw(self):
        if self.entry is not None:
            canvas = self.canv
            canvas.bookmarkHorizontal(self.entry.key, 0, self.height + 6)
            canvas.addOutlineEntry(self.entry.title, self.entry.key, level=self.outline_level)
            if self.book is not None:
                self.book.landed(self.entry.key, canvas.getPageNumber())
        super().draw()


class ContentsLine(Flowable):
    """One line of the contents: the title, dot leaders, and its page number (a form defined at the end),
    the whole line a link to the title."""

    def __init__(self, entry: ContentsEntry, fonts: Fonts) -> None:
        super().__init__()
        self.entry = entry
        self.fonts = fonts

    def wrap(self, availWidth, availHeight):
        self.width = availWidth
        self.height = CONTENTS_HEIGHTS.get(self.entry.level, CONTENTS_HEIGHTS[1])
        return self.width, self.height

    def draw(self):
        canvas, entry = self.canv, self.entry
        size = CONTENTS_SIZES.get(entry.level, CONTENTS_SIZES[1])
        family = self.fonts.bold if entry.level == 0 else self.fonts.regular
        indent = CONTENTS_INDENT * entry.level
        baseline = (self.height - size) / 2 + 1
        title = ellipsize(entry.title, family, size, self.width - indent - NUMBER_ROOM - 12)
        family.draw(canvas, indent, baseline, title, size)
        canvas.saveState()
        canvas.setStrokeColor(LEADER_COLOUR)
        canvas.setLineWidth(0.6)
        canvas.setDash(0.6, 2.4)
        leader_start = indent + family.width(title, size) + 6
        leader_end = self.width - NUMBER_ROOM + 6
        if leader_end > leader_start:
            canvas.line(leader_start, baseline, leader_end, baseline)
        canvas.restoreState()
        canvas.saveState()
        canvas.translate(self.width, baseline)
        canvas.doForm(page_number_form(entry.key))
        canvas.restoreState()
        canvas.linkRect("", entry.key, (0, 0, self.width, self.height), relative=1, thickness=0)


def define_page_forms(canvas, entries: tuple[ContentsEntry, ...], book: PageBook, *, size: float) -> None:
    """Define, once the body is laid out, the forms the contents and the footers drew by name: each
    entry's page number (right-aligned on the point it was drawn at) and the number of pages."""
    for entry in entries:
        page = book.pages.get(entry.key)
        _number_form(canvas, page_number_form(entry.key), str(page) if page else "—",
                     CONTENTS_SIZES.get(entry.level, CONTENTS_SIZES[1]), right=True)
    _number_form(canvas, PAGES_TOTAL_FORM, str(book.last_page), size, right=False)


def _number_form(canvas, name: str, text: str, size: float, *, right: bool) -> None:
    width = NUMBER_ROOM * 2
    canvas.beginForm(name, lowerx=-width if right else 0, lowery=-size, upperx=0 if right else width,
                     uppery=size * 1.5)
    canvas.setFont(NUMBER_FONT, size)
    (canvas.drawRightString if right else canvas.drawString)(0, 0, text)
    canvas.endForm()


class FittedDrawing(Flowable):
    """A chart's reportlab Drawing, scaled down (never up) to fit the frame."""

    def __init__(self, drawing, *, max_width: float, max_height: float) -> None:
        super().__init__()
        self.drawing = drawing
        width, height = float(drawing.width or 1), float(drawing.height or 1)
        self.scale = min(1.0, max_width / max(width, 1.0), max_height / max(height, 1.0))
        self.drawing_size = (width, height)

    def wrap(self, availWidth, availHeight):
        width, height = self.drawing_size
        return width * self.scale, height * self.scale

    def draw(self):
        self.canv.scale(self.scale, self.scale)
        renderPDF.draw(self.drawing, self.canv, 0, 0)


class LazyStory:
    """The story platypus lays out, made as it is consumed. The build loop treats the story as a list it
    eats from the front (`len`, `[0]`, `del [0]`, `[0:0] = parts`, `insert(0, f)`); this list holds only
    what was handed back to it and pulls the next flowable from `flowables` when that runs out, so a
    90,000-row report never has all its flowables (or its rows) in memory at once."""

    def __init__(self, flowables: Iterator[Flowable]) -> None:
        self._head: list[Flowable] = []
        self._tail = flowables

    def _fill(self, count: int) -> None:
        while len(self._head) < count:
            following = next(self._tail, None)
            if following is None:
                return
            self._head.append(following)

    def __len__(self) -> int:
        self._fill(1)
        return len(self._head)

    def __getitem__(self, index):
        if isinstance(index, slice):
            self._fill(index.stop if index.stop is not None and index.stop >= 0 else 1 << 62)
        else:
            self._fill(index + 1)
        return self._head[index]

    def __setitem__(self, index, value) -> None:
        self._head[index] = value

    def __delitem__(self, index) -> None:
        del self._head[index]

    def insert(self, index: int, value: Flowable) -> None:
        self._head.insert(index, value)
