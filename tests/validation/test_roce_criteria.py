"""Criteria for RoCE ports, on real outputs: an Ethernet port's mlxlink report (speed as Ethernet, raw BER by
lane rate), its NIC counters (ethtool -S), and the lossless configuration of a host (mlnx_qos + ECN) and of a
switch (NVUE). Pure Python: no database."""

from __future__ import annotations

import pytest

from validation import criteria
from validation.criteria import Outcome, Profile, RoceSettings
from validation.parsers import ethtool_stats, mlnx_qos, mlxlink, nvue_qos

from .conftest import fixture_text

PROFILE = Profile()
ROCE = RoceSettings()


def eth_plan(speed_gbps: int) -> criteria.LinkPlan:
    return criteria.port_link_plan(speed_gbps=speed_gbps, infiniband=False)


def texts(verdict) -> list[str]:
    return [r.text for r in verdict.reasons]


# --- mlxlink on Ethernet ports ----------------------------------------------------------------------


@pytest.mark.parametrize(("printed", "gbps"), [("100G", 100), ("100GbE", 100), ("400G_4X", 400), ("IB-NDR", None),
                                               ("N/A", None), (None, None)])
def test_ethernet_speed_as_mlxlink_prints_it(printed, gbps):
    assert criteria.ethernet_speed_gbps(printed) == gbps


def test_a_healthy_100g_ethernet_port_passes_its_plan():
    """BlueField-3 port at 100G over a passive DAC (MFT 4.30): no symbol BER printed, and none asked for."""
    reading = mlxlink.parse(fixture_text("mlxlink_04_bf3_100g_dac_two_ports_mft_4.30.txt"))[0]
    verdict = criteria.evaluate_link(reading, plan=eth_plan(100), profile=PROFILE)
    assert verdict.outcome == Outcome.PASS, texts(verdict)
    assert texts(verdict) == ["passive copper cable: no DOM to check"]


def test_an_ethernet_port_below_its_planned_speed_fails():
    reading = mlxlink.parse(fixture_text("mlxlink_04_bf3_100g_dac_two_ports_mft_4.30.txt"))[0]
    verdict = criteria.evaluate_link(reading, plan=eth_plan(400), profile=PROFILE)
    assert verdict.outcome == Outcome.FAIL and "speed 100G, planned 400G" in texts(verdict)


def test_older_mft_speed_spelling_matches_the_plan():
    reading = mlxlink.parse(fixture_text("mlxlink_05_cx4_100gbe_eth_counters_forum_collapsed.txt"))[0]
    verdict = criteria.evaluate_link(reading, plan=eth_plan(100), profile=PROFILE)
    assert not any("speed" in t for t in texts(verdict))
    assert not any("symbol BER" in t for t in texts(verdict))
    # The same reading held to an InfiniBand plan asks for the symbol BER it lacks: IB is unchanged.
    ib = criteria.evaluate_link(reading, plan=criteria.port_link_plan(speed_gbps=400), profile=PROFILE)
    assert "symbol BER not reported (run mlxlink with -c)" in texts(ib)


def test_stored_plans_from_before_ethernet_read_as_infiniband():
    assert criteria.LinkPlan.from_dict({"speed": "IB-XDR", "width": "4x"}).ethernet is False
    plan = eth_plan(800)
    assert criteria.LinkPlan.from_dict(plan.as_dict()) == plan and plan.speed_gbps == 800


@pytest.mark.parametrize(
    ("speed", "raw_ber", "outcome"),
    [
        (400, 3e-7, Outcome.PASS),  # a healthy PAM4 optic
        (400, 5e-5, Outcome.WARN),  # drifting towards the FEC's limit
        (400, 3e-4, Outcome.FAIL),  # beyond what RS(544,514) corrects
        (800, 3e-4, Outcome.FAIL),
        (100, 3e-4, Outcome.PASS),  # 4 x 25G NRZ lanes: judged by the effective BER only
    ],
)
def test_raw_ber_is_held_to_the_lane_rate_of_the_port(speed, raw_ber, outcome):
    reasons = criteria.raw_ber_reasons({"raw_ber": raw_ber}, eth_plan(speed))
    assert criteria.Verdict.of(reasons).outcome == outcome


