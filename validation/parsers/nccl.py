"""nccl-tests output (all_reduce_perf, all_gather_perf, broadcast_perf, alltoall_perf, sendrecv_perf ...).

The column header decides how rows are read, so every layout works: the oldest `bytes N type op`,
the old ones without `redop` and/or `root`, and the current one with both plus `#wrong` (older
builds print a float `error` instead, `N/A` when validation is off). A log may hold several tests;
each `# nThread` header (with the version / "Collective test starting" lines before it) starts one.

Bandwidths stay in GB/s (gigabytes per second) exactly as nccl-tests prints them; the `_gbps` key
names were fixed by the issue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import (
    Line,
    ParsedResult,
    ParseError,
    is_not_available,
    last_line_no,
    parse_float,
    parse_int,
    shown,
    split_lines,
)

TOOL = "nccl"

_VERSION = re.compile(r"^#\s*nccl-tests version\s+(?P<version>\S+)")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(?P<name>\S+)")
_CONCLUDED = re.compile(r"^#\s*Collective test concluded:\s*(?P<name>\S+)")
_NTHREAD = re.compile(r"^#\s*nThread\s+(?P<threads>\d+)\s+nGpus\s+(?P<gpus>\d+)")
_VALIDATION = re.compile(r"\bvalidation:\s*(?P<on>\d+)")
_RANK = re.compile(r"^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device")
_OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\S*)\s*(?P<verdict>OK|FAILED)?\s*$")
_AVG_BUSBW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S*)\s*(?P<verdict>OK|FAILED)?\s*$")
_FAILURE = re.compile(r"Test (?:CUDA |NCCL )?failure|^#\s*error:|\bNCCL failure\b", re.IGNORECASE)
_SPECIFIC_FAILURE = re.compile(r"Test (?:CUDA|NCCL) failure|^#\s*error:|\bNCCL failure\b", re.IGNORECASE)
_PERF_BINARY = re.compile(r"\b(?P<name>[a-z_]+_perf)\b")
_LEADING_INT = re.compile(r"^\s*[0-9]+\s")

# Header names (as printed by any nccl-tests version) -> our column key.
_COLUMN_ALIASES = {
    "size": "size",
    "bytes": "size",
    "count": "count",
    "n": "count",
    "type": "type",
    "redop": "redop",
    "op": "redop",
    "root": "root",
    "time": "time",
    "cputime": "time",
    "algbw": "algbw",
    "busbw": "busbw",
    "#wrong": "wrong",
    "error": "wrong",
    "res": "wrong",
    "timestamp": "timestamp",
}
_HALF = ["time", "algbw", "busbw", "wrong"]
_HEADER_HELP = "'size count type [redop] [root] time algbw busbw #wrong|error' (once or twice)"

# Bytes per element, to tell all_reduce (count = size / element) from reduce_scatter (count per rank).
_TYPE_SIZES = {
    "int8": 1, "char": 1, "uint8": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2,
    "int32": 4, "int": 4, "uint32": 4, "float": 4, "float32": 4,
    "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}  # fmt: skip

# Names people give their log files, for the last-resort guess of which test ran.
_NAME_HINTS = [
    ("allreduce", "all_reduce_perf"),
    ("allgather", "all_gather_perf"),
    ("reducescatter", "reduce_scatter_perf"),
    ("alltoall", "alltoall_perf"),
    ("sendrecv", "sendrecv_perf"),
    ("broadcast", "broadcast_perf"),
    ("hypercube", "hypercube_perf"),
    ("reduce", "reduce_perf"),
    ("gather", "gather_perf"),
    ("scatter", "scatter_perf"),
]


@dataclass(kw_only=True)
class NcclHalf:
    """One half of a row: out-of-place or in-place."""

    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    wrong: int | float | None  # `#wrong` count, or the max `error` of old builds; None when N/A


@dataclass(kw_only=True)
class NcclRow:
    size_bytes: int
    count: int
    type: str
    redop: str | None
    root: int | None
    out_of_place: NcclHalf | None
    in_place: NcclHalf | None


@dataclass(kw_only=True)
class NcclResult(ParsedResult):
    tool: str = TOOL
    test: str | None
    rows: list[NcclRow] = field(default_factory=list)
    avg_busbw_gbps: float | None = None
    out_of_bounds: int | None = None
    failed: bool = False
    failure_message: str | None = None
    errors: list[str] = field(default_factory=list)
    wrong_column: str | None = None  # "#wrong" (a count) or "error" (a max error, old builds)
    nccl_tests_version: str | None = None
    validation: bool | None = None
    n_ranks: int = 0
    hosts: list[str] = field(default_factory=list)
    line_no: int = 1


@dataclass
class _Columns:
    prefix: list[str]  # size, count, type and whichever of redop/root are present
    halves: int
    timestamp: bool
    wrong_column: str
    line_no: int


@dataclass
class _Block:
    """A test being read; becomes an NcclResult."""

    line_no: int
    name: str | None = None
    version: str | None = None
    seen_nthread: bool = False
    validation: bool | None = None
    columns: _Columns | None = None
    table_closed: bool = False
    rows: list[NcclRow] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    n_ranks: int = 0
    out_of_bounds: int | None = None
    oob_failed: bool = False
    avg_busbw: float | None = None
    avg_failed: bool = False
    errors: list[str] = field(default_factory=list)
    prelude: list[str] = field(default_factory=list)


def parse(text: str, *, source_name: str | None = None) -> list[NcclResult]:
    """One NcclResult per test found. `source_name` (a file name) is only a last-resort hint for
    old logs that never name their test and whose columns do not tell it either."""
    lines = split_lines(text)
    reader = _Reader()
    for line in lines:
        reader.read(line)
    if not reader.blocks:
        raise ParseError(
            last_line_no(lines),
            "no nccl-tests output found",
            "a '# nThread ...' header or a result table with 'time algbw busbw' columns",
        )
    return [_finish(block, source_name) for block in reader.blocks]


class _Reader:
    """Splits a log into tests. A test opens with `# nccl-tests version`, `# Collective test
    starting` or `# nThread` (in that order when all are printed) or, in trimmed logs, with the
    column header itself. Lines outside any table (mpirun command lines) wait in `loose` for the
    next test, where they may name the binary."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []
        self.current: _Block | None = None
        self.loose: list[str] = []

    def read(self, line: Line) -> None:
        text = line.stripped
        if match := _VERSION.match(text):
            self._open(line, join=False).version = match["version"]
        elif match := _STARTING.match(text):
            self._open(line, join=self._preamble_only(allow_name=False)).name = match["name"]
        elif match := _NTHREAD.match(text):
            block = self._open(line, join=self._preamble_only(allow_name=True))
            block.seen_nthread = True
            if validation := _VALIDATION.search(text):
                block.validation = validation["on"] != "0"
        elif text.startswith("#") and _is_column_header(text):
            join = self.current is not None and self.current.columns is None
            self._open(line, join=join).columns = _read_columns(text, line.no)
        elif self.current is None or (self.current.table_closed and _is_loose(text)):
            self.loose.append(text)
        else:
            _read_body_line(line, self.current)

    def _preamble_only(self, *, allow_name: bool) -> bool:
        block = self.current
        return (
            block is not None
            and not block.seen_nthread
            and block.columns is None
            and not block.rows
            and (allow_name or block.name is None)
        )

    def _open(self, line: Line, *, join: bool) -> _Block:
        if join and self.current is not None:
            return self.current
        self.current = _Block(line_no=line.no, prelude=self.loose)
        self.loose = []
        self.blocks.append(self.current)
        return self.current


