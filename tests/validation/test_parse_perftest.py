"""perftest parser: header block, unit normalisation to Gb/s, duration runs, several runs per file."""

import time
from pathlib import Path

import pytest

from validation.parsers import ParseError, perftest
from validation.parsers.base import key_values

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"
# perftest divides by 0x100000 for both its "MB/sec" and "MiB/sec" columns: one unit, two labels.
MIB_TO_GBITS = 8 * 1.048576 / 1000


def read(name):
    return (FIXTURES / name).read_text()


def test_ib_write_bw_01_reports_gbits_and_keeps_the_cpu_frequency_warning():
    [result] = perftest.parse(read("ib_write_bw_01_ndr_gbits.txt"))
    assert (result.test, result.kind, result.role) == ("ib_write_bw", "bw", "client")
    assert (result.device, result.link_type, result.qps, result.mtu_bytes) == ("mlx5_0", "IB", 1, 4096)
    assert result.use_cuda is False and result.unit_printed == "Gb/sec"
    [row] = result.rows
    assert (row.bytes, row.iterations) == (65536, 5000)
    assert (row.bw_peak_gbps, row.bw_avg_gbps, row.msg_rate_mpps) == (392.38, 392.34, 0.748336)
    assert result.warnings == [
        "Conflicting CPU frequency values detected: 3295.212000 != 4999.302000. CPU Frequency is not max."
    ]
    assert result.failed is False


def test_ib_read_bw_01():
    [result] = perftest.parse(read("ib_read_bw_01_ndr.txt"))
    assert result.test == "ib_read_bw"
    assert result.rows[0].bw_avg_gbps == 328.61 and result.rows[0].iterations == 1000


def test_ib_send_bw_01_converts_mib_per_second():
    [result] = perftest.parse(read("ib_send_bw_01_mib_cpufreq_warn.txt"))
    assert result.test == "ib_send_bw" and result.unit_printed == "MiB/sec"
    [row] = result.rows
    assert row.bw_avg_gbps == pytest.approx(46557.03 * MIB_TO_GBITS)
    assert row.bw_avg_gbps == pytest.approx(390.549, abs=0.001)
    assert row.bw_peak_gbps == pytest.approx(46567.34 * MIB_TO_GBITS)


def test_ib_send_lat_01_latency_columns():
    [result] = perftest.parse(read("ib_send_lat_01.txt"))
    assert (result.test, result.kind) == ("ib_send_lat", "lat")
    [row] = result.rows
    assert (row.bytes, row.iterations) == (2, 1000)
    assert (row.t_min_us, row.t_max_us, row.t_typical_us, row.t_avg_us) == (1.24, 5.19, 1.27, 1.27)
    assert (row.t_stdev_us, row.p99_us, row.p999_us) == (0.0, 1.37, 5.19)
    assert len(result.warnings) == 2


def test_ib_write_bw_02_cuda_duration_run_has_no_peak():
    [result] = perftest.parse(read("ib_write_bw_02_use_cuda_roce_16qp_duration.txt"))
    assert result.qps == 16 and result.link_type == "Ethernet" and result.mtu_bytes == 1024
    assert result.use_cuda is True and result.gpu_name == "NVIDIA A40"
    assert result.duration_run is True and result.rdma_cm is True
    [row] = result.rows
    assert row.bw_peak_gbps is None  # printed as 0.00: not measured in a -D run
    assert row.bw_avg_gbps == 181.46 and row.iterations == 10384867
    assert result.line_no == 18  # the title, after the CUDA set-up lines


def test_ib_write_bw_03_server_and_client_outputs_give_two_results_in_mb_per_second():
    client, server = perftest.parse(read("ib_write_bw_03_loopback_8M_mbsec.txt"))
    assert (client.role, server.role) == ("client", "server")  # only a client prints TX depth
    for result in (client, server):
        assert result.unit_printed == "MB/sec" and result.device == "ib0"
        [row] = result.rows
        assert row.bytes == 8388608
        assert row.bw_avg_gbps == pytest.approx(24056.72 * MIB_TO_GBITS)
        assert round(row.bw_avg_gbps, 2) == 201.80  # not 192.45: "MB" here means 2^20 bytes
    assert client.warnings == [] and server.line_no == 23


