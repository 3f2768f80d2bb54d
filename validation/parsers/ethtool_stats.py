"""`ethtool -S <if>` (NIC statistics) output: one `name: value` counter per line, under a
"NIC statistics:" header, as the mlx5 driver prints its port counters (rx_discards_phy,
rx_crc_errors_phy, tx_pause_ctrl_phy, rx_prio3_pause, rx_prio3_discards, ...).

Each "NIC statistics:" header starts an interface; a preceding `ethtool -S <if>` command line or a
banner (`===== mlx5_0 eth0 =====`, as a loop's `echo` prints it) names it. Output filtered through
grep keeps only counter lines with no header: they are one interface, until a counter seen again
starts the next. Values are whole numbers (the kernel hands ethtool u64 counters); anything else on a
counter line is refused with its line number, so an annotated paste is not mistaken for a reading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import ParsedResult, ParseError, last_line_no, parse_int, shown, split_lines

TOOL = "ethtool_stats"

_HEADER = re.compile(r"^NIC statistics\s*:\s*$")
_COMMAND = re.compile(r"\bethtool\s+(?:-S|--statistics)\s+(?P<interface>[^\s|;>]+)")
# Patterns that cannot backtrack: no two adjacent parts can take the same characters (a 20 MB line must cost
# one pass, not hours). A banner's marks and a value's spaces are stripped in Python instead.
_BANNER_MARKS = "=#*-"
_COUNTER = re.compile(r"^(?P<name>[A-Za-z0-9_.\[\]-]{1,80})[ \t]*:(?P<value>.*)$")
# A mlx5 port with many channels prints a few thousand counters; far more is a repeated paste, not one port.
MAX_COUNTERS = 50_000
MAX_INTERFACES = 4096


@dataclass(kw_only=True)
class EthtoolStatsResult(ParsedResult):
    tool: str = TOOL
    interface: str | None = None
    counters: dict[str, int] = field(default_factory=dict)
    line_no: int = 1


def parse(text: str) -> list[EthtoolStatsResult]:
    lines = split_lines(text)
    results: list[EthtoolStatsResult] = []
    pending: str | None = None
    current: EthtoolStatsResult | None = None
    total = 0
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        if _HEADER.match(stripped):
            current = _start(results, pending, line.no)
            pending = None
        elif command := _COMMAND.search(stripped):
            pending, current = command["interface"], None
        elif banner := _banner_name(stripped):
            pending, current = banner.split()[-1], None
        elif (counter := _COUNTER.match(stripped)) and counter["value"].strip():
            name, value = counter["name"], counter["value"].strip()
            if current is None or name in current.counters:
                current = _start(results, pending, line.no)
                pending = None
            current.counters[name] = _value(value, line.no, name)
            total += 1
            if total > MAX_COUNTERS:
                raise ParseError(line.no, f"more than {MAX_COUNTERS} counters",
                                 "one `ethtool -S` output per interface (split the file)")
        elif current is not None:
            current = None  # prose after the table: a later counter line starts a new interface
    if not results:
        raise ParseError(
            last_line_no(lines),
            "no NIC counters found",
            "'NIC statistics:' and then 'rx_discards_phy: 0'-style lines, as `ethtool -S <if>` prints them",
        )
    return results


def _banner_name(stripped: str) -> str:
    """The name inside a `===== mlx5_0 eth0 =====` banner ('' when the line is none): two marks or more at
    each end, a name without marks between."""
    if len(stripped) < 5 or stripped[:2].strip(_BANNER_MARKS) or stripped[-2:].strip(_BANNER_MARKS):
        return ""
    name = stripped.strip(_BANNER_MARKS).strip()
    return name if name and not any(mark in name for mark in "=#*") else ""


def _start(results: list[EthtoolStatsResult], interface: str | None, line_no: int) -> EthtoolStatsResult:
    if len(results) == MAX_INTERFACES:
        raise ParseError(line_no, f"more than {MAX_INTERFACES} interfaces", "at most that many per upload")
    results.append(EthtoolStatsResult(interface=interface, line_no=line_no))
    return results[-1]


def _value(token: str, line_no: int, name: str) -> int:
    if not re.fullmatch(r"[0-9]{1,20}", token):
        raise ParseError(line_no, f"counter {name} is {shown(token)}, not a whole number",
                         "a counter's value as ethtool prints it (digits only)")
    return parse_int(token, line_no, name)
