"""mlxlink output (MFT / mstflint): operational info, module info (DOM) and physical counters / BER.

The output is sections ("Operational Info" underlined with dashes) of `Key : value` lines. A
captured loop over several devices repeats the sections; each "Operational Info" starts a device.
The device name comes from the nearest banner (`===== mt4123_pciconf0 =====`), `mlxlink -d X`
command line or bare device line (`mlx5_3`, as `echo $d` prints it) before it. N/A, and anything
the tool did not print, is null. `-E-` lines (mlxlink's own errors, e.g. an option an HCA does not
support) are kept on the result, never fatal.

Output filtered through grep (`for d in mlx5_{0..7}; do echo $d; mlxlink -d $d -c | grep -E
"BER|Counter"; done`) keeps only some lines: section titles lose their dashes or vanish. Values
whose key mlxlink prints in one known section are then filed under that section; a device line, or
a key seen again, starts the next device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import (
    DASHES,
    Line,
    ParsedResult,
    ParseError,
    is_not_available,
    last_line_no,
    optional_float,
    optional_int,
    optional_text,
    parse_float,
    parse_int,
    shown,
    split_lines,
)

TOOL = "mlxlink"

_SECTION_TITLES = (
    "Operational Info",
    "Supported Info",
    "Troubleshooting Info",
    "Tool Information",
    "Module Info",
    "Physical Counters and BER Info",
    "EYE Opening Info",
    "FEC Capability Info",
    "Serdes Tuning Transmitter Info",
    "Test Mode Info",
    "Device Info",
    "Histogram of FEC Errors",
)
_BANNER = re.compile(r"^[=#*-]{2,}\s*(?P<name>[^\s=#*-][^=#*]*?)\s*[=#*-]{2,}$")
_MLXLINK_COMMAND = re.compile(r"\bmlxlink\s")
_COMMAND_DEVICE = re.compile(r"\bmlxlink\b.*?(?:-d|--device)[\s=]+(?P<device>[^\s$`]+)(?=\s|$)")
_COMMAND_PORT = re.compile(r"\bmlxlink\b.*?(?:-p|--port)[\s=]+(?P<port>[0-9]+)(?=\s|$)")
_KEY_VALUE = re.compile(r"^(?P<key>[^:]*[^\s:])(?P<pad>\s*):\s?(?P<value>.*)$")
_RANGE = re.compile(r"\[\s*(?P<low>[-+]?[0-9.eE+-]+?)\s*\.\.\s*(?P<high>[-+]?[0-9.eE+-]+)\s*\]\s*$")
_LANE_FLAGS = {
    "tx_fault": "Tx Fault [per lane]",
    "tx_los": "Tx LOS [per lane]",
    "tx_cdr_lol": "Tx CDR LOL [per lane]",
    "rx_los": "Rx LOS [per lane]",
    "rx_cdr_lol": "Rx CDR LOL [per lane]",
    "rx_output_valid": "Rx Output Valid [per lane]",
    "tx_adaptive_eq_fault": "Tx Adaptive EQ Fault [per lane]",
}
# A host has a few dozen ports, a switch up to a few hundred: far more blocks than that is a
# repeated line (each repeat of a key starts a device in grep-filtered output), not a capture.
MAX_DEVICES = 4096
_MESSAGE = re.compile(r"^-(?P<level>[EW])-\s*(?P<text>.*)$")
# A line naming only a device, as a loop's `echo $d` prints it: an RDMA name, an mst device, a PCI
# address or a switch LID; a trailing colon is allowed ("mlx5_0:").
_DEVICE_LINE = re.compile(
    r"^(?P<device>mlx5_(?:bond_)?[0-9]{1,4}|/dev/mst/[\w.]{1,64}|mt[0-9]{4,6}_pci(?:conf|cr)[0-9]{1,3}(?:\.[0-9]{1,3})?"
    r"|(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|lid-[0-9]{1,5})[ \t]*:?$"
)
# Keys mlxlink prints in one section only, so a grep-filtered line can be filed without its title.
_SECTION_OF_KEY = {
    **dict.fromkeys(
        ("State", "Physical state", "Speed", "Width", "FEC", "Loopback Mode", "Auto Negotiation"),
        "Operational Info",
    ),
    **dict.fromkeys(("Status Opcode", "Group Opcode", "Recommendation"), "Troubleshooting Info"),
    **dict.fromkeys(("Firmware Version", "amBER Version", "MFT Version"), "Tool Information"),
    **dict.fromkeys(
        (
            "Temperature [C]",
            "Voltage [mV]",
            "Bias Current [mA]",
            "Rx Power Current [dBm]",
            "Tx Power Current [dBm]",
            "Identifier",
            "Vendor Name",
            "Vendor Part Number",
            "Vendor Serial Number",
            "Cable Technology",
            "Cable Type",
            "Wavelength [nm]",
        ),
        "Module Info",
    ),
    **dict.fromkeys(
        (
            "Time Since Last Clear [Min]",
            "Symbol Errors",
            "Symbol BER",
            "Effective Physical Errors",
            "Effective Physical BER",
            "Raw Physical Errors Per Lane",
            "Raw Physical BER",
            "Raw Physical BER Per Lane",
            "Link Down Counter",
            "Link Error Recovery Counter",
        ),
        "Physical Counters and BER Info",
    ),
}


@dataclass(kw_only=True)
class MlxlinkModule:
    """The cable or transceiver in the port. Per-lane values are lists, one entry per lane."""

    identifier: str | None = None
    vendor: str | None = None
    part_number: str | None = None
    serial: str | None = None
    revision: str | None = None
    cable_technology: str | None = None
    cable_type: str | None = None
    is_passive_copper: bool = False  # a passive DAC has no DOM: its zeros mean "not measured"
    wavelength_nm: float | None = None
    temperature_c: float | None = None
    voltage_mv: float | None = None
    bias_current_ma: list[float | None] | None = None
    rx_power_dbm: list[float | None] | None = None
    tx_power_dbm: list[float | None] | None = None
    # The module's own [low..high] ranges, e.g. {"temperature_c": [-5, 75]}.
    ranges: dict[str, list[float]] = field(default_factory=dict)
    # Per-lane status bits such as rx_los, tx_fault, rx_cdr_lol.
    lane_flags: dict[str, list[int | None]] = field(default_factory=dict)


@dataclass(kw_only=True)
class MlxlinkCounters:
    symbol_errors: int | None = None
    symbol_ber: float | None = None
    effective_physical_errors: int | None = None
    effective_ber: float | None = None
    raw_ber: float | None = None
    link_down: int | None = None
    link_error_recovery: int | None = None
    raw_physical_errors_per_lane: list[int | None] | None = None
    time_since_last_clear_min: float | None = None


@dataclass(kw_only=True)
class MlxlinkResult(ParsedResult):
    tool: str = TOOL
    device: str | None = None
    port: int | None = None
    state: str | None = None
    physical_state: str | None = None
    speed: str | None = None
    width: str | None = None
    fec: str | None = None
    auto_negotiation: str | None = None
    recommendation: str | None = None
    status_opcode: int | None = None
    firmware_version: str | None = None
    mft_version: str | None = None
    module: MlxlinkModule = field(default_factory=MlxlinkModule)
    counters: MlxlinkCounters = field(default_factory=MlxlinkCounters)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sections: dict[str, dict[str, str]] = field(default_factory=dict)  # everything, as printed
    line_no: int = 1


@dataclass
class _Block:
    line_no: int
    device: str | None
    port: int | None
    sections: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def parse(text: str) -> list[MlxlinkResult]:
    lines = split_lines(text)
    reader = _Reader()
    for index, line in enumerate(lines):
        following = lines[index + 1].stripped if index + 1 < len(lines) else ""
        reader.read(line, following)
    if not reader.blocks:
        raise ParseError(
            last_line_no(lines),
            "no mlxlink section found",
            "an 'Operational Info' (or 'Module Info') title underlined with dashes, then 'Key : value' lines,"
            " or mlxlink lines kept by grep such as 'Raw Physical BER                   : 2E-9'",
        )
    return [_finish(block) for block in reader.blocks]


class _Reader:
    """Collects sections per device. A banner, a bare device line or an `mlxlink -d X` line names
    the next device; the `-p N` of the last mlxlink command line applies to every device it printed
    (a loop)."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []
        self.section: str | None = None
        self.pending_device: str | None = None
        self.command_port: int | None = None

    def read(self, line: Line, following: str) -> None:
        text = line.stripped
        if text in _SECTION_TITLES or (text and DASHES.match(following) and not DASHES.match(text)):
            self._open_section(line.no, text)
        elif match := _MESSAGE.match(text):
            self._keep_message(line.no, match["level"], match["text"])
        elif (banner := _BANNER.match(text)) and not DASHES.match(text):
            self.pending_device, self.section = banner["name"], None
        elif device := _DEVICE_LINE.match(text):
            self.pending_device, self.section = device["device"], None
        elif _MLXLINK_COMMAND.search(text):
            self._read_command(line)
        elif pair := _KEY_VALUE.match(text):
            self._read_pair(line.no, pair["key"].strip(), pair["value"].strip(), padded=len(pair["pad"]) >= 2)

    def _open_section(self, line_no: int, title: str) -> None:
        self.section = title
        block = self.blocks[-1] if self.blocks else None
        if block is None or title == "Operational Info" or title in block.sections or self.pending_device:
            block = self._new_block(line_no)
        block.sections.setdefault(title, {})

    def _read_pair(self, line_no: int, key: str, value: str, *, padded: bool) -> None:
        if self.section and self.blocks:
            self.blocks[-1].sections[self.section][key] = (value, line_no)
            return
        # No title above: a grep-filtered line. Only mlxlink's layout, keys padded to a column
        # ("State                              : Active"), is filed, so another tool's "State: Active"
        # pasted above the output is not mistaken for it.
        section = _SECTION_OF_KEY.get(key)
        if section is None or not padded:
            return
        block = self.blocks[-1] if self.blocks else None
        if block is None or self.pending_device or key in block.sections.get(section, {}):
            block = self._new_block(line_no)  # a key seen again: the loop moved to the next device
        block.sections.setdefault(section, {})[key] = (value, line_no)

    def _keep_message(self, line_no: int, level: str, text: str) -> None:
        if self.pending_device:  # a named device that printed only an error: the error is its own
            self._new_block(line_no)
        if self.blocks:
            block = self.blocks[-1]
            (block.errors if level == "E" else block.warnings).append(text)

    def _new_block(self, line_no: int) -> _Block:
        if len(self.blocks) == MAX_DEVICES:
            raise ParseError(
                line_no,
                f"more than {MAX_DEVICES} devices in one mlxlink output",
                f"at most {MAX_DEVICES} device blocks per upload (split the file)",
            )
        self.blocks.append(_Block(line_no, self.pending_device, self.command_port))
        self.pending_device = None
        return self.blocks[-1]

    def _read_command(self, line: Line) -> None:
        device = _COMMAND_DEVICE.search(line.stripped)
        port = _COMMAND_PORT.search(line.stripped)
        if device:
            self.pending_device = device["device"]
        self.command_port = parse_int(port["port"], line.no, "the port after -p") if port else None
        self.section = None


