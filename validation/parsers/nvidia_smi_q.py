"""`nvidia-smi -q` (also `-a`, `-q -d ECC,PAGE_RETIREMENT,...`) text and `nvidia-smi -q -x` XML: one result
per GPU with what an acceptance check reads (identity, ECC, retired pages, remapped rows, PCIe link, clock
event reasons, temperatures, power).

Text: `Key : value` lines indented by four spaces a level under section titles ("ECC Errors", "Volatile"),
each GPU under a `GPU 00000000:19:00.0` line, the driver/CUDA versions and `Attached GPUs` above the GPUs.
A value may carry children ("HW Slowdown : Not Active" over "HW Thermal Slowdown"). Driver generations name
things differently ("Clocks Throttle Reasons" before R535, "Clocks Event Reasons" after; ECC counters as
"Single Bit"/"Double Bit" totals, then SRAM/DRAM correctable/uncorrectable, then SRAM uncorrectable split
into parity and SEC-DED): every spelling seen is read into the same fields.

A fragment (one section pasted without its `GPU ...` line, or `-d PAGE_RETIREMENT` output) gives what it
holds; everything it does not print is None, never 0. `index` is the GPU's place in the output and is only
set when the output lists every attached GPU (then it is nvidia-smi's own index).

Temperatures: old drivers print absolute thresholds ("GPU Slowdown Temp : 89 C"); R545+ print the margin
to the thermal limit ("GPU T.Limit Temp : 54 C" = 54 C below it) and the slowdown/shutdown points relative
to that limit ("GPU Slowdown T.Limit Temp : -2 C"). Both are kept in separate fields, never mixed.

XML: parsed with expat directly (what xml.etree uses), so every element keeps its line. nvidia-smi's XML
carries `<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_vNN.dtd">`, which is accepted (expat never fetches
it); an internal DTD subset, any ENTITY declaration or an external entity reference is refused, as are
documents over MAX_XML_CHARS or nested over MAX_XML_DEPTH.
"""

from __future__ import annotations

import re
import xml.parsers.expat as expat
from collections.abc import Iterable
from dataclasses import dataclass, field

from .base import ParsedResult, ParseError, last_line_no, shown, split_lines
from .node_common import check_line_lengths, check_size, pci_key

TOOL = "nvidia_smi_q"

# An 8-GPU `nvidia-smi -q` is about 80 KB, its XML about 200 KB: the caps leave room for a cluster's worth
# pasted together and bound the memory the tree takes.
MAX_TEXT_CHARS = 16 * 2**20
MAX_XML_CHARS = 16 * 2**20
MAX_XML_DEPTH = 32
MAX_XML_ELEMENTS = 300_000
MAX_NODES = 300_000  # text: one per key or section line
MAX_GPUS = 1024

_BANNER = re.compile(r"^=+\s*NVSMI LOG\s*=+$")
_GPU_HEADER = re.compile(r"^GPU\s+(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$")
_HEADER_KEYS = {"timestamp", "driver version", "cuda version", "attached gpus"}
_NOT_AVAILABLE = {
    "n/a",
    "na",
    "not supported",
    "not available",
    "none",
    "unknown",
    "requested functionality has been deprecated",
    "",
}
_INT = re.compile(r"[+-]?[0-9]{1,12}")
_NUMBER_WITH_UNIT = re.compile(r"(?P<number>[+-]?[0-9]{1,9}(?:\.[0-9]{1,6})?)\s*(?P<unit>[A-Za-z()/%]*)")
_ENTITY = re.compile(r"<!ENTITY", re.IGNORECASE)
_INTERNAL_SUBSET = re.compile(r"<!DOCTYPE[^>\[]{0,1000}\[", re.IGNORECASE)

# Clock event reason names from the XML tags, mapped to the text's names (snake case of the text).
_REASON_ALIASES = {"gpu_idle": "idle", "display_clocks_setting": "display_clock_setting"}


