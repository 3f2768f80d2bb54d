"""ibstat, ibstatus and perfquery: one result per CA port / per counters block, values typed."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, ibstat, ibstatus, perfquery

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"


def read(name):
    return (FIXTURES / name).read_text()


def test_ibstat_02_twelve_cas_in_file_order_with_down_ports():
    results = ibstat.parse(read("ibstat_02_h100_roce_12hca_some_down_polling.txt"))  # no trailing newline
    assert [r.ca for r in results] == ["mlx5_0", "mlx5_1", "mlx5_10", "mlx5_11"] + [
        f"mlx5_{i}" for i in range(2, 10)
    ]
    by_ca = {r.ca: r for r in results}
    assert (by_ca["mlx5_11"].state, by_ca["mlx5_11"].physical_state, by_ca["mlx5_11"].rate_gbps) == (
        "Down",
        "Polling",
        40,
    )
    assert (by_ca["mlx5_5"].state, by_ca["mlx5_5"].physical_state) == ("Down", "Disabled")
    assert (by_ca["mlx5_0"].ca_type, by_ca["mlx5_0"].firmware_version, by_ca["mlx5_0"].rate_gbps) == (
        "MT4129",
        "28.39.1002",
        400,
    )
    assert by_ca["mlx5_1"].ca_type == "MT4125" and by_ca["mlx5_1"].rate_gbps == 100
    assert (
        by_ca["mlx5_0"].port_guid == "0xa288c2fffeadeab8"
        and by_ca["mlx5_0"].node_guid == "0xa088c20300adeab8"
    )
    assert {r.link_layer for r in results} == {"Ethernet"}
    assert sum(r.state == "Active" for r in results) == 10


def test_ibstat_01_initializing_port_without_ca_type_or_sm():
    [result] = ibstat.parse(read("ibstat_01_initializing_no_sm.txt"))
    assert (result.ca, result.port, result.ca_type) == ("mlx5_0", 1, None)
    assert (result.state, result.physical_state) == ("Initializing", "LinkUp")
    assert (result.base_lid, result.sm_lid, result.lmc, result.rate_gbps) == (65535, 0, 0, 100)
    assert result.firmware_version == "12.20.1010" and result.link_layer == "InfiniBand"


def test_ibstat_errors_name_the_line():
    with pytest.raises(ParseError, match=r"^line 12: base_lid is 'x'"):
        ibstat.parse(read("ibstat_01_initializing_no_sm.txt").replace("Base lid: 65535", "Base lid: x"))
    with pytest.raises(ParseError, match="no CA port found"):
        ibstat.parse("CA 'mlx5_0'\n\tNumber of ports: 1\n")


def test_ibstatus_01_hdr_ports_and_an_ethernet_port():
    results = ibstatus.parse(read("ibstatus_01_azure_a100_hdr_plus_eth.txt"))
    assert [r.device for r in results] == [f"mlx5_{i}" for i in range(9)]
    first = results[0]
    assert (first.port, first.base_lid, first.sm_lid) == (1, 0x33BF, 1)
    assert (first.state, first.state_code, first.physical_state, first.physical_state_code) == (
        "ACTIVE",
        4,
        "LinkUp",
        5,
    )
    assert (first.rate_gbps, first.width, first.speed, first.link_layer) == (200, "4X", "HDR", "InfiniBand")
    assert first.default_gid == "fe80:0000:0000:0000:0015:5dff:fd34:11eb"
    ethernet = results[8]
    assert (ethernet.default_gid, ethernet.link_layer, ethernet.rate_gbps, ethernet.speed) == (
        None,
        "Ethernet",
        40,
        "QDR",
    )


def test_ibstatus_errors_name_the_line():
    text = read("ibstatus_01_azure_a100_hdr_plus_eth.txt").replace("4: ACTIVE", "ACTIVE", 1)
    with pytest.raises(
        ParseError, match=r"^line 5: state 'ACTIVE' is not readable; expected '<code>: <NAME>'"
    ):
        ibstatus.parse(text)


def test_perfquery_01_counters():
    [result] = perfquery.parse(read("perfquery_01_hdr_cx6_port_counters.txt"))
    assert (result.lid, result.port, result.cap_mask, result.extended) == (1, 0, "0x5300", False)
    assert (result.symbol_errors, result.link_down, result.link_error_recovery) == (0, 0, 0)
    assert result.counters["PortRcvSwitchRelayErrors"] == 6
    assert result.counters["PortXmitData"] == 50334712 and result.counters["PortRcvPkts"] == 698925
    assert len(result.counters) == 21


def test_perfquery_loop_over_two_ports_and_a_bad_value():
    text = read("perfquery_01_hdr_cx6_port_counters.txt")
    second = (
        text.split("\n", 1)[1]
        .replace("port 0", "port 2")
        .replace("SymbolErrorCounter:..............0", "SymbolErrorCounter:..............17")
    )
    first_result, second_result = perfquery.parse(text + "\n" + second)
    assert (first_result.symbol_errors, second_result.symbol_errors, second_result.port) == (0, 17, 2)
    with pytest.raises(ParseError, match=r"^line 7: LinkDownedCounter is 'lots'"):
        perfquery.parse(
            text.replace("LinkDownedCounter:...............0", "LinkDownedCounter:...............lots")
        )
