"""NVLink state and error counters: `nvidia-smi nvlink -s` (speed per link, or `<inactive>`), `nvidia-smi
nvlink -e` (error counters per link) and `dcgmi nvlink -e` (the counters table). One result per GPU; a file
holding both `-s` and `-e` of the same GPU gives one result with speeds and counters together.

    GPU 7: NVIDIA A100-SXM4-80GB (UUID: GPU-c7e253b0-...)        nvidia-smi: a GPU line,
         Link 0: 25 GB/s                                            then its links
         Link 0: Replay Errors: 0                                   (-e: one line per counter)
    | GPU ID: 0 | NVLINK Error Counts |                              dcgmi: a titled table
    |Link 0     | CRC FLIT Error      | 0 |

Counter names are snake case without "error(s)": "Replay Errors" -> "replay", "CRC FLIT Error" ->
"crc_flit". A line of `[...]` or `...` (someone's elision) marks the GPU it falls in as `elided`: its link
count is then not the GPU's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import ParsedResult, ParseError, last_line_no, parse_float, shown, split_lines
from .node_common import check_line_lengths, check_size

TOOL = "nvlink"

MAX_TEXT_CHARS = 16 * 2**20
MAX_GPUS = 4096
MAX_LINKS = 64

_SMI_GPU = re.compile(r"^GPU (?P<gpu>[0-9]{1,4}): (?P<name>.*?)(?: \(UUID: (?P<uuid>[^)\s]{1,80})\))?$")
_SMI_LINK = re.compile(r"^Link (?P<link>[0-9]{1,3}): (?P<rest>.*)$")
_SPEED = re.compile(r"^(?P<speed>[0-9]{1,6}(?:\.[0-9]{1,6})?) GB/s$")
_INACTIVE = re.compile(r"^<?inactive>?$", re.IGNORECASE)
_COUNTER = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9 /_-]{0,60}?):\s*(?P<value>\S.*)$")
_DCGMI_GPU = re.compile(r"^\|\s*GPU ID:\s*(?P<gpu>[0-9]{1,4})\s*\|\s*NVLINK Error Counts\s*\|$", re.IGNORECASE)
_DCGMI_ROW = re.compile(
    r"^\|\s*Link\s+(?P<link>[0-9]{1,3})\s*\|\s*(?P<name>[^|]{1,60}?)\s*\|\s*(?P<value>[^|]{0,40}?)\s*\|$"
)
_ELISION = re.compile(r"^(?:\[\s*\.{3}\s*\]|\.{3,}|…)$")
_ALL_INACTIVE = re.compile(r"NVML: Unable to retrieve NVLink information|all links are inactive", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class NvlinkLink:
    link: int
    speed_gbs: float | None = None
    active: bool | None = None  # True when a speed was printed, False for <inactive>, None when not shown
    counters: dict[str, int | None] = field(default_factory=dict)
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class NvlinkGpu(ParsedResult):
    tool: str = TOOL
    source: str  # "nvidia-smi" or "dcgmi"
    gpu: int
    name: str | None = None
    uuid: str | None = None
    links: tuple[NvlinkLink, ...] = ()
    active_links: int | None = None  # links printed with a speed (None when no status was printed)
    inactive_links: int | None = None
    elided: bool = False
    messages: tuple[str, ...] = ()
    line_no: int = 1

    def link(self, number: int) -> NvlinkLink | None:
        return next((link for link in self.links if link.link == number), None)


@dataclass
class _Gpu:
    source: str
    gpu: int
    line_no: int
    name: str | None = None
    uuid: str | None = None
    links: dict[int, dict] = field(default_factory=dict)
    elided: bool = False
    messages: list[str] = field(default_factory=list)


def parse(text: str) -> list[NvlinkGpu]:
    check_size(text, MAX_TEXT_CHARS, "nvlink output")
    lines = split_lines(text)
    check_line_lengths(lines)
    gpus: dict[tuple[str, int], _Gpu] = {}
    current: _Gpu | None = None
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        if match := _SMI_GPU.match(stripped):
            current = _gpu(gpus, "nvidia-smi", int(match["gpu"]), line.no)
            current.name = match["name"].strip() or current.name
            current.uuid = match["uuid"] or current.uuid
        elif match := _DCGMI_GPU.match(stripped):
            current = _gpu(gpus, "dcgmi", int(match["gpu"]), line.no)
        elif current is None:
            continue  # prompts, the command line
        elif _ELISION.match(stripped):
            current.elided = True
        elif current.source == "nvidia-smi" and (match := _SMI_LINK.match(stripped)):
            _smi_link(current, int(match["link"]), match["rest"].strip(), line.no)
        elif current.source == "dcgmi" and (match := _DCGMI_ROW.match(stripped)):
            counter = _counter_name(match["name"])
            _link(current, int(match["link"]), line.no)["counters"][counter] = _count(match["value"], line.no, counter)
        elif _ALL_INACTIVE.search(stripped) and len(current.messages) < 20:
            current.messages.append(stripped)
    if not gpus:
        raise ParseError(
            last_line_no(lines),
            "no NVLink output found",
            "'GPU 0: <name> (UUID: ...)' followed by 'Link 0: 25 GB/s' lines (nvidia-smi nvlink -s/-e) "
            "or dcgmi nvlink -e's '| GPU ID: 0 | NVLINK Error Counts |' table",
        )
    return [_finish(gpu) for gpu in gpus.values()]


def _gpu(gpus: dict[tuple[str, int], _Gpu], source: str, number: int, line_no: int) -> _Gpu:
    key = (source, number)
    if key not in gpus:
        if len(gpus) >= MAX_GPUS:
            raise ParseError(line_no, f"more than {MAX_GPUS} GPUs", f"at most {MAX_GPUS} GPUs per file")
        gpus[key] = _Gpu(source, number, line_no)
    return gpus[key]


def _link(gpu: _Gpu, number: int, line_no: int) -> dict:
    if number not in gpu.links:
        if len(gpu.links) >= MAX_LINKS:
            raise ParseError(line_no, f"more than {MAX_LINKS} links on GPU {gpu.gpu}", f"at most {MAX_LINKS} links")
        gpu.links[number] = {"link": number, "counters": {}, "line_no": line_no}
    return gpu.links[number]


def _smi_link(gpu: _Gpu, number: int, rest: str, line_no: int) -> None:
    link = _link(gpu, number, line_no)
    if match := _SPEED.match(rest):
        link["speed_gbs"] = parse_float(match["speed"], line_no, f"link {number} speed")
        link["active"] = True
    elif _INACTIVE.match(rest):
        link["speed_gbs"] = None
        link["active"] = False
    elif match := _COUNTER.match(rest):
        counter = _counter_name(match["name"])
        link["counters"][counter] = _count(match["value"], line_no, counter)
    else:
        raise ParseError(
            line_no,
            f"link {number} reads {shown(rest)}",
            "'Link N: 25 GB/s', 'Link N: <inactive>' or 'Link N: Replay Errors: 0'",
        )


def _counter_name(name: str) -> str:
    words = re.sub(r"[^a-z0-9]+", " ", name.lower()).split()
    while words and words[-1] in ("error", "errors", "count", "counts"):
        words.pop()
    return "_".join(words) or "errors"


def _count(value: str, line_no: int, counter: str) -> int | None:
    value = value.strip()
    if value.upper() in ("N/A", "NA", ""):
        return None
    if re.fullmatch(r"[0-9]{1,20}", value):
        return int(value)
    raise ParseError(line_no, f"{counter} count is {shown(value)}", f"a whole number for the {counter} counter")


def _finish(gpu: _Gpu) -> NvlinkGpu:
    links = tuple(
        NvlinkLink(
            link=fields["link"],
            speed_gbs=fields.get("speed_gbs"),
            active=fields.get("active"),
            counters=fields["counters"],
            line_no=fields["line_no"],
        )
        for fields in sorted(gpu.links.values(), key=lambda item: item["link"])
    )
    known = [link.active for link in links if link.active is not None]
    return NvlinkGpu(
        source=gpu.source,
        gpu=gpu.gpu,
        name=gpu.name,
        uuid=gpu.uuid,
        links=links,
        active_links=sum(known) if known else (0 if gpu.messages else None),
        inactive_links=len(known) - sum(known) if known else None,
        elided=gpu.elided,
        messages=tuple(gpu.messages),
        line_no=gpu.line_no,
    )