# --- NIC counters (ethtool -S) -----------------------------------------------------------------------


def test_a_port_that_drops_received_packets_is_flagged():
    """The XDP benchmark's port: billions of rx_discards_phy and 802.3x global pauses."""
    [stats] = ethtool_stats.parse(fixture_text("ethtool_S_01_mlx5_xdp_drop_discards_pause_nonzero_only.txt"))
    reasons = criteria.port_counter_reasons(stats.counters, settings=ROCE, profile=PROFILE)
    assert {r.level for r in reasons} == {Outcome.WARN}
    joined = " | ".join(r.text for r in reasons)
    assert "58591428329 received packets discarded (rx_discards_phy)" in joined
    assert "global pause frames (802.3x flow control)" in joined
    # Priority 0 dropped 58 billion packets: lossy there; were it the lossless priority, that fails.
    lossless_0 = criteria.port_counter_reasons(stats.counters, settings=RoceSettings(pfc_priority=0), profile=PROFILE)
    assert any(r.level == Outcome.FAIL and "lossless priority 0 discarded 58591314012" in r.text for r in lossless_0)


def test_a_clean_port_says_nothing():
    [stats] = ethtool_stats.parse(fixture_text("ethtool_S_02_grep_phy_and_prio_discards_zero.txt"))
    assert criteria.port_counter_reasons(stats.counters, settings=ROCE, profile=PROFILE) == []


def test_crc_errors_are_held_to_the_profile_ber_as_a_rate():
    few = {"rx_crc_errors_phy": 3, "rx_bytes_phy": 10**15}
    assert [r.level for r in criteria.port_counter_reasons(few, settings=ROCE, profile=PROFILE)] == [Outcome.WARN]
    many = {"rx_crc_errors_phy": 3_000_000, "rx_bytes_phy": 10**12}
    [reason] = criteria.port_counter_reasons(many, settings=ROCE, profile=PROFILE)
    assert reason.level == Outcome.FAIL and "per bit received > fail level 1e-12" in reason.text


def test_pauses_on_a_lossy_priority_and_pause_storms():
    counters = {"rx_prio5_pause": 10, "tx_pause_storm_error_events": 1, "rx_prio3_pause": 999}
    reasons = criteria.port_counter_reasons(counters, settings=ROCE, profile=PROFILE)
    assert [(r.level, r.text) for r in reasons] == [
        (Outcome.FAIL, "1 pause storms (the NIC stopped sending pauses) (tx_pause_storm_error_events)"),
        (Outcome.WARN, "10 pause frames on priority 5, which is not the lossless priority 3"),
    ]


def test_kept_counters_are_the_ones_judged():
    [stats] = ethtool_stats.parse(fixture_text("ethtool_S_01_mlx5_xdp_drop_discards_pause_nonzero_only.txt"))
    kept = criteria.kept_port_counters(stats.counters)
    assert "rx_discards_phy" in kept and "tx_global_pause" in kept and "rx0_xdp_drop" not in kept


# --- lossless configuration ------------------------------------------------------------------------


def test_a_host_lossless_on_priority_3_passes():
    [qos] = mlnx_qos.parse(fixture_text("mlnx_qos_01_trust_dscp_pfc3_no_buffer_rows.txt"))
    verdict = criteria.evaluate_lossless(qos, settings=ROCE, ecn={"np": 1, "rp": 1})
    assert verdict.outcome == Outcome.PASS
    assert texts(verdict) == ["mlnx_qos printed no receive buffers (older driver): buffers not checked"]


def test_a_host_lossless_on_another_priority_fails_against_the_default():
    [qos] = mlnx_qos.parse(fixture_text("mlnx_qos_02_pfc5_buffers_custom_dscp2prio.txt"))
    verdict = criteria.evaluate_lossless(qos, settings=ROCE, ecn={"np": 1, "rp": 1})
    assert texts(verdict) == [
        "PFC off on priority 3, the lossless priority",
        "PFC also on priority 5: only priority 3 should be lossless (a paused lossy class can stall the link)",
    ]