def _is_loose(text: str) -> bool:
    """After a test's trailer, only the rest of the trailer and failure reports still belong to it."""
    trailer = (_OUT_OF_BOUNDS, _AVG_BUSBW, _CONCLUDED)
    return not _FAILURE.search(text) and not any(pattern.match(text) for pattern in trailer)


def _is_column_header(text: str) -> bool:
    tokens = {token.lower() for token in text.lstrip("#").split()}
    return {"algbw", "busbw"} <= tokens and bool(tokens & {"time", "cputime"})


def _read_columns(text: str, line_no: int) -> _Columns:
    names = []
    for token in text.lstrip("#").split():
        key = _COLUMN_ALIASES.get(token.lower())
        if key is None:
            raise ParseError(line_no, f"unknown column {shown(token)} in the nccl-tests header", _HEADER_HELP)
        names.append(key)
    timestamp = names[-1:] == ["timestamp"]
    if timestamp:
        names = names[:-1]
    prefix_len = names.index("time") if "time" in names else len(names)
    prefix, rest = names[:prefix_len], names[prefix_len:]
    halves = len(rest) // 4
    optional = ([], ["redop"], ["root"], ["redop", "root"])
    valid_prefix = prefix[:3] == ["size", "count", "type"] and prefix[3:] in optional
    if not valid_prefix or halves not in (1, 2) or rest != _HALF * halves:
        raise ParseError(line_no, "unrecognised nccl-tests column layout", _HEADER_HELP)
    wrong_word = next(
        (t for t in reversed(text.split()) if _COLUMN_ALIASES.get(t.lower()) == "wrong"), "error"
    )
    wrong_column = "#wrong" if wrong_word.lower() == "#wrong" else "error"
    return _Columns(prefix, halves, timestamp, wrong_column, line_no)


