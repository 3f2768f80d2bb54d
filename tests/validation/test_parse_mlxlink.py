"""mlxlink parser: operational info, module DOM with per-lane lists and ranges, counters/BER,
captured loops over several devices, N/A, and -E- lines."""

import re
import time
from pathlib import Path

import pytest

from validation.parsers import ParseError, detect_tool, mlxlink, parse

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"


def read(name):
    return (FIXTURES / name).read_text()


def test_mlxlink_03_captured_loop_gives_eight_hdr_devices_at_width_2x():
    results = mlxlink.parse(read("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt"))
    assert [r.device for r in results] == [f"mt4123_pciconf{i}" for i in range(8)]
    for result in results:
        assert (result.state, result.physical_state, result.speed, result.width) == (
            "Active",
            "LinkUp",
            "IB-HDR",
            "2x",
        )
        assert result.fec == "RS-FEC - (544,514) + PLR"
        assert result.recommendation == "No issue was observed" and result.status_opcode == 0
        assert result.firmware_version == "20.36.1010"
        assert result.errors == ['"--show_ber_monitor" option is not supported for HCA']
        assert result.module.vendor is None and result.counters.effective_ber is None  # not printed -> null


def test_mlxlink_01_passive_dac_reports_zero_dom_and_na_fields():
    [result] = mlxlink.parse(read("mlxlink_01_show_module_ndr_dac.txt"))
    assert result.device == "/dev/mst/mt4129_pciconf0"
    assert (result.speed, result.width, result.fec) == (
        "IB-NDR",
        "4x",
        "Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)",
    )
    module = result.module
    assert (module.vendor, module.part_number, module.serial) == ("FS", "OSFPFL-400G-PC01", "C2604279049-2")
    assert module.identifier == "OSFP" and module.is_passive_copper is True
    assert module.temperature_c == 0 and module.voltage_mv == 0
    assert module.rx_power_dbm == [0, 0, 0, 0] and module.tx_power_dbm == [0, 0, 0, 0]
    assert module.ranges["temperature_c"] == [0, 0]
    assert module.wavelength_nm is None  # N/A
    assert module.lane_flags["rx_los"] == [1, 0, 1, 1] and module.lane_flags["rx_cdr_lol"] == [1, 1, 1, 1]
    assert result.sections["Module Info"]["Cable Breakout"] == "OSFP to OSFP"
    assert result.counters.symbol_errors is None and result.errors == []


XDR_PLANES = """\
$ for d in mlx5_0 mlx5_1; do echo "----- $d -----"; sudo mlxlink -d $d -p 1 -m -c; done
----- mlx5_0 -----

Operational Info
----------------
State                              : Active
Physical state                     : LinkUp
Speed                              : IB-XDR
Width                              : 4x
FEC                                : RS-FEC PLR - (544,514)

Module Info
-----------
Temperature [C]                    : 47 [-5..75]
Voltage [mV]                       : 3287.4 [3135..3465]
Bias Current [mA]                  : 6.9,7.1,N/A,7.0 [2..15]
Rx Power Current [dBm]             : -1.2,-0.8,-19.7,-1.1 [-10.4..5]
Tx Power Current [dBm]             : 1.0,1.1,1.2,0.9 [-8.4..4]
Vendor Name                        : Nvidia
Vendor Part Number                 : MMA4Z00-NS
Vendor Serial Number               : MT2437FT01234
Cable Technology                   : 850 nm VCSEL
Wavelength [nm]                    : 850
Rx LOS [per lane]                  : 0,0,1,0

Physical Counters and BER Info
------------------------------
Time Since Last Clear [Min]        : 4412.7
Symbol Errors                      : 12
Symbol BER                         : 3E-16
Effective Physical Errors          : 1
Effective Physical BER             : 15E-255
Raw Physical Errors Per Lane       : 0,0,83211,0
Raw Physical BER                   : 2E-9
Link Down Counter                  : 1
Link Error Recovery Counter        : 0
-E- Eye opening is not supported for this port
----- mlx5_1 -----

Operational Info
----------------
State                              : Polling
Physical state                     : N/A
Speed                              : N/A
Width                              : N/A
FEC                                : N/A
"""


