"""NVUE's RoCE QoS on a Cumulus Linux switch: `nv show qos roce` (the switch's profile) and `nv show
interface <if> qos roce status` (what one port's ASIC runs). Both print a settings tree first:

                        operational    applied  description
    ------------------  -------------  -------  -----------
    pfc
      pfc-priority      3                       switch-prio on which PFC is enabled
      rx-enabled        yes                     PFC Rx Enabled status

(columns placed by the dashed ruler under the header, nesting by two-space indentation, a `-` for
"none"), then titled tables underlined with `=` ("RoCE PCP/DSCP->SP mapping configurations", "RoCE SP->TC
mapping and ETS configurations", pools), each with its own header and dashed ruler. A table's cells are
read by the columns its ruler marks. The interface a port-level output belongs to comes from its
`nv show interface <if> ...` command line when the capture kept it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import DASHES, Line, ParsedResult, ParseError, last_line_no, shown, split_lines

TOOL = "nvue_qos"

_COMMAND = re.compile(r"\bnv\s+show\s+(?:interface\s+(?P<interface>\S+)\s+)?qos\s+roce\b")
_RULER = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_TITLE_RULE = re.compile(r"^\s*={3,}\s*$")
_INTEGERS = re.compile(r"^[0-9]{1,3}(?:\s*,\s*[0-9]{1,3})*$")


@dataclass(kw_only=True)
class NvueQosRoceResult(ParsedResult):
    tool: str = TOOL
    interface: str | None = None  # None: the switch's global profile (`nv show qos roce`)
    # "pfc.pfc-priority" -> {"operational": "3", "applied": ""}
    settings: dict[str, dict[str, str]] = field(default_factory=dict)
    mode: str | None = None
    pfc_priority: int | None = None
    pfc_rx: str | None = None
    pfc_tx: str | None = None
    congestion_mode: str | None = None
    ecn_traffic_classes: list[int] = field(default_factory=list)
    trust_modes: list[str] = field(default_factory=list)
    dscp_to_priority: dict[str, int] = field(default_factory=dict)  # DSCP (as text: JSON keys) -> switch-prio
    priority_to_tc: dict[str, int] = field(default_factory=dict)  # switch-prio -> traffic class
    tables: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # every table, as printed
    line_no: int = 1


def parse(text: str) -> list[NvueQosRoceResult]:
    lines = split_lines(text)
    results: list[NvueQosRoceResult] = []
    interface: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if command := _COMMAND.search(line.stripped):
            interface = command["interface"]
        following = lines[index + 1] if index + 1 < len(lines) else None
        if _is_tree_header(line, following):
            result = NvueQosRoceResult(interface=interface, line_no=line.no)
            index = _read_tree(lines, index, result)
            index = _read_tables(lines, index, result)
            _interpret(result)
            results.append(result)
            interface = None
            continue
        index += 1
    if not results:
        raise ParseError(
            last_line_no(lines),
            "no NVUE RoCE QoS table found",
            "an 'operational  applied' header over a dashed ruler, as `nv show qos roce` prints it",
        )
    return results


def _is_tree_header(line: Line, following: Line | None) -> bool:
    words = line.stripped.split()
    return bool(words) and words[0] == "operational" and following is not None and bool(_RULER.match(following.text))


def _columns(ruler: str) -> list[tuple[int, int]]:
    """(start, end) of each dashed group; the last column runs to the end of the line."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", ruler)]
    return [(start, spans[i + 1][0] if i + 1 < len(spans) else 10**6) for i, (start, _) in enumerate(spans)]


def _cells(text: str, columns: list[tuple[int, int]]) -> list[str]:
    """A row's cells: split on the gaps between them when that gives one per column (a row printed out of
    line with its ruler, as a long DSCP list makes it), else cut at the ruler's columns (blank cells)."""
    split = re.split(r"\s{2,}", text.strip())
    if len(split) == len(columns) and text[: columns[0][1]].strip():
        return split
    return [text[start:end].strip() for start, end in columns]


