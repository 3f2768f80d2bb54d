"""NVIDIA Cumulus Linux NVUE's LLDP tables: one LldpNeighbor per row.

- `nv show interface lldp` (Cumulus Linux 5.0+): every interface with its neighbour,
  `Interface  Speed  Type  Remote Host  Remote Port`. A server running lldpd shows its MAC address as the
  remote port; a blank Speed is a port that negotiated nothing.
- `nv show interface <swp> lldp neighbor` (5.1+): one interface's neighbours,
  `Neighbor  Remote IP  Model  SW Version  Remote Port`. The table does not name the interface, so the
  command line must be kept above it (a loop over interfaces captures one command line per table).

Columns are cut where the dashed ruler under the header puts them, not at white space: a cell may be
blank or hold spaces. `nv show interface lldp-detail` prints lldpd's own text: validation.parsers.lldp.
"""

from __future__ import annotations

import re

from .base import DASHES, Line, ParseError, last_line_no, shown, split_lines
from .lldp import LldpNeighbor

TOOL = "nvue_lldp"

_ALL_HEADER = re.compile(r"^\s*Interface\s+Speed\s+Type\s+Remote Host\s+Remote Port\s*$")
_ONE_HEADER = re.compile(r"^\s*Neighbor\s+Remote IP\s+Model\s+SW Version\s+Remote Port\s*$")
_RULER = re.compile(r"^\s*-+(?:\s+-+)+\s*$")
_COMMAND = re.compile(r"\bnv\s+show\s+interface\s+(?P<interface>\S+)\s+lldp\s+neighbor\s*$")
_MAC = re.compile(r"^[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}$")
_PROMPT = re.compile(r"^\S+@\S+:\S*[$#]")
_ALL_COLUMNS = ("interface", "speed", "type", "remote_host", "remote_port")
_ONE_COLUMNS = ("neighbor", "remote_ip", "model", "sw_version", "remote_port")


def _spans(ruler: str) -> list[tuple[int, int | None]]:
    starts = [m.start() for m in re.finditer(r"-+", ruler)]
    return [(start, starts[i + 1] if i + 1 < len(starts) else None) for i, start in enumerate(starts)]


def _cells(text: str, spans: list[tuple[int, int | None]]) -> list[str]:
    return [text[start:end].strip() if end is not None else text[start:].strip() for start, end in spans]


def _port_id(value: str) -> tuple[str, str]:
    return ("mac", value.lower()) if _MAC.match(value) else ("ifname", value)


def parse(text: str) -> list[LldpNeighbor]:
    lines = split_lines(text)
    neighbors: list[LldpNeighbor] = []
    tables = 0
    interface: str | None = None  # of the last `nv show interface <swp> lldp neighbor` command seen
    index = 0
    while index < len(lines):
        line = lines[index]
        if command := _COMMAND.search(line.stripped):
            interface = command["interface"]
        header = _ALL_HEADER.match(line.text) or _ONE_HEADER.match(line.text)
        if header is None:
            index += 1
            continue
        per_interface = bool(_ONE_HEADER.match(line.text))
        if index + 1 >= len(lines) or not _RULER.match(lines[index + 1].text):
            raise ParseError(line.no + 1, "no dashed ruler under the header", "'---------  -----  ...' under it")
        if per_interface and interface is None:
            raise ParseError(line.no, "a neighbour table without its interface",
                             "the command line 'nv show interface <swp> lldp neighbor' above the table")
        spans = _spans(lines[index + 1].text)
        columns = _ONE_COLUMNS if per_interface else _ALL_COLUMNS
        if len(spans) != len(columns):
            raise ParseError(lines[index + 1].no, f"{len(spans)} columns in the ruler", f"{len(columns)} columns")
        index += 2
        tables += 1
        while index < len(lines) and _is_row(lines[index]):
            row = dict(zip(columns, _cells(lines[index].text, spans), strict=True))
            neighbor = _neighbor(row, interface, lines[index])
            if neighbor is not None:
                neighbors.append(neighbor)
            index += 1
    if not tables:
        raise ParseError(
            last_line_no(lines),
            "no NVUE LLDP table found",
            "'Interface  Speed  Type  Remote Host  Remote Port' (nv show interface lldp) or "
            "'Neighbor  Remote IP  Model  SW Version  Remote Port' (nv show interface <swp> lldp neighbor)",
        )
    return neighbors


def _is_row(line: Line) -> bool:
    text = line.stripped
    return bool(text) and not DASHES.match(text) and not _PROMPT.match(text) and not text.startswith("nv ")


def _neighbor(row: dict[str, str], interface: str | None, line: Line) -> LldpNeighbor | None:
    local = row.get("interface") or interface
    remote = row.get("remote_host") or row.get("neighbor") or ""
    port = row.get("remote_port") or ""
    if not local:
        raise ParseError(line.no, f"row {shown(line.stripped)} names no interface", "an interface in column 1")
    if not remote and not port:
        return None  # an interface with no neighbour
    port_type, port_id = _port_id(port) if port else (None, None)
    return LldpNeighbor(
        tool=TOOL,
        interface=local,
        via="LLDP",
        system_name=remote or None,
        port_id_type=port_type,
        port_id=port_id,
        speed=row.get("speed") or None,
        management_ips=[row["remote_ip"]] if row.get("remote_ip") else [],
        line_no=line.no,
    )