@dataclass(frozen=True, kw_only=True)
class EccCounts:
    """One scope of `ECC Errors` (volatile: since the driver loaded; aggregate: the GPU's lifetime).
    `counters` holds every count printed, by snake-case name ("sram_uncorrectable_parity",
    "single_bit_total"); `correctable`/`uncorrectable` add up the kinds this driver prints (None when none
    of them was a number)."""

    counters: dict[str, int | None]
    correctable: int | None
    uncorrectable: int | None
    flags: dict[str, bool | None] = field(default_factory=dict)  # e.g. sram_threshold_exceeded


@dataclass(frozen=True, kw_only=True)
class GpuInfo(ParsedResult):
    tool: str = TOOL
    format: str  # "text" or "xml"
    index: int | None = None
    minor_number: int | None = None
    pci_bus_id: str | None = None  # as printed: "00000000:19:00.0"
    pci: str | None = None  # node_common.pci_key: "0000:19:00"
    product_name: str | None = None
    product_architecture: str | None = None
    serial: str | None = None
    uuid: str | None = None
    vbios_version: str | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    attached_gpus: int | None = None
    mig_mode: str | None = None
    reset_required: bool | None = None
    ecc_mode: str | None = None
    ecc_mode_pending: str | None = None
    ecc_volatile: EccCounts | None = None
    ecc_aggregate: EccCounts | None = None
    retired_pages_single_bit: int | None = None
    retired_pages_double_bit: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_gen_device_max: int | None = None
    pcie_gen_host_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    clock_event_reasons: dict[str, bool] = field(default_factory=dict)  # name -> active
    active_clock_event_reasons: tuple[str, ...] = ()
    temperature_c: float | None = None
    memory_temperature_c: float | None = None
    slowdown_temperature_c: float | None = None  # absolute thresholds (older drivers)
    shutdown_temperature_c: float | None = None
    max_operating_temperature_c: float | None = None
    tlimit_c: float | None = None  # R545+: degrees below the thermal limit now
    slowdown_tlimit_c: float | None = None  # R545+: slowdown point relative to the limit
    shutdown_tlimit_c: float | None = None
    max_operating_tlimit_c: float | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    module_power_draw_w: float | None = None
    module_power_limit_w: float | None = None
    fragment: bool = False  # no `GPU <bus id>` line: a pasted section
    notes: tuple[str, ...] = ()  # bracketed values the driver printed instead of a reading
    line_no: int = 1


@dataclass
class _Node:
    key: str  # normalised: lower case, single spaces (text) or the XML tag
    line_no: int
    value: str | None = None
    children: list[_Node] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)

    def find(self, *path: str) -> _Node | None:
        node: _Node | None = self
        for name in path:
            node = next((child for child in node.children if child.key == name), None) if node else None
        return node


def parse(text: str) -> list[GpuInfo]:
    """Text or XML, told apart by the first character."""
    if text.lstrip().startswith("<"):
        return parse_xml(text)
    return parse_text(text)


# ---------------------------------------------------------------------------------------------------
# Text


@dataclass
class _Log:
    header: dict[str, tuple[str, int]] = field(default_factory=dict)
    gpus: list[tuple[_Node, bool]] = field(default_factory=list)  # (root, fragment)


