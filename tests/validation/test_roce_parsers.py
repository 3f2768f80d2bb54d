"""The RoCE tools' parsers on real outputs (tests/fixtures/tool-outputs, see SOURCES.md): mlnx_qos, ethtool -S,
NVUE's `nv show ... qos roce`, and mlxlink on Ethernet ports. Pure Python: no database."""

from __future__ import annotations

import pytest

from validation.parsers import ParseError, detect_tool, ethtool_stats, mlnx_qos, nvue_qos, parse
from validation.runners import commands
from validation.runners.simulated import ethtool_stats_text, mlnx_qos_text

from .conftest import fixture_text

FILES = {
    "mlnx_qos_01_trust_dscp_pfc3_no_buffer_rows.txt": "mlnx_qos",
    "mlnx_qos_02_pfc5_buffers_custom_dscp2prio.txt": "mlnx_qos",
    "ethtool_S_01_mlx5_xdp_drop_discards_pause_nonzero_only.txt": "ethtool_stats",
    "ethtool_S_02_grep_phy_and_prio_discards_zero.txt": "ethtool_stats",
    "nvue_show_qos_roce_01_lossless_single_ipool.txt": "nvue_qos",
    "nvue_show_qos_roce_02_lossy_multi_tc_no_pfc.txt": "nvue_qos",
    "nvue_show_interface_qos_roce_status_01_swp16.txt": "nvue_qos",
    "mlxlink_04_bf3_100g_dac_two_ports_mft_4.30.txt": "mlxlink",
    "mlxlink_05_cx4_100gbe_eth_counters_forum_collapsed.txt": "mlxlink",
}


@pytest.mark.parametrize(("name", "tool"), FILES.items())
def test_each_real_output_is_recognised(name, tool):
    assert detect_tool(fixture_text(name)) == tool


def test_mlnx_qos_older_driver_without_buffer_rows():
    [qos] = mlnx_qos.parse(fixture_text("mlnx_qos_01_trust_dscp_pfc3_no_buffer_rows.txt"))
    assert (qos.dcbx_mode, qos.trust, qos.cable_length_m) == ("OS controlled", "dscp", 7)
    assert qos.pfc_enabled == [0, 0, 0, 1, 0, 0, 0, 0] and qos.pfc_buffer is None
    assert qos.receive_buffer_bytes is None
    assert 26 in qos.priority_dscps[3] and qos.priority_dscps[7] == [63, 62, 61, 60, 59, 58, 57, 56]
    # tc 0 carries priority 1 and tc 1 priority 0, as mlnx_qos prints the default mapping
    first_two = [(tc.tc, tc.tsa, tc.priorities) for tc in qos.traffic_classes[:2]]
    assert first_two == [(0, "vendor", [1]), (1, "vendor", [0])]


def test_mlnx_qos_with_buffers_and_a_remapped_dscp():
    [qos] = mlnx_qos.parse(fixture_text("mlnx_qos_02_pfc5_buffers_custom_dscp2prio.txt"))
    assert qos.interface == "ens4np0"  # from the prompt's command line
    assert qos.receive_buffer_bytes == [19872, 220896, 0, 0, 0, 0, 0, 0] and qos.max_buffer_bytes == 4151520
    assert qos.pfc_enabled == [0, 0, 0, 0, 0, 1, 0, 0] and qos.pfc_buffer == [0, 0, 0, 0, 0, 1, 0, 0]
    assert qos.priority_dscps[5][0] == 40 and qos.priority_dscps[6][0] == 48
    assert (qos.traffic_classes[2].tsa, qos.traffic_classes[2].bw_percent) == ("ets", 80)
    assert qos.traffic_classes[7].tsa == "strict"


def test_mlnx_qos_setup_log_gives_one_result_per_printout():
    text = "+ mlnx_qos -i eth4 --trust dscp\n" + fixture_text("mlnx_qos_01_trust_dscp_pfc3_no_buffer_rows.txt")
    text += "+ sudo cma_roce_tos -d mlx5_2 -t 106\n106\n+ mlnx_qos -i eth4 --pfc 0,0,0,1,0,0,0,0\n"
    text += fixture_text("mlnx_qos_01_trust_dscp_pfc3_no_buffer_rows.txt")
    results = mlnx_qos.parse(text)
    assert [r.interface for r in results] == ["eth4", "eth4"]
    assert all(r.pfc_enabled == [0, 0, 0, 1, 0, 0, 0, 0] for r in results)