def test_the_same_host_passes_against_its_own_settings_but_not_without_ecn():
    [qos] = mlnx_qos.parse(fixture_text("mlnx_qos_02_pfc5_buffers_custom_dscp2prio.txt"))
    theirs = RoceSettings(pfc_priority=5, dscp=40)
    assert criteria.evaluate_lossless(qos, settings=theirs, ecn={"np": 1, "rp": 1}).outcome == Outcome.PASS
    verdict = criteria.evaluate_lossless(qos, settings=theirs, ecn={"np": 1, "rp": 0})
    assert texts(verdict) == ["ECN reaction point (roce_rp) off on priority 5"]
    unread = criteria.evaluate_lossless(qos, settings=theirs, ecn=None)
    assert unread.outcome == Outcome.WARN


def test_trust_pcp_dscp_mapping_and_an_empty_buffer_fail():
    [qos] = mlnx_qos.parse(fixture_text("mlnx_qos_02_pfc5_buffers_custom_dscp2prio.txt"))
    broken = qos.to_dict() | {"trust": "pcp", "receive_buffer_bytes": [19872, 0, 0, 0, 0, 0, 0, 0]}
    verdict = criteria.evaluate_lossless(broken, settings=RoceSettings(pfc_priority=5, dscp=26), ecn={"np": 1, "rp": 1})
    assert texts(verdict) == [
        "trust state pcp, expected dscp",
        "DSCP 26 maps to priority 3, expected priority 5",
        "lossless priority 5 is in receive buffer 1, which has 0 bytes",
    ]


def test_switch_profiles_and_ports_against_the_settings():
    lossless = nvue_qos.parse(fixture_text("nvue_show_qos_roce_01_lossless_single_ipool.txt"))[0]
    assert criteria.evaluate_switch_lossless(lossless, settings=ROCE).outcome == Outcome.PASS
    port = nvue_qos.parse(fixture_text("nvue_show_interface_qos_roce_status_01_swp16.txt"))[0]
    assert criteria.evaluate_switch_lossless(port, settings=ROCE).outcome == Outcome.PASS
    lossy = nvue_qos.parse(fixture_text("nvue_show_qos_roce_02_lossy_multi_tc_no_pfc.txt"))[0]
    assert texts(criteria.evaluate_switch_lossless(lossy, settings=ROCE)) == [
        "RoCE mode lossy-multi-tc, expected a lossless mode",
        "PFC on switch priority none, expected 3",
        "DSCP 26 maps to switch priority 4, expected 3",
    ]
    # The port's ECN is on traffic classes 0 and 3: a project whose lossless priority rides TC 6 fails there.
    moved = criteria.evaluate_switch_lossless(port, settings=RoceSettings(pfc_priority=6, dscp=48))
    assert "ECN not enabled on traffic class 6, which carries the lossless priority 6" in texts(moved)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"pfc_priority": 8}, "roce.pfc_priority: expected a whole number from 0 to 7"),
        ({"dscp": "26"}, "roce.dscp: expected a whole number from 0 to 63"),
        ({"gid_index": True}, "roce.gid_index"),
        ({"trust": "vlan"}, "roce.trust: expected dscp or pcp"),
        ({"ecn": "yes"}, "roce.ecn: expected true or false"),
        ({"mtu": 4096}, "roce.mtu: not a RoCE setting"),
    ],
)
def test_roce_settings_refuse_bad_values_by_name(overrides, message):
    with pytest.raises(ValueError) as refused:
        RoceSettings.from_dict(overrides)
    assert message in str(refused.value)


def test_roce_settings_round_trip():
    settings = RoceSettings(pfc_priority=5, dscp=40, trust="dscp", ecn=False, gid_index=1, traffic_class=162)
    assert RoceSettings.from_dict(settings.as_dict()) == settings
