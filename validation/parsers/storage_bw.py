"""Storage benchmarks: fio (`--output-format=json`, and its normal text output) and IOR's result tables.
Two entries in PARSERS: "fio" and "ior".

fio text, per job (`name: (groupid=0, jobs=1): err= 0: pid=...`):
    write: IOPS=5980, BW=93.4MiB/s (97.0MB/s)(4096MiB/43832msec)          fio 3.x
    write: io=4096.0MB, bw=95672KB/s, iops=5979, runt= 43832msec           fio 2.x
    clat (usec): min=3660, max=25559, avg=5318.66, stdev=876.90             (nsec/usec/msec, k/M suffixes)
    clat percentiles (usec): | 1.00th=[ 4113], ...
and per group (`Run status group 0 (all jobs):`):
    WRITE: bw=93.4MiB/s (97.0MB/s), 93.4MiB/s-93.4MiB/s (...), io=4096MiB (4295MB), run=43832-43832msec
    READ: io=64.0MB, aggrb=21.9MB/s, minb=10.9MB/s, maxb=11.3MB/s, mint=2973msec, maxt=3069msec (fio 2.x)

Units: fio 3.x labels binary units KiB/MiB/GiB and decimal kB/MB/GB; fio 2.x wrote "KB"/"MB" for its
default 1024 base, so those are read as binary in the 2.x layout. Bandwidths come out in MiB/s (2^20
bytes per second), latencies in microseconds, IOPS as a number (fio's "12.3k" = 12300).

fio JSON: `jobs[]` with `read`/`write`/`trim` objects (`bw` in KiB/s, or `bw_bytes`; `iops`; `clat_ns` or
the older `clat` in usec with `percentile`).

IOR: the per-iteration results table (`access bw(MiB/s) ... iter`, read by its header, with or without
IOPS/Latency columns), the `Summary of all tests:` table (Max/Min/Mean MiB/s per operation) and the older
`Max Write: 427.36 MiB/sec` lines. Per operation, the summary's figures win; without one, they are computed
from the iterations printed.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from .base import ParsedResult, ParseError, last_line_no, parse_float, parse_int, shown, split_lines
from .node_common import Cursor, check_line_lengths, check_size, json_start, load_json, parse_suffixed

FIO = "fio"
IOR = "ior"

MAX_TEXT_CHARS = 32 * 2**20
MAX_JSON_CHARS = 32 * 2**20
MAX_JOBS = 10_000

_MIB = 2**20
# Bytes per unit. fio 3.x: binary "KiB", decimal "kB"; fio 2.x's "KB"/"MB" are binary (see module doc).
_UNITS_3 = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
            "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}  # fmt: skip
_UNITS_2 = {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40,
            "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "kB": 1e3}  # fmt: skip
_TIME_TO_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3, "sec": 1e6}

_JOB = re.compile(
    r"^(?P<name>[^\s:][^:]{0,200}?): \(groupid=(?P<group>[0-9]{1,6}), jobs=(?P<jobs>[0-9]{1,6})\): "
    r"err=\s*(?P<err>-?[0-9]{1,6})"
)
_DIRECTION = re.compile(r"^(?P<dir>read|write|trim)\s*:\s*(?P<rest>.*)$")
_IOPS = re.compile(r"\bIOPS=(?P<iops>[0-9.]{1,20}[kKMG]?)")
_BW3 = re.compile(r"\bBW=(?P<bw>[0-9.]{1,20})(?P<unit>[kKMGT]?i?B)/s")
_IO_RUNTIME = re.compile(r"\((?P<io>[0-9.]{1,20})(?P<unit>[kKMGT]?i?B)/(?P<runtime>[0-9]{1,15})msec\)")
_KEY_VALUE = re.compile(r"(?P<key>[a-z]+)=\s*(?P<value>[^,\s]+)")
_LATENCY = re.compile(r"^(?P<kind>slat|clat|lat)\s*\((?P<unit>nsec|usec|msec|sec)\):\s*(?P<rest>.*)$")
_PERCENTILES = re.compile(r"^(?P<kind>clat|lat|slat) percentiles \((?P<unit>nsec|usec|msec|sec)\):")
_PERCENTILE = re.compile(r"(?P<p>[0-9]{1,3}\.[0-9]{1,6})th=\[\s*(?P<value>[0-9.]{1,20}[kKMG]?)\s*\]")
_GROUP = re.compile(r"^Run status group (?P<group>[0-9]{1,6}) \(all jobs\):")
_GROUP_LINE = re.compile(r"^(?P<dir>READ|WRITE|TRIM)\s*:\s*(?P<rest>.*)$")
_GROUP3 = re.compile(
    r"^bw=(?P<bw>[0-9.]{1,20})(?P<unit>[kKMGT]?i?B)/s[^,]*, "
    r"(?P<min>[0-9.]{1,20})(?P<min_unit>[kKMGT]?i?B)/s-(?P<max>[0-9.]{1,20})(?P<max_unit>[kKMGT]?i?B)/s"
)
_GROUP_IO = re.compile(r"\bio=(?P<io>[0-9.]{1,20})(?P<unit>[kKMGT]?i?B)")
_GROUP_RUN = re.compile(r"\brun=(?P<min>[0-9]{1,15})-(?P<max>[0-9]{1,15})msec")
_VERSION = re.compile(r"^fio-(?P<version>[0-9][0-9A-Za-z.\-]{0,30})$")


@dataclass(frozen=True, kw_only=True)
class LatencyStats:
    min_us: float | None = None
    max_us: float | None = None
    mean_us: float | None = None
    stdev_us: float | None = None


@dataclass(frozen=True, kw_only=True)
class FioDirection:
    bw_mib_s: float | None = None
    iops: float | None = None
    io_bytes: int | None = None
    runtime_ms: int | None = None
    slat: LatencyStats | None = None
    clat: LatencyStats | None = None
    lat: LatencyStats | None = None
    clat_percentiles_us: dict[str, float] = field(default_factory=dict)  # "99.00" -> microseconds


@dataclass(frozen=True, kw_only=True)
class FioJob(ParsedResult):
    tool: str = FIO
    kind: str = "job"
    format: str  # "text" or "json"
    name: str
    group_id: int | None = None
    jobs: int | None = None
    error: int | None = None
    read: FioDirection | None = None
    write: FioDirection | None = None
    trim: FioDirection | None = None
    fio_version: str | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class FioGroup(ParsedResult):
    """A `Run status group` line: the group's aggregate for one direction."""

    tool: str = FIO
    kind: str = "group"
    format: str = "text"
    group_id: int
    direction: str  # "read", "write", "trim"
    bw_mib_s: float | None = None
    bw_min_mib_s: float | None = None  # the slowest job's
    bw_max_mib_s: float | None = None
    io_bytes: int | None = None
    run_min_ms: int | None = None
    run_max_ms: int | None = None
    line_no: int = 1