def parse_text(text: str) -> list[GpuInfo]:
    check_size(text, MAX_TEXT_CHARS, "nvidia-smi -q output")
    lines = split_lines(text)
    check_line_lengths(lines)
    logs: list[_Log] = [_Log()]
    stack: list[tuple[int, _Node]] = []  # (indent, node); stack[0] is the GPU the lines belong to
    total = nodes = 0
    for line in lines:
        raw = line.text.expandtabs(4).rstrip()
        stripped = raw.strip()
        if not stripped:
            continue
        log = logs[-1]
        if _BANNER.match(stripped):
            if log.gpus or log.header:
                logs.append(_Log())
            stack = []
            continue
        indent = len(raw) - len(raw.lstrip())
        key, value = _split_key_value(stripped)
        outside = not stack or indent <= stack[0][0]
        if match := _GPU_HEADER.match(stripped):
            total = _count_gpu(total, line.no)
            log.gpus.append((_Node("gpu", line.no, attrs={"id": match["bus"]}), False))
            stack = [(indent, log.gpus[-1][0])]
            continue
        if outside and value is not None and key in _HEADER_KEYS:
            if key == "timestamp" and log.gpus:  # a second capture pasted without its banner
                logs.append(_Log())
                log = logs[-1]
            log.header[key] = (value, line.no)
            stack = []
            continue
        if outside and (stack or indent == 0):
            stack = []  # prompts, commands and other lines outside the GPU blocks
            continue
        if not stack:
            # An indented line with no GPU above it: a section pasted on its own.
            total = _count_gpu(total, line.no)
            log.gpus.append((_Node("gpu", line.no), True))
            stack = [(indent - 1, log.gpus[-1][0])]
        while len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise ParseError(line.no, f"more than {MAX_NODES:,} nvidia-smi lines", "one node's nvidia-smi -q per file")
        node = _Node(key, line.no, value)
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    results = [gpu for log in logs for gpu in _finish_log(log, "text")]
    if not results:
        raise ParseError(
            last_line_no(lines),
            "no GPU found in the nvidia-smi output",
            "'GPU 00000000:19:00.0' blocks of 'Key : value' lines (nvidia-smi -q), or an indented section of one",
        )
    return results


def _count_gpu(total: int, line_no: int) -> int:
    if total >= MAX_GPUS:
        raise ParseError(line_no, f"more than {MAX_GPUS} GPUs in one output", f"at most {MAX_GPUS} GPUs per file")
    return total + 1


def _split_key_value(text: str) -> tuple[str, str | None]:
    """("key", "value") from "Key   : value"; ("key", None) for a section title. nvidia-smi pads keys, so
    the separator is a colon after a space; colons inside values (bus ids, times) stay in the value."""
    index = text.find(" :")
    if index < 0:
        return _norm(text), None
    return _norm(text[:index]), text[index + 2 :].strip()


def _norm(key: str) -> str:
    return " ".join(key.lower().split())


def _finish_log(log: _Log, fmt: str) -> list[GpuInfo]:
    attached = None
    if "attached gpus" in log.header:
        value, line_no = log.header["attached gpus"]
        attached = _int(value, line_no, "Attached GPUs")
    complete = attached is not None and attached == sum(1 for _, fragment in log.gpus if not fragment)
    common = {
        "driver_version": _text(log.header.get("driver version", (None, 0))[0]),
        "cuda_version": _text(log.header.get("cuda version", (None, 0))[0]),
        "attached_gpus": attached,
    }
    return [
        _gpu_info(root, fmt, index=position if complete and not fragment else None, fragment=fragment, **common)
        for position, (root, fragment) in enumerate(log.gpus)
    ]


# ---------------------------------------------------------------------------------------------------
# XML


def parse_xml(text: str) -> list[GpuInfo]:
    check_size(text, MAX_XML_CHARS, "nvidia-smi -q -x XML")
    if match := _ENTITY.search(text):
        raise ParseError(
            text.count("\n", 0, match.start()) + 1,
            "XML entity declarations are refused",
            "nvidia-smi -q -x output, which declares no entities",
        )
    if match := _INTERNAL_SUBSET.search(text):
        raise ParseError(
            text.count("\n", 0, match.start()) + 1,
            "an internal DTD subset is refused",
            "nvidia-smi's <!DOCTYPE nvidia_smi_log SYSTEM \"...\"> with no [...] part",
        )
    root = _read_xml(text)
    if root.key != "nvidia_smi_log":
        raise ParseError(root.line_no, f"root element <{shown(root.key)}>", "<nvidia_smi_log> (nvidia-smi -q -x)")
    log = _Log()
    total = 0
    for child in root.children:
        if child.key in ("timestamp", "driver_version", "cuda_version", "attached_gpus"):
            log.header[child.key.replace("_", " ")] = (child.value or "", child.line_no)
        elif child.key == "gpu":
            total = _count_gpu(total, child.line_no)
            log.gpus.append((child, False))
    if not log.gpus:
        raise ParseError(root.line_no, "no <gpu> element in the XML", "one <gpu> element per GPU")
    return _finish_log(log, "xml")