def _read_body_line(line: Line, block: _Block) -> None:
    text = line.stripped
    if match := _OUT_OF_BOUNDS.match(text):
        block.out_of_bounds = parse_int(match["count"], line.no, "the out-of-bounds count")
        block.oob_failed = match["verdict"] == "FAILED" or block.out_of_bounds > 0
        block.table_closed = True
    elif match := _AVG_BUSBW.match(text):
        block.avg_busbw = parse_float(match["value"], line.no, "the average bus bandwidth")
        block.avg_failed = match["verdict"] == "FAILED"
        block.table_closed = True
    elif match := _CONCLUDED.match(text):
        block.name = block.name or match["name"]
        block.table_closed = True
    elif match := _RANK.match(text):
        block.n_ranks += 1
        if match["host"] not in block.hosts:
            block.hosts.append(match["host"])
    elif _FAILURE.search(text):
        message = text.removeprefix("..").strip()
        if message not in block.errors:
            block.errors.append(message)
    elif block.columns is not None and not block.table_closed and _LEADING_INT.match(line.text + " "):
        block.rows.append(_read_row(line, block.columns))
    elif block.columns is None and not text.startswith("#"):
        block.prelude.append(text)


def _read_row(line: Line, columns: _Columns) -> NcclRow:
    tokens = line.stripped.split()
    n_prefix = len(columns.prefix)
    expected = n_prefix + 4 * columns.halves + (2 if columns.timestamp else 0)
    halves_printed = columns.halves
    if len(tokens) != expected:
        # Trace-replay runs leave the out-of-place half blank; accept exactly that shape.
        if columns.halves == 2 and len(tokens) == expected - 4:
            halves_printed = 1
        else:
            raise ParseError(
                line.no,
                f"result row has {len(tokens)} columns",
                f"{expected} columns ({' '.join(columns.prefix)} then time algbw busbw wrong"
                f"{' twice' if columns.halves == 2 else ''})",
            )
    prefix = dict(zip(columns.prefix, tokens[:n_prefix], strict=True))
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", prefix["type"]):
        raise ParseError(
            line.no, f"data type {shown(prefix['type'])} is not a type name", "a type such as float"
        )
    halves = [
        _read_half(tokens[n_prefix + 4 * i : n_prefix + 4 * i + 4], columns.wrong_column, line.no)
        for i in range(halves_printed)
    ]
    if columns.halves == 1:
        out_of_place, in_place = halves[0], None
    elif halves_printed == 1:
        out_of_place, in_place = None, halves[0]
    else:
        out_of_place, in_place = halves
    root = prefix.get("root")
    return NcclRow(
        size_bytes=parse_int(prefix["size"], line.no, "size"),
        count=parse_int(prefix["count"], line.no, "count"),
        type=prefix["type"],
        redop=prefix.get("redop"),
        root=None if root is None else parse_int(root, line.no, "root"),
        out_of_place=out_of_place,
        in_place=in_place,
    )


