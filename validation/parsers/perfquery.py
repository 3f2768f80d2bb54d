"""`perfquery` output: the port counters of one (LID, port) per `# Port counters:` header.

Counter lines use dotted leaders (`SymbolErrorCounter:..............0`). The counters keep the
InfiniBand names; the three that soak sampling watches are also given the same snake_case names
mlxlink results use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import ParsedResult, ParseError, last_line_no, parse_int, parse_int_or_hex, split_lines

TOOL = "perfquery"

_HEADER = re.compile(
    r"^#\s*Port\s+(?P<extended>extended\s+)?counters:\s*Lid\s+(?P<lid>\S+)\s+port\s+(?P<port>\S+)"
    r"(?:\s*\(CapMask:\s*(?P<cap_mask>\S+?)\))?"
)
_COUNTER = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_]*):\.*(?P<value>\S+)\s*$")
_WATCHED = {
    "SymbolErrorCounter": "symbol_errors",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_down",
}


@dataclass(kw_only=True)
class PerfqueryResult(ParsedResult):
    tool: str = TOOL
    lid: int | None = None
    port: int | None = None
    extended: bool = False
    cap_mask: str | None = None
    symbol_errors: int | None = None
    link_error_recovery: int | None = None
    link_down: int | None = None
    counters: dict[str, int] = field(default_factory=dict)
    line_no: int = 1


def parse(text: str) -> list[PerfqueryResult]:
    lines = split_lines(text)
    results: list[PerfqueryResult] = []
    for line in lines:
        text_ = line.stripped
        if match := _HEADER.match(text_):
            results.append(
                PerfqueryResult(
                    lid=parse_int_or_hex(match["lid"], line.no, "the LID"),
                    port=parse_int(match["port"], line.no, "the port"),
                    extended=bool(match["extended"]),
                    cap_mask=match["cap_mask"],
                    line_no=line.no,
                )
            )
        elif match := _COUNTER.match(text_):
            if not results:  # counters without the header line (trimmed output)
                results.append(PerfqueryResult(line_no=line.no))
            value = parse_int_or_hex(match["value"], line.no, match["name"])
            results[-1].counters[match["name"]] = value
            if match["name"] in _WATCHED:
                setattr(results[-1], _WATCHED[match["name"]], value)
    if not results or not any(result.counters for result in results):
        raise ParseError(
            last_line_no(lines),
            "no port counters found",
            "'# Port counters: Lid N port N' and 'Name:....value' lines",
        )
    return results