def _read_tree(lines: list[Line], index: int, result: NvueQosRoceResult) -> int:
    header, ruler = lines[index].text, lines[index + 1].text
    columns = _columns(ruler)
    names = ["key", *header[columns[1][0]:].split()] if len(columns) > 1 else ["key"]
    parents: list[str] = []
    index += 2
    while index < len(lines):
        line = lines[index]
        following = lines[index + 1] if index + 1 < len(lines) else None
        if not line.stripped or (following is not None and _TITLE_RULE.match(following.text)):
            return index
        indent = len(line.text) - len(line.text.lstrip(" "))
        depth = indent // 2
        cells = _cells(line.text, columns)
        key = cells[0]
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,60}", key):
            raise ParseError(line.no, f"setting name {shown(key)}", "an NVUE setting name such as pfc-priority")
        parents = parents[:depth] + [key]
        values = {name: value for name, value in zip(names[1:], cells[1:], strict=False) if name != "description"}
        if any(values.values()):
            result.settings[".".join(parents)] = values
        index += 1
    return index


def _read_tables(lines: list[Line], index: int, result: NvueQosRoceResult) -> int:
    while index < len(lines):
        line = lines[index]
        if not line.stripped:
            index += 1
            continue
        following = lines[index + 1] if index + 1 < len(lines) else None
        if following is None or not _TITLE_RULE.match(following.text):
            return index  # the output is over (a prompt, another command)
        title = line.stripped
        index += 2
        rows: list[dict[str, str]] = []
        if index + 1 < len(lines) and _RULER.match(lines[index + 1].text) and not DASHES.match(lines[index].text):
            header, columns = lines[index].text, _columns(lines[index + 1].text)
            names = [header[start:end].strip() or "#" for start, end in columns]
            index += 2
            while index < len(lines) and lines[index].stripped:
                after = lines[index + 1] if index + 1 < len(lines) else None
                if after is not None and _TITLE_RULE.match(after.text):
                    break
                rows.append(dict(zip(names, _cells(lines[index].text, columns), strict=True)))
                index += 1
        else:
            while index < len(lines) and lines[index].stripped:  # "No Data" and the like
                index += 1
        result.tables[title] = rows
    return index


def _value(result: NvueQosRoceResult, path: str) -> str | None:
    """A setting's operational value, else its applied one; `-` and blanks are None."""
    values = result.settings.get(path) or {}
    for name in ("operational", "applied"):
        value = (values.get(name) or "").strip()
        if value and value != "-":
            return value
    return None


def _integers(text: str | None, what: str, line_no: int) -> list[int]:
    if not text:
        return []
    if not _INTEGERS.match(text):
        raise ParseError(line_no, f"{what} is {shown(text)}", f"a comma-separated list of numbers for {what}")
    return [int(v) for v in text.split(",")]


def _interpret(result: NvueQosRoceResult) -> None:
    result.mode = _value(result, "mode")
    priority = _integers(_value(result, "pfc.pfc-priority"), "pfc-priority", result.line_no)
    result.pfc_priority = priority[0] if len(priority) == 1 else None
    result.pfc_rx = _value(result, "pfc.rx-enabled")
    result.pfc_tx = _value(result, "pfc.tx-enabled")
    result.congestion_mode = _value(result, "congestion-control.congestion-mode")
    result.ecn_traffic_classes = _integers(
        _value(result, "congestion-control.enabled-tc"), "enabled-tc", result.line_no
    )
    trust = _value(result, "trust.trust-mode") or ""
    result.trust_modes = [t.strip() for t in trust.split(",") if t.strip()]
    for title, rows in result.tables.items():
        if "DSCP->SP" in title:
            for row in rows:
                prio = _integers(row.get("switch-prio"), "switch-prio", result.line_no)
                for dscp in _integers(row.get("dscp") if row.get("dscp") != "-" else "", "dscp", result.line_no):
                    if prio:
                        result.dscp_to_priority[str(dscp)] = prio[0]
        elif "SP->TC" in title:
            for row in rows:
                prio = _integers(row.get("switch-prio"), "switch-prio", result.line_no)
                tc = _integers(row.get("traffic-class"), "traffic-class", result.line_no)
                if prio and tc:
                    result.priority_to_tc[str(prio[0])] = tc[0]
