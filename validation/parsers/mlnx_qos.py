"""`mlnx_qos -i <if>` output (MLNX_OFED / DOCA): a host port's QoS as RoCE depends on it. The trust
state (pcp or dscp), the dscp2prio mapping (`prio:3 dscp:31,30,...,24,`), the receive buffers
(MLNX_OFED 5 and later: `Receive buffer size (bytes): 19872,220896,0,...,max_buffer_size=4151520`), the
cable length, the PFC table (`priority 0..7`, `enabled 0/1` per priority and, on newer drivers, the
`buffer` each priority uses) and the traffic classes (`tc: 3 ratelimit: unlimited, tsa: ets, bw: 10%`
with their `priority:` lines).

`mlnx_qos` prints the whole configuration after a change too (`mlnx_qos -i eth4 --pfc 0,0,0,1,...`), so a
setup log holds several: each "DCBX mode" (or trust line) starting again starts a new result, and the
nearest `mlnx_qos -i <if>` command line names its interface. Lines of other tools between them
(`+ sudo cma_roce_tos ...`) are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import ParsedResult, ParseError, last_line_no, parse_int, shown, split_lines

TOOL = "mlnx_qos"
PRIORITIES = 8

# The interface option after the command's name, searched from the name on (one pass: a pattern spanning both
# would rescan the line from every "mlnx_qos" in it).
_COMMAND_NAME = re.compile(r"\bmlnx_qos\b")
_INTERFACE_OPTION = re.compile(r"(?:^|\s)(?:-i|--interface)(?:=|\s+)(?P<interface>[^\s|;>=]+)")
_DCBX = re.compile(r"^DCBX mode\s*:\s*(?P<mode>.+)$", re.IGNORECASE)
_TRUST = re.compile(r"^(?:Priority\s+)?trust\s+(?:state|mode)\s*:\s*(?P<trust>\S+)", re.IGNORECASE)
_DSCP_ROW = re.compile(r"^prio\s*:\s*(?P<prio>[0-9]{1,3})\s+dscp\s*:\s*(?P<dscps>[0-9,\s]*)$", re.IGNORECASE)
_DEFAULT_PRIORITY = re.compile(r"^default priority\s*:\s*(?P<value>[0-9]{0,3})\s*$", re.IGNORECASE)
_BUFFERS = re.compile(r"^Receive buffer size \(bytes\)\s*:\s*(?P<sizes>.*)$", re.IGNORECASE)
_CABLE = re.compile(r"^Cable len\s*:\s*(?P<value>\S+)\s*$", re.IGNORECASE)
_PFC = re.compile(r"^PFC configuration\s*:\s*$", re.IGNORECASE)
_PFC_ROW = re.compile(r"^(?P<name>priority|enabled|buffer)\s+(?P<values>[0-9\s]+)$", re.IGNORECASE)
_TC = re.compile(r"^tc\s*:\s*(?P<tc>[0-9]{1,3})\s+(?P<rest>.*)$", re.IGNORECASE)
_TC_PRIORITY = re.compile(r"^priority\s*:\s*(?P<values>[0-9\s]+)$", re.IGNORECASE)


@dataclass(kw_only=True)
class TrafficClass:
    tc: int
    ratelimit: str | None = None
    tsa: str | None = None  # ets, strict or vendor
    bw_percent: int | None = None
    priorities: list[int] = field(default_factory=list)


@dataclass(kw_only=True)
class MlnxQosResult(ParsedResult):
    tool: str = TOOL
    interface: str | None = None
    dcbx_mode: str | None = None
    trust: str | None = None
    priority_dscps: list[list[int]] = field(default_factory=list)  # index = priority: the DSCPs mapped to it
    default_priority: int | None = None
    receive_buffer_bytes: list[int] | None = None  # per receive buffer
    max_buffer_bytes: int | None = None
    cable_length_m: int | None = None
    pfc_enabled: list[int] | None = None  # per priority, 0 or 1
    pfc_buffer: list[int] | None = None  # per priority, the receive buffer it uses
    traffic_classes: list[TrafficClass] = field(default_factory=list)
    line_no: int = 1


def parse(text: str) -> list[MlnxQosResult]:
    lines = split_lines(text)
    reader = _Reader()
    for line in lines:
        if line.stripped:
            reader.read(line.no, line.stripped)
    results = [r for r in reader.results if r.trust is not None or r.pfc_enabled is not None]
    if not results:
        raise ParseError(
            last_line_no(lines),
            "no mlnx_qos configuration found",
            "'Priority trust state: dscp' and a 'PFC configuration:' table, as `mlnx_qos -i <if>` prints them",
        )
    return results


class _Reader:
    def __init__(self) -> None:
        self.results: list[MlnxQosResult] = []
        self.interface: str | None = None
        self.in_pfc = False
        self.tc: TrafficClass | None = None

    @property
    def current(self) -> MlnxQosResult:
        if not self.results:
            self._start(1)
        return self.results[-1]

    def _start(self, line_no: int) -> None:
        if len(self.results) >= 4096:
            raise ParseError(line_no, "more than 4096 mlnx_qos outputs", "at most that many per upload")
        self.results.append(MlnxQosResult(interface=self.interface, line_no=line_no))
        self.in_pfc, self.tc = False, None

    def read(self, no: int, text: str) -> None:
        if command := _command_interface(text):
            self.interface = command
            self.in_pfc, self.tc = False, None
        elif match := _DCBX.match(text):
            self._start(no)
            self.current.dcbx_mode = match["mode"].strip()
        elif match := _TRUST.match(text):
            if self.current.trust is not None:
                self._start(no)
            self.current.trust = match["trust"].lower()
        elif match := _DSCP_ROW.match(text):
            self._dscp_row(no, int(match["prio"]), match["dscps"])
        elif match := _DEFAULT_PRIORITY.match(text):
            self.current.default_priority = int(match["value"]) if match["value"] else None
        elif match := _BUFFERS.match(text):
            self._buffers(no, match["sizes"])
        elif match := _CABLE.match(text):
            self.current.cable_length_m = parse_int(match["value"], no, "Cable len")
        elif _PFC.match(text):
            self.in_pfc, self.tc = True, None
        elif self.in_pfc and (match := _PFC_ROW.match(text)):
            self._pfc_row(no, match["name"].lower(), match["values"])
        elif match := _TC.match(text):
            self.in_pfc = False
            self.tc = _traffic_class(no, int(match["tc"]), match["rest"])
            self.current.traffic_classes.append(self.tc)
        elif self.tc is not None and (match := _TC_PRIORITY.match(text)):
            self.tc.priorities += [_priority(no, v) for v in match["values"].split()]
        else:
            self.in_pfc, self.tc = False, None  # another tool's line: the table it interrupts is over

    def _dscp_row(self, no: int, priority: int, dscps: str) -> None:
        _priority(no, str(priority))
        values = [parse_int(v, no, "a DSCP") for v in re.split(r"[,\s]+", dscps) if v]
        if any(not 0 <= v <= 63 for v in values):
            raise ParseError(no, f"DSCP out of range in {shown(dscps)}", "DSCP values from 0 to 63")
        table = self.current.priority_dscps
        while len(table) <= priority:
            table.append([])
        table[priority] = values

    def _buffers(self, no: int, sizes: str) -> None:
        values, maximum = [], None
        for item in (v.strip() for v in sizes.split(",")):
            if not item:
                continue
            if item.startswith("max_buffer_size="):
                maximum = parse_int(item.removeprefix("max_buffer_size="), no, "max_buffer_size")
            else:
                values.append(parse_int(item, no, "a receive buffer size"))
        self.current.receive_buffer_bytes = values
        self.current.max_buffer_bytes = maximum

    def _pfc_row(self, no: int, name: str, values: str) -> None:
        numbers = [parse_int(v, no, f"PFC {name}") for v in values.split()]
        if len(numbers) != PRIORITIES:
            raise ParseError(no, f"PFC {name} row has {len(numbers)} values", f"{PRIORITIES}, one per priority")
        if name == "enabled":
            if any(v not in (0, 1) for v in numbers):
                raise ParseError(no, f"PFC enabled row {shown(values)}", "0 or 1 per priority")
            self.current.pfc_enabled = numbers
        elif name == "buffer":
            self.current.pfc_buffer = numbers


def _command_interface(text: str) -> str | None:
    """The interface a `mlnx_qos -i <if>` command line names (None when the line is no such command)."""
    name = _COMMAND_NAME.search(text)
    option = _INTERFACE_OPTION.search(text, name.end()) if name else None
    return option["interface"] if option else None


def _priority(no: int, token: str) -> int:
    value = parse_int(token, no, "a priority")
    if not 0 <= value < PRIORITIES:
        raise ParseError(no, f"priority {value}", f"a priority from 0 to {PRIORITIES - 1}")
    return value


def _traffic_class(no: int, tc: int, rest: str) -> TrafficClass:
    """'ratelimit: unlimited, tsa: ets, bw: 9%' -> the class's settings."""
    settings = {}
    for part in rest.split(","):
        if ":" in part:
            key, value = part.split(":", 1)
            settings[key.strip().lower()] = value.strip()
    bw = settings.get("bw")
    bw_percent = parse_int(bw.rstrip("%"), no, "a traffic class's bw") if bw else None
    return TrafficClass(tc=tc, ratelimit=settings.get("ratelimit"), tsa=settings.get("tsa"), bw_percent=bw_percent)