def _finish(block: _Block) -> MlxlinkResult:
    operational = _Section(block.sections.get("Operational Info", {}))
    troubleshooting = _Section(block.sections.get("Troubleshooting Info", {}))
    tool_info = _Section(block.sections.get("Tool Information", {}))
    return MlxlinkResult(
        device=block.device,
        port=block.port,
        state=operational.text("State"),
        physical_state=operational.text("Physical state"),
        speed=operational.text("Speed"),
        width=operational.text("Width"),
        fec=operational.text("FEC"),
        auto_negotiation=operational.text("Auto Negotiation"),
        recommendation=troubleshooting.text("Recommendation"),
        status_opcode=troubleshooting.integer("Status Opcode"),
        firmware_version=tool_info.text("Firmware Version"),
        mft_version=tool_info.text("MFT Version"),
        module=_module(_Section(block.sections.get("Module Info", {}))),
        counters=_counters(_Section(block.sections.get("Physical Counters and BER Info", {}))),
        errors=block.errors,
        warnings=block.warnings,
        sections={name: {k: v for k, (v, _) in values.items()} for name, values in block.sections.items()},
        line_no=block.line_no,
    )


class _Section:
    """Typed reads of one section's values; a value that is there but unreadable is a ParseError
    naming its line."""

    def __init__(self, values: dict[str, tuple[str, int]]):
        self.values = values

    def raw_value(self, key: str) -> tuple[str | None, int]:
        value, line_no = self.values.get(key, (None, 0))
        return value, line_no

    def text(self, key: str) -> str | None:
        return optional_text(self.raw_value(key)[0])

    def integer(self, key: str) -> int | None:
        value, line_no = self.raw_value(key)
        return optional_int(value, line_no, key)

    def number(self, key: str, name: str | None = None, ranges: dict[str, list[float]] | None = None):
        """A single value, with the module's [low..high] range recorded under `name` if printed."""
        value, line_no = self.raw_value(key)
        if value is None:
            return None
        reading, _ = _strip_range(value, line_no, key, ranges if ranges is not None else {}, name)
        return optional_float(reading, line_no, key)

    def lanes(self, key: str, name: str | None = None, ranges: dict | None = None, *, integers=False):
        """A comma-separated per-lane list ('0.6,0.8,N/A,0.7 [-10.4..5]'); N/A lanes are None."""
        value, line_no = self.raw_value(key)
        if is_not_available(value):
            return None
        reading, _ = _strip_range(value, line_no, key, ranges if ranges is not None else {}, name)
        if is_not_available(reading):
            return None
        read_one = optional_int if integers else optional_float
        items = reading.split(",")
        return [read_one(item, line_no, f"{key} (lane {n})") for n, item in enumerate(items, start=1)]