@pytest.mark.parametrize(
    ("bad", "line"),
    [
        ("        enabled     0   0   0   2   0   0   0   0", "0 or 1 per priority"),
        ("        enabled     0   0   0   1   0   0   0", "8, one per priority"),
        ("        prio:3 dscp:31,30,99,", "DSCP values from 0 to 63"),
    ],
)
def test_mlnx_qos_refuses_a_garbled_table_naming_its_line(bad, line):
    text = fixture_text("mlnx_qos_02_pfc5_buffers_custom_dscp2prio.txt")
    target = "        enabled     0   0   0   0   0   1   0   0   " if "enabled" in bad else \
        "        prio:3 dscp:31,30,29,28,27,26,25,24,"
    with pytest.raises(ParseError) as refused:
        mlnx_qos.parse(text.replace(target, bad))
    assert line in str(refused.value) and refused.value.line_no > 1


def test_ethtool_stats_reads_a_full_mlx5_dump():
    [stats] = ethtool_stats.parse(fixture_text("ethtool_S_01_mlx5_xdp_drop_discards_pause_nonzero_only.txt"))
    assert stats.counters["rx_discards_phy"] == 58591428329
    assert stats.counters["tx_pause_ctrl_phy"] == 5745055 and stats.counters["rx_prio0_discards"] == 58591314012
    assert stats.counters["rx0_xdp_tx_cqes"] == 87229139 and len(stats.counters) == 101


def test_ethtool_stats_reads_grep_filtered_lines():
    [stats] = ethtool_stats.parse(fixture_text("ethtool_S_02_grep_phy_and_prio_discards_zero.txt"))
    assert stats.counters == {
        "rx_crc_errors_phy": 0, "rx_discards_phy": 0, "tx_discards_phy": 0,
        **{f"rx_prio{p}_discards": 0 for p in range(8)}, "tx_queue_dropped": 0,
    }


def test_ethtool_stats_of_a_loop_names_each_interface():
    one = fixture_text("ethtool_S_02_grep_phy_and_prio_discards_zero.txt")
    text = f"===== mlx5_0 eth0 =====\n{one}===== mlx5_1 eth1 =====\n{one}"
    assert [s.interface for s in ethtool_stats.parse(text)] == ["eth0", "eth1"]
    text = f"$ ethtool -S eth3\nNIC statistics:\n{one}"
    assert ethtool_stats.parse(text)[0].interface == "eth3"


def test_ethtool_stats_refuses_an_annotated_paste():
    text = "NIC statistics:\n     rx_prio3_pause: 14                  <- PFC pauses on RDMA priority class\n"
    with pytest.raises(ParseError) as refused:
        ethtool_stats.parse(text)
    assert refused.value.line_no == 2 and "not a whole number" in str(refused.value)
    with pytest.raises(ParseError):
        ethtool_stats.parse("no counters here\n")


def test_nvue_switch_profile_lossless():
    [qos] = nvue_qos.parse(fixture_text("nvue_show_qos_roce_01_lossless_single_ipool.txt"))
    assert (qos.interface, qos.mode, qos.pfc_priority, qos.pfc_rx, qos.pfc_tx) == (
        None, "lossless-single-ipool", 3, "enabled", "enabled")
    assert qos.congestion_mode == "ECN" and qos.ecn_traffic_classes == [0, 3]
    assert qos.trust_modes == ["pcp", "dscp"]
    assert qos.dscp_to_priority["26"] == 3 and qos.priority_to_tc["3"] == 3 and qos.priority_to_tc["6"] == 6
    assert qos.settings["state"] == {"operational": "", "applied": "enabled"}
    assert qos.tables["Exception List"] == []


def test_nvue_lossy_profile_with_rows_out_of_line_with_their_ruler():
    [qos] = nvue_qos.parse(fixture_text("nvue_show_qos_roce_02_lossy_multi_tc_no_pfc.txt"))
    assert qos.mode == "lossy-multi-tc" and qos.pfc_priority is None  # "-": no PFC
    assert qos.dscp_to_priority["0"] == 0 and qos.dscp_to_priority["63"] == 0  # the row printed out of line
    assert qos.dscp_to_priority["26"] == 4
    assert "Extended Features" in qos.tables


