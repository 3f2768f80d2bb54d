"""Text for the acceptance report's PDF: a snapshot value shown by its column's kind, data turned into
Paragraph markup that can carry no markup of its own, and single-line text fitted into a width.

The snapshot's text is data: a cable label "=HYPERLINK(...)" or a note "<b>x</b> & co" is printed as
written. Paragraphs get it escaped, with each run of characters Helvetica lacks (Chinese, Greek) switched
to the core.fonts face that has it; table cells and running heads are drawn run by run with the same
families (pdf_tables.py), never parsed at all.

No Django here: reportlab, core.fonts and the snapshot format.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterator
from datetime import UTC, date, datetime
from xml.sax.saxutils import escape

from core.fonts import FontFamily
from projects.reports import BER_FLOOR, VERDICTS

NONE_SHOWN = "—"  # a value the snapshot holds as null (em dash: Helvetica has it, cp1252 0x97)
ELLIPSIS = "…"
MAX_CELL_CHARS = 2000  # more than three lines of the widest column: the rest is never measured
RIGHT_ALIGNED_KINDS = frozenset({"int", "float", "gbps", "ber", "celsius", "volts", "dbm", "percent", "bytes",
                                 "seconds"})
DECIMALS = {"float": 2, "gbps": 1, "celsius": 1, "volts": 2, "dbm": 2, "percent": 1, "seconds": 2}
BYTE_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))
BOOL_TEXT = {True: "yes", False: "no"}
# Characters a PDF cannot show and a reader cannot see (NUL, escape...): printed as a space.
_INVISIBLE = {code: " " for code in range(32) if chr(code) not in "\n\t"} | {0x7F: " "}


# ---------------------------------------------------------------------------------------------------
# Values


def format_value(value, kind: str) -> str:
    """A snapshot value as the report prints it in a column of `kind` (projects.reports.COLUMN_KINDS).
    A value of the wrong type for its kind (a hand-edited or hostile snapshot) is printed as its text."""
    if value is None:
        return NONE_SHOWN
    if isinstance(value, bool):
        return BOOL_TEXT[value]
    try:
        return _formatted(value, kind)
    except (TypeError, ValueError, OverflowError):
        return clean_text(str(value))


def _formatted(value, kind: str) -> str:
    if kind == "text":
        return clean_text(value if isinstance(value, str) else _number(value))
    if kind == "int":
        return f"{value:,}" if isinstance(value, int) else _number(value)
    if kind in DECIMALS:
        return f"{float(value):,.{DECIMALS[kind]}f}"
    if kind == "ber":
        number = float(value)
        return f"< {BER_FLOOR:.0e}" if 0 <= number < BER_FLOOR else f"{number:.1e}"
    if kind == "bytes":
        return _bytes(int(value))
    if kind == "date":
        return _date(value)
    if kind == "datetime":
        return _datetime(value)
    if kind == "verdict":
        return value.upper() if value in VERDICTS else clean_text(str(value))
    return clean_text(str(value))


def format_fact(value) -> str:
    """A Facts value, whose kind the snapshot does not say: counts with thousands separators, other
    numbers with two decimals, or in scientific notation when that would print 0.00."""
    if value is None:
        return NONE_SHOWN
    if isinstance(value, bool):
        return BOOL_TEXT[value]
    if isinstance(value, (int, float)):
        return _number(value)
    return clean_text(str(value))


def _number(value) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != 0 and abs(value) < 0.01:
            return f"{value:.1e}"
        return f"{value:,.2f}"
    return str(value)


def _bytes(size: int) -> str:
    for unit, factor in BYTE_UNITS:
        if abs(size) >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size} B"


def _date(value: str) -> str:
    text = str(value)
    try:
        return date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        return clean_text(text)


def _datetime(value: str) -> str:
    """ISO text as "YYYY-MM-DD HH:MM" in UTC (the column's header says so): the snapshot keeps the
    offset it was written with, the reader of a report compares times across pages."""
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M")


def format_moment(value) -> str:
    """A meta or signature timestamp for the cover and the running heads: "2026-11-30 09:15 UTC"."""
    if not value:
        return NONE_SHOWN
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return clean_text(str(value))
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def pdf_date(value) -> str | None:
    """A timestamp as a PDF date ("D:20261130091500+00'00'"), None if it is not an ISO timestamp."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    moment = moment.astimezone(UTC) if moment.tzinfo else moment
    return moment.strftime("D:%Y%m%d%H%M%S+00'00'")


def clean_text(text: str) -> str:
    """Text with control characters a reader cannot see turned into spaces."""
    return text if text.isprintable() else text.translate(_INVISIBLE)


# ---------------------------------------------------------------------------------------------------
# Paragraph markup


def has_wide_characters(text: str) -> bool:
    """Whether the text has Chinese (or other full-width) characters, which wrap between any two of them
    rather than at spaces only."""
    return not text.isascii() and any(unicodedata.east_asian_width(char) in "WF" for char in text)


def markup(text: str, family: FontFamily) -> str:
    """The text as Paragraph markup: escaped (text is data, never markup), line breaks kept, and each run
    the family's first face (the paragraph's own font) lacks wrapped in a <font> of the face that has it."""
    text = clean_text(str(text)).replace("\t", " ")
    parts = []
    for face, run in family.runs(text):
        escaped = escape(run).replace("\n", "<br/>")
        parts.append(escaped if face is family.faces[0] else f'<font face="{face.name}">{escaped}</font>')
    return "".join(parts)


# ---------------------------------------------------------------------------------------------------
# Fitting text into a width


def fit_lines(text: str, family: FontFamily, size: float, width: float, max_lines: int) -> list[str]:
    """The text broken into at most `max_lines` lines no wider than `width` (at spaces where it can, else
    between characters, as Chinese is), the last line cut with an ellipsis when the text is longer."""
    text = text[:MAX_CELL_CHARS]
    if "\n" not in text and family.width(text, size) <= width:
        return [text]
    lines = []
    for line in _wrapped(text, family, size, width):
        if len(lines) == max_lines:
            lines[-1] = ellipsize(lines[-1] + ELLIPSIS, family, size, width)
            break
        lines.append(line)
    return lines or [""]


def _wrapped(text: str, family: FontFamily, size: float, width: float) -> Iterator[str]:
    for paragraph in text.split("\n"):
        rest = paragraph.strip()
        while family.width(rest, size) > width:
            head, rest = _break_line(rest, family, size, width)
            yield head
        yield rest


def _break_line(text: str, family: FontFamily, size: float, width: float) -> tuple[str, str]:
    """The longest head of the text that fits (at least one character, so wrapping always advances),
    ending at its last space when it has one, and the rest."""
    fits = _longest_fitting(text, family, size, width)
    space = text.rfind(" ", 1, fits + 1)
    cut = space if space > 0 else fits
    return text[:cut].rstrip(), text[cut:].lstrip()


def _longest_fitting(text: str, family: FontFamily, size: float, width: float) -> int:
    low, high = 1, len(text)  # text[:low] is taken even when it does not fit
    while low < high:
        middle = (low + high + 1) // 2
        if family.width(text[:middle], size) <= width:
            low = middle
        else:
            high = middle - 1
    return low


def ellipsize(text: str, family: FontFamily, size: float, width: float) -> str:
    """The text itself when it fits, else as much of it as fits followed by an ellipsis."""
    if family.width(text, size) <= width:
        return text
    body = text.removesuffix(ELLIPSIS)
    room = width - family.width(ELLIPSIS, size)
    if room <= 0:
        return ""
    keep = _longest_fitting(body, family, size, room) if body else 0
    if keep and family.width(body[:keep], size) > room:
        keep = 0
    return body[:keep].rstrip() + ELLIPSIS


def is_finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