def test_mb_and_mib_columns_are_the_same_2_20_byte_unit():
    # perftest's format_factor is 0x100000 unless --report_gbits, whichever label the header prints.
    text = read("ib_write_bw_01_ndr_gbits.txt").replace("392.38             392.34", "1000.00   1000.00")
    in_mb = perftest.parse(text.replace("Gb/sec", "MB/sec"))[0].rows[0]
    in_mib = perftest.parse(text.replace("Gb/sec", "MiB/sec"))[0].rows[0]
    assert in_mb.bw_avg_gbps == in_mib.bw_avg_gbps == pytest.approx(8.388608)


LATENCY_DURATION = """\
---------------------------------------------------------------------------------------
                    RDMA_Write Latency Test
 Dual-port       : OFF\t\tDevice         : mlx5_3
 Number of qps   : 1\t\tTransport type : IB
 Mtu             : 4096[B]
 Link type       : IB
---------------------------------------------------------------------------------------
 #bytes        #iterations       t_avg[usec]    tps average
 2             1873456           1.07           934021.55
---------------------------------------------------------------------------------------
"""


def test_latency_duration_run_has_average_and_transactions_only():
    [result] = perftest.parse(LATENCY_DURATION)
    assert result.test == "ib_write_lat" and result.device == "mlx5_3"
    [row] = result.rows
    assert (row.t_avg_us, row.tps_avg, row.t_min_us, row.p99_us) == (1.07, 934021.55, None, None)


def test_a_run_that_never_connected_is_failed_not_an_error():
    text = (
        LATENCY_DURATION.split(" #bytes")[0]
        + " Couldn't connect to 10.0.0.2:18515\n Unable to open file descriptor\n"
    )
    [result] = perftest.parse(text)
    assert result.failed is True and result.rows == []
    assert result.errors == ["Couldn't connect to 10.0.0.2:18515", "Unable to open file descriptor"]


def test_errors_name_the_line():
    lines = read("ib_write_bw_01_ndr_gbits.txt").splitlines()
    row_index = next(i for i, line in enumerate(lines) if line.strip().startswith("65536"))
    garbled = lines[:row_index] + [" 65536      5000   392.38   39x.34   0.748336"] + lines[row_index + 1 :]
    with pytest.raises(ParseError, match=rf"^line {row_index + 1}: bw_avg is '39x.34', not a number"):
        perftest.parse("\n".join(garbled))
    with pytest.raises(ParseError, match=r"unknown bandwidth unit 'KB/sec'"):
        perftest.parse(read("ib_write_bw_01_ndr_gbits.txt").replace("Gb/sec", "KB/sec"))
    with pytest.raises(ParseError, match=r"latency printed in 'cycles'"):
        perftest.parse(read("ib_send_lat_01.txt").replace("[usec]", "[cycles]"))
    with pytest.raises(ParseError, match=r"^line 5: 'Number of qps' in the settings block is 'many'"):
        perftest.parse(
            read("ib_write_bw_01_ndr_gbits.txt").replace("Number of qps   : 1", "Number of qps   : many")
        )
    with pytest.raises(ParseError, match="no perftest run found"):
        perftest.parse("just text\n")


# --- layouts from more sites: pasted (space-padded) settings, rdma_cm, several QPs, RoCE GIDs ---


