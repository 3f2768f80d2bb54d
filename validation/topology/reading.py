"""One tool output (an uploaded file, a check target's output) to a Source the mapping reads (pure Python).

The tool is detected unless named; only topology tools are taken. An LLDP table needs the device it was
read on: given (HOST=FILE on the command line, the form's host, the check target's host), else the
shell prompt captured with it (`cumulus@stor-leaf-01:~$ ...`), else the device the file is named after
(`stor-leaf-01.json`, `stor-leaf-01_lldp.txt`), else what its JSON says (SONiC's lldp_loc_chassis).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..parsers import PARSERS, ParseError, detect_tool
from .mapping import IB_TOOLS, LLDP_TOOLS, TOPOLOGY_TOOLS, Source
from .naming import prompt_host

TOOL_NAMES = {"iblinkinfo": "iblinkinfo", "ibnetdiscover": "ibnetdiscover", "lldp": "lldpcli",
              "nvue_lldp": "nv show interface lldp"}


@dataclass
class ReadOutcome:
    source: Source | None
    tool: str = ""
    host: str = ""
    error: str = ""
    error_line: int | None = None


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def host_from_name(filename: str, device_names: Iterable[str]) -> str | None:
    """The longest device name the file's name starts with, followed by a separator or nothing."""
    stem = filename.rsplit("/", 1)[-1].lower()
    best = None
    for name in device_names:
        lowered = name.lower()
        if stem.startswith(lowered) and (len(stem) == len(lowered) or not stem[len(lowered)].isalnum()):
            if best is None or len(name) > len(best):
                best = name
    return best


def read_output(name: str, text: str, *, host: str = "", tool: str = "",
                device_names: Iterable[str] = ()) -> ReadOutcome:
    try:
        tool = tool or detect_tool(text)
    except ParseError as exc:
        return ReadOutcome(None, error=str(exc), error_line=exc.line_no)
    if tool not in TOPOLOGY_TOOLS:
        return ReadOutcome(None, tool=tool, error=(
            f"this is {tool} output, not a fabric's topology: give iblinkinfo, ibnetdiscover, lldpcli show "
            "neighbors (text, -f json or -f keyvalue) or nv show interface lldp"), error_line=1)
    try:
        results = PARSERS[tool](text)
    except ParseError as exc:
        return ReadOutcome(None, tool=tool, error=str(exc), error_line=exc.line_no)
    host = host.strip() or prompt_host(text) or ""
    if tool in LLDP_TOOLS and not host:
        host = host_from_name(name, device_names) or next(
            (r.local_system_name for r in results if getattr(r, "local_system_name", None)), "") or ""
        if not host and results:
            return ReadOutcome(None, tool=tool, error=(
                "which device's LLDP table is this? Name the file after the device (stor-leaf-01.txt), "
                "give HOST=FILE, or keep the shell prompt in the capture"), error_line=1)
    if tool in IB_TOOLS:
        host = host or ""
    return ReadOutcome(Source(name=name, tool=tool, results=results, host=host or None), tool=tool, host=host)


_HOST_FILE = re.compile(r"^(?P<host>[A-Za-z0-9][A-Za-z0-9_.-]{0,63})=(?P<path>.+)$")


def split_host_argument(argument: str) -> tuple[str, str]:
    """`HOST=FILE` -> (host, file); a plain FILE -> ("", file)."""
    match = _HOST_FILE.match(argument)
    return (match["host"], match["path"]) if match else ("", argument)