# ---------------------------------------------------------------------------------------------------
# fio


def parse_fio(text: str) -> list[FioJob | FioGroup]:
    first_line, body = json_start(text)
    if body.lstrip().startswith("{"):
        return _fio_json(body, first_line)
    return _fio_text(text)


def _fio_json(text: str, first_line: int) -> list[FioJob | FioGroup]:
    document = load_json(text, what="fio --output-format=json", max_chars=MAX_JSON_CHARS, first_line=first_line)
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise ParseError(first_line, "no \"jobs\" list", "fio --output-format=json output ({\"jobs\": [...]})")
    jobs = document["jobs"]
    if len(jobs) > MAX_JOBS:
        raise ParseError(first_line, f"{len(jobs)} jobs", f"at most {MAX_JOBS}")
    version = document.get("fio version")
    version = version.removeprefix("fio-") if isinstance(version, str) else None
    results: list[FioJob | FioGroup] = []
    cursor = Cursor(text, first_line)
    for job in jobs:
        if not isinstance(job, dict):
            raise ParseError(first_line, "a job is not an object", "{\"jobname\": ..., \"read\": {...}}")
        name = str(job.get("jobname", "?"))
        line_no = cursor.line_of(f'"{name}"')
        options = job.get("job options") if isinstance(job.get("job options"), dict) else {}
        numjobs = str(options.get("numjobs", ""))
        results.append(
            FioJob(
                format="json",
                name=name,
                jobs=int(numjobs) if numjobs.isdigit() and len(numjobs) < 7 else None,  # group_reporting: all of them
                group_id=_json_int(job.get("groupid"), line_no, "groupid"),
                error=_json_int(job.get("error"), line_no, "error"),
                read=_json_direction(job.get("read"), line_no, "read"),
                write=_json_direction(job.get("write"), line_no, "write"),
                trim=_json_direction(job.get("trim"), line_no, "trim"),
                fio_version=version,
                line_no=line_no,
            )
        )
    if not results:
        raise ParseError(first_line, "the jobs list is empty", "at least one fio job")
    return results