def _read_xml(text: str) -> _Node:
    parser = expat.ParserCreate()
    stack: list[_Node] = []
    texts: list[list[str]] = []
    roots: list[_Node] = []
    count = [0]

    def here() -> int:
        return parser.CurrentLineNumber

    def refuse(what: str) -> None:
        raise ParseError(here(), f"{what} is refused", "nvidia-smi -q -x output (no entities, no inline DTD)")

    def doctype(name, system_id, public_id, has_internal_subset):
        if has_internal_subset:
            refuse("an internal DTD subset")

    def start(tag, attrs):
        count[0] += 1
        if count[0] > MAX_XML_ELEMENTS:
            raise ParseError(here(), f"more than {MAX_XML_ELEMENTS:,} XML elements", "an nvidia-smi -q -x document")
        if len(stack) >= MAX_XML_DEPTH:
            raise ParseError(here(), f"XML nested more than {MAX_XML_DEPTH} levels", "an nvidia-smi -q -x document")
        node = _Node(tag, here(), attrs=dict(attrs))
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
        texts.append([])

    def end(tag):
        node = stack.pop()
        content = "".join(texts.pop()).strip()
        if not node.children:
            node.value = content

    def characters(data):
        if texts:
            texts[-1].append(data)

    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = lambda *args: refuse("an XML entity declaration")
    parser.UnparsedEntityDeclHandler = lambda *args: refuse("an XML entity declaration")
    parser.ExternalEntityRefHandler = lambda *args: refuse("an external entity reference")
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        message = expat.ErrorString(exc.code) if exc.code else str(exc)
        raise ParseError(
            max(exc.lineno or 1, 1), f"not well-formed XML ({message})", "nvidia-smi -q -x output"
        ) from None
    if not roots:
        raise ParseError(1, "no XML element", "nvidia-smi -q -x output")
    return roots[0]


# ---------------------------------------------------------------------------------------------------
# Fields: each is read from the first of its spellings that the output has (text keys, XML tags).

_Paths = tuple[tuple[str, ...], ...]

