"""`lldpcli show neighbors` output: one result per neighbour (per local interface it was heard on).

Blocks start with `Interface: swp1, via: LLDP, RID: 10, Time: 0 day, 17:08:27`; the Chassis and
Port sections follow, indented. IDs keep their subtype ("mac", "ifname") apart from the value.
An output that lists no neighbours at all is valid and gives no result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import ParsedResult, ParseError, last_line_no, parse_int, split_lines

TOOL = "lldp"

_HEADER = re.compile(r"^LLDP neighbors:\s*$")
_INTERFACE = re.compile(
    r"^Interface:\s*(?P<interface>[^,\s]+),\s*via:\s*(?P<via>[^,]+?)"
    r"(?:,\s*RID:\s*(?P<rid>[^,]+?))?(?:,\s*Time:\s*(?P<age>.*?))?\s*$"
)
_SECTION = re.compile(r"^(?P<section>[A-Za-z][A-Za-z -]*):\s*$")
_KEY_VALUE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 -]*):\s+(?P<value>\S.*)$")
_TYPED_ID = re.compile(r"^(?P<kind>mac|ifname|ip|local|ifalias|hostname|agentid)\s+(?P<value>\S.*)$")
_CAPABILITY = re.compile(r"^(?P<name>[^,]+),\s*(?P<state>on|off)$")


@dataclass(kw_only=True)
class LldpNeighbor(ParsedResult):
    tool: str = TOOL
    interface: str
    via: str | None = None
    rid: int | None = None
    age: str | None = None
    chassis_id_type: str | None = None
    chassis_id: str | None = None
    system_name: str | None = None
    system_description: str | None = None
    management_ips: list[str] = field(default_factory=list)
    capabilities: dict[str, bool] = field(default_factory=dict)  # {"Bridge": True, "Router": False}
    port_id_type: str | None = None
    port_id: str | None = None
    port_description: str | None = None
    ttl: int | None = None
    line_no: int = 1


def parse(text: str) -> list[LldpNeighbor]:
    lines = split_lines(text)
    neighbors: list[LldpNeighbor] = []
    seen_header = False
    section: str | None = None
    for line in lines:
        text_ = line.stripped
        if _HEADER.match(text_):
            seen_header = True
        elif text_.startswith("Interface:"):
            neighbors.append(_read_interface(text_, line.no))
            section = None
        elif not neighbors:
            continue
        elif match := _SECTION.match(text_):
            section = match["section"]
        elif match := _KEY_VALUE.match(text_):
            _apply(neighbors[-1], section, match["key"], match["value"].strip(), line.no)
    if not neighbors and not seen_header:
        raise ParseError(
            last_line_no(lines),
            "no LLDP neighbour found",
            "'LLDP neighbors:' and 'Interface: <name>, via: LLDP, ...' blocks",
        )
    return neighbors


def _read_interface(text: str, line_no: int) -> LldpNeighbor:
    match = _INTERFACE.match(text)
    if not match:
        raise ParseError(
            line_no, "neighbour header not readable", "'Interface: swp1, via: LLDP, RID: 1, Time: ...'"
        )
    return LldpNeighbor(
        interface=match["interface"],
        via=match["via"],
        rid=parse_int(match["rid"], line_no, "RID") if match["rid"] else None,
        age=match["age"] or None,
        line_no=line_no,
    )


def _apply(neighbor: LldpNeighbor, section: str | None, key: str, value: str, line_no: int) -> None:
    if key == "ChassisID":
        neighbor.chassis_id_type, neighbor.chassis_id = _typed_id(value)
    elif key == "SysName":
        neighbor.system_name = value
    elif key == "SysDescr":
        neighbor.system_description = value
    elif key == "MgmtIP":
        neighbor.management_ips.append(value)
    elif key == "Capability" and (capability := _CAPABILITY.match(value)):
        neighbor.capabilities[capability["name"].strip()] = capability["state"] == "on"
    elif key == "PortID":
        neighbor.port_id_type, neighbor.port_id = _typed_id(value)
    elif key == "PortDescr":
        neighbor.port_description = value
    elif key == "TTL" and section == "Port":
        neighbor.ttl = parse_int(value, line_no, "TTL")


def _typed_id(value: str) -> tuple[str | None, str]:
    match = _TYPED_ID.match(value)
    return (match["kind"], match["value"].strip()) if match else (None, value)
