"""`manage.py parse_output`: JSON with one object per result and the keys the issue names;
a file that does not parse is named on stderr with its line, and the command fails."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"

NCCL_KEYS = {"tool", "test", "rows", "avg_busbw_gbps", "out_of_bounds", "failed"}
NCCL_ROW_KEYS = {"size_bytes", "count", "type", "redop", "root", "out_of_place", "in_place"}
NCCL_HALF_KEYS = {"time_us", "algbw_gbps", "busbw_gbps", "wrong"}
PERFTEST_KEYS = {"tool", "test", "link_type", "qps", "rows"}
BW_ROW_KEYS = {"bytes", "iterations", "bw_peak_gbps", "bw_avg_gbps", "msg_rate_mpps"}
LAT_ROW_KEYS = {"bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us"}
LAT_ROW_KEYS |= {"p99_us", "p999_us"}
MLXLINK_KEYS = {"tool", "device", "state", "physical_state", "speed", "width", "fec", "module", "counters"}
MODULE_KEYS = {
    "vendor",
    "part_number",
    "serial",
    "temperature_c",
    "voltage_mv",
    "rx_power_dbm",
    "tx_power_dbm",
}
COUNTER_KEYS = {"symbol_errors", "symbol_ber", "effective_physical_errors", "effective_ber", "raw_ber"}
COUNTER_KEYS |= {"link_down", "link_error_recovery"}


# Real samples that must be refused (see SOURCES.md): server and client printing into one terminal.
REFUSED_FIXTURES = {"ib_write_bw_06_roce_hns_server_client_interleaved.txt"}


def run_json(*args):
    out = StringIO()
    call_command("parse_output", *[str(arg) for arg in args], "--json", stdout=out)
    return json.loads(out.getvalue())


def test_mlxlink_loop_gives_eight_objects_with_the_required_keys():
    results = run_json(FIXTURES / "mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt")
    assert len(results) == 8
    for result in results:
        assert MLXLINK_KEYS <= result.keys()
        assert MODULE_KEYS <= result["module"].keys() and COUNTER_KEYS <= result["counters"].keys()
        assert result["width"] == "2x" and result["counters"]["effective_ber"] is None
        assert result["source"].endswith("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt")
    [dac] = run_json(FIXTURES / "mlxlink_01_show_module_ndr_dac.txt")
    assert dac["module"]["rx_power_dbm"] == [0, 0, 0, 0] and dac["module"]["serial"] == "C2604279049-2"


def test_a_log_with_two_nccl_tests_gives_two_objects(tmp_path):
    log = tmp_path / "two_tests.log"
    log.write_text(
        (FIXTURES / "nccl_allreduce_02.txt").read_text()
        + "\n"
        + (FIXTURES / "nccl_allreduce_03_wrong_failed.txt").read_text()
    )
    first, second = run_json(log)
    for result in (first, second):
        assert NCCL_KEYS <= result.keys() and result["tool"] == "nccl"
        assert NCCL_ROW_KEYS <= result["rows"][0].keys()
        assert NCCL_HALF_KEYS <= result["rows"][0]["out_of_place"].keys()
    assert (first["avg_busbw_gbps"], first["failed"]) == (70.742, False)
    assert (second["out_of_bounds"], second["failed"]) == (4, True)


def test_perftest_bandwidth_and_latency_rows_and_several_files_in_one_list():
    results = run_json(
        FIXTURES / "ib_write_bw_02_use_cuda_roce_16qp_duration.txt", FIXTURES / "ib_send_lat_01.txt"
    )
    bandwidth, latency = results
    assert PERFTEST_KEYS <= bandwidth.keys() and BW_ROW_KEYS <= bandwidth["rows"][0].keys()
    assert (bandwidth["qps"], bandwidth["link_type"], bandwidth["rows"][0]["bw_peak_gbps"]) == (
        16,
        "Ethernet",
        None,
    )
    assert bandwidth["rows"][0]["bw_avg_gbps"] == pytest.approx(181.46)
    assert LAT_ROW_KEYS <= latency["rows"][0].keys() and latency["rows"][0]["p999_us"] == 5.19


def test_the_tool_can_be_named_and_every_fixture_goes_through_the_command():
    [result] = run_json("--tool", "ibstat", FIXTURES / "ibstat_01_initializing_no_sm.txt")
    assert (result["tool"], result["state"]) == ("ibstat", "Initializing")
    parsable = sorted(path for path in FIXTURES.glob("*.txt") if path.name not in REFUSED_FIXTURES)
    everything = run_json(*parsable)
    # 90: ib_write_bw_05 (an old perftest's client and server output, one after the other) adds two; the eight
    # RoCE outputs (ethtool -S, mlnx_qos, Ethernet mlxlink, NVUE qos roce) one each.
    assert len(everything) == 90
    assert {result["tool"] for result in everything} == {
        "nccl", "perftest", "mlxlink", "ibstat", "ibstatus", "perfquery", "ethtool",
        "nvsmi_topo", "iblinkinfo", "ibnetdiscover", "lldp", "ibdiagnet", "nvue_lldp",
        "ethtool_stats", "mlnx_qos", "nvue_qos",
    }  # fmt: skip


def test_a_refused_real_fixture_fails_with_its_line_through_the_command():
    [name] = REFUSED_FIXTURES
    err = StringIO()
    with pytest.raises(CommandError, match="1 of 1 file"):
        call_command("parse_output", str(FIXTURES / name), "--json", stdout=StringIO(), stderr=err)
    assert err.getvalue().strip() == (
        f"{FIXTURES / name}: line 11: setting 'Dual-port' printed twice in one run: server and client"
        " output are interleaved; expected the server's and the client's output captured separately,"
        " one after the other"
    )


def test_text_summary_without_json():
    out = StringIO()
    call_command("parse_output", str(FIXTURES / "nccl_allreduce_03_wrong_failed.txt"), stdout=out)
    assert out.getvalue().strip().endswith("nccl all_reduce_perf avg_busbw_gbps=4.79995 rows=25 FAILED")


def test_a_bad_file_is_named_with_its_line_and_the_command_fails(tmp_path):
    bad = tmp_path / "bad_mlxlink.txt"
    bad.write_text(
        (FIXTURES / "mlxlink_01_show_module_ndr_dac.txt").read_text().replace(": 0 [0..0]", ": hot [0..0]", 1)
    )
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="1 of 2 file"):
        call_command(
            "parse_output",
            str(bad),
            str(FIXTURES / "ibstat_01_initializing_no_sm.txt"),
            "--json",
            stdout=out,
            stderr=err,
        )
    expected = "line 32: Temperature [C] is 'hot', not a number; expected a finite number for Temperature [C]"
    assert err.getvalue().strip() == f"{bad}: {expected}"
    printed = [result["tool"] for result in json.loads(out.getvalue())]
    assert printed == ["ibstat"]  # the good file is still printed


def test_unreadable_or_unrecognised_files(tmp_path):
    err = StringIO()
    (tmp_path / "notes.txt").write_text("just some notes\n")
    with pytest.raises(CommandError):
        call_command(
            "parse_output",
            str(tmp_path / "missing.txt"),
            str(tmp_path / "notes.txt"),
            stdout=StringIO(),
            stderr=err,
        )
    missing, notes = err.getvalue().strip().splitlines()
    assert missing.startswith(f"{tmp_path / 'missing.txt'}: cannot read the file")
    assert notes.startswith(
        f"{tmp_path / 'notes.txt'}: line 1: could not tell which tool produced this output"
    )