def test_ib_write_bw_04_space_padded_settings_rdma_cm_and_four_qps():
    [result] = perftest.parse(read("ib_write_bw_04_rdma_cm_4qp_space_padded.txt"))
    # Tabs expanded to spaces: two settings per line must still be two settings.
    assert (result.device, result.qps, result.transport) == ("rocep1s0f1", 4, "IB")
    assert (result.connection_type, result.settings["Using SRQ"]) == ("RC", "OFF")
    assert result.settings["Dual-port"] == "OFF" and result.settings["PCIe relax order"] == "ON"
    assert result.rdma_cm is True and result.settings["Data ex. method"] == "rdma_cm"
    assert (result.role, result.tx_depth, result.mtu_bytes, result.link_type) == ("client", 128, 1024, "IB")
    assert result.local_qpns == ["0x03ec", "0x03ed", "0x03ee", "0x03ef"]
    assert result.remote_qpns == ["0x03eb", "0x03ec", "0x03ed", "0x03ee"]
    assert result.local_gids == [] and result.remote_gids == []  # IB link: no GID lines
    [row] = result.rows
    assert (row.bytes, row.iterations, row.bw_peak_gbps, row.bw_avg_gbps) == (65536, 20000, 111.72, 111.71)
    assert row.msg_rate_mpps == 0.21307 and result.failed is False


def test_ib_write_lat_01_rdma_cm_latency_percentiles():
    [result] = perftest.parse(read("ib_write_lat_01_rdma_cm_percentiles_space_padded.txt"))
    assert (result.test, result.kind, result.device, result.qps) == ("ib_write_lat", "lat", "rocep1s0f1", 1)
    assert (result.rdma_cm, result.tx_depth, result.role) == (True, 1, "client")
    [row] = result.rows
    assert (row.bytes, row.iterations) == (2, 1000)
    assert (row.t_min_us, row.t_max_us, row.t_typical_us, row.t_avg_us) == (1.42, 1.93, 1.47, 1.47)
    assert (row.t_stdev_us, row.p99_us, row.p999_us) == (0.0, 1.57, 1.93)
    assert result.local_qpns == ["0x02ee"] and result.remote_qpns == ["0x02ee"]


def test_roce_run_keeps_one_qpn_per_qp_and_each_sides_gid():
    [result] = perftest.parse(read("ib_write_bw_02_use_cuda_roce_16qp_duration.txt"))
    assert len(result.local_qpns) == len(result.remote_qpns) == result.qps == 16
    assert result.local_qpns[0] == "0x00c6" and result.remote_qpns[-1] == "0x00d6"
    assert result.local_gids == ["00:00:00:00:00:00:00:00:00:00:255:255:10:06:145:33"]
    assert result.remote_gids == ["00:00:00:00:00:00:00:00:00:00:255:255:10:06:145:32"]
    assert result.settings["GID index"] == "3" and result.settings["TOS"] == "41"


@pytest.mark.parametrize("name", ["ib_write_bw_01_ndr_gbits.txt", "ib_write_bw_02_use_cuda_roce_16qp_duration.txt"])
@pytest.mark.parametrize("gap", ["expandtabs", "  "])
def test_tabs_expanded_or_two_spaces_read_like_the_tab_separated_original(name, gap):
    # What copying from a terminal or an issue does to perftest's tabs; the brief's
    # "Number of qps : 1  Transport type : IB" is the two-space case.
    original = read(name)
    pasted = original.expandtabs(8) if gap == "expandtabs" else original.replace("\t", gap)
    [expected], [got] = perftest.parse(original), perftest.parse(pasted)
    assert got.settings == expected.settings and len(got.settings) >= 12
    assert (got.device, got.qps, got.transport, got.rdma_cm) == (expected.device, expected.qps, "IB", expected.rdma_cm)
    assert got.rows == expected.rows


@pytest.mark.parametrize(
    ("line", "pairs"),
    [
        # perftest's own tabs, and the padding inside the first pair
        (" rdma_cm QPs\t : OFF", [("rdma_cm QPs", "OFF")]),
        (" Data ex. method : rdma_cm \tTOS    : 41", [("Data ex. method", "rdma_cm"), ("TOS", "41")]),
        # a latency server on Soft-RoCE prints the second key without padding
        (" Dual-port       : OFF          Device: rxe0", [("Dual-port", "OFF"), ("Device", "rxe0")]),
        (" Number of qps : 1  Transport type : IB", [("Number of qps", "1"), ("Transport type", "IB")]),
        (" PCIe relax order: ON", [("PCIe relax order", "ON")]),
        # a colon with no gap before it belongs to the value
        (" Started : 12:30:01", [("Started", "12:30:01")]),
        (" Link type       : Ethernet", [("Link type", "Ethernet")]),
    ],
)
def test_key_values_splits_pairs_on_tabs_or_wide_gaps(line, pairs):
    assert list(key_values(line)) == pairs


