"""NVIDIA XID (and NVSwitch SXid) events in kernel logs: `dmesg`, `dmesg -T`, `dmesg --time-format iso`
(with or without `--decode`'s "kern  :warn  : "), `journalctl -k` (short, short-iso, short-precise) and
syslog files with RFC 3339 stamps. One result per event, in the order logged.

    NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for ...
    NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, ...
    NVRM: Xid (0000:03:00): 13, 0003 00000000 ...                       (old drivers: no "PCI:", no pid)
    nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 36 ...

The timestamp is kept as printed, and parsed to ISO 8601 when it says the date and time with a year
(`dmesg -T`, ISO forms); `dmesg`'s seconds since boot go to `uptime_s`; journalctl's short form names no
year, so it stays text. The PCI address is normalised by node_common.pci_key ("0000:9b:00") to match
nvidia-smi's bus ids; the GPU's UUID and board serial are added when the log names them for that address
("NVRM: GPU at PCI:0000:9b:00: GPU-...", "NVRM: GPU Board Serial Number: ...").

A log with no XID line is a valid, clean log and gives no result; a text in which no line looks like a
kernel log line at all is refused, so a wrong file is not mistaken for a clean one.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from .base import ParsedResult, ParseError, last_line_no, shown, split_lines
from .node_common import check_line_lengths, check_size, pci_key

TOOL = "xid"

MAX_TEXT_CHARS = 64 * 2**20
MAX_EVENTS = 200_000
MAX_LINE_CHARS = 16 * 1024  # the kernel's printk lines are at most 1 KB; journald adds a prefix

_EVENT = re.compile(
    r"\b(?P<kind>S?Xid) \((?:PCI:)?(?P<pci>[0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2}(?:\.[0-7])?)\):"
    r"\s*(?P<code>[0-9]{1,6})\b,?\s*(?P<rest>.*)$"
)
_PID = re.compile(r"^pid=(?:'(?P<quoted>[^']{0,64})'|(?P<pid>[0-9]{1,10}|<unknown>)),?\s*")
_NAME = re.compile(r"^name=(?P<name>[^,]{0,256}?),\s*")
_GPU_AT = re.compile(
    r"NVRM: GPU at PCI:(?P<pci>[0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2}(?:\.[0-7])?): "
    r"(?P<uuid>GPU-[0-9a-fA-F-]{36})"
)
_SERIAL = re.compile(r"NVRM: GPU Board Serial Number: (?P<serial>\S{1,64})\s*$")

# Timestamp prefixes, tried in order.
_DMESG_UPTIME = re.compile(r"^\[\s*(?P<ts>[0-9]{1,10}\.[0-9]{1,9})\]\s?")
_DMESG_T = re.compile(r"^\[(?P<ts>[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4})\]\s?")
_DECODE = re.compile(r"^(?P<facility>[a-z]{2,8})\s*:(?P<level>[a-z]{2,8})\s*:\s?")
_ISO = re.compile(
    r"^(?P<ts>[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?)\s"
)
_SYSLOG = re.compile(r"^(?P<ts>[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?)\s")
_HOST_KERNEL = re.compile(r"^(?P<host>[A-Za-z0-9_.-]{1,253}) kernel:\s?")
_KERNEL_HINT = re.compile(
    r"^(?:\[\s*[0-9]{1,10}\.[0-9]{1,9}\]|\[[A-Z][a-z]{2} [A-Z][a-z]{2} |[a-z]{2,8}\s*:[a-z]{2,8}\s*:"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})|\bkernel:|\bNVRM:"
)


@dataclass(frozen=True, kw_only=True)
class XidEvent(ParsedResult):
    tool: str = TOOL
    kind: str  # "Xid" (GPU) or "SXid" (NVSwitch)
    code: int
    pci_address: str  # as printed ("0000:9b:00")
    pci: str | None  # node_common.pci_key
    pid: int | None = None
    process: str | None = None
    message: str = ""
    timestamp_text: str | None = None  # as printed
    timestamp: str | None = None  # ISO 8601 when the printed stamp has a date with a year
    uptime_s: float | None = None  # dmesg's seconds since boot
    host: str | None = None  # journalctl/syslog's host column
    level: str | None = None  # dmesg --decode's level ("warn", "err")
    gpu_uuid: str | None = None  # from "NVRM: GPU at PCI:...: GPU-..." in the same log
    gpu_serial: str | None = None
    line_no: int = 1


def parse(text: str) -> list[XidEvent]:
    check_size(text, MAX_TEXT_CHARS, "kernel log")
    lines = split_lines(text)
    check_line_lengths(lines, MAX_LINE_CHARS)
    events: list[tuple[dict, int]] = []
    uuids: dict[str, str] = {}
    serials: dict[str, str] = {}
    last_gpu: str | None = None
    kernel_lines = 0
    for line in lines:
        raw = line.text.strip()
        if not raw:
            continue
        if _KERNEL_HINT.search(raw):
            kernel_lines += 1
        if "NVRM: GPU" in raw:
            if match := _GPU_AT.search(raw):
                last_gpu = pci_key(match["pci"])
                if last_gpu:
                    uuids[last_gpu] = match["uuid"]
            elif (match := _SERIAL.search(raw)) and last_gpu:
                serials.setdefault(last_gpu, match["serial"])
        if "Xid (" not in raw:
            continue
        match = _EVENT.search(raw)
        if match is None:
            if "NVRM: Xid (" in raw or "SXid (" in raw:
                raise ParseError(
                    line.no,
                    f"XID line not readable: {shown(raw[raw.find('Xid ('):], 60)}",
                    "'NVRM: Xid (PCI:0000:3b:00): 79, pid=..., <message>' with a code of at most 6 digits",
                )
            continue
        if len(events) >= MAX_EVENTS:
            raise ParseError(line.no, f"more than {MAX_EVENTS:,} XID events", f"at most {MAX_EVENTS:,} per log")
        events.append((_event(raw, match, line.no), line.no))
    if not events and not kernel_lines:
        raise ParseError(
            last_line_no(lines),
            "no kernel log line found",
            "dmesg / journalctl -k output (lines such as '[  12.345678] NVRM: ...' or 'host kernel: ...')",
        )
    results = []
    for fields, _line_no in events:
        key = fields["pci"]
        results.append(XidEvent(**fields, gpu_uuid=uuids.get(key), gpu_serial=serials.get(key)))
    return results


def _event(raw: str, match: re.Match, line_no: int) -> dict:
    prefix = raw[: match.start()]
    stamp = _timestamp(prefix)
    rest = match["rest"].strip()
    pid = process = None
    if pid_match := _PID.match(rest):
        value = pid_match["pid"] or pid_match["quoted"]
        pid = int(value) if value and value.isdigit() else None
        rest = rest[pid_match.end() :]
        if name_match := _NAME.match(rest):
            name = name_match["name"].strip()
            process = None if name in ("<unknown>", "") else name
            rest = rest[name_match.end() :]
    code = int(match["code"])
    return {
        "kind": match["kind"],
        "code": code,
        "pci_address": match["pci"].lower(),
        "pci": pci_key(match["pci"]),
        "pid": pid,
        "process": process,
        "message": rest.strip()[:2000],
        "line_no": line_no,
        **stamp,
    }


def _timestamp(prefix: str) -> dict:
    """What the line's prefix says of when and where: ISO/journal/syslog stamp, host, dmesg's forms."""
    found: dict = {"timestamp_text": None, "timestamp": None, "uptime_s": None, "host": None, "level": None}
    text = prefix.strip()
    if match := _DECODE.match(text):
        found["level"] = match["level"]
        text = text[match.end() :]
    if match := _ISO.match(text + " "):
        found["timestamp_text"] = match["ts"]
        found["timestamp"] = _iso(match["ts"])
        text = text[match.end() - 1 :].strip() if match.end() <= len(text) else ""
    elif match := _SYSLOG.match(text + " "):
        found["timestamp_text"] = match["ts"]  # no year: left as text
        text = text[match.end() - 1 :].strip() if match.end() <= len(text) else ""
    if match := _HOST_KERNEL.match(text):
        found["host"] = match["host"]
        text = text[match.end() :]
    if match := _DMESG_T.match(text):
        found["timestamp_text"] = found["timestamp_text"] or match["ts"]
        found["timestamp"] = found["timestamp"] or _ctime(match["ts"])
    elif match := _DMESG_UPTIME.match(text):
        found["uptime_s"] = float(match["ts"])
        found["timestamp_text"] = found["timestamp_text"] or match["ts"]
    return found


def _iso(stamp: str) -> str | None:
    text = stamp.replace(",", ".").replace(" ", "T", 1)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    if re.search(r"[+-][0-9]{4}$", text):
        text = text[:-2] + ":" + text[-2:]
    if "." in text:  # datetime reads at most 6 fractional digits
        head, _, tail = text.partition(".")
        digits = re.match(r"[0-9]*", tail).group()
        text = f"{head}.{digits[:6].ljust(6, '0')}{tail[len(digits):]}"
    try:
        return datetime.fromisoformat(text).isoformat()
    except ValueError:
        return None


def _ctime(stamp: str) -> str | None:
    try:
        return datetime.strptime(" ".join(stamp.split()), "%a %b %d %H:%M:%S %Y").isoformat()
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------------
# Grouping helpers


def by_code(events: Iterable[XidEvent]) -> dict[int, list[XidEvent]]:
    grouped: dict[int, list[XidEvent]] = defaultdict(list)
    for event in events:
        grouped[event.code].append(event)
    return dict(grouped)


def by_pci(events: Iterable[XidEvent]) -> dict[str, list[XidEvent]]:
    """Events by normalised PCI address (pci_key), the key nvidia-smi's GpuInfo.pci also has."""
    grouped: dict[str, list[XidEvent]] = defaultdict(list)
    for event in events:
        grouped[event.pci or event.pci_address].append(event)
    return dict(grouped)


def counts(events: Iterable[XidEvent]) -> dict[tuple[str, int], int]:
    """(pci, code) -> number of events."""
    return dict(Counter((event.pci or event.pci_address, event.code) for event in events))


def describe(event: XidEvent) -> str:
    where = event.pci or event.pci_address
    who = f", pid {event.pid}" if event.pid is not None else ""
    who += f" ({shown(event.process, 40)})" if event.process else ""
    return f"{event.kind} {event.code} on {where}{who} line {event.line_no}: {event.message[:120]}"