def _json_direction(data: Any, line_no: int, what: str) -> FioDirection | None:
    if not isinstance(data, dict):
        return None
    io_bytes = _json_int(data.get("io_bytes"), line_no, f"{what} io_bytes")
    if io_bytes is None and data.get("io_kbytes") is not None:
        io_bytes = _json_int(data.get("io_kbytes"), line_no, f"{what} io_kbytes") * 1024
    if data.get("bw_bytes") is not None:
        bw = _json_float(data.get("bw_bytes"), line_no, f"{what} bw_bytes") / _MIB
    else:
        bw_kib = _json_float(data.get("bw"), line_no, f"{what} bw")
        bw = None if bw_kib is None else bw_kib / 1024
    iops = _json_float(data.get("iops"), line_no, f"{what} iops")
    if not io_bytes and not bw and not iops:
        return None  # the direction the job did not do: fio prints it with zeros
    percentiles: dict[str, float] = {}
    clat, clat_scale, clat_block = None, 1.0, None
    for key, scale in (("clat_ns", 1e-3), ("clat", 1.0)):
        if isinstance(data.get(key), dict):
            clat_block, clat_scale = data[key], scale
            clat = _json_latency(clat_block, scale, line_no, f"{what} {key}")
            break
    if clat_block is not None and isinstance(clat_block.get("percentile"), dict):
        for point, value in list(clat_block["percentile"].items())[:100]:
            number = _json_float(value, line_no, f"{what} percentile {point}")
            # fio 3.1 ends the list with a "0.00": 0 entry that is no percentile
            if number is not None and re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]{1,6})?", str(point)) and float(point) > 0:
                percentiles[f"{float(point):.2f}"] = number * clat_scale
    return FioDirection(
        bw_mib_s=bw,
        iops=iops,
        io_bytes=io_bytes,
        runtime_ms=_json_int(data.get("runtime"), line_no, f"{what} runtime"),
        slat=_json_latency(data.get("slat_ns"), 1e-3, line_no, what)
        or _json_latency(data.get("slat"), 1.0, line_no, what),
        clat=clat,
        lat=_json_latency(data.get("lat_ns"), 1e-3, line_no, what)
        or _json_latency(data.get("lat"), 1.0, line_no, what),
        clat_percentiles_us=percentiles,
    )


def _json_latency(data: Any, scale: float, line_no: int, what: str) -> LatencyStats | None:
    if not isinstance(data, dict):
        return None
    values = {}
    for key, name in (("min", "min_us"), ("max", "max_us"), ("mean", "mean_us"), ("stddev", "stdev_us")):
        number = _json_float(data.get(key), line_no, f"{what} {key}")
        values[name] = None if number is None else number * scale
    return LatencyStats(**values)


