"""ipmitool: `sel list` / `sel elist` (the BMC's event log), `sdr` / `sdr list` / `sdr elist` and `sensor`
(the sensors and their state), `dcmi power reading`. One result per event, per sensor, per power reading;
each has `kind` ("sel", "sdr", "dcmi_power").

    1 | 10/19/2023 | 05:15:35 PM CEST | Fan #0x46 | Lower Critical going low | Asserted            sel list
    1 | 10/19/2023 | 17:15:35 | Fan FAN1 | Lower Critical going low | Asserted | Reading 0 < ...  sel elist
    Ambient Temp     | 20 degrees C      | ok                                                     sdr
    Inlet Temp       | 04h | ok  |  7.1 | 21 degrees C                                           sdr elist
    CPU Temp | 35.000 | degrees C | ok | na | na | na | 95.000 | 98.000 | 100.000               sensor
    Instantaneous power reading:                   167 Watts                                     dcmi

The SEL's record ids are hex, as ipmitool prints them. A date with a time is turned into ISO 8601 (local
time: the zone ipmitool appends, "CEST", is kept as printed only). A discrete sensor's "0x00", "Not
Readable" or state text ("Presence detected", in sdr elist) has no reading (None; `raw` keeps it); the
status column is kept as printed ("ok", "ns" = no reading, "nc" non-critical, "cr" critical, "nr"
non-recoverable, "na").

"SEL has no entries" is a valid, empty answer: no result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from .base import ParsedResult, ParseError, last_line_no, parse_float, shown, split_lines
from .node_common import check_line_lengths, check_size

TOOL = "ipmitool"

MAX_TEXT_CHARS = 16 * 2**20
MAX_ROWS = 200_000

_SEL_DATE = re.compile(r"^[0-9]{2}/[0-9]{2}/[0-9]{4}$|^Pre-Init$")
_HEX_ID = re.compile(r"^[0-9a-fA-F]{1,8}$")
_READING = re.compile(r"^(?P<value>[-+]?[0-9]{1,12}(?:\.[0-9]{1,9})?)\s*(?P<units>[A-Za-z%][A-Za-z %/.]{0,40})?$")
_STATUS = re.compile(r"^[a-z]{2,3}$")
_SENSOR_ID = re.compile(r"^[0-9a-fA-F]{1,4}h$")
_DCMI = {
    "instantaneous power reading": "instantaneous_w",
    "minimum during sampling period": "minimum_w",
    "maximum during sampling period": "maximum_w",
    "average power reading over sample period": "average_w",
}
_WATTS = re.compile(r"^(?P<value>[0-9]{1,9}(?:\.[0-9]{1,6})?)\s*Watts$")
_SAMPLING = re.compile(r"^(?P<value>[0-9]{1,12})\s*(?:Seconds|Milliseconds)\.?$")
_SENSOR_THRESHOLDS = ("lower_non_recoverable", "lower_critical", "lower_non_critical",
                      "upper_non_critical", "upper_critical", "upper_non_recoverable")  # fmt: skip
_NO_ENTRIES = re.compile(r"^SEL has no entries\s*$")


@dataclass(frozen=True, kw_only=True)
class SelEvent(ParsedResult):
    tool: str = TOOL
    kind: str = "sel"
    record_id: str
    record: int | None  # the id read as hex
    date: str | None
    time: str | None
    timestamp: str | None  # ISO 8601 when date and time read (no zone)
    sensor: str
    event: str
    asserted: bool | None  # Asserted / Deasserted; None when not printed
    detail: str | None = None  # elist's last column ("Reading 0 < Threshold 300 RPM")
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class SdrSensor(ParsedResult):
    tool: str = TOOL
    kind: str = "sdr"
    name: str
    reading: float | None
    units: str | None
    raw: str  # the reading column as printed ("0x00", "Not Readable", "20 degrees C")
    status: str  # "ok", "ns", "nc", "cr", "nr", "na", "lnc", "ucr", ...
    sensor_id: str | None = None  # sdr elist: "04h"
    entity: str | None = None  # sdr elist: "7.1"
    thresholds: dict[str, float] = field(default_factory=dict)  # `ipmitool sensor`
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class DcmiPowerReading(ParsedResult):
    tool: str = TOOL
    kind: str = "dcmi_power"
    instantaneous_w: float | None = None
    minimum_w: float | None = None
    maximum_w: float | None = None
    average_w: float | None = None
    timestamp_text: str | None = None
    sampling_period_s: float | None = None
    state: str | None = None  # "activated" / "deactivated"
    line_no: int = 1


def parse(text: str) -> list[SelEvent | SdrSensor | DcmiPowerReading]:
    check_size(text, MAX_TEXT_CHARS, "ipmitool output")
    lines = split_lines(text)
    check_line_lengths(lines)
    results: list = []
    power: dict | None = None
    empty_sel = False
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        if _NO_ENTRIES.match(stripped):
            empty_sel = True
            continue
        if "|" in stripped:
            row = _row(stripped, line.no)
            if row is not None:
                if len(results) >= MAX_ROWS:
                    raise ParseError(line.no, f"more than {MAX_ROWS:,} rows", f"at most {MAX_ROWS:,}")
                results.append(row)
            continue
        key, sep, value = stripped.partition(":")
        key = " ".join(key.lower().split())
        if sep and (key in _DCMI or (power is not None and key in _DCMI_EXTRA)):
            if power is None or (key in _DCMI and power.get(_DCMI[key]) is not None):
                power = {"line_no": line.no}
                results.append(power)
            _dcmi(power, key, value.strip(), line.no)
    if not results and not empty_sel:
        raise ParseError(
            last_line_no(lines),
            "no ipmitool output found",
            "ipmitool sel list/elist rows, sdr/sensor rows ('Name | reading | ok') or dcmi power reading",
        )
    return [DcmiPowerReading(**item) if isinstance(item, dict) else item for item in results]


_DCMI_EXTRA = {"ipmi timestamp", "sampling period", "power reading state is"}


def _dcmi(power: dict, key: str, value: str, line_no: int) -> None:
    if key in _DCMI:
        match = _WATTS.match(value)
        if not match:
            raise ParseError(line_no, f"{key} is {shown(value)}", "a number of Watts")
        power[_DCMI[key]] = float(match["value"])
    elif key == "ipmi timestamp":
        power["timestamp_text"] = value or None
    elif key == "sampling period":
        match = _SAMPLING.match(value)
        if not match:
            raise ParseError(line_no, f"sampling period is {shown(value)}", "a number of Seconds")
        seconds = float(match["value"])
        power["sampling_period_s"] = seconds / 1000 if "Milli" in value else seconds
    elif key == "power reading state is":
        power["state"] = value or None


def _row(text: str, line_no: int) -> SelEvent | SdrSensor | None:
    cells = [cell.strip() for cell in text.strip().strip("|").split("|")]
    if len(cells) in (6, 7) and _HEX_ID.match(cells[0]) and _SEL_DATE.match(cells[1]):
        return _sel(cells, line_no)
    if len(cells) == 3 and _STATUS.match(cells[2]):
        return _sdr(cells[0], cells[1], cells[2], line_no)
    if len(cells) == 5 and _SENSOR_ID.match(cells[1]) and _STATUS.match(cells[2]):
        return _sdr(cells[0], cells[4], cells[2], line_no, sensor_id=cells[1], entity=cells[3])
    if len(cells) == 10 and _STATUS.match(cells[3]):
        return _sensor(cells, line_no)
    if len(cells) >= 3 and cells[0]:
        raise ParseError(
            line_no,
            f"row {shown(text, 60)} has {len(cells)} columns",
            "sel list (6), sel elist (7), sdr (3), sdr elist (5) or sensor (10) columns",
        )
    return None


def _sel(cells: list[str], line_no: int) -> SelEvent:
    date, time = cells[1], cells[2]
    direction = cells[5].lower()
    asserted = True if direction == "asserted" else False if direction == "deasserted" else None
    return SelEvent(
        record_id=cells[0],
        record=int(cells[0], 16),
        date=None if date == "Pre-Init" else date,
        time=time or None,
        timestamp=_sel_time(date, time),
        sensor=cells[3],
        event=cells[4],
        asserted=asserted,
        detail=cells[6] or None if len(cells) == 7 else None,
        line_no=line_no,
    )


def _sel_time(date: str, time: str) -> str | None:
    parts = time.split()
    clock = " ".join(parts[:2]) if len(parts) > 1 and parts[1] in ("AM", "PM") else (parts[0] if parts else "")
    for pattern in ("%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %H:%M:%S"):
        try:
            return datetime.strptime(f"{date} {clock}", pattern).isoformat()
        except ValueError:
            continue
    return None


def _reading(raw: str, line_no: int, name: str) -> tuple[float | None, str | None]:
    """(value, units). A discrete sensor's state ("0x00", "Presence detected", "Not Readable") has no value;
    a reading that starts like a number must be one."""
    if raw.lower().startswith("0x") or not re.match(r"[-+]?[0-9]", raw):
        return None, None
    match = _READING.match(raw)
    if not match:
        raise ParseError(line_no, f"{name} reads {shown(raw)}", "a number with its unit, 0x.. or 'Not Readable'")
    return parse_float(match["value"], line_no, name), (match["units"] or "").strip() or None


def _sdr(name: str, raw: str, status: str, line_no: int, **extra) -> SdrSensor:
    value, units = _reading(raw, line_no, name)
    return SdrSensor(name=name, reading=value, units=units, raw=raw, status=status, line_no=line_no, **extra)


def _sensor(cells: list[str], line_no: int) -> SdrSensor:
    name, raw_value, units, status = cells[:4]
    value = None
    if raw_value.lower() not in ("na", "n/a", "") and not raw_value.lower().startswith("0x"):
        value = parse_float(raw_value, line_no, name)
    thresholds = {}
    for key, cell in zip(_SENSOR_THRESHOLDS, cells[4:], strict=True):
        if cell.lower() not in ("na", "n/a", ""):
            thresholds[key] = parse_float(cell, line_no, f"{name} {key}")
    return SdrSensor(
        name=name,
        reading=value,
        units=None if units.lower() in ("discrete", "") else units,
        raw=raw_value,
        status=status,
        thresholds=thresholds,
        line_no=line_no,
    )