def _strip_range(value: str, line_no: int, key: str, ranges: dict, name: str | None = None):
    """'45 [-5..75]' -> '45', recording [-5, 75] under `name`. A '[' that is not a range is an error."""
    if "[" not in value:
        return value, False
    match = _RANGE.search(value)
    if not match:
        raise ParseError(
            line_no, f"{key} has an unreadable range in {shown(value)}", "a range such as [-5..75]"
        )
    if name:
        ranges[name] = [
            parse_float(match["low"], line_no, f"{key} range low"),
            parse_float(match["high"], line_no, f"{key} range high"),
        ]
    return value[: match.start()].strip(), True


def _module(section: _Section) -> MlxlinkModule:
    ranges: dict[str, list[float]] = {}
    technology, cable_type = section.text("Cable Technology"), section.text("Cable Type")
    description = f"{technology or ''} {cable_type or ''}".lower()
    lane_flags = {name: section.lanes(key, integers=True) for name, key in _LANE_FLAGS.items()}
    return MlxlinkModule(
        identifier=section.text("Identifier"),
        vendor=section.text("Vendor Name"),
        part_number=section.text("Vendor Part Number"),
        serial=section.text("Vendor Serial Number"),
        revision=section.text("Rev"),
        cable_technology=technology,
        cable_type=cable_type,
        is_passive_copper="passive" in description and "copper" in description,
        wavelength_nm=section.number("Wavelength [nm]"),
        temperature_c=section.number("Temperature [C]", "temperature_c", ranges),
        voltage_mv=section.number("Voltage [mV]", "voltage_mv", ranges),
        bias_current_ma=section.lanes("Bias Current [mA]", "bias_current_ma", ranges),
        rx_power_dbm=section.lanes("Rx Power Current [dBm]", "rx_power_dbm", ranges),
        tx_power_dbm=section.lanes("Tx Power Current [dBm]", "tx_power_dbm", ranges),
        ranges=ranges,
        lane_flags={name: flags for name, flags in lane_flags.items() if flags is not None},
    )


def _counters(section: _Section) -> MlxlinkCounters:
    return MlxlinkCounters(
        symbol_errors=section.integer("Symbol Errors"),
        symbol_ber=section.number("Symbol BER"),
        effective_physical_errors=section.integer("Effective Physical Errors"),
        effective_ber=section.number("Effective Physical BER"),
        raw_ber=section.number("Raw Physical BER"),
        link_down=section.integer("Link Down Counter"),
        link_error_recovery=section.integer("Link Error Recovery Counter"),
        raw_physical_errors_per_lane=section.lanes("Raw Physical Errors Per Lane", integers=True),
        time_since_last_clear_min=section.number("Time Since Last Clear [Min]"),
    )
