"""`ethtool -m` (module EEPROM / DOM) output: identity, live readings, and the module's own
alarm/warning thresholds and flags.

Three memory maps print differently: SFF-8636 (QSFP28) and CMIS (QSFP-DD/OSFP) give one value per
channel ("(Channel 2)"), SFF-8472 (SFP) a single channel; both become per-lane lists here. Every
`Identifier` line starts a module, so a loop over interfaces gives one result each. Power readings
are kept in dBm (what thresholds are compared in); "-inf dBm" (no light) is null with 0 mW kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import (
    ParsedResult,
    ParseError,
    last_line_no,
    optional_text,
    parse_float,
    parse_int,
    shown,
    split_lines,
)

TOOL = "ethtool"

_COMMAND = re.compile(r"\bethtool\s+(?:-m|--module-info)\s+(?P<interface>[^\s|;>]+)")
_KEY_VALUE = re.compile(r"^(?P<key>[^:]*[^\s:])\s*:\s(?P<value>.*)$")
_CHANNEL = re.compile(r"^(?P<name>.*?)\s*\((?:Channel|Chan|Lane)\s*(?P<channel>[0-9]+)\)$", re.IGNORECASE)
_THRESHOLD_OR_FLAG = re.compile(
    r"^(?P<name>.+?)\s+(?P<direction>high|low)\s+(?P<level>alarm|warning)(?P<threshold>\s+threshold)?$",
    re.IGNORECASE,
)
_TEMPERATURE = re.compile(r"^(?P<value>\S+)\s*degrees C\b")
_VOLTAGE = re.compile(r"^(?P<value>\S+)\s*V$")
_CURRENT = re.compile(r"^(?P<value>\S+)\s*mA$")
_POWER = re.compile(r"^(?P<mw>\S+)\s*mW(?:\s*/\s*(?P<dbm>\S+)\s*dBm)?$")
_WAVELENGTH = re.compile(r"^(?P<value>[0-9.]+)\s*nm$")
_SPEC = re.compile(r"\b(SFF-\d{4}|CMIS)\b")
_MAX_CHANNELS = 16

# Label prefixes (lower case) ethtool uses across memory maps -> our quantity names.
_QUANTITIES = {
    "module temperature": "temperature_c",
    "module voltage": "voltage_v",
    "laser tx bias current": "bias_ma",
    "laser bias current": "bias_ma",
    "transmit avg optical power": "tx_power",
    "laser output power": "tx_power",
    "laser tx power": "tx_power",
    "rcvr signal avg optical power": "rx_power",
    "receiver signal average optical power": "rx_power",
    "receiver signal oma": "rx_power",
    "rcvr signal oma": "rx_power",
    "laser rx power": "rx_power",
    "rx power": "rx_power",
}
_THRESHOLD_NAMES = {"tx_power": "tx_power_dbm", "rx_power": "rx_power_dbm"}


@dataclass(kw_only=True)
class ModuleFlag:
    quantity: str  # temperature_c, voltage_v, bias_ma, tx_power_dbm, rx_power_dbm
    direction: str  # high / low
    level: str  # alarm / warning
    channel: int | None
    on: bool


@dataclass(kw_only=True)
class EthtoolModule(ParsedResult):
    tool: str = TOOL
    interface: str | None = None
    identifier: str | None = None
    spec: str | None = None  # SFF-8636, SFF-8472 or CMIS
    vendor: str | None = None
    vendor_oui: str | None = None
    part_number: str | None = None
    revision: str | None = None
    serial: str | None = None
    date_code: str | None = None
    connector: str | None = None
    transceiver_types: list[str] = field(default_factory=list)
    wavelength_nm: float | None = None
    temperature_c: float | None = None
    voltage_v: float | None = None
    bias_ma: list[float | None] = field(default_factory=list)
    tx_power_dbm: list[float | None] = field(default_factory=list)
    tx_power_mw: list[float | None] = field(default_factory=list)
    rx_power_dbm: list[float | None] = field(default_factory=list)
    rx_power_mw: list[float | None] = field(default_factory=list)
    # {"temperature_c": {"high_alarm": 60.0, "low_alarm": 10.0, "high_warning": ..., "low_warning": ...}}
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)
    flags: list[ModuleFlag] = field(default_factory=list)
    any_alarm_on: bool = False
    any_warning_on: bool = False
    fields: dict[str, str] = field(default_factory=dict)  # every line as printed (first value per key)
    line_no: int = 1


def parse(text: str) -> list[EthtoolModule]:
    lines = split_lines(text)
    modules: list[EthtoolModule] = []
    interface: str | None = None
    for line in lines:
        if command := _COMMAND.search(line.text):
            interface = command["interface"]
            continue
        match = _KEY_VALUE.match(line.stripped)
        if not match:
            continue
        key, value = match["key"].strip(), match["value"].strip()
        if key == "Identifier":
            modules.append(EthtoolModule(interface=interface, line_no=line.no))
            interface = None
        if modules:
            _apply(modules[-1], key, value, line.no)
    if not modules:
        raise ParseError(
            last_line_no(lines),
            "no module found",
            "'ethtool -m' output starting with an 'Identifier : 0x..' line",
        )
    for module in modules:
        _finish(module)
    return modules


def _apply(module: EthtoolModule, key: str, value: str, line_no: int) -> None:
    module.fields.setdefault(key, value)
    if _apply_identity(module, key, value, line_no):
        return
    if flag_or_threshold := _THRESHOLD_OR_FLAG.match(_without_channel(key, line_no)[0]):
        _apply_flag_or_threshold(module, key, value, flag_or_threshold, line_no)
        return
    name, channel = _without_channel(key, line_no)
    quantity = _QUANTITIES.get(name.lower())
    if quantity is not None:
        _apply_reading(module, quantity, channel, value, line_no)


def _apply_identity(module: EthtoolModule, key: str, value: str, line_no: int) -> bool:
    text = optional_text(value)
    if key == "Identifier":
        module.identifier = _in_parentheses(value)
    elif key == "Connector":
        module.connector = _in_parentheses(value)
    elif key == "Vendor name":
        module.vendor = text
    elif key == "Vendor OUI":
        module.vendor_oui = text
    elif key == "Vendor PN":
        module.part_number = text
    elif key == "Vendor rev":
        module.revision = text
    elif key == "Vendor SN":
        module.serial = text
    elif key == "Date code":
        module.date_code = text
    elif key == "Transceiver type":
        module.transceiver_types.append(value)
    elif key == "Revision Compliance" and (spec := _SPEC.search(value)):
        module.spec = spec[1]
    elif key == "Laser wavelength":
        match = _WAVELENGTH.match(value)
        if not match:
            raise ParseError(
                line_no, f"laser wavelength {shown(value)} is not readable", "a wavelength such as 850nm"
            )
        module.wavelength_nm = parse_float(match["value"], line_no, "laser wavelength")
    else:
        return False
    return True


def _without_channel(key: str, line_no: int) -> tuple[str, int | None]:
    match = _CHANNEL.match(key)
    if not match:
        return key, None
    return match["name"].strip(), parse_int(match["channel"], line_no, "the channel number")


def _apply_flag_or_threshold(module, key: str, value: str, match: re.Match, line_no: int) -> None:
    quantity = _QUANTITIES.get(match["name"].strip().lower())
    if quantity is None:
        return  # e.g. "Laser temperature" on some SFPs: not a DOM quantity we judge
    quantity = _THRESHOLD_NAMES.get(quantity, quantity)
    direction, level = match["direction"].lower(), match["level"].lower()
    if match["threshold"]:
        reading = _reading(quantity, value, line_no, key)
        if reading is not None:
            module.thresholds.setdefault(quantity, {})[f"{direction}_{level}"] = reading
        return
    if value not in ("On", "Off"):
        raise ParseError(line_no, f"{key} is {shown(value)}", f"On or Off for {key}")
    channel = _without_channel(key, line_no)[1]
    _check_channel(channel, line_no)
    module.flags.append(
        ModuleFlag(quantity=quantity, direction=direction, level=level, channel=channel, on=value == "On")
    )


def _apply_reading(
    module: EthtoolModule, quantity: str, channel: int | None, value: str, line_no: int
) -> None:
    _check_channel(channel, line_no)
    if quantity == "temperature_c":
        module.temperature_c = _reading(quantity, value, line_no, "module temperature")
    elif quantity == "voltage_v":
        module.voltage_v = _reading(quantity, value, line_no, "module voltage")
    elif quantity == "bias_ma":
        _put(module.bias_ma, channel, _reading(quantity, value, line_no, "laser bias current"))
    else:
        milliwatts, dbm = _power(value, line_no)
        _put(getattr(module, f"{quantity}_mw"), channel, milliwatts)
        _put(getattr(module, f"{quantity}_dbm"), channel, dbm)


def _reading(quantity: str, value: str, line_no: int, label: str) -> float | None:
    """One value in the unit our quantity name says, from ethtool's text for it."""
    patterns = {"temperature_c": _TEMPERATURE, "voltage_v": _VOLTAGE, "bias_ma": _CURRENT}
    if quantity in patterns:
        match = patterns[quantity].match(value)
        if not match:
            raise ParseError(
                line_no, f"{label} {shown(value)} is not readable", f"a value with its unit for {label}"
            )
        return parse_float(match["value"], line_no, label)
    return _power(value, line_no)[1]


