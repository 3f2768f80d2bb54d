"""What every tool-output parser shares: the one error type, line splitting and strict number reading.

Pure Python on purpose (no Django): parsers run in tasks, tests and the simulated runner alike.
Every parser turns malformed input into `ParseError` and nothing else, so a bad upload becomes a
message naming the line instead of a 500. Numbers are matched against explicit patterns before
`int()`/`float()` see them: that keeps out "nan", "inf", unicode digits and 10,000-digit strings
(which `int()` refuses with a different exception).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# `mpirun --tag-output` prefixes every line with the job, the rank and the stream: "[1,0]<stdout>:".
_MPI_OUTPUT_TAG = re.compile(r"^[ \t]*\[[0-9]+,[0-9]+\]<(?:stdout|stderr|stddiag)>:", re.MULTILINE)
_INT = re.compile(r"[+-]?[0-9]{1,30}")
_HEX = re.compile(r"0[xX][0-9a-fA-F]{1,32}")
_FLOAT = re.compile(r"[+-]?(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})(?:[eE][+-]?[0-9]{1,4})?")
DASHES = re.compile(r"^\s*-{3,}\s*$")
NOT_AVAILABLE = {"N/A", "NA", "n/a"}


class ParseError(Exception):
    """The input is not what the parser expected. `line_no` is 1-based, as an editor shows it."""

    def __init__(self, line_no: int, message: str, expected: str):
        self.line_no = line_no
        self.message = message
        self.expected = expected
        super().__init__(line_no, message, expected)

    def __str__(self) -> str:
        return f"line {self.line_no}: {self.message}; expected {self.expected}"


@dataclass(frozen=True, slots=True)  # slots: a 20 MB upload can be millions of lines
class Line:
    no: int
    text: str

    @property
    def stripped(self) -> str:
        return self.text.strip()


def split_lines(text: str) -> list[Line]:
    """Lines numbered from 1, with terminal colour codes (mlxlink colours its values) and mpirun's
    --tag-output prefixes removed, so a tool's lines read the same however they were captured."""
    text = _ANSI_ESCAPE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _MPI_OUTPUT_TAG.sub("", text)
    return [Line(no, raw) for no, raw in enumerate(text.split("\n"), start=1)]


def last_line_no(lines: list[Line]) -> int:
    return lines[-1].no if lines else 1


def shown(token: str, limit: int = 40) -> str:
    """A value quoted for an error message, cut short: garbage can be thousands of characters."""
    return repr(token if len(token) <= limit else token[:limit] + "...")


def parse_int(token: str, line_no: int, field: str) -> int:
    token = token.strip()
    if _INT.fullmatch(token):
        return int(token)
    raise ParseError(line_no, f"{field} is {shown(token)}, not a whole number", f"an integer for {field}")


def parse_int_or_hex(token: str, line_no: int, field: str) -> int:
    token = token.strip()
    if _HEX.fullmatch(token):
        return int(token, 16)
    return parse_int(token, line_no, field)


def parse_float(token: str, line_no: int, field: str) -> float:
    token = token.strip()
    if _FLOAT.fullmatch(token):
        value = float(token)
        if math.isfinite(value):
            return value
    raise ParseError(line_no, f"{field} is {shown(token)}, not a number", f"a finite number for {field}")


def is_not_available(token: str | None) -> bool:
    return token is None or token.strip() in NOT_AVAILABLE or token.strip() == ""


def optional_float(token: str | None, line_no: int, field: str) -> float | None:
    return None if is_not_available(token) else parse_float(token, line_no, field)


def optional_int(token: str | None, line_no: int, field: str) -> int | None:
    return None if is_not_available(token) else parse_int(token, line_no, field)


def optional_text(token: str | None) -> str | None:
    return None if is_not_available(token) else token.strip()


def normalise_guid(token: str, line_no: int) -> str:
    """GUIDs appear as 0x248a07030049aee0, 0xff08c43213b3f30 or bare hex; keep one spelling."""
    digits = token.strip().lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{1,16}", digits):
        raise ParseError(line_no, f"GUID {shown(token)} is not hexadecimal", "a GUID of up to 16 hex digits")
    return "0x" + digits.rjust(16, "0")


_PAIR_GAP = re.compile(r"[ \t]*\t[ \t]*| {2,}")


def key_values(text: str) -> Iterator[tuple[str, str]]:
    """`Key : value` pairs; several may share a line (perftest prints two).

    perftest separates the pairs with tabs, but output pasted into an issue, a wiki or a terminal
    log has the tabs expanded, so a gap of a tab or of two or more spaces separates pairs alike:
    "Number of qps   : 4            Transport type : IB". A colon starts a new pair only if such
    a gap comes between the previous value and the key before it; a colon without one belongs to
    the value. Keys may have padding before their colon ("rdma_cm QPs\t : OFF") or none
    ("Device: rxe0"). Callers bound the line length: each colon rescans only its own value."""
    key: str | None = None
    value_start = 0
    for colon in (match.start() for match in re.finditer(":", text)):
        if key is None:
            key, value_start = text[:colon].strip(), colon + 1
            continue
        # The would-be key ends where the padding before this colon starts.
        key_end = value_start + len(text[value_start:colon].rstrip(" \t"))
        gaps = list(_PAIR_GAP.finditer(text, value_start, key_end))
        if not gaps or gaps[-1].end() >= key_end:
            continue  # no gap before a key: the colon is part of the value ("12:30")
        gap = gaps[-1]
        if key:
            yield " ".join(key.split()), text[value_start : gap.start()].strip()
        key, value_start = text[gap.end() : key_end], colon + 1
    if key:
        yield " ".join(key.split()), text[value_start:].strip()


class ParsedResult:
    """Mixin for result dataclasses: `to_dict()` is what the JSON output and the database keep."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)  # type: ignore[call-overload]
