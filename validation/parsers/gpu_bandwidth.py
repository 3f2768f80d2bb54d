"""GPU copy bandwidth tools: `nvbandwidth` (text and `-j` JSON), the CUDA sample `bandwidthTest` and the CUDA
sample `p2pBandwidthLatencyTest`. Three tools, three entries in PARSERS ("nvbandwidth",
"cuda_bandwidth_test", "p2p_bandwidth_latency"); `parse` picks one by what the text holds.

nvbandwidth: one result per testcase. Text: "Running <name>." then the matrix's description
("memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"), its column header and rows (cells "N/A" are None),
and a "SUM <name> <value>" line (v0.5+); a testcase that did not run prints "Waived: ..." or "ERROR: ...".
JSON: `{"nvbandwidth": {"testcases": [{"name", "status", "bandwidth_matrix" (strings), "sum", "min",
"max", "average"}]}}`. The unit is the description's: GB/s for bandwidths, ns for the latency tests.
Old builds print 0.00 on a device-to-device matrix's diagonal (no copy to itself); it is kept as printed
but left out of the min/max/average the parser computes for text output.

bandwidthTest: the H2D, D2H and D2D sections (quick mode: one 32 MB row; range/shmoo: many rows), pinned or
pageable, in GB/s (MB/s in old CUDA samples, converted) whatever the separator (tabs, or spaces in a re-typed
paste). `h2d_gbs` etc. are the largest transfer's figure.

p2pBandwidthLatencyTest: the device list, the P2P connectivity matrix and every bandwidth/latency matrix
(unidirectional/bidirectional, P2P disabled/enabled, latency for GPU and CPU), each with its unit.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from .base import ParsedResult, ParseError, last_line_no, parse_float, parse_int, shown, split_lines
from .node_common import Cursor, check_line_lengths, check_size, json_start, load_json

MAX_TEXT_CHARS = 16 * 2**20
MAX_JSON_CHARS = 32 * 2**20
MAX_MATRIX = 1024  # rows or columns: GPUs (or processes, multi-node) of one run
MAX_TESTCASES = 2000

_FLOAT_CELL = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,12})?")


@dataclass(frozen=True, kw_only=True)
class Matrix:
    name: str  # nvbandwidth: the testcase; p2p: e.g. "unidirectional_p2p_enabled_bandwidth", "p2p_enabled_latency_gpu"
    title: str  # as printed
    unit: str  # "GB/s", "us", "ns", "" (connectivity)
    row_labels: tuple[str, ...]
    column_labels: tuple[str, ...]
    values: tuple[tuple[float | None, ...], ...]
    direction: str | None = None  # "unidirectional" / "bidirectional"
    p2p_enabled: bool | None = None
    side: str | None = None  # latency: "GPU" or "CPU"
    line_no: int = 1

    def cell(self, row: str | int, column: str | int) -> float | None:
        return self.values[self.row_labels.index(str(row))][self.column_labels.index(str(column))]

    def off_diagonal(self) -> list[tuple[str, str, float]]:
        """(row, column, value) of every measured cell not on the diagonal (row label == column label)."""
        return [
            (row, column, value)
            for row, cells in zip(self.row_labels, self.values, strict=True)
            for column, value in zip(self.column_labels, cells, strict=True)
            if value is not None and row != column
        ]


# ---------------------------------------------------------------------------------------------------
# nvbandwidth

NVBANDWIDTH = "nvbandwidth"

_NVB_RUNNING = re.compile(r"^Running (?P<name>[A-Za-z0-9_]{1,120})\.$")
_NVB_STATUS = re.compile(r"^(?P<status>Waived|ERROR|Error|Not Found|Passed)\s*:\s*(?P<message>.*)$")
_NVB_DESCRIPTION = re.compile(r"^(?:memcpy|memory latency|latency)\b.*\((?P<unit>GB/s|ns|us)\)\s*$")
_NVB_SUM = re.compile(r"^SUM (?P<name>[A-Za-z0-9_]{1,120}) (?P<value>\S+)$")
_NVB_VERSION = re.compile(r"^nvbandwidth Version:\s*(?P<version>\S+)")
_NVB_KEY = re.compile(r"^(?P<key>CUDA Runtime Version|CUDA Driver Version|Driver Version):\s*(?P<value>\S+)\s*$")
_NVB_DEVICE = re.compile(r"^Device (?P<index>[0-9]{1,4}): (?P<name>.+?)(?: \((?P<pci>[0-9a-fA-F:.]{7,20})\))?$")


@dataclass(frozen=True, kw_only=True)
class NvbandwidthTestcase(ParsedResult):
    tool: str = NVBANDWIDTH
    format: str  # "text" or "json"
    name: str
    # "Passed", "Waived", "Error", "Not Found". Text prints no status for a testcase that ran: "Passed" is
    # inferred there from the matrix having been printed.
    status: str | None
    message: str | None = None
    description: str | None = None
    unit: str | None = None
    matrix: Matrix | None = None
    sum: float | None = None
    min: float | None = None
    max: float | None = None
    average: float | None = None
    version: str | None = None
    driver_version: str | None = None
    cuda_runtime_version: str | None = None
    devices: tuple[str, ...] = ()
    line_no: int = 1


def parse_nvbandwidth(text: str) -> list[NvbandwidthTestcase]:
    first_line, body = json_start(text)
    if body.lstrip().startswith("{"):
        return _nvbandwidth_json(body, first_line)
    return _nvbandwidth_text(text)


def _nvbandwidth_json(text: str, first_line: int) -> list[NvbandwidthTestcase]:
    document = load_json(text, what="nvbandwidth -j", max_chars=MAX_JSON_CHARS, first_line=first_line)
    root = document.get("nvbandwidth") if isinstance(document, dict) else None
    if not isinstance(root, dict):
        raise ParseError(first_line, "no \"nvbandwidth\" object", "nvbandwidth -j output ({\"nvbandwidth\": {...}})")
    cases = root.get("testcases")
    if not isinstance(cases, list):
        raise ParseError(first_line, "no testcases list", "\"testcases\": [...] in nvbandwidth -j output")
    if len(cases) > MAX_TESTCASES:
        raise ParseError(first_line, f"{len(cases)} testcases", f"at most {MAX_TESTCASES}")
    common = {
        "version": _text(root.get("version")),
        "driver_version": _text(root.get("Driver Version")),
        "cuda_runtime_version": _text(root.get("CUDA Runtime Version")),
    }
    results = []
    cursor = Cursor(text, first_line)
    for case in cases:
        if not isinstance(case, dict) or not isinstance(case.get("name"), str):
            raise ParseError(first_line, "a testcase without a name", "{\"name\": ..., \"status\": ...}")
        name = case["name"]
        line_no = cursor.line_of(f'"{name}"')
        description = _text(case.get("bandwidth_description"))
        unit = _unit(description)
        matrix = None
        if case.get("bandwidth_matrix") is not None:
            matrix = _json_matrix(case["bandwidth_matrix"], name, description or "", unit or "", line_no)
        results.append(
            NvbandwidthTestcase(
                format="json",
                name=name,
                status=_text(case.get("status")),
                message=_text(case.get("error") or case.get("message")),
                description=description,
                unit=unit,
                matrix=matrix,
                sum=_json_number(case.get("sum"), line_no, "sum"),
                min=_json_number(case.get("min"), line_no, "min"),
                max=_json_number(case.get("max"), line_no, "max"),
                average=_json_number(case.get("average"), line_no, "average"),
                line_no=line_no,
                **common,
            )
        )
    return results


def _json_matrix(rows: Any, name: str, description: str, unit: str, line_no: int) -> Matrix:
    if not isinstance(rows, list) or len(rows) > MAX_MATRIX:
        raise ParseError(line_no, f"bandwidth_matrix of {name} is not a list of rows", "a list of rows of values")
    values = []
    for row in rows:
        if not isinstance(row, list) or len(row) > MAX_MATRIX:
            raise ParseError(line_no, f"a row of {name}'s matrix is not a list", "a list of values per row")
        values.append(tuple(_cell(str(cell), line_no, name) for cell in row))
    width = max((len(row) for row in values), default=0)
    return Matrix(
        name=name,
        title=description,
        unit=unit,
        row_labels=tuple(str(i) for i in range(len(values))),
        column_labels=tuple(str(i) for i in range(width)),
        values=tuple(values),
        line_no=line_no,
    )


@dataclass
class _Case:
    name: str
    line_no: int
    status: str | None = None
    message: str | None = None
    description: str | None = None
    unit: str | None = None
    header: tuple[str, ...] | None = None
    header_line: int = 0
    rows: list[tuple[str, tuple[float | None, ...]]] = field(default_factory=list)
    sum: float | None = None


def _nvbandwidth_text(text: str) -> list[NvbandwidthTestcase]:
    check_size(text, MAX_TEXT_CHARS, "nvbandwidth output")
    lines = split_lines(text)
    check_line_lengths(lines)
    info: dict[str, str] = {}
    devices: list[str] = []
    cases: list[_Case] = []
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        case = cases[-1] if cases else None
        if match := _NVB_RUNNING.match(stripped):
            if len(cases) >= MAX_TESTCASES:
                raise ParseError(line.no, f"more than {MAX_TESTCASES} testcases", f"at most {MAX_TESTCASES}")
            cases.append(_Case(match["name"], line.no))
        elif match := _NVB_VERSION.match(stripped):
            info["version"] = match["version"]
        elif match := _NVB_KEY.match(stripped):
            info[match["key"]] = match["value"]
        elif (match := _NVB_DEVICE.match(stripped)) and case is None and len(devices) < MAX_MATRIX:
            devices.append(stripped.split(":", 1)[1].strip())
        elif case is None:
            continue
        elif match := _NVB_STATUS.match(stripped):
            case.status = "Error" if match["status"].upper() == "ERROR" else match["status"]
            case.message = match["message"].strip() or None
        elif match := _NVB_DESCRIPTION.match(stripped):
            case.description, case.unit = stripped, match["unit"]
        elif match := _NVB_SUM.match(stripped):
            case.sum = parse_float(match["value"], line.no, f"SUM of {match['name']}")
        elif case.description and case.header is None and _is_column_header(stripped):
            case.header, case.header_line = tuple(stripped.split()), line.no
        elif case.header is not None and _ROW_START.match(stripped):
            _text_row(case, stripped, line.no)
    if not cases:
        raise ParseError(
            last_line_no(lines),
            "no nvbandwidth testcase found",
            "'Running <testcase>.' lines followed by a bandwidth matrix (or nvbandwidth -j JSON)",
        )
    common = {
        "version": info.get("version"),
        "driver_version": info.get("Driver Version"),
        "cuda_runtime_version": info.get("CUDA Runtime Version"),
        "devices": tuple(devices),
    }
    return [_finish_case(case, common) for case in cases]


_ROW_START = re.compile(r"^[0-9]{1,5}\s")


def _is_column_header(text: str) -> bool:
    tokens = text.split()
    return bool(tokens) and all(token.isdigit() and len(token) <= 5 for token in tokens)


def _text_row(case: _Case, text: str, line_no: int) -> None:
    tokens = text.split()
    label, cells = tokens[0], tokens[1:]
    if len(cells) != len(case.header or ()):
        raise ParseError(
            line_no,
            f"matrix row {label} of {case.name} has {len(cells)} values",
            f"{len(case.header or ())} values, one per column",
        )
    if len(case.rows) >= MAX_MATRIX:
        raise ParseError(line_no, f"more than {MAX_MATRIX} matrix rows", f"at most {MAX_MATRIX}")
    case.rows.append((label, tuple(_cell(cell, line_no, case.name) for cell in cells)))


def _finish_case(case: _Case, common: dict) -> NvbandwidthTestcase:
    matrix = None
    if case.header is not None:
        matrix = Matrix(
            name=case.name,
            title=case.description or "",
            unit=case.unit or "",
            row_labels=tuple(label for label, _ in case.rows),
            column_labels=case.header,
            values=tuple(values for _, values in case.rows),
            line_no=case.header_line,
        )
    cells: list[float] = []
    if matrix is not None:
        square_d2d = "device_to_device" in case.name and matrix.row_labels == matrix.column_labels
        cells = [value for _, _, value in matrix.off_diagonal()] if square_d2d else [
            value for row in matrix.values for value in row if value is not None
        ]
    status = case.status or ("Passed" if matrix is not None and matrix.values else None)
    return NvbandwidthTestcase(
        format="text",
        name=case.name,
        status=status,
        message=case.message,
        description=case.description,
        unit=case.unit,
        matrix=matrix,
        sum=case.sum,
        min=min(cells) if cells else None,
        max=max(cells) if cells else None,
        average=statistics.fmean(cells) if cells else None,
        line_no=case.line_no,
        **common,
    )


def _cell(token: str, line_no: int, what: str) -> float | None:
    token = token.strip()
    if token.upper() in ("N/A", "NA", "-"):
        return None
    if not _FLOAT_CELL.fullmatch(token):
        raise ParseError(line_no, f"{what} value {shown(token)} is not a number", "a number or N/A")
    return float(token)


def _unit(description: str | None) -> str | None:
    match = re.search(r"\((GB/s|ns|us)\)\s*$", description or "")
    return match[1] if match else None


def _json_number(value: Any, line_no: int, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(line_no, f"{what} is {shown(str(value))}", f"a number for {what}")
    return float(value)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    return text or None


# ---------------------------------------------------------------------------------------------------
# CUDA bandwidthTest

BANDWIDTH_TEST = "cuda_bandwidth_test"

_BT_TITLE = re.compile(r"^\[CUDA Bandwidth Test\] - Starting")
_BT_DEVICE = re.compile(r"^Device (?P<index>[0-9]{1,3}): (?P<name>.+)$")
_BT_MODE = re.compile(r"^(?P<mode>Quick|Range|Shmoo) Mode$")
_BT_SECTION = re.compile(
    r"^(?P<direction>Host to Device|Device to Host|Device to Device) Bandwidth, (?P<devices>[0-9]{1,3}) Device\(s\)$"
)
_BT_MEMORY = re.compile(r"^(?P<memory>PINNED|PAGEABLE|WRITE-COMBINED) Memory Transfers$", re.IGNORECASE)
_BT_HEADER = re.compile(r"^Transfer Size \(Bytes\)\s+Bandwidth\((?P<unit>GB/s|MB/s)\)$")
_BT_ROW = re.compile(r"^(?P<size>[0-9]{1,15})\s+(?P<bw>\S+)$")
_BT_RESULT = re.compile(r"^Result = (?P<result>PASS|FAIL|WAIVED)$")
_DIRECTIONS = {"Host to Device": "h2d", "Device to Host": "d2h", "Device to Device": "d2d"}


@dataclass(frozen=True, kw_only=True)
class BandwidthRow:
    direction: str  # "h2d", "d2h", "d2d"
    memory: str | None  # "pinned", "pageable"
    transfer_size_bytes: int
    bandwidth_gbs: float
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class CudaBandwidthTest(ParsedResult):
    tool: str = BANDWIDTH_TEST
    devices: tuple[str, ...] = ()  # "0: NVIDIA A100-SXM4-40GB"
    mode: str | None = None  # "quick", "range", "shmoo"
    memory: str | None = None
    h2d_gbs: float | None = None
    d2h_gbs: float | None = None
    d2d_gbs: float | None = None
    rows: tuple[BandwidthRow, ...] = ()
    unit_printed: str | None = None
    result: str | None = None  # "PASS" / "FAIL" / "WAIVED" as printed
    complete: bool = False  # the "Result = ..." line was reached
    line_no: int = 1


def parse_bandwidth_test(text: str) -> list[CudaBandwidthTest]:
    check_size(text, MAX_TEXT_CHARS, "bandwidthTest output")
    lines = split_lines(text)
    check_line_lengths(lines)
    runs: list[dict] = []
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        if _BT_TITLE.match(stripped):
            runs.append(_new_run(line.no))
            continue
        run = runs[-1] if runs else None
        if match := _BT_SECTION.match(stripped):
            if run is None or run["result"] is not None:
                runs.append(_new_run(line.no))
                run = runs[-1]
            run["direction"] = _DIRECTIONS[match["direction"]]
            run["unit"] = None
        elif run is None:
            continue
        elif (match := _BT_DEVICE.match(stripped)) and not run["rows"] and len(run["devices"]) < 64:
            run["devices"].append(f"{match['index']}: {match['name'].strip()}")
        elif match := _BT_MODE.match(stripped):
            run["mode"] = match["mode"].lower()
        elif match := _BT_MEMORY.match(stripped):
            run["memory"] = match["memory"].lower()
        elif match := _BT_HEADER.match(" ".join(stripped.split())):
            run["unit"] = match["unit"]
            run["unit_printed"] = match["unit"]
        elif match := _BT_RESULT.match(stripped):
            run["result"] = match["result"]
        elif run.get("unit") and (match := _BT_ROW.match(stripped)):
            _bandwidth_row(run, match, line.no)
    if not runs:
        raise ParseError(
            last_line_no(lines),
            "no bandwidthTest output found",
            "'[CUDA Bandwidth Test] - Starting...' and 'Host to Device Bandwidth, 1 Device(s)' sections",
        )
    return [_finish_run(run) for run in runs]


def _new_run(line_no: int) -> dict:
    return {"line_no": line_no, "devices": [], "mode": None, "memory": None, "direction": None,
            "unit": None, "unit_printed": None, "rows": [], "result": None}  # fmt: skip


def _bandwidth_row(run: dict, match: re.Match, line_no: int) -> None:
    if run["direction"] is None:
        raise ParseError(line_no, "a bandwidth row before any direction", "'Host to Device Bandwidth, ...' first")
    if len(run["rows"]) >= 100_000:
        raise ParseError(line_no, "more than 100,000 bandwidth rows", "one bandwidthTest run per file")
    value = parse_float(match["bw"], line_no, "bandwidth")
    if run["unit"] == "MB/s":  # old samples: 10^6 bytes per second
        value = value / 1000
    run["rows"].append(
        BandwidthRow(
            direction=run["direction"],
            memory=run["memory"],
            transfer_size_bytes=parse_int(match["size"], line_no, "transfer size"),
            bandwidth_gbs=value,
            line_no=line_no,
        )
    )


def _finish_run(run: dict) -> CudaBandwidthTest:
    figures = {}
    for direction in ("h2d", "d2h", "d2d"):
        rows = [row for row in run["rows"] if row.direction == direction]
        figures[f"{direction}_gbs"] = max(rows, key=lambda row: row.transfer_size_bytes).bandwidth_gbs if rows else None
    return CudaBandwidthTest(
        devices=tuple(run["devices"]),
        mode=run["mode"],
        memory=run["memory"],
        rows=tuple(run["rows"]),
        unit_printed=run["unit_printed"],
        result=run["result"],
        complete=run["result"] is not None,
        line_no=run["line_no"],
        **figures,
    )


# ---------------------------------------------------------------------------------------------------
# p2pBandwidthLatencyTest

P2P = "p2p_bandwidth_latency"

_P2P_TITLE = re.compile(r"^\[P2P \(Peer-to-Peer\) GPU Bandwidth Latency Test\]")
_P2P_DEVICE = re.compile(
    r"^Device: (?P<index>[0-9]{1,4}), (?P<name>.+?), pciBusID: (?P<bus>[0-9a-fA-F]{1,4}), "
    r"pciDeviceID: (?P<device>[0-9a-fA-F]{1,4}), pciDomainID:\s*(?P<domain>[0-9a-fA-F]{1,8})$"
)
_P2P_ACCESS = re.compile(r"^Device=(?P<a>[0-9]{1,4}) (?P<can>CAN|CANNOT) Access Peer Device=(?P<b>[0-9]{1,4})$")
_P2P_MATRIX_TITLE = re.compile(
    r"^(?:(?P<direction>Unidirectional|Bidirectional) )?P2P=(?P<p2p>Enabled|Disabled) (?P<what>Bandwidth|Latency)"
    r"(?: \(P2P (?P<mode>Writes|Reads)\))?(?: Matrix)? \((?P<unit>GB/s|us)\)$"
)
_P2P_CONNECTIVITY = re.compile(r"^P2P Connectivity Matrix$")
_P2P_HEADER = re.compile(r"^(?P<side>D\\D|GPU|CPU)((?:\s+[0-9]{1,4}){1,1024})$")
_P2P_ROW = re.compile(r"^(?P<label>[0-9]{1,4})\s+(?P<cells>\S.*)$")
_P2P_DONE = re.compile(r"^NOTE: The CUDA Samples are not meant for performance measurements")


@dataclass(frozen=True, kw_only=True)
class P2pDevice:
    index: int
    name: str
    pci_bus_id: str  # "0000:07:00", from the printed hex bus/device/domain
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class P2pBandwidthLatency(ParsedResult):
    tool: str = P2P
    devices: tuple[P2pDevice, ...] = ()
    peer_access: tuple[tuple[int, int, bool], ...] = ()  # (device, peer, can access)
    connectivity: Matrix | None = None
    matrices: tuple[Matrix, ...] = ()
    complete: bool = False  # the closing NOTE line was reached
    line_no: int = 1

    def matrix(self, name: str) -> Matrix | None:
        return next((matrix for matrix in self.matrices if matrix.name == name), None)


def parse_p2p(text: str) -> list[P2pBandwidthLatency]:
    check_size(text, MAX_TEXT_CHARS, "p2pBandwidthLatencyTest output")
    lines = split_lines(text)
    check_line_lengths(lines)
    state: dict = {"devices": [], "access": [], "matrices": [], "connectivity": None, "complete": False}
    title: dict | None = None  # the matrix being read: its title's fields, then header and rows
    first = None
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        if _P2P_TITLE.match(stripped):
            first = first or line.no
        elif match := _P2P_DEVICE.match(stripped):
            _close(state, title)
            title = None
            state["devices"].append(_p2p_device(match, line.no))
        elif match := _P2P_ACCESS.match(stripped):
            if len(state["access"]) < MAX_MATRIX * MAX_MATRIX:
                state["access"].append((int(match["a"]), int(match["b"]), match["can"] == "CAN"))
        elif _P2P_CONNECTIVITY.match(stripped):
            _close(state, title)
            title = {"name": "connectivity", "title": stripped, "unit": "", "line_no": line.no}
        elif match := _P2P_MATRIX_TITLE.match(stripped):
            _close(state, title)
            title = _matrix_title(match, stripped, line.no)
        elif _P2P_DONE.match(stripped):
            _close(state, title)
            title = None
            state["complete"] = True
        elif title is not None and (match := _P2P_HEADER.match(stripped)):
            if title.get("header") is not None:  # the CPU half of a latency matrix
                _close(state, title)
                title = {**title, "rows": []}
            title["header"] = tuple(match[2].split())
            title["side"] = match["side"] if match["side"] in ("GPU", "CPU") else None
            title["rows"] = []
            title["header_line"] = line.no
        elif title is not None and title.get("header") is not None and (match := _P2P_ROW.match(stripped)):
            _p2p_row(title, match, line.no)
    _close(state, title)
    if not state["matrices"] and not state["devices"] and state["connectivity"] is None:
        raise ParseError(
            last_line_no(lines),
            "no p2pBandwidthLatencyTest output found",
            "'Device: 0, <name>, pciBusID: ...' lines and 'Unidirectional P2P=Enabled Bandwidth ... (GB/s)' matrices",
        )
    return [
        P2pBandwidthLatency(
            devices=tuple(state["devices"]),
            peer_access=tuple(state["access"]),
            connectivity=state["connectivity"],
            matrices=tuple(state["matrices"]),
            complete=state["complete"],
            line_no=first or 1,
        )
    ]


def _p2p_device(match: re.Match, line_no: int) -> P2pDevice:
    bus = f"{int(match['domain'], 16):04x}:{int(match['bus'], 16):02x}:{int(match['device'], 16):02x}"
    return P2pDevice(index=int(match["index"]), name=match["name"].strip(), pci_bus_id=bus, line_no=line_no)


def _matrix_title(match: re.Match, text: str, line_no: int) -> dict:
    direction = match["direction"].lower() if match["direction"] else None
    p2p = match["p2p"] == "Enabled"
    what = match["what"].lower()
    name = f"{direction + '_' if direction else ''}p2p_{match['p2p'].lower()}_{what}"
    if match["mode"] == "Reads":  # --p2p_read; writes are the default
        name += "_reads"
    return {"name": name, "title": text, "unit": match["unit"], "direction": direction, "p2p": p2p,
            "line_no": line_no}  # fmt: skip


def _p2p_row(title: dict, match: re.Match, line_no: int) -> None:
    cells = match["cells"].split()
    if len(cells) != len(title["header"]):
        raise ParseError(
            line_no,
            f"row {match['label']} of {shown(title['title'], 60)} has {len(cells)} values",
            f"{len(title['header'])} values, one per column",
        )
    if len(title["rows"]) >= MAX_MATRIX:
        raise ParseError(line_no, f"more than {MAX_MATRIX} matrix rows", f"at most {MAX_MATRIX}")
    title["rows"].append((match["label"], tuple(_cell(cell, line_no, title["name"]) for cell in cells)))


def _close(state: dict, title: dict | None) -> None:
    if title is None or not title.get("rows"):
        return
    name = title["name"]
    if title.get("side"):
        name = f"{name}_{title['side'].lower()}"
    matrix = Matrix(
        name=name,
        title=title["title"],
        unit=title["unit"],
        row_labels=tuple(label for label, _ in title["rows"]),
        column_labels=title["header"],
        values=tuple(values for _, values in title["rows"]),
        direction=title.get("direction"),
        p2p_enabled=title.get("p2p"),
        side=title.get("side"),
        line_no=title.get("header_line", title["line_no"]),
    )
    title["rows"] = []
    if name == "connectivity":
        state["connectivity"] = matrix
    elif len(state["matrices"]) < 64:
        state["matrices"].append(matrix)


# ---------------------------------------------------------------------------------------------------


def parse(text: str) -> list[ParsedResult]:
    """Any of the three, told apart by their own title or layout."""
    head = text[: 256 * 1024]
    if _P2P_TITLE.search(head) or re.search(r"^\s*(?:Uni|Bi)directional P2P=", head, re.MULTILINE):
        return list(parse_p2p(text))
    if _BT_TITLE.search(head) or re.search(r"^\s*Transfer Size \(Bytes\)", head, re.MULTILINE):
        return list(parse_bandwidth_test(text))
    return list(parse_nvbandwidth(text))
