"""`ibstatus` output: one result per `Infiniband device 'mlx5_0' port 1 status:` block.

States are printed with their numeric code ("4: ACTIVE"); both are kept. The rate line carries
width and speed ("200 Gb/sec (4X HDR)"). A GID of "unknown" (an Ethernet port) is null.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import (
    ParsedResult,
    ParseError,
    last_line_no,
    optional_text,
    parse_float,
    parse_int,
    parse_int_or_hex,
    shown,
    split_lines,
)

TOOL = "ibstatus"

_DEVICE = re.compile(r"^Infiniband device\s+'(?P<device>[^']+)'\s+port\s+(?P<port>\S+)\s+status:\s*$")
_KEY_VALUE = re.compile(r"^(?P<key>[a-z_ ]+):\s*(?P<value>.*)$")
_CODED = re.compile(r"^(?P<code>[0-9]+):\s*(?P<name>\S.*)$")
_RATE = re.compile(r"^(?P<rate>\S+)\s*Gb/sec(?:\s*\((?P<width>[0-9]+X)\s*(?P<speed>[A-Za-z0-9]*)\))?\s*$")


@dataclass(kw_only=True)
class IbstatusPort(ParsedResult):
    tool: str = TOOL
    device: str
    port: int
    default_gid: str | None = None
    base_lid: int | None = None
    sm_lid: int | None = None
    state: str | None = None
    state_code: int | None = None
    physical_state: str | None = None
    physical_state_code: int | None = None
    rate_gbps: float | None = None
    width: str | None = None
    speed: str | None = None
    link_layer: str | None = None
    line_no: int = 1


def parse(text: str) -> list[IbstatusPort]:
    lines = split_lines(text)
    results: list[IbstatusPort] = []
    for line in lines:
        text_ = line.stripped
        if match := _DEVICE.match(text_):
            port = parse_int(match["port"], line.no, "the port number")
            results.append(IbstatusPort(device=match["device"], port=port, line_no=line.no))
        elif results and (match := _KEY_VALUE.match(text_)):
            _apply(results[-1], match["key"].strip(), match["value"].strip(), line.no)
    if not results:
        raise ParseError(
            last_line_no(lines),
            "no device block found",
            "\"Infiniband device 'mlx5_0' port 1 status:\" lines",
        )
    return results


def _apply(port: IbstatusPort, key: str, value: str, line_no: int) -> None:
    if key == "default gid":
        port.default_gid = None if value == "unknown" else optional_text(value)
    elif key == "base lid":
        port.base_lid = parse_int_or_hex(value, line_no, "base lid")
    elif key == "sm lid":
        port.sm_lid = parse_int_or_hex(value, line_no, "sm lid")
    elif key == "state":
        port.state_code, port.state = _coded(value, line_no, key)
    elif key == "phys state":
        port.physical_state_code, port.physical_state = _coded(value, line_no, key)
    elif key == "rate":
        match = _RATE.match(value)
        if not match:
            raise ParseError(
                line_no, f"rate {shown(value)} is not readable", "a rate such as '200 Gb/sec (4X HDR)'"
            )
        port.rate_gbps = parse_float(match["rate"], line_no, "rate")
        port.width, port.speed = match["width"], match["speed"] or None
    elif key == "link_layer":
        port.link_layer = optional_text(value)


def _coded(value: str, line_no: int, key: str) -> tuple[int, str]:
    match = _CODED.match(value)
    if not match:
        raise ParseError(
            line_no, f"{key} {shown(value)} is not readable", f"'<code>: <NAME>' for {key}, e.g. '4: ACTIVE'"
        )
    return parse_int(match["code"], line_no, key), match["name"].strip()