_FIELDS: dict[str, tuple[_Paths, _Paths]] = {
    "product_name": ((("product name",),), (("product_name",),)),
    "product_architecture": ((("product architecture",),), (("product_architecture",),)),
    "serial": ((("serial number",),), (("serial",),)),
    "uuid": ((("gpu uuid",),), (("uuid",),)),
    "minor_number": ((("minor number",),), (("minor_number",),)),
    "vbios_version": ((("vbios version",),), (("vbios_version",),)),
    "bus_id": ((("pci", "bus id"),), (("pci", "pci_bus_id"),)),
    "mig_mode": ((("mig mode", "current"),), (("mig_mode", "current_mig"),)),
    "reset_required": ((("gpu reset status", "reset required"),), (("gpu_reset_status", "reset_required"),)),
    "ecc_mode": ((("ecc mode", "current"),), (("ecc_mode", "current_ecc"),)),
    "ecc_mode_pending": ((("ecc mode", "pending"),), (("ecc_mode", "pending_ecc"),)),
    "retired_sbe": (
        (("retired pages", "single bit ecc"),),
        (("retired_pages", "multiple_single_bit_retirement", "retired_count"),),
    ),
    "retired_dbe": (
        (("retired pages", "double bit ecc"),),
        (("retired_pages", "double_bit_retirement", "retired_count"),),
    ),
    "retired_pending": (
        (
            ("retired pages", "pending page blacklist"),
            ("retired pages", "pending page retirement"),
            ("retired pages", "pending"),
        ),
        (("retired_pages", "pending_retirement"), ("retired_pages", "pending_blacklist")),
    ),
    "remap_corr": ((("remapped rows", "correctable error"),), (("remapped_rows", "remapped_row_corr"),)),
    "remap_unc": ((("remapped rows", "uncorrectable error"),), (("remapped_rows", "remapped_row_unc"),)),
    "remap_pending": ((("remapped rows", "pending"),), (("remapped_rows", "remapped_row_pending"),)),
    "remap_failure": (
        (("remapped rows", "remapping failure occurred"),),
        (("remapped_rows", "remapped_row_failure"),),
    ),
    "gen_current": (
        (("pci", "gpu link info", "pcie generation", "current"),),
        (("pci", "pci_gpu_link_info", "pcie_gen", "current_link_gen"),),
    ),
    "gen_max": (
        (("pci", "gpu link info", "pcie generation", "max"),),
        (("pci", "pci_gpu_link_info", "pcie_gen", "max_link_gen"),),
    ),
    "gen_device_max": (
        (("pci", "gpu link info", "pcie generation", "device max"),),
        (("pci", "pci_gpu_link_info", "pcie_gen", "max_device_link_gen"),),
    ),
    "gen_host_max": (
        (("pci", "gpu link info", "pcie generation", "host max"),),
        (("pci", "pci_gpu_link_info", "pcie_gen", "max_host_link_gen"),),
    ),
    "width_current": (
        (("pci", "gpu link info", "link width", "current"),),
        (("pci", "pci_gpu_link_info", "link_widths", "current_link_width"),),
    ),
    "width_max": (
        (("pci", "gpu link info", "link width", "max"),),
        (("pci", "pci_gpu_link_info", "link_widths", "max_link_width"),),
    ),
    "temperature": ((("temperature", "gpu current temp"),), (("temperature", "gpu_temp"),)),
    "memory_temperature": ((("temperature", "memory current temp"),), (("temperature", "memory_temp"),)),
    "slowdown": ((("temperature", "gpu slowdown temp"),), (("temperature", "gpu_temp_slow_threshold"),)),
    "shutdown": ((("temperature", "gpu shutdown temp"),), (("temperature", "gpu_temp_max_threshold"),)),
    "max_operating": (
        (("temperature", "gpu max operating temp"),),
        (("temperature", "gpu_temp_max_gpu_threshold"),),
    ),
    "tlimit": ((("temperature", "gpu t.limit temp"),), (("temperature", "gpu_temp_tlimit"),)),
    "slowdown_tlimit": (
        (("temperature", "gpu slowdown t.limit temp"),),
        (("temperature", "gpu_temp_slow_tlimit_threshold"),),
    ),
    "shutdown_tlimit": (
        (("temperature", "gpu shutdown t.limit temp"),),
        (("temperature", "gpu_temp_max_tlimit_threshold"),),
    ),
    "max_operating_tlimit": (
        (("temperature", "gpu max operating t.limit temp"),),
        (("temperature", "gpu_temp_max_gpu_tlimit_threshold"),),
    ),
    "power_draw": (
        tuple(
            (section, key)
            for section in ("gpu power readings", "power readings")
            for key in ("power draw", "instantaneous power draw", "average power draw")
        ),
        tuple(
            (section, key)
            for section in ("gpu_power_readings", "power_readings")
            for key in ("power_draw", "instant_power_draw", "average_power_draw")
        ),
    ),
    "power_limit": (
        tuple(
            (section, key)
            for section in ("gpu power readings", "power readings")
            for key in ("current power limit", "enforced power limit", "power limit")
        ),
        tuple(
            (section, key)
            for section in ("gpu_power_readings", "power_readings")
            for key in ("current_power_limit", "enforced_power_limit", "power_limit")
        ),
    ),
    "module_power_draw": (
        (("module power readings", "power draw"), ("module power readings", "instantaneous power draw")),
        (("module_power_readings", "power_draw"), ("module_power_readings", "instant_power_draw")),
    ),
    "module_power_limit": (
        (("module power readings", "current power limit"),),
        (("module_power_readings", "current_power_limit"),),
    ),
}
_ECC_SECTIONS = {"text": (("ecc errors",),), "xml": (("ecc_errors",),)}
_REASON_SECTIONS = {
    "text": (("clocks event reasons",), ("clocks throttle reasons",)),
    "xml": (("clocks_event_reasons",), ("clocks_throttle_reasons",)),
}


