"""`ibstat` output: one result per CA port, in the order the tool printed them.

ibstat lists CAs in its own (lexicographic) order, mlx5_10 before mlx5_2; that order is kept.
CA-level lines (firmware, node GUID) come before the first `Port N:` line; the lines after it
belong to that port until the next `Port` or `CA` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import (
    ParsedResult,
    ParseError,
    last_line_no,
    normalise_guid,
    optional_float,
    optional_int,
    optional_text,
    parse_int,
    split_lines,
)

TOOL = "ibstat"

_CA = re.compile(r"^CA\s+'(?P<name>[^']+)'\s*$")
_PORT = re.compile(r"^Port\s+(?P<port>\S+):\s*$")
_KEY_VALUE = re.compile(r"^(?P<key>[^:]+):\s*(?P<value>.*)$")


@dataclass(kw_only=True)
class IbstatPort(ParsedResult):
    tool: str = TOOL
    ca: str
    ca_type: str | None = None
    number_of_ports: int | None = None
    firmware_version: str | None = None
    hardware_version: str | None = None
    node_guid: str | None = None
    system_image_guid: str | None = None
    port: int
    state: str | None = None
    physical_state: str | None = None
    rate_gbps: float | None = None
    base_lid: int | None = None
    lmc: int | None = None
    sm_lid: int | None = None
    capability_mask: str | None = None
    port_guid: str | None = None
    link_layer: str | None = None
    line_no: int = 1


_CA_FIELDS = {
    "CA type": "ca_type",
    "Number of ports": "number_of_ports",
    "Firmware version": "firmware_version",
    "Hardware version": "hardware_version",
    "Node GUID": "node_guid",
    "System image GUID": "system_image_guid",
}
_PORT_FIELDS = {
    "State": "state",
    "Physical state": "physical_state",
    "Rate": "rate_gbps",
    "Base lid": "base_lid",
    "LMC": "lmc",
    "SM lid": "sm_lid",
    "Capability mask": "capability_mask",
    "Port GUID": "port_guid",
    "Link layer": "link_layer",
}
_INTEGERS = {"number_of_ports", "base_lid", "lmc", "sm_lid"}
_GUIDS = {"node_guid", "system_image_guid", "port_guid"}


def parse(text: str) -> list[IbstatPort]:
    lines = split_lines(text)
    results: list[IbstatPort] = []
    ca_name: str | None = None
    ca_fields: dict = {}
    port: IbstatPort | None = None
    for line in lines:
        text_ = line.stripped
        if match := _CA.match(text_):
            ca_name, ca_fields, port = match["name"], {}, None
        elif ca_name is None:
            continue  # a prompt or anything else before the first CA
        elif match := _PORT.match(text_):
            number = parse_int(match["port"], line.no, "the port number")
            port = IbstatPort(ca=ca_name, port=number, line_no=line.no, **ca_fields)
            results.append(port)
        elif match := _KEY_VALUE.match(text_):
            key, value = match["key"].strip(), match["value"].strip()
            if port is None and key in _CA_FIELDS:
                ca_fields[_CA_FIELDS[key]] = _typed(_CA_FIELDS[key], value, line.no)
            elif port is not None and key in _PORT_FIELDS:
                setattr(port, _PORT_FIELDS[key], _typed(_PORT_FIELDS[key], value, line.no))
    if not results:
        raise ParseError(
            last_line_no(lines), "no CA port found", "\"CA 'mlx5_0'\" followed by indented 'Port 1:' blocks"
        )
    return results


def _typed(name: str, value: str, line_no: int):
    if name in _INTEGERS:
        return optional_int(value, line_no, name)
    if name == "rate_gbps":
        return optional_float(value, line_no, "Rate")
    if name in _GUIDS:
        return None if optional_text(value) is None else normalise_guid(value, line_no)
    return optional_text(value)
