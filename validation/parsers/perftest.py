"""perftest output: ib_write_bw / ib_read_bw / ib_send_bw / ib_atomic_bw and the *_lat tools.

Each run prints a title ("RDMA_Write BW Test"), a `Key : value` block (device, QPs, MTU, link
type), the QP addresses, then a table. A file may hold several runs (a server's and a client's
output pasted together), so every title starts a result. Bandwidth is normalised to Gb/s whatever
unit the table used: `Gb/sec` (--report_gbits), `MB/sec` (older builds) or `MiB/sec` (current
builds). Both byte columns are the same unit: perftest divides by `format_factor`, which is 0x100000
(2^20 bytes) unless --report_gbits is given, whatever the header calls it. A duration run (-D) cannot
measure the peak and prints 0.00; that becomes null, as does a peak column the table lacks.
Settings read the same whether perftest's tabs survived or were expanded to spaces by a paste
(see base.key_values). The address block gives one QPN per QP on each side and, on RoCE, the GIDs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import (
    DASHES,
    Line,
    ParsedResult,
    ParseError,
    key_values,
    last_line_no,
    parse_float,
    parse_int,
    shown,
    split_lines,
)

TOOL = "perftest"

_TITLE_WORD = re.compile(r"[A-Za-z_]+")
_VERB_TO_TOOL = {"Send": "ib_send", "RDMA_Write": "ib_write", "RDMA_Read": "ib_read", "Atomic": "ib_atomic"}
_COMMAND = re.compile(r"\b(?P<name>ib_(?:write|read|send|atomic)_(?:bw|lat)|raw_ethernet_\w+)\b")
_CUDA_SIGNS = re.compile(r"--use_cuda|initializing CUDA|cuMemAlloc|CUDA device \d|Using CUDA", re.IGNORECASE)
_GPU_NAME = re.compile(r"device name = \[(?P<name>[^\]]+)\]")
_DURATION_RUN = re.compile(r"BW peak won't be measured|\s(?:-D|--duration)[\s=]+[0-9]", re.IGNORECASE)
_PROBLEM = re.compile(r"\b(couldn't|could not|unable|failed|failure|error)\b", re.IGNORECASE)
_LEADING_INT = re.compile(r"^\s*[0-9]+\s")
_BANNER = re.compile(r"^\*.*\*$")  # the server's "* Waiting for client to connect... *" box
_TITLE_MAX_CHARS = 120
# A sweep over every HCA and message size is a few hundred runs; a million titles is an attack on
# memory (each run becomes a result row), refused at the first title past the limit.
MAX_RUNS = 2000

# Gb/s per one unit of what the table printed. "MB/sec" is perftest's old label for the same 2^20-byte
# unit it now calls "MiB/sec" (format_factor 0x100000 in both), so both convert alike.
_MIB_PER_SEC_IN_GBPS = 8 * 0x100000 / 1e9
_BANDWIDTH_UNITS = {"Gb/sec": 1.0, "MB/sec": _MIB_PER_SEC_IN_GBPS, "MiB/sec": _MIB_PER_SEC_IN_GBPS}

# (pattern, key). Matched left to right over the column header line.
_COLUMN_SPECS = [
    (r"#bytes", "bytes"),
    (r"#sl", "sl"),
    (r"#iterations", "iterations"),
    (r"BW peak\[(?P<unit>[^\]]*)\]", "bw_peak"),
    (r"BW average\[(?P<unit>[^\]]*)\]", "bw_avg"),
    (r"MsgRate\[Mpps\]", "msg_rate_mpps"),
    (r"BW Port(?P<port>[12])\[(?P<unit>[^\]]*)\]", "bw_port"),
    (r"MsgRate Port(?P<port>[12])\[Mpps\]", "msg_rate_port"),
    (r"t_min\[(?P<unit>[^\]]*)\]", "t_min_us"),
    (r"t_max\[(?P<unit>[^\]]*)\]", "t_max_us"),
    (r"t_typical\[(?P<unit>[^\]]*)\]", "t_typical_us"),
    (r"t_avg\[(?P<unit>[^\]]*)\]", "t_avg_us"),
    (r"t_stdev\[(?P<unit>[^\]]*)\]", "t_stdev_us"),
    (r"99% percentile\[(?P<unit>[^\]]*)\]", "p99_us"),
    (r"99\.9% percentile\[(?P<unit>[^\]]*)\]", "p999_us"),
    (r"tps average", "tps_avg"),
    (r"CPU_Util\[%\]", "cpu_util_pct"),
]
_COLUMNS = [(re.compile(pattern), key) for pattern, key in _COLUMN_SPECS]
# A settings line starts with a short key and a colon, padded or not: "Mtu             : 4096[B]",
# "PCIe relax order: ON". Longer lines are never settings (and would cost key_values more).
_SETTING = re.compile(r"[ \t]*[A-Za-z][A-Za-z0-9_*. /()-]{0,31}?[ \t]*:")
_SETTING_MAX_CHARS = 400
# One line per QP on each side; RoCE adds a "GID: ..." line after each (perftest's GID_FMT).
_ADDRESS = re.compile(r"[ \t]*(?P<side>local|remote) address:\s*LID\s+\S+\s+QPN\s+(?P<qpn>0x[0-9a-fA-F]+)")
_GID = re.compile(r"[ \t]*GID:\s*(?P<gid>[0-9]{2,3}(?::[0-9]{2,3}){15})[ \t]*$")
_COLUMN_HELP = "perftest columns such as '#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] ...'"


@dataclass(kw_only=True)
class BandwidthRow:
    bytes: int
    iterations: int
    bw_peak_gbps: float | None
    bw_avg_gbps: float | None
    msg_rate_mpps: float | None
    cpu_util_pct: float | None = None


@dataclass(kw_only=True)
class LatencyRow:
    bytes: int
    iterations: int
    t_min_us: float | None = None
    t_max_us: float | None = None
    t_typical_us: float | None = None
    t_avg_us: float | None = None
    t_stdev_us: float | None = None
    p99_us: float | None = None
    p999_us: float | None = None
    tps_avg: float | None = None  # duration runs (-D) print average latency and transactions/s only
    cpu_util_pct: float | None = None


@dataclass(kw_only=True)
class PerftestResult(ParsedResult):
    tool: str = TOOL
    test: str
    kind: str  # "bw" or "lat"
    role: str | None = None  # "client" / "server" when the header tells (only clients print TX depth)
    bidirectional: bool = False
    device: str | None = None
    link_type: str | None = None  # "IB" or "Ethernet" (RoCE)
    transport: str | None = None
    connection_type: str | None = None
    qps: int | None = None
    mtu_bytes: int | None = None
    tx_depth: int | None = None
    rdma_cm: bool | None = None
    use_cuda: bool = False
    gpu_name: str | None = None
    duration_run: bool = False
    # QP numbers from the "local address" / "remote address" lines, one per QP, in order.
    local_qpns: list[str] = field(default_factory=list)
    remote_qpns: list[str] = field(default_factory=list)
    # RoCE only: the GIDs printed under those lines, each side's distinct values in order.
    local_gids: list[str] = field(default_factory=list)
    remote_gids: list[str] = field(default_factory=list)
    unit_printed: str | None = None
    rows: list[BandwidthRow | LatencyRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failed: bool = False
    settings: dict[str, str] = field(default_factory=dict)
    line_no: int = 1


@dataclass
class _Column:
    key: str
    factor: float = 1.0  # bandwidth unit -> Gb/s
    port: str | None = None


@dataclass
class _Run:
    title: Line
    verb: str
    kind: str
    modifiers: str
    prelude: list[str]
    state: str = "settings"  # settings -> addresses -> rows -> done
    settings: dict[str, str] = field(default_factory=dict)
    setting_lines: dict[str, int] = field(default_factory=dict)
    columns: list[_Column] | None = None
    unit_printed: str | None = None
    rows: list[BandwidthRow | LatencyRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    qpns: dict[str, list[str]] = field(default_factory=lambda: {"local": [], "remote": []})
    gids: dict[str, list[str]] = field(default_factory=lambda: {"local": [], "remote": []})
    last_side: str | None = None  # the side of the last address line, which a GID line belongs to


def parse(text: str) -> list[PerftestResult]:
    lines = split_lines(text)
    runs: list[_Run] = []
    loose: list[str] = []  # text between runs: command lines, CUDA set-up, warnings
    for line in lines:
        if title := _title(line.stripped):
            verb, kind, modifiers = title
            if len(runs) == MAX_RUNS:
                raise ParseError(
                    line.no,
                    f"more than {MAX_RUNS} perftest runs in one file",
                    f"at most {MAX_RUNS} runs per upload (split the file)",
                )
            runs.append(_Run(line, verb, kind, modifiers, prelude=loose))
            loose = []
        elif runs and runs[-1].state == "rows" and _BANNER.match(line.stripped):
            runs[-1].state = "done"
            loose.append(line.stripped)
        elif runs and runs[-1].state != "done":
            _read_run_line(runs[-1], line)
        elif line.stripped:
            loose.append(line.stripped)
            if runs and _PROBLEM.search(line.stripped):
                runs[-1].errors.append(line.stripped)
    if not runs:
        raise ParseError(
            last_line_no(lines),
            "no perftest run found",
            "a title line such as 'RDMA_Write BW Test' followed by the settings block and a result table",
        )
    return [_finish(run) for run in runs]


def _title(text: str) -> tuple[str, str, str] | None:
    """'RDMA_Write Bidirectional BW Test' -> ('RDMA_Write', 'BW', 'Bidirectional'), else None.

    Word by word rather than one regex: a long garbage line must not cost quadratic time, nor be
    split into millions of words (a title is a handful of words)."""
    if len(text) > _TITLE_MAX_CHARS:
        return None
    words = text.split()
    if len(words) < 3 or words[0] not in _VERB_TO_TOOL or words[-1] != "Test":
        return None
    if not all(_TITLE_WORD.fullmatch(word) for word in words):
        return None
    kinds = [index for index, word in enumerate(words) if word in ("BW", "Latency")]
    if not kinds:
        return None
    return words[0], words[kinds[0]], " ".join(words[1 : kinds[0]])


def _read_run_line(run: _Run, line: Line) -> None:
    text = line.stripped
    if run.state == "settings" and DASHES.match(text):
        run.state = "addresses"
    elif run.state == "settings" and len(line.text) <= _SETTING_MAX_CHARS and _SETTING.match(line.text):
        for key, value in key_values(line.text):
            if key in run.settings:
                # perftest prints each setting once per run. A repeat means two processes wrote to one
                # terminal at once (server and client started with '&'): their lines are interleaved
                # and cannot be told apart, so reading on would mix the two runs into one.
                raise ParseError(
                    line.no,
                    f"setting '{key}' printed twice in one run: server and client output are interleaved",
                    "the server's and the client's output captured separately, one after the other",
                )
            run.settings[key] = value
            run.setting_lines[key] = line.no
    elif run.state == "addresses" and _read_address_line(run, line.text):
        pass
    elif text.startswith("#bytes"):
        run.columns = _read_columns(run, line)
        run.state = "rows"
    elif run.state == "rows":
        _read_table_line(run, line)
    elif _PROBLEM.search(text):
        run.errors.append(text)


def _read_address_line(run: _Run, text: str) -> bool:
    """Keeps the QPN of an address line, or the GID line under it; False for any other line."""
    if address := _ADDRESS.match(text):
        run.last_side = address["side"]
        run.qpns[address["side"]].append(address["qpn"].lower())
        return True
    if (gid := _GID.match(text)) and run.last_side:
        gids = run.gids[run.last_side]
        if gid["gid"] not in gids:
            gids.append(gid["gid"])
        return True
    return False


def _read_table_line(run: _Run, line: Line) -> None:
    text = line.stripped
    if DASHES.match(text):
        run.state = "done"
    elif _LEADING_INT.match(text + " "):
        run.rows.append(_read_row(run, line))
    elif text:
        # e.g. "Conflicting CPU frequency values detected" between rows: keep, but do not fail on it.
        (run.errors if _PROBLEM.search(text) else run.warnings).append(text)


def _read_columns(run: _Run, line: Line) -> list[_Column]:
    header = line.stripped
    columns, position = [], 0
    while position < len(header):
        if header[position].isspace():
            position += 1
            continue
        column, position = _match_column(run, header, position, line.no)
        columns.append(column)
    keys = {column.key for column in columns}
    if not {"bytes", "iterations"} <= keys:
        raise ParseError(line.no, "the column header lacks #bytes or #iterations", _COLUMN_HELP)
    return columns


def _match_column(run: _Run, header: str, position: int, line_no: int) -> tuple[_Column, int]:
    for pattern, key in _COLUMNS:
        match = pattern.match(header, position)
        if not match:
            continue
        unit = match.groupdict().get("unit")
        column = _Column(key, port=match.groupdict().get("port"))
        if key in ("bw_peak", "bw_avg", "bw_port"):
            if unit not in _BANDWIDTH_UNITS:
                raise ParseError(
                    line_no, f"unknown bandwidth unit {shown(unit)}", "Gb/sec, MB/sec or MiB/sec"
                )
            column.factor = _BANDWIDTH_UNITS[unit]
            run.unit_printed = unit
        elif unit is not None and unit != "usec":
            expected = "latency columns in usec (run without --report-cycles)"
            raise ParseError(line_no, f"latency printed in {shown(unit)}", expected)
        return column, match.end()
    raise ParseError(line_no, f"unknown column at {shown(header[position : position + 24])}", _COLUMN_HELP)


def _read_row(run: _Run, line: Line) -> BandwidthRow | LatencyRow:
    tokens = line.stripped.split()
    columns = run.columns or []
    if len(tokens) != len(columns):
        expected = f"{len(columns)} values, one per column of the header"
        raise ParseError(line.no, f"result row has {len(tokens)} values", expected)
    values: dict[str, float | int | None] = {}
    for column, token in zip(columns, tokens, strict=True):
        if column.key in ("bytes", "iterations", "sl"):
            values[column.key] = parse_int(token, line.no, column.key)
        elif column.key in ("bw_port", "msg_rate_port"):
            parse_float(token, line.no, f"{column.key}{column.port}")  # checked, not kept
        else:
            value = parse_float(token, line.no, column.key)
            values[column.key] = value if column.factor == 1.0 else round(value * column.factor, 6)
    if run.kind == "BW":
        peak = values.get("bw_peak")
        return BandwidthRow(
            bytes=values["bytes"],
            iterations=values["iterations"],
            # Duration runs print a peak of 0.00: the peak was not measured, not zero.
            bw_peak_gbps=peak if peak else None,
            bw_avg_gbps=values.get("bw_avg"),
            msg_rate_mpps=values.get("msg_rate_mpps"),
            cpu_util_pct=values.get("cpu_util_pct"),
        )
    latency_keys = {"t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us", "p999_us"}
    return LatencyRow(
        bytes=values["bytes"],
        iterations=values["iterations"],
        tps_avg=values.get("tps_avg"),
        cpu_util_pct=values.get("cpu_util_pct"),
        **{key: values.get(key) for key in latency_keys},
    )


def _finish(run: _Run) -> PerftestResult:
    settings = run.settings
    prelude = "\n".join(run.prelude)
    bidirectional = "Bidirectional" in run.modifiers
    # The title is the authority on verb and kind; only raw-Ethernet tools need the command's name.
    command = _COMMAND.search(prelude)
    raw_ethernet = command["name"] if command and command["name"].startswith("raw_ethernet") else None
    errors = list(run.errors)
    if not run.rows and not errors:
        errors.append("no result rows (the run did not complete)")
    tx_depth = _setting_int(run, "TX depth")
    kind = "bw" if run.kind == "BW" else "lat"
    return PerftestResult(
        test=raw_ethernet or f"{_VERB_TO_TOOL[run.verb]}_{kind}",
        kind=kind,
        role=None if bidirectional else ("client" if tx_depth is not None else "server"),
        bidirectional=bidirectional,
        device=settings.get("Device"),
        link_type=settings.get("Link type"),
        transport=settings.get("Transport type"),
        connection_type=settings.get("Connection type"),
        qps=_setting_int(run, "Number of qps"),
        mtu_bytes=_setting_int(run, "Mtu", suffix=r"\[?B\]?"),
        tx_depth=tx_depth,
        rdma_cm=settings["rdma_cm QPs"] == "ON" if "rdma_cm QPs" in settings else None,
        use_cuda=bool(_CUDA_SIGNS.search(prelude)),
        gpu_name=match["name"] if (match := _GPU_NAME.search(prelude)) else None,
        duration_run=bool(_DURATION_RUN.search(prelude)),
        local_qpns=run.qpns["local"],
        remote_qpns=run.qpns["remote"],
        local_gids=run.gids["local"],
        remote_gids=run.gids["remote"],
        unit_printed=run.unit_printed,
        rows=run.rows,
        warnings=run.warnings,
        errors=errors,
        failed=not run.rows or bool(run.errors),
        settings=settings,
        line_no=run.title.no,
    )


def _setting_int(run: _Run, key: str, suffix: str = "") -> int | None:
    if key not in run.settings:
        return None
    value = re.sub(suffix + "$", "", run.settings[key]) if suffix else run.settings[key]
    return parse_int(value, run.setting_lines[key], f"'{key}' in the settings block")