def test_four_plane_xdr_block_with_four_lanes_counters_and_a_down_port():
    active, down = mlxlink.parse(XDR_PLANES)
    assert (active.device, active.port, down.device) == ("mlx5_0", 1, "mlx5_1")
    assert (active.speed, active.width) == ("IB-XDR", "4x")
    module = active.module
    assert module.temperature_c == 47 and module.voltage_mv == 3287.4
    assert module.bias_current_ma == [6.9, 7.1, None, 7.0]
    assert module.rx_power_dbm == [-1.2, -0.8, -19.7, -1.1]
    assert module.ranges == {
        "temperature_c": [-5, 75],
        "voltage_mv": [3135, 3465],
        "bias_current_ma": [2, 15],
        "rx_power_dbm": [-10.4, 5],
        "tx_power_dbm": [-8.4, 4],
    }
    assert module.is_passive_copper is False and module.wavelength_nm == 850
    counters = active.counters
    assert (counters.symbol_errors, counters.symbol_ber) == (12, 3e-16)
    assert (counters.effective_physical_errors, counters.effective_ber, counters.raw_ber) == (
        1,
        15e-255,
        2e-9,
    )
    assert (counters.link_down, counters.link_error_recovery) == (1, 0)
    assert counters.raw_physical_errors_per_lane == [0, 0, 83211, 0]
    assert counters.time_since_last_clear_min == 4412.7
    assert active.errors == ["Eye opening is not supported for this port"]
    assert (down.state, down.physical_state, down.speed, down.width, down.fec) == (
        "Polling",
        None,
        None,
        None,
        None,
    )
    assert down.errors == []


def test_unreadable_values_name_their_line():
    with pytest.raises(ParseError, match=r"^line 14: Temperature \[C\] is 'hot', not a number"):
        mlxlink.parse(XDR_PLANES.replace(": 47 [-5..75]", ": hot [-5..75]"))
    with pytest.raises(ParseError, match=r"^line 29: Symbol Errors is 'many', not a whole number"):
        mlxlink.parse(XDR_PLANES.replace(": 12\n", ": many\n"))
    with pytest.raises(ParseError, match=r"^line 16: Bias Current \[mA\] \(lane 2\) is '7\.1x'"):
        mlxlink.parse(XDR_PLANES.replace("6.9,7.1,", "6.9,7.1x,"))
    with pytest.raises(ParseError, match=r"^line 17: Rx Power Current \[dBm\] has an unreadable range"):
        mlxlink.parse(XDR_PLANES.replace("[-10.4..5]", "[-10.4 to 5]"))
    with pytest.raises(ParseError, match="no mlxlink section found"):
        mlxlink.parse("State : Active\n")


# --- newer MFT (4.30, BlueField-3) and output filtered through grep in a loop over devices ---

BF3 = "mlxlink_04_bf3_100g_dac_two_ports_mft_4.30.txt"


def test_mlxlink_04_newer_mft_two_ports_of_a_bluefield3():
    first, second = mlxlink.parse(read(BF3))
    assert (first.device, second.device) == ("/dev/mst/mt41692_pciconf0", "/dev/mst/mt41692_pciconf0.1")
    for result in (first, second):
        assert (result.port, result.state, result.physical_state, result.speed, result.width) == (
            1,
            "Active",
            "LinkUp",
            "100G",
            "4x",
        )
        assert result.fec == "Standard RS-FEC - RS(528,514)"
        assert (result.firmware_version, result.mft_version) == ("32.43.2402", "mft 4.30.1-8")
        assert result.sections["Tool Information"]["amBER Version"] == "3.6"
        assert result.module.is_passive_copper is True and result.module.temperature_c is None
        assert result.sections["Module Info"]["Cable Breakout"].startswith("Channels implemented [1,2,3,4]/")
        counters = result.counters
        assert (counters.effective_physical_errors, counters.effective_ber, counters.raw_ber) == (0, 15e-255, 15e-255)
        assert counters.raw_physical_errors_per_lane == [0, 0, 0, 0] and counters.link_down == 0
    assert (first.module.serial, second.module.serial) == ("S2202655321-1", "S2202655321-2")
    assert (first.counters.time_since_last_clear_min, second.counters.time_since_last_clear_min) == (25074.8, 25075.2)


def device_outputs(name, separator):
    """Each device's own output in a real capture, split where the capture starts the next device."""
    parts = re.split(separator, read(name))
    return [part for part in parts[1:] if part.strip()]