class _Reader:
    """Reads one GPU's fields, keeping the values the driver printed in brackets as notes."""

    def __init__(self, root: _Node, fmt: str):
        self.root = root
        self.fmt = fmt
        self.notes: list[str] = []

    def node(self, name: str) -> _Node | None:
        text_paths, xml_paths = _FIELDS[name]
        for path in text_paths if self.fmt == "text" else xml_paths:
            if (found := self.root.find(*path)) is not None and found.value is not None:
                return found
        return None

    def text(self, name: str) -> str | None:
        found = self.node(name)
        return None if found is None else self._available(found)

    def _available(self, node: _Node) -> str | None:
        value = (node.value or "").strip()
        if value.startswith("[") and value.endswith("]") or value.lower() == "unknown error":
            note = f"{node.key}: {value}"
            if note not in self.notes and len(self.notes) < 50:
                self.notes.append(note)
            return None
        return None if value.lower() in _NOT_AVAILABLE else value

    def int(self, name: str) -> int | None:
        found = self.node(name)
        value = None if found is None else self._available(found)
        return None if value is None else _int(value, found.line_no, found.key)

    def number(self, name: str, units: Iterable[str]) -> float | None:
        found = self.node(name)
        value = None if found is None else self._available(found)
        return None if value is None else _number(value, found.line_no, found.key, units)

    def flag(self, name: str) -> bool | None:
        found = self.node(name)
        value = None if found is None else self._available(found)
        return None if value is None else _yes_no(value, found.line_no, found.key)


def _gpu_info(root: _Node, fmt: str, *, index: int | None, fragment: bool, **common) -> GpuInfo:
    read = _Reader(root, fmt)
    bus_id = root.attrs.get("id") or read.text("bus_id")
    return GpuInfo(
        format=fmt,
        index=index,
        minor_number=read.int("minor_number"),
        pci_bus_id=bus_id,
        pci=pci_key(bus_id),
        product_name=read.text("product_name"),
        product_architecture=read.text("product_architecture"),
        serial=read.text("serial"),
        uuid=read.text("uuid"),
        vbios_version=read.text("vbios_version"),
        mig_mode=read.text("mig_mode"),
        reset_required=read.flag("reset_required"),
        ecc_mode=read.text("ecc_mode"),
        ecc_mode_pending=read.text("ecc_mode_pending"),
        ecc_volatile=_ecc(root, fmt, "volatile", read),
        ecc_aggregate=_ecc(root, fmt, "aggregate", read),
        retired_pages_single_bit=read.int("retired_sbe"),
        retired_pages_double_bit=read.int("retired_dbe"),
        retired_pages_pending=read.flag("retired_pending"),
        remapped_rows_correctable=read.int("remap_corr"),
        remapped_rows_uncorrectable=read.int("remap_unc"),
        remapped_rows_pending=read.flag("remap_pending"),
        remapped_rows_failure=read.flag("remap_failure"),
        pcie_gen_current=read.int("gen_current"),
        pcie_gen_max=read.int("gen_max"),
        pcie_gen_device_max=read.int("gen_device_max"),
        pcie_gen_host_max=read.int("gen_host_max"),
        pcie_width_current=_width(read, "width_current"),
        pcie_width_max=_width(read, "width_max"),
        **_reasons(root, fmt, read),
        temperature_c=read.number("temperature", ("C",)),
        memory_temperature_c=read.number("memory_temperature", ("C",)),
        slowdown_temperature_c=read.number("slowdown", ("C",)),
        shutdown_temperature_c=read.number("shutdown", ("C",)),
        max_operating_temperature_c=read.number("max_operating", ("C",)),
        tlimit_c=read.number("tlimit", ("C",)),
        slowdown_tlimit_c=read.number("slowdown_tlimit", ("C",)),
        shutdown_tlimit_c=read.number("shutdown_tlimit", ("C",)),
        max_operating_tlimit_c=read.number("max_operating_tlimit", ("C",)),
        power_draw_w=read.number("power_draw", ("W",)),
        power_limit_w=read.number("power_limit", ("W",)),
        module_power_draw_w=read.number("module_power_draw", ("W",)),
        module_power_limit_w=read.number("module_power_limit", ("W",)),
        fragment=fragment,
        notes=tuple(read.notes),
        line_no=root.line_no,
        **common,
    )


