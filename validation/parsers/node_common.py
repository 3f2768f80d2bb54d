"""What the node-tool parsers (nvidia-smi, DCGM, kernel logs, bandwidth tests, storage benchmarks, Redfish,
ipmitool) share beyond base.py: bounds on hostile input, JSON read strictly, PCI addresses in one spelling,
and numbers with the unit suffixes these tools print.

Pure Python, like every parser. Bounds:
- a text output is refused when one of its lines is longer than MAX_LINE_CHARS (these tools print lines of
  a few hundred characters; a 10 MB line is a broken capture or an attack on the regexes' time);
- JSON is refused above its caller's size cap, nested deeper than MAX_JSON_DEPTH, or holding a number
  Python would turn into inf/NaN or a 4,000-digit integer (`json` accepts "NaN", "Infinity" and 1e999).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .base import Line, ParseError, shown

MAX_LINE_CHARS = 64 * 1024
MAX_JSON_DEPTH = 64
_JSON_NUMBER_DIGITS = 40  # a counter or a reading never needs more; Python's int() would take 4,300
_BRACKET = re.compile(r"[\[\]{}]")


def check_line_lengths(lines: list[Line], limit: int = MAX_LINE_CHARS) -> None:
    """ParseError at the first line longer than `limit` characters."""
    for line in lines:
        if len(line.text) > limit:
            raise ParseError(
                line.no,
                f"line is {len(line.text):,} characters long",
                f"lines of at most {limit:,} characters, as the tool prints them",
            )


def check_size(text: str, limit: int, what: str) -> None:
    if len(text) > limit:
        raise ParseError(1, f"{len(text):,} characters of {what}", f"at most {limit:,} characters")


def line_of(text: str, needle: str, default: int = 1) -> int:
    """The 1-based line where `needle` first occurs (for errors about JSON values), else `default`."""
    index = text.find(needle)
    return default if index < 0 else text.count("\n", 0, index) + 1


class Cursor:
    """Lines of successive items in a JSON text, found in order: each search starts where the last one
    ended, so naming the line of 10,000 jobs costs one pass over the text, not 10,000."""

    def __init__(self, text: str, first_line: int = 1):
        self.text = text
        self.position = 0
        self.line = first_line

    def line_of(self, needle: str) -> int:
        index = self.text.find(needle, self.position)
        if index < 0:
            return self.line
        self.line += self.text.count("\n", self.position, index)
        self.position = index
        return self.line


class LineIndex:
    """The line where each JSON string first appears in a text (and where each string's first 60 characters
    do, for long messages), built in one pass: naming the line of every item costs no rescan."""

    _STRING = re.compile(r'"([^"\\\n]{1,4000})"')

    def __init__(self, text: str, first_line: int = 1):
        self.first: dict[str, int] = {}
        self.first_line = first_line
        line, position = first_line, 0
        for match in self._STRING.finditer(text):
            line += text.count("\n", position, match.start())
            position = match.start()
            self.first.setdefault(match[1], line)
            if len(match[1]) > 60:
                self.first.setdefault(match[1][:60], line)

    def line(self, *needles: Any, default: int | None = None) -> int:
        """The line of the first needle found (a string's value, without its quotes); else `default`, else
        the text's first line."""
        for needle in needles:
            if isinstance(needle, str) and needle in self.first:
                return self.first[needle]
            if isinstance(needle, str) and needle[:60] in self.first:
                return self.first[needle[:60]]
        return self.first_line if default is None else default


class _BadNumber(ValueError):
    def __init__(self, token: str):
        super().__init__(token)
        self.token = token


def _strict_int(token: str) -> int:
    if len(token.lstrip("-")) > _JSON_NUMBER_DIGITS:
        raise _BadNumber(token)
    return int(token)


def _strict_float(token: str) -> float:
    value = float(token)
    if value in (float("inf"), float("-inf")) or len(token) > 2 * _JSON_NUMBER_DIGITS:
        raise _BadNumber(token)
    return value


def _refuse_constant(token: str) -> Any:
    raise _BadNumber(token)


def load_json(text: str, *, what: str, max_chars: int, first_line: int = 1) -> Any:
    """`json.loads` with the bounds above; every failure is a ParseError naming the line.
    `first_line` is the line of `text`'s first character in the whole output (text before JSON)."""
    check_size(text, max_chars, f"{what} JSON")
    try:
        data = json.loads(text, parse_int=_strict_int, parse_float=_strict_float, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ParseError(
            first_line - 1 + max(exc.lineno, 1), f"not valid JSON ({exc.msg})", f"the JSON {what} prints"
        ) from None
    except _BadNumber as exc:
        raise ParseError(
            first_line - 1 + line_of(text, exc.token),
            f"number {shown(exc.token)} is not a finite number of reasonable size",
            f"the JSON {what} prints",
        ) from None
    except RecursionError:
        raise ParseError(
            first_line - 1 + _deep_line(text), "JSON nested too deeply", f"the JSON {what} prints"
        ) from None
    except ValueError:  # e.g. an integer of thousands of digits inside a string-to-int conversion
        raise ParseError(first_line, "not valid JSON", f"the JSON {what} prints") from None
    if _depth(data) > MAX_JSON_DEPTH:
        raise ParseError(
            first_line - 1 + _deep_line(text),
            f"JSON nested more than {MAX_JSON_DEPTH} levels deep",
            f"the JSON {what} prints",
        )
    return data


def _depth(data: Any) -> int:
    """Nesting depth of parsed JSON, walked without recursion."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in value)
    return deepest


def _deep_line(text: str) -> int:
    """The line where brackets first nest past MAX_JSON_DEPTH (string contents not told apart: close enough
    to point at the place in an error message)."""
    depth = 0
    for match in _BRACKET.finditer(text):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            return text.count("\n", 0, match.start()) + 1
    return 1


def json_start(text: str) -> tuple[int, str]:
    """(line number, text from there) of the first line that starts a JSON document ('{' or '['): tools and
    shells print a few lines before it (a prompt, a warning). (1, text) when none does."""
    offset = 0
    for no, raw in enumerate(text.split("\n"), start=1):
        if raw.lstrip().startswith(("{", "[")):
            return no, text[offset:]
        offset += len(raw) + 1
    return 1, text


# ---------------------------------------------------------------------------------------------------
# PCI addresses

_PCI = re.compile(
    r"^(?:PCI:)?(?:(?P<domain>[0-9A-Fa-f]{1,8}):)?(?P<bus>[0-9A-Fa-f]{1,2}):(?P<device>[0-9A-Fa-f]{1,2})"
    r"(?:\.(?P<function>[0-7]))?$"
)


def pci_key(address: str | None) -> str | None:
    """One spelling for a GPU's PCI address, to match the tools' reports of the same GPU: nvidia-smi's
    "00000000:9B:00.0", the kernel's "PCI:0000:9b:00", DCGM's "00000000:9B:00.0" all become "0000:9b:00"
    (domain of 4 digits, lower case, no function: NVIDIA's XID lines print none). None when unreadable.
    Azure's 8-digit domains ("00000001:00:00.0") keep their significant digits."""
    if not address:
        return None
    match = _PCI.match(address.strip())
    if not match:
        return None
    domain = int(match["domain"] or "0", 16)
    return f"{domain:04x}:{int(match['bus'], 16):02x}:{int(match['device'], 16):02x}"


# ---------------------------------------------------------------------------------------------------
# Numbers with suffixes

_SUFFIXED = re.compile(r"(?P<number>[0-9]{1,20}(?:\.[0-9]{1,20})?)(?P<suffix>[kKMGT]?)")
_DECIMAL_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_suffixed(token: str, line_no: int, field: str) -> float:
    """fio's "1128.7k", "12.3k" IOPS, "2M": a decimal multiplier (fio's num2str uses 1000 for counts)."""
    match = _SUFFIXED.fullmatch(token.strip())
    if not match:
        raise ParseError(line_no, f"{field} is {shown(token)}, not a number", f"a number for {field} (k/M allowed)")
    return float(match["number"]) * _DECIMAL_SUFFIX[match["suffix"]]