def test_server_and_client_logs_of_different_tests_concatenated():
    text = read("ib_write_bw_04_rdma_cm_4qp_space_padded.txt") + read(
        "ib_write_lat_01_rdma_cm_percentiles_space_padded.txt"
    )
    bandwidth, latency = perftest.parse(text)
    assert (bandwidth.test, bandwidth.qps, latency.test, latency.qps) == ("ib_write_bw", 4, "ib_write_lat", 1)
    assert latency.line_no == 29 and latency.rows[0].p999_us == 1.93


def test_a_pasted_settings_value_that_is_not_a_number_still_names_its_line():
    text = read("ib_write_bw_04_rdma_cm_4qp_space_padded.txt").replace(
        ": 4            Transport", ": four         Transport"
    )
    with pytest.raises(ParseError, match=r"^line 4: 'Number of qps' in the settings block is 'four'"):
        perftest.parse(text)


def test_hostile_inputs_are_refused_quickly():
    started = time.perf_counter()
    too_many = rf"^line {perftest.MAX_RUNS + 1}: more than {perftest.MAX_RUNS} perftest runs"
    with pytest.raises(ParseError, match=too_many):
        perftest.parse("RDMA_Write BW Test\n" * 100_000)
    long_settings = "                    RDMA_Write BW Test\n Dual-port : " + "a  b:" * 400_000 + "\n"
    [result] = perftest.parse(long_settings)  # a 2 MB line is no settings line: kept out, run has no rows
    assert result.settings == {} and result.failed is True
    with pytest.raises(ParseError, match="no perftest run found"):
        perftest.parse("RDMA_Write BW Test " * 500_000)  # one 10 MB line is no title
    assert time.perf_counter() - started < 20


def test_ib_write_bw_05_old_perftest_mlx4_client_then_server_indented_in_a_doc():
    # perftest of the ConnectX-3 era: no "PCIe relax order" / "ibv_wr* API" lines, MB/sec columns,
    # and every line indented by four spaces (an rst literal block).
    client, server = perftest.parse(read("ib_write_bw_05_old_mlx4_fdr_client_then_server_indented.txt"))
    assert (client.role, server.role) == ("client", "server")
    for result in (client, server):
        assert (result.test, result.device, result.link_type, result.qps) == ("ib_write_bw", "mlx4_0", "IB", 1)
        assert (result.mtu_bytes, result.rdma_cm, result.unit_printed) == (2048, False, "MB/sec")
        [row] = result.rows
        assert (row.bytes, row.iterations, row.msg_rate_mpps) == (65536, 5000, 0.096540)
        assert row.bw_peak_gbps == pytest.approx(6034.72 * MIB_TO_GBITS)
        assert row.bw_avg_gbps == pytest.approx(6033.76 * MIB_TO_GBITS)
        assert result.failed is False
    assert client.tx_depth == 128 and server.tx_depth is None
    # Each side's local QP is the other's remote one (same QPN 0x0a1b on both hosts).
    assert client.local_qpns == client.remote_qpns == server.local_qpns == ["0x0a1b"]


def test_ib_write_bw_06_interleaved_server_and_client_output_is_refused_at_the_repeated_setting():
    # Both started with '&' in one terminal: their header lines alternate. Reading on would merge the
    # two runs into one with two local QPNs for "Number of qps : 1".
    with pytest.raises(ParseError) as refused:
        perftest.parse(read("ib_write_bw_06_roce_hns_server_client_interleaved.txt"))
    assert refused.value.line_no == 11
    assert refused.value.message == (
        "setting 'Dual-port' printed twice in one run: server and client output are interleaved"
    )