def _width(read: _Reader, name: str) -> int | None:
    found = read.node(name)
    value = None if found is None else read._available(found)
    if value is None:
        return None
    return _int(value.removesuffix("x").strip(), found.line_no, found.key)


def _ecc(root: _Node, fmt: str, scope: str, read: _Reader) -> EccCounts | None:
    section = next((found for path in _ECC_SECTIONS[fmt] if (found := root.find(*path)) is not None), None)
    scope_node = section.find(scope) if section is not None else None
    if scope_node is None:
        return None
    counters: dict[str, int | None] = {}
    flags: dict[str, bool | None] = {}
    stack = [(child, "") for child in reversed(scope_node.children)]
    while stack:
        node, prefix = stack.pop()
        name = prefix + _snake(node.key)
        if node.children:
            stack.extend((child, name + "_") for child in reversed(node.children))
            continue
        value = read._available(node)
        if value is not None and value.lower() in ("yes", "no"):
            flags[name] = value.lower() == "yes"
        elif value is None and "exceeded" in name:
            flags[name] = None
        else:
            counters[name] = None if value is None else _int(value, node.line_no, node.key)
    return EccCounts(
        counters=counters,
        correctable=_ecc_total(counters, correctable=True),
        uncorrectable=_ecc_total(counters, correctable=False),
        flags=flags,
    )


def _ecc_total(counters: dict[str, int | None], *, correctable: bool) -> int | None:
    """Correctable: SRAM + DRAM correctable, or the old single-bit total. Uncorrectable: SRAM (whole, or
    parity + SEC-DED) + DRAM uncorrectable, or the old double-bit total."""
    old = "single_bit" if correctable else "double_bit"
    if f"{old}_total" in counters:
        return counters[f"{old}_total"]
    if correctable:
        names = [name for name in counters if "correctable" in name and "uncorrectable" not in name]
    else:
        names = [name for name in counters if "uncorrectable" in name]
        if "sram_uncorrectable" in counters:  # never count a total and its split parts both
            names = [name for name in names if not name.startswith("sram_uncorrectable_")]
    if not names:
        names = [name for name in counters if name.startswith(old + "_")]
    values = [counters[name] for name in names if counters[name] is not None]
    return sum(values) if values else None


def _reasons(root: _Node, fmt: str, read: _Reader) -> dict:
    section = next((found for path in _REASON_SECTIONS[fmt] if (found := root.find(*path)) is not None), None)
    reasons: dict[str, bool] = {}
    if section is not None:
        stack = list(reversed(section.children))
        while stack:
            node = stack.pop()
            stack.extend(reversed(node.children))
            value = read._available(node)
            if value is None:
                continue
            name = _snake(node.key)
            for prefix in ("clocks_event_reason_", "clocks_throttle_reason_"):
                name = name.removeprefix(prefix)
            name = _REASON_ALIASES.get(name, name)
            if value.lower() == "active":
                reasons[name] = True
            elif value.lower() == "not active":
                reasons[name] = False
            else:
                raise ParseError(node.line_no, f"clock event reason is {shown(value)}", "Active or Not Active")
    return {
        "clock_event_reasons": reasons,
        "active_clock_event_reasons": tuple(name for name, active in reasons.items() if active),
    }


def _snake(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


def _text(value: str | None) -> str | None:
    if value is None or value.strip().lower() in _NOT_AVAILABLE:
        return None
    return value.strip()


def _int(value: str, line_no: int, what: str) -> int:
    if _INT.fullmatch(value.strip()):
        return int(value)
    raise ParseError(line_no, f"{what} is {shown(value)}, not a whole number", f"a whole number for {what}")


def _number(value: str, line_no: int, what: str, units: Iterable[str]) -> float:
    match = _NUMBER_WITH_UNIT.fullmatch(value.strip())
    if not match or (match["unit"] and match["unit"] not in units):
        raise ParseError(
            line_no, f"{what} is {shown(value)}", f"a number in {' or '.join(units)} for {what}"
        )
    return float(match["number"])


def _yes_no(value: str, line_no: int, what: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("yes", "no"):
        return lowered == "yes"
    raise ParseError(line_no, f"{what} is {shown(value)}", f"Yes or No for {what}")