def _power(value: str, line_no: int) -> tuple[float | None, float | None]:
    match = _POWER.match(value)
    if not match:
        raise ParseError(line_no, f"optical power {shown(value)} is not readable", "'<mW> mW / <dBm> dBm'")
    milliwatts = parse_float(match["mw"], line_no, "power in mW")
    dbm = match["dbm"]
    if dbm is None or dbm.lower() == "-inf":
        return milliwatts, None
    return milliwatts, parse_float(dbm, line_no, "power in dBm")


def _check_channel(channel: int | None, line_no: int) -> None:
    if channel is not None and not 1 <= channel <= _MAX_CHANNELS:
        raise ParseError(
            line_no, f"channel {channel} is out of range", f"a channel from 1 to {_MAX_CHANNELS}"
        )


def _put(values: list, channel: int | None, value) -> None:
    index = (channel or 1) - 1
    values.extend([None] * (index + 1 - len(values)))
    values[index] = value


def _in_parentheses(value: str) -> str | None:
    match = re.search(r"\(([^()]*)\)\s*$", value)
    return match[1].strip() if match else optional_text(value)


def _finish(module: EthtoolModule) -> None:
    if module.spec is None:
        module.spec = _spec_from_identifier(module.identifier)
    module.any_alarm_on = any(flag.on for flag in module.flags if flag.level == "alarm")
    module.any_warning_on = any(flag.on for flag in module.flags if flag.level == "warning")


def _spec_from_identifier(identifier: str | None) -> str | None:
    name = (identifier or "").upper()
    if name.startswith("SFP"):
        return "SFF-8472"
    if "QSFP-DD" in name or "OSFP" in name or "CMIS" in name:
        return "CMIS"
    if name.startswith("QSFP"):
        return "SFF-8636"
    return None
