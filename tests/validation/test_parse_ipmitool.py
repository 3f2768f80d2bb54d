"""ipmitool sel list/elist, sdr/sdr elist/sensor and dcmi power reading: every sample, and refusals."""

from collections import Counter
from pathlib import Path

import pytest

from validation.parsers import ParseError, ipmitool

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"


def read(name):
    return (NODE / name).read_text()


def test_sel_list_supermicro_fan_below_critical():
    events = ipmitool.parse(read("ipmitool_01_sel-list_supermicro_fan-lower-critical.txt"))
    assert [e.record for e in events] == [1, 2, 3, 4, 5] and {e.kind for e in events} == {"sel"}
    first = events[0]
    assert (first.date, first.time, first.timestamp) == ("10/19/2023", "05:15:35 PM CEST", "2023-10-19T17:15:35")
    assert (first.sensor, first.event, first.asserted, first.line_no) == (
        "Fan #0x46", "Lower Critical going low", True, 2,
    )  # fmt: skip
    assert [e.asserted for e in events] == [True, True, False, False, True]
    assert events[1].event == "Lower Non-recoverable going low" and events[4].timestamp == "2023-10-19T17:20:59"


def test_sdr_with_not_readable_sensors():
    sensors = ipmitool.parse(read("ipmitool_03_sdr_ibm-lenovo_full_ns-not-readable.txt"))
    assert len(sensors) == 133 and Counter(s.status for s in sensors) == {"ok": 131, "ns": 2}
    by_name = {s.name: s for s in sensors}
    assert (by_name["Ambient Temp"].reading, by_name["Ambient Temp"].units) == (20.0, "degrees C")
    assert (by_name["Planar 3.3V"].reading, by_name["Planar 3.3V"].units) == (3.29, "Volts")
    assert by_name["Fan 1A Tach"].reading == 2610.0 and by_name["Avg Power"].units == "Watts"
    assert (by_name["Power Supply 1"].reading, by_name["Power Supply 1"].raw) == (None, "0x00")  # discrete
    unreadable = [s for s in sensors if s.status == "ns"]
    assert [(s.name, s.raw, s.reading, s.line_no) for s in unreadable] == [
        ("DASD Backplane 3", "Not Readable", None, 126), ("DASD Backplane 4", "Not Readable", None, 127),
    ]  # fmt: skip


def test_dcmi_power_reading():
    [power] = ipmitool.parse(read("ipmitool_04_dcmi-power-reading.txt"))
    assert power.kind == "dcmi_power"
    assert (power.instantaneous_w, power.minimum_w, power.maximum_w, power.average_w) == (167.0, 124.0, 422.0, 156.0)
    assert (power.timestamp_text, power.sampling_period_s, power.state) == ("Mon Aug  1 21:22:51 2016", 699043.0,
                                                                          "activated")  # fmt: skip


def test_sel_elist_sdr_elist_and_sensor_rows():
    text = (
        "   1 | 10/19/2023 | 17:15:35 | Fan FAN1 | Lower Critical going low | Asserted "
        "| Reading 0 < Threshold 300 RPM\n"
        "  1a | Pre-Init   | 0000000000 | System Event #0x83 | Timestamp Clock Sync | Asserted\n"
        "Inlet Temp       | 04h | ok  |  7.1 | 21 degrees C\n"
        "PSU2 Status      | 63h | cr  | 10.2 | Power Supply AC lost\n"
        "CPU Temp  | 35.000 | degrees C | ok | na | 0.000 | 0.000 | 95.000 | 98.000 | 100.000\n"
        "SEL has no entries\n"
    )
    elist, preinit, inlet, psu, cpu = ipmitool.parse(text)
    assert elist.detail == "Reading 0 < Threshold 300 RPM" and elist.timestamp == "2023-10-19T17:15:35"
    assert (preinit.record, preinit.date, preinit.timestamp) == (0x1A, None, None)
    assert (inlet.sensor_id, inlet.entity, inlet.reading) == ("04h", "7.1", 21.0)
    assert (psu.name, psu.reading, psu.raw, psu.status) == ("PSU2 Status", None, "Power Supply AC lost", "cr")
    assert (cpu.reading, cpu.units, cpu.status) == (35.0, "degrees C", "ok")
    assert cpu.thresholds == {"lower_critical": 0.0, "lower_non_critical": 0.0, "upper_non_critical": 95.0,
                              "upper_critical": 98.0, "upper_non_recoverable": 100.0}  # fmt: skip


def test_an_empty_sel_is_valid_and_empty():
    assert ipmitool.parse("SEL has no entries\n") == []


def test_refused():
    with pytest.raises(ParseError, match="no ipmitool output"):
        ipmitool.parse("nothing here\n")
    with pytest.raises(ParseError) as caught:
        ipmitool.parse("Ambient Temp | 20 degrees C | ok\nFan 1 | " + "9" * 5000 + " RPM | ok\n")
    assert caught.value.line_no == 2
    with pytest.raises(ParseError) as caught:
        ipmitool.parse("Ambient Temp | 20 degrees C | ok\nbroken | row\n | x | y | z | w\n")
    assert caught.value.line_no == 3
    with pytest.raises(ParseError) as caught:
        ipmitool.parse("Instantaneous power reading:    lots\n")
    assert caught.value.line_no == 1
    with pytest.raises(ParseError) as caught:
        ipmitool.parse("SEL has no entries\n" + "|" * 10_000_000 + "\n")
    assert caught.value.line_no == 2