def test_nvue_interface_status_names_its_port():
    [qos] = nvue_qos.parse(fixture_text("nvue_show_interface_qos_roce_status_01_swp16.txt"))
    assert (qos.interface, qos.mode, qos.pfc_priority, qos.pfc_rx) == ("swp16", "lossless", 3, "yes")
    assert qos.congestion_mode == "ecn, absolute" and qos.dscp_to_priority == {"48": 6, "26": 3}
    assert qos.tables["RoCE Pool Status"][1]["current-usage"] == "7.30 MB"


def test_nvue_refuses_a_tree_with_a_mangled_setting_name():
    text = fixture_text("nvue_show_interface_qos_roce_status_01_swp16.txt").replace("  pfc-priority", "  pfc priority")
    with pytest.raises(ParseError):
        nvue_qos.parse(text)


def test_the_simulated_outputs_read_as_the_real_ones():
    """What the simulated runner prints goes through the same parsers, with the values it means."""
    [qos] = parse(mlnx_qos_text())
    assert qos.tool == "mlnx_qos" and qos.pfc_enabled == [0, 0, 0, 1, 0, 0, 0, 0] and qos.pfc_buffer[3] == 1
    assert 26 in qos.priority_dscps[3]
    import random

    from validation.runners.simulated import SimRail

    [stats] = parse(ethtool_stats_text(SimRail(0, "mlx5_0", "eth0", ethernet=True, netdev="eth0"), random.Random(1)))
    assert stats.tool == "ethtool_stats" and stats.counters["rx_prio3_discards"] == 0


def test_ecn_probe_reader():
    command = commands.ecn_command("eth3", 3)
    assert command == "grep -H . /sys/class/net/eth3/ecn/roce_np/enable/3 /sys/class/net/eth3/ecn/roce_rp/enable/3"
    text = "/sys/class/net/eth3/ecn/roce_np/enable/3:1\n/sys/class/net/eth3/ecn/roce_rp/enable/3:0\n"
    assert commands.read_ecn(text) == {"np": 1, "rp": 0}
    with pytest.raises(ParseError):
        commands.read_ecn("grep: /sys/class/net/eth3/ecn: No such file or directory\n")


def test_roce_commands_quote_what_comes_from_the_inventory():
    assert commands.mlnx_qos_command("eth0; reboot") == "mlnx_qos -i 'eth0; reboot'"
    assert commands.ethtool_stats_command("stor0") == "ethtool -S stor0"
    pair = commands.ib_write_bw_commands(rdma_device="mlx5_2", server_host="b", rail=2, gpu_index=2, gid_index=3,
                                         traffic_class=106)
    assert "-x 3 --tclass 106" in pair.server_command and pair.client_command.endswith(" b")
    cm = commands.ib_write_bw_commands(rdma_device="mlx5_2", server_host="b", rail=2, gpu_index=2, gid_index=3,
                                       traffic_class=98, rdma_cm=True)
    assert "-x 3 -R --tos 98" in cm.server_command
    plain = commands.ib_write_bw_commands(rdma_device="mlx5_2", server_host="b", rail=2, gpu_index=None)
    assert "-x" not in plain.client_command and "-R" not in plain.client_command


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        (ethtool_stats.parse, "== " + "-" * 1_000_000 + "x"),  # a banner that never closes
        (ethtool_stats.parse, "NIC statistics:\nrx_x: 1" + " " * 1_000_000 + "y"),  # a counter padded with spaces
        (mlnx_qos.parse, "mlnx_qos " * 200_000),  # the command's name over and over, no interface
        (nvue_qos.parse, "nv show qos roce " + "-" * 1_000_000),
    ],
)
def test_a_megabyte_line_is_refused_in_one_pass(parser, text):
    """Patterns that backtracked took hours on one long line (a 40,000-character one took 15 s; an upload may
    be 20 MB). One pass refuses these in milliseconds; a pattern that backtracks again would keep this test
    running for hours, which no run of the suite survives."""
    with pytest.raises(ParseError):
        parser(text)