def grep_loop(outputs, pattern, names):
    """What `for d in ...; do echo $d; mlxlink -d $d ... | grep -E PATTERN; done` prints: the
    device name, then only the lines of its real output that grep keeps."""
    kept = []
    for name, output in zip(names, outputs, strict=True):
        kept.append(name)
        kept += [line for line in output.splitlines() if re.search(pattern, line)]
    return "\n".join(kept) + "\n"


def test_grep_for_ber_and_counters_in_a_loop_gives_one_result_per_device():
    outputs = device_outputs(BF3, r"(?m)^ubuntu@.*\n")
    text = grep_loop(outputs, "BER|Counter", ["mlx5_0", "mlx5_1"])
    assert "Physical Counters and BER Info\nEffective Physical BER" in text  # the title, without its dashes
    assert detect_tool(text) == "mlxlink"
    first, second = parse(text)
    assert (first.device, second.device) == ("mlx5_0", "mlx5_1")
    for result in (first, second):
        assert (result.counters.effective_ber, result.counters.raw_ber) == (15e-255, 15e-255)
        assert (result.counters.link_down, result.counters.link_error_recovery) == (0, 0)
        assert result.counters.effective_physical_errors is None  # grep dropped that line
        assert result.sections["Tool Information"] == {"amBER Version": "3.6"}  # "amBER" matches BER
        assert result.state is None
    assert second.line_no == text.splitlines().index("mlx5_1") + 2


def test_grep_over_eight_hcas_files_untitled_lines_under_their_sections():
    outputs = device_outputs("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt", r"(?m)^=+ mt4123_pciconf\d =+\n")
    names = [f"mlx5_{index}" for index in range(8)]
    text = grep_loop(outputs, "State|FEC|Recommendation|-E-", names)
    assert "Operational Info" not in text and detect_tool(text) == "mlxlink"
    results = parse(text)
    assert [result.device for result in results] == names
    for result in results:
        assert (result.state, result.fec) == ("Active", "RS-FEC - (544,514) + PLR")
        assert result.recommendation == "No issue was observed"
        assert result.physical_state is None  # "Physical state" has a lower-case s: grep dropped it
        assert result.errors == ['"--show_ber_monitor" option is not supported for HCA']


def test_grep_loop_without_device_names_splits_on_a_repeated_key():
    outputs = device_outputs(BF3, r"(?m)^ubuntu@.*\n")
    text = "".join(
        line + "\n" for output in outputs for line in output.splitlines() if "Physical BER" in line
    )
    assert [(r.device, r.counters.raw_ber) for r in mlxlink.parse(text)] == [(None, 15e-255), (None, 15e-255)]


def test_a_device_that_printed_only_an_error_gets_the_error():
    text = (
        "mlx5_0\nRaw Physical BER                   : 2E-9\n"
        "mlx5_1\n-E- Failed to open device\n"
        "mlx5_2\nRaw Physical BER                   : 1E-12\n"
    )
    results = mlxlink.parse(text)
    assert [(r.device, r.counters.raw_ber, r.errors) for r in results] == [
        ("mlx5_0", 2e-9, []),
        ("mlx5_1", None, ["Failed to open device"]),
        ("mlx5_2", 1e-12, []),
    ]


def test_another_tools_unpadded_state_line_is_not_taken_for_mlxlink():
    ibstat_above = "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n"
    [result] = mlxlink.parse(ibstat_above + read("mlxlink_01_show_module_ndr_dac.txt"))
    assert result.device == "/dev/mst/mt4129_pciconf0" and result.speed == "IB-NDR"


def test_a_garbled_grep_filtered_value_names_its_line():
    text = "mlx5_0\nRaw Physical BER                   : 2E-9\nmlx5_1\nRaw Physical BER                   : 2E-x9\n"
    with pytest.raises(ParseError, match=r"^line 4: Raw Physical BER is '2E-x9', not a number"):
        mlxlink.parse(text)


def test_a_repeated_line_cannot_make_millions_of_devices():
    started = time.perf_counter()
    line = "Raw Physical BER                   : 15E-255\n"
    with pytest.raises(ParseError, match=rf"^line {mlxlink.MAX_DEVICES + 1}: more than {mlxlink.MAX_DEVICES} devices"):
        mlxlink.parse(line * 200_000)
    with pytest.raises(ParseError, match=rf"more than {mlxlink.MAX_DEVICES} devices"):
        mlxlink.parse("Operational Info\n----------------\n" * 100_000)
    assert time.perf_counter() - started < 20