def _read_half(tokens: list[str], wrong_column: str, line_no: int) -> NcclHalf:
    time_us, algbw, busbw, wrong = tokens
    return NcclHalf(
        time_us=parse_float(time_us, line_no, "time"),
        algbw_gbps=parse_float(algbw, line_no, "algbw"),
        busbw_gbps=parse_float(busbw, line_no, "busbw"),
        wrong=_read_wrong(wrong, wrong_column, line_no),
    )


def _read_wrong(token: str, wrong_column: str, line_no: int) -> int | float | None:
    if is_not_available(token):
        return None
    value = parse_float(token, line_no, wrong_column)
    if wrong_column == "error":
        return value
    # Current builds print the count with %g, so a big count can read "1e+06".
    if value < 0 or value != int(value):
        raise ParseError(line_no, f"#wrong is {shown(token)}", "a non-negative whole count of wrong elements")
    return int(value)


def _finish(block: _Block, source_name: str | None) -> NcclResult:
    wrong_counts = [
        half.wrong
        for row in block.rows
        for half in (row.out_of_place, row.in_place)
        if half is not None and isinstance(half.wrong, int)
    ]
    errors = list(block.errors)
    if block.columns is not None and block.rows and block.out_of_bounds is None and not errors:
        errors.append("output ends before the 'Out of bounds values' trailer (run aborted or log truncated)")
    if block.avg_failed:
        errors.append("average bus bandwidth below the value checked with -c")
    if not block.rows and not errors:
        errors.append("no result rows (the run stopped before measuring)")
    if any(wrong_counts) and block.columns and block.columns.wrong_column == "#wrong":
        errors.append(f"{sum(wrong_counts)} wrong elements reported in the result rows")
    failed = bool(errors) or block.oob_failed
    return NcclResult(
        test=_test_name(block, source_name),
        rows=block.rows,
        avg_busbw_gbps=block.avg_busbw,
        out_of_bounds=block.out_of_bounds,
        failed=failed,
        failure_message=_failure_message(block, errors),
        errors=errors,
        wrong_column=block.columns.wrong_column if block.columns else None,
        nccl_tests_version=block.version,
        validation=block.validation,
        n_ranks=block.n_ranks,
        hosts=block.hosts,
        line_no=block.line_no,
    )


def _failure_message(block: _Block, errors: list[str]) -> str | None:
    specific = [message for message in block.errors if _SPECIFIC_FAILURE.search(message)]
    if specific:
        return specific[0]
    if block.oob_failed:
        return f"Out of bounds values: {block.out_of_bounds} FAILED"
    return errors[0] if errors else None


def _test_name(block: _Block, source_name: str | None) -> str | None:
    """The test's own name if printed; else a command line before the table; else what the column
    shape proves; else the file name. None when nothing tells."""
    if block.name:
        return block.name
    for text in block.prelude:
        if match := _PERF_BINARY.search(text):
            return match["name"]
    if by_shape := _name_from_shape(block):
        return by_shape
    if source_name:
        squashed = re.sub(r"[^a-z]", "", source_name.lower())
        return next((name for hint, name in _NAME_HINTS if hint in squashed), None)
    return None


def _name_from_shape(block: _Block) -> str | None:
    if block.columns is None or not block.rows:
        return None
    prefix = block.columns.prefix
    sample = next((row for row in block.rows if row.size_bytes > 0), None)
    if "root" in prefix and "redop" not in prefix:
        return "broadcast_perf"  # the only old layout with a root and no reduction operator
    reducing = "redop" in prefix and sample is not None and sample.redop not in (None, "none")
    unrooted = "root" not in prefix or (sample is not None and sample.root == -1)
    if reducing and unrooted and sample.type in _TYPE_SIZES:
        whole = sample.count * _TYPE_SIZES[sample.type] == sample.size_bytes
        return "all_reduce_perf" if whole else "reduce_scatter_perf"
    if reducing and "root" in prefix and sample.root is not None and sample.root >= 0:
        return "reduce_perf"
    return None