def _json_float(value: Any, line_no: int, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(line_no, f"{what} is {shown(str(value))}", f"a number for {what}")
    return float(value)


def _json_int(value: Any, line_no: int, what: str) -> int | None:
    number = _json_float(value, line_no, what)
    return None if number is None else int(number)


@dataclass
class _TextJob:
    name: str
    group_id: int
    jobs: int
    error: int
    line_no: int
    directions: dict[str, dict] = field(default_factory=dict)
    current: str | None = None
    percentiles: str | None = None  # the unit of the percentile block being read


def _fio_text(text: str) -> list[FioJob | FioGroup]:
    check_size(text, MAX_TEXT_CHARS, "fio output")
    lines = split_lines(text)
    check_line_lengths(lines)
    version = None
    jobs: list[_TextJob] = []
    groups: list[FioGroup] = []
    group_id: int | None = None
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        if match := _VERSION.match(stripped):
            version = match["version"]
        elif match := _JOB.match(stripped):
            if len(jobs) >= MAX_JOBS:
                raise ParseError(line.no, f"more than {MAX_JOBS} fio jobs", f"at most {MAX_JOBS}")
            jobs.append(_TextJob(match["name"].strip(), int(match["group"]), int(match["jobs"]),
                                 int(match["err"]), line.no))  # fmt: skip
            group_id = None
        elif match := _GROUP.match(stripped):
            group_id = int(match["group"])
            if jobs:
                jobs[-1].current = None
        elif group_id is not None and (match := _GROUP_LINE.match(stripped)):
            if len(groups) < MAX_JOBS:
                groups.append(_group(group_id, match["dir"].lower(), match["rest"], line.no))
        elif jobs and group_id is None:
            _job_line(jobs[-1], stripped, line.no)
    if not jobs and not groups:
        raise ParseError(
            last_line_no(lines),
            "no fio job or run status group found",
            "'name: (groupid=0, jobs=1): err= 0: ...' blocks or 'Run status group 0 (all jobs):' lines "
            "(or fio --output-format=json)",
        )
    results: list[FioJob | FioGroup] = [
        FioJob(
            format="text",
            name=job.name,
            group_id=job.group_id,
            jobs=job.jobs,
            error=job.error,
            fio_version=version,
            line_no=job.line_no,
            **{direction: FioDirection(**fields) for direction, fields in job.directions.items()},
        )
        for job in jobs
    ]
    return results + groups


def _job_line(job: _TextJob, text: str, line_no: int) -> None:
    if job.percentiles and text.startswith("|"):
        fields = job.directions[job.current]
        for match in _PERCENTILE.finditer(text):
            value = parse_suffixed(match["value"], line_no, f"{match['p']}th percentile")
            fields["clat_percentiles_us"][f"{float(match['p']):.2f}"] = value * _TIME_TO_US[job.percentiles]
        return
    job.percentiles = None
    if match := _DIRECTION.match(text):
        job.current = match["dir"]
        job.directions[job.current] = _direction_line(match["rest"], line_no)
    elif job.current is None:
        return
    elif match := _LATENCY.match(text):
        stats = _latency(match["rest"], match["unit"], line_no, match["kind"])
        job.directions[job.current][match["kind"]] = stats
    elif match := _PERCENTILES.match(text):
        if match["kind"] == "clat":
            job.percentiles = match["unit"]


def _direction_line(rest: str, line_no: int) -> dict:
    fields: dict = {"clat_percentiles_us": {}}
    if match := _BW3.search(rest):  # fio 3.x
        fields["bw_mib_s"] = _bytes(match["bw"], match["unit"], line_no, "BW", _UNITS_3) / _MIB
        if iops := _IOPS.search(rest):
            fields["iops"] = parse_suffixed(iops["iops"], line_no, "IOPS")
        if io := _IO_RUNTIME.search(rest):
            fields["io_bytes"] = int(_bytes(io["io"], io["unit"], line_no, "io", _UNITS_3))
            fields["runtime_ms"] = int(io["runtime"])
        return fields
    values = {match["key"]: match["value"] for match in _KEY_VALUE.finditer(rest)}
    if "bw" not in values:
        raise ParseError(
            line_no, f"job line {shown(rest, 60)}", "'IOPS=..., BW=...' (fio 3) or 'io=..., bw=...' (fio 2)"
        )
    fields["bw_mib_s"] = _sized(values["bw"].removesuffix("/s"), line_no, "bw", _UNITS_2) / _MIB
    if "iops" in values:
        fields["iops"] = parse_suffixed(values["iops"], line_no, "iops")
    if "io" in values:
        fields["io_bytes"] = int(_sized(values["io"], line_no, "io", _UNITS_2))
    if "runt" in values:
        fields["runtime_ms"] = parse_int(values["runt"].removesuffix("msec"), line_no, "runt")
    return fields


_SIZED = re.compile(r"(?P<number>[0-9.]{1,20})(?P<unit>[kKMGT]?i?B)")


def _sized(token: str, line_no: int, what: str, units: dict) -> float:
    match = _SIZED.fullmatch(token)
    if not match:
        raise ParseError(line_no, f"{what} is {shown(token)}", f"a size such as 93.4MiB for {what}")
    return _bytes(match["number"], match["unit"], line_no, what, units)


def _bytes(number: str, unit: str, line_no: int, what: str, units: dict) -> float:
    if unit not in units:
        raise ParseError(line_no, f"{what} unit {shown(unit)}", "B, KiB, MiB, GiB, kB, MB or GB")
    return parse_float(number, line_no, what) * units[unit]


def _latency(rest: str, unit: str, line_no: int, kind: str) -> LatencyStats:
    values = {match["key"]: match["value"] for match in _KEY_VALUE.finditer(rest)}
    scale = _TIME_TO_US[unit]
    found = {}
    for key, name in (("min", "min_us"), ("max", "max_us"), ("avg", "mean_us"), ("stdev", "stdev_us")):
        found[name] = parse_suffixed(values[key], line_no, f"{kind} {key}") * scale if key in values else None
    return LatencyStats(**found)


def _group(group_id: int, direction: str, rest: str, line_no: int) -> FioGroup:
    rest = rest.strip()
    if match := _GROUP3.match(rest):
        io = _GROUP_IO.search(rest)
        run = _GROUP_RUN.search(rest)
        return FioGroup(
            group_id=group_id,
            direction=direction,
            bw_mib_s=_bytes(match["bw"], match["unit"], line_no, "bw", _UNITS_3) / _MIB,
            bw_min_mib_s=_bytes(match["min"], match["min_unit"], line_no, "bw", _UNITS_3) / _MIB,
            bw_max_mib_s=_bytes(match["max"], match["max_unit"], line_no, "bw", _UNITS_3) / _MIB,
            io_bytes=int(_bytes(io["io"], io["unit"], line_no, "io", _UNITS_3)) if io else None,
            run_min_ms=int(run["min"]) if run else None,
            run_max_ms=int(run["max"]) if run else None,
            line_no=line_no,
        )
    values = {match["key"]: match["value"] for match in _KEY_VALUE.finditer(rest)}
    if "aggrb" not in values:
        raise ParseError(
            line_no, f"group line {shown(rest, 60)}", "'bw=..., min-max, io=..., run=...' or 'io=..., aggrb=...'"
        )

    def rate(key: str) -> float | None:
        return _sized(values[key].removesuffix("/s"), line_no, key, _UNITS_2) / _MIB if key in values else None

    return FioGroup(
        group_id=group_id,
        direction=direction,
        bw_mib_s=rate("aggrb"),
        bw_min_mib_s=rate("minb"),
        bw_max_mib_s=rate("maxb"),
        io_bytes=int(_sized(values["io"], line_no, "io", _UNITS_2)) if "io" in values else None,
        run_min_ms=parse_int(values["mint"].removesuffix("msec"), line_no, "mint") if "mint" in values else None,
        run_max_ms=parse_int(values["maxt"].removesuffix("msec"), line_no, "maxt") if "maxt" in values else None,
        line_no=line_no,
    )


# ---------------------------------------------------------------------------------------------------
# IOR

_IOR_RESULTS_HEADER = re.compile(r"^access\s+bw\(MiB/s\)")
_IOR_SUMMARY = re.compile(r"^Summary of all tests:")
_IOR_SUMMARY_HEADER = re.compile(r"^Operation\s+Max\(MiB\)\s+Min\(MiB\)\s+Mean\(MiB\)")
_IOR_MAX = re.compile(r"^Max (?P<op>Write|Read):\s+(?P<bw>[0-9.]{1,20}) MiB/sec")
_IOR_COMMAND = re.compile(r"(?:^|\s)(?:\S*/)?ior(?:\s|$)")
_IOR_OPERATIONS = ("write", "read", "remove", "stat", "create")


@dataclass(frozen=True, kw_only=True)
class IorIteration:
    operation: str
    bw_mib_s: float | None
    iops: float | None = None
    block_kib: float | None = None
    xfer_kib: float | None = None
    total_s: float | None = None
    iteration: int | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class IorOperation:
    operation: str  # "write", "read"
    max_mib_s: float | None
    min_mib_s: float | None
    mean_mib_s: float | None
    stddev_mib_s: float | None = None
    iterations: int = 0  # result rows printed for it
    source: str = "results"  # "summary", "results" (computed here from the rows) or "max-line"


@dataclass(frozen=True, kw_only=True)
class IorResult(ParsedResult):
    tool: str = IOR
    command: str | None = None
    operations: tuple[IorOperation, ...] = ()
    iterations: tuple[IorIteration, ...] = ()
    line_no: int = 1

    def operation(self, name: str) -> IorOperation | None:
        return next((op for op in self.operations if op.operation == name), None)


def parse_ior(text: str) -> list[IorResult]:
    check_size(text, MAX_TEXT_CHARS, "IOR output")
    lines = split_lines(text)
    check_line_lengths(lines)
    command = None
    header: list[str] | None = None
    summary_header: list[str] | None = None
    iterations: list[IorIteration] = []
    summary: dict[str, IorOperation] = {}
    max_lines: dict[str, float] = {}
    first = None
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        launcher = "mpirun" in stripped or "srun" in stripped or stripped.startswith(("$", "./"))
        if command is None and launcher and _IOR_COMMAND.search(stripped):
            command = stripped.lstrip("$ ").strip()
        if _IOR_RESULTS_HEADER.match(stripped):
            header, summary_header = stripped.split(), None
            first = first or line.no
        elif _IOR_SUMMARY_HEADER.match(stripped):
            summary_header, header = stripped.split(), None
            first = first or line.no
        elif _IOR_SUMMARY.match(stripped):
            header = None
        elif match := _IOR_MAX.match(stripped):
            max_lines[match["op"].lower()] = parse_float(match["bw"], line.no, f"Max {match['op']}")
            first = first or line.no
        elif stripped.split()[0] in _IOR_OPERATIONS:
            if header is not None:
                if len(iterations) >= 100_000:
                    raise ParseError(line.no, "more than 100,000 IOR result rows", "one IOR run per file")
                iterations.append(_ior_row(header, stripped, line.no))
            elif summary_header is not None:
                op = _ior_summary_row(summary_header, stripped, line.no)
                summary[op.operation] = op
        elif header is not None and not set(stripped) <= set("- "):
            header = None  # the table ended
    if not iterations and not summary and not max_lines:
        raise ParseError(
            last_line_no(lines),
            "no IOR results found",
            "IOR's 'access bw(MiB/s) ...' results table, its 'Summary of all tests:' or 'Max Write:' lines",
        )
    operations = []
    for name in dict.fromkeys([*summary, *(it.operation for it in iterations), *max_lines]):
        rows = [it for it in iterations if it.operation == name]
        values = [it.bw_mib_s for it in rows if it.bw_mib_s is not None]
        if name in summary:
            operations.append(dataclasses.replace(summary[name], iterations=len(rows)))
        elif values:
            operations.append(
                IorOperation(
                    operation=name,
                    max_mib_s=max(values),
                    min_mib_s=min(values),
                    mean_mib_s=statistics.fmean(values),
                    stddev_mib_s=statistics.pstdev(values) if len(values) > 1 else 0.0,
                    iterations=len(rows),
                    source="results",
                )
            )
        elif name in max_lines:
            operations.append(IorOperation(operation=name, max_mib_s=max_lines[name], min_mib_s=None,
                                           mean_mib_s=None, source="max-line"))  # fmt: skip
    return [
        IorResult(command=command, operations=tuple(operations), iterations=tuple(iterations), line_no=first or 1)
    ]


def _ior_value(token: str, line_no: int, what: str) -> float | None:
    return None if token == "-" else parse_float(token, line_no, what)


def _ior_row(header: list[str], text: str, line_no: int) -> IorIteration:
    tokens = text.split()
    if len(tokens) != len(header):
        raise ParseError(line_no, f"IOR result row has {len(tokens)} columns", f"{len(header)}: {' '.join(header)}")
    row = dict(zip(header, tokens, strict=True))

    def get(key: str) -> float | None:
        return _ior_value(row[key], line_no, key) if key in row else None

    iteration = row.get("iter")
    return IorIteration(
        operation=tokens[0],
        bw_mib_s=get("bw(MiB/s)"),
        iops=get("IOPS"),
        block_kib=get("block(KiB)"),
        xfer_kib=get("xfer(KiB)"),
        total_s=get("total(s)"),
        iteration=None if iteration in (None, "-") else parse_int(iteration, line_no, "iter"),
        line_no=line_no,
    )


def _ior_summary_row(header: list[str], text: str, line_no: int) -> IorOperation:
    tokens = text.split()
    if len(tokens) < 5:
        raise ParseError(line_no, "IOR summary row is short", "Operation Max(MiB) Min(MiB) Mean(MiB) StdDev ...")
    row = dict(zip(header, tokens, strict=False))
    return IorOperation(
        operation=tokens[0],
        max_mib_s=_ior_value(row["Max(MiB)"], line_no, "Max(MiB)"),
        min_mib_s=_ior_value(row["Min(MiB)"], line_no, "Min(MiB)"),
        mean_mib_s=_ior_value(row["Mean(MiB)"], line_no, "Mean(MiB)"),
        stddev_mib_s=_ior_value(row["StdDev"], line_no, "StdDev") if "StdDev" in row else None,
        source="summary",
    )
