"""Acceptance criteria: real parser output from tests/fixtures/tool-outputs, and hand-built values at
every threshold's boundary. Pure Python: no database."""

import dataclasses

import pytest

from validation import criteria
from validation.criteria import LinkPlan, Outcome, Profile, evaluate_bandwidth, evaluate_link, evaluate_nccl
from validation.parsers import mlxlink, nccl, perftest

from .conftest import fixture_text

PROFILE = Profile()
XDR = LinkPlan(speed="IB-XDR", width="4x")


def healthy_link(**overrides) -> dict:
    """An mlxlink result as `parse_output --json` gives it, for a healthy 800G XDR optical link."""
    link = {
        "tool": "mlxlink",
        "device": "mlx5_0",
        "state": "Active",
        "physical_state": "LinkUp",
        "speed": "IB-XDR",
        "width": "4x",
        "fec": "RS-FEC",
        "module": {
            "vendor": "NVIDIA",
            "part_number": "980-9I693-00NS00",
            "serial": "MT1",
            "is_passive_copper": False,
            "temperature_c": 48.0,
            "voltage_mv": 3280.0,
            "rx_power_dbm": [1.0, 0.8, 1.2, 0.9],
            "tx_power_dbm": [1.5, 1.4, 1.6, 1.5],
            "ranges": {
                "temperature_c": [-5, 75],
                "voltage_mv": [2970, 3630],
                "rx_power_dbm": [-10.4, 5],
                "tx_power_dbm": [-6.4, 5],
            },
        },
        "counters": {
            "symbol_errors": 0,
            "symbol_ber": 1.5e-254,
            "effective_physical_errors": 0,
            "effective_ber": 1.5e-254,
            "raw_ber": 3e-10,
            "link_down": 0,
            "link_error_recovery": 0,
        },
    }
    for key, value in overrides.items():
        section, _, field = key.partition("__")
        if field:
            link[section] = {**link[section], field: value}
        else:
            link[key] = value
    return link


def texts(verdict):
    return [r.text for r in verdict.reasons if r.level != Outcome.PASS]


# -- the profile and the choices agree ----------------------------------------------------------------


def test_outcome_values_are_the_verdict_choices():
    from validation.choices import Verdict

    assert {o.value for o in Outcome} == set(Verdict.values)


def test_model_defaults_are_the_profile_defaults():
    from validation.models import AcceptanceProfile

    assert AcceptanceProfile().as_criteria() == Profile()


def test_default_profile_follows_the_domain_figures():
    assert PROFILE.effective_ber_fail == 1e-12
    assert PROFILE.symbol_ber_fail == 1e-15
    assert PROFILE.gpu_rdma_fail_fraction == 0.95
    assert PROFILE.cpu_bw_fail_gbps == 440
    assert PROFILE.effective_ber_warn < PROFILE.effective_ber_fail


# -- links: real mlxlink output -----------------------------------------------------------------------


def test_hdr_2x_loop_from_fixture_matches_its_own_width_but_lacks_ber_counters():
    results = mlxlink.parse(fixture_text("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt"))
    assert len(results) == 8
    plan = criteria.link_plan(speed_gbps=100, lanes=2, infiniband=True)
    assert plan == LinkPlan(speed="IB-HDR", width="2x")
    for result in results:
        verdict = evaluate_link(result, plan=plan, profile=PROFILE)
        assert verdict.outcome == Outcome.WARN  # captured without -c: no BER to judge
        assert texts(verdict) == [
            "effective BER not reported (run mlxlink with -c)",
            "symbol BER not reported (run mlxlink with -c)",
            # ... nor -m: no Module Info says nothing about the cable, so it is not taken for a DAC
            "no DOM reported (run mlxlink with -m; a passive cable says so itself)",
        ]


def test_hdr_2x_link_planned_at_4x_fails_on_width():
    result = mlxlink.parse(fixture_text("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt"))[0]
    verdict = evaluate_link(
        result, plan=criteria.link_plan(speed_gbps=200, lanes=4, infiniband=True), profile=PROFILE
    )
    assert verdict.outcome == Outcome.FAIL
    assert "width 2x, planned 4x" in texts(verdict)


def test_passive_dac_reporting_no_dom_is_not_a_failure():
    result = mlxlink.parse(fixture_text("mlxlink_01_show_module_ndr_dac.txt"))[0]
    plan = criteria.link_plan(speed_gbps=400, lanes=4, infiniband=True)
    verdict = evaluate_link(result, plan=plan, profile=PROFILE)
    assert Outcome.FAIL not in {r.level for r in verdict.reasons}
    assert criteria.Reason(Outcome.PASS, "passive copper cable: no DOM to check") in verdict.reasons


def test_a_module_that_reports_nothing_is_not_taken_for_passive_copper():
    # mlxlink without -m (or a module that did not answer): the parser's empty module, every value null.
    empty = mlxlink.MlxlinkModule()
    assert not criteria.is_passive_copper(criteria.as_dict(empty))
    verdict = evaluate_link(healthy_link(module=criteria.as_dict(empty)), plan=XDR, profile=PROFILE)
    assert verdict.outcome == Outcome.WARN
    assert texts(verdict) == ["no DOM reported (run mlxlink with -m; a passive cable says so itself)"]
    assert texts(evaluate_link(healthy_link(module=None), plan=XDR, profile=PROFILE)) == texts(verdict)
    # Zeros alone do not make a DAC either: the module must give [0..0] ranges too.
    zeros = {"temperature_c": 0, "rx_power_dbm": [0, 0], "tx_power_dbm": [0, 0], "ranges": {}}
    assert not criteria.is_passive_copper(zeros)


def test_zero_dom_with_zero_ranges_is_recognised_as_passive_even_without_a_cable_type():
    module = {
        "temperature_c": 0,
        "rx_power_dbm": [0, 0],
        "tx_power_dbm": [0, 0],
        "ranges": {"temperature_c": [0, 0]},
    }
    assert criteria.is_passive_copper(module)
    assert not criteria.is_passive_copper(healthy_link()["module"])


# -- links: boundaries ---------------------------------------------------------------------------------


def test_healthy_link_passes_with_no_problems():
    verdict = evaluate_link(healthy_link(), plan=XDR, profile=PROFILE)
    assert verdict.outcome == Outcome.PASS
    assert texts(verdict) == []


@pytest.mark.parametrize(
    ("ber", "outcome"),
    [
        (1e-12, Outcome.WARN),
        (1.01e-12, Outcome.FAIL),
        (1e-13, Outcome.PASS),
        (1.1e-13, Outcome.WARN),
        (0, Outcome.PASS),
    ],
)
def test_effective_ber_boundaries(ber, outcome):
    verdict = evaluate_link(healthy_link(counters__effective_ber=ber), plan=XDR, profile=PROFILE)
    assert verdict.outcome == outcome


def test_effective_ber_reason_names_value_and_level():
    verdict = evaluate_link(healthy_link(counters__effective_ber=3.2e-10), plan=XDR, profile=PROFILE)
    assert texts(verdict) == ["effective BER 3.2e-10 > fail level 1e-12"]


@pytest.mark.parametrize(
    ("ber", "outcome", "text"),
    [
        (1e-15, Outcome.WARN, "symbol BER 1e-15 > warn level 1e-16"),
        (2e-15, Outcome.FAIL, "symbol BER 2e-15 > fail level 1e-15"),
        (1e-16, Outcome.PASS, None),
    ],
)
def test_symbol_ber_boundaries(ber, outcome, text):
    verdict = evaluate_link(healthy_link(counters__symbol_ber=ber), plan=XDR, profile=PROFILE)
    assert verdict.outcome == outcome
    assert texts(verdict) == ([text] if text else [])


def test_configured_ber_levels_are_used():
    strict = dataclasses.replace(PROFILE, effective_ber_warn=1e-16, effective_ber_fail=1e-15)
    verdict = evaluate_link(healthy_link(counters__effective_ber=2e-15), plan=XDR, profile=strict)
    assert texts(verdict) == ["effective BER 2e-15 > fail level 1e-15"]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"state": "Down"}, "link state Down, expected Active"),
        ({"physical_state": "Polling"}, "physical state Polling, expected LinkUp"),
        ({"speed": "IB-NDR"}, "speed IB-NDR, planned IB-XDR"),
        ({"width": "2x"}, "width 2x, planned 4x"),
    ],
)
def test_link_state_speed_and_width_against_the_plan(overrides, expected):
    verdict = evaluate_link(healthy_link(**overrides), plan=XDR, profile=PROFILE)
    assert verdict.outcome == Outcome.FAIL
    assert expected in texts(verdict)


def test_counters_growing_since_the_previous_reading_fail():
    baseline = {"symbol_errors": 0, "link_down": 1, "link_error_recovery": 2}
    link = healthy_link(counters__symbol_errors=12, counters__link_down=1, counters__link_error_recovery=3)
    verdict = evaluate_link(link, plan=XDR, profile=PROFILE, baseline=baseline)
    assert texts(verdict) == [
        "symbol errors grew from 0 to 12",
        "link error recovery counter grew from 2 to 3",
    ]


def test_counters_cleared_since_the_previous_reading_are_not_growth():
    verdict = evaluate_link(
        healthy_link(counters__link_down=0), plan=XDR, profile=PROFILE, baseline={"link_down": 5}
    )
    assert verdict.outcome == Outcome.PASS


@pytest.mark.parametrize(
    ("rx", "outcome"),
    [
        (-10.4, Outcome.WARN),
        (-10.41, Outcome.FAIL),
        (-9.4, Outcome.PASS),
        (-9.41, Outcome.WARN),
        (4.0, Outcome.PASS),
        (4.01, Outcome.WARN),
        (5.01, Outcome.FAIL),
    ],
)
def test_rx_power_against_the_modules_own_limits(rx, outcome):
    verdict = evaluate_link(healthy_link(module__rx_power_dbm=[1.0, rx, 1.0, 1.0]), plan=XDR, profile=PROFILE)
    assert verdict.outcome == outcome


def test_low_rx_power_reason_names_lane_value_and_limit():
    verdict = evaluate_link(
        healthy_link(module__rx_power_dbm=[1.0, -12.3, 1.0, 1.0]), plan=XDR, profile=PROFILE
    )
    assert texts(verdict) == ["Rx power lane 1 -12.3 dBm < module low limit -10.4 dBm"]


def test_hot_module_warns_near_and_fails_beyond_its_limit():
    near = evaluate_link(healthy_link(module__temperature_c=71), plan=XDR, profile=PROFILE)
    assert texts(near) == ["module temperature 71 C within 5 C of module high limit 75 C"]
    beyond = evaluate_link(healthy_link(module__temperature_c=76), plan=XDR, profile=PROFILE)
    assert texts(beyond) == ["module temperature 76 C > module high limit 75 C"]


def test_dom_check_can_be_switched_off():
    profile = dataclasses.replace(PROFILE, check_dom=False)
    verdict = evaluate_link(
        healthy_link(module__rx_power_dbm=[-20, -20, -20, -20]), plan=XDR, profile=profile
    )
    assert verdict.outcome == Outcome.PASS


def test_link_plan_from_port_speed_and_lanes():
    assert criteria.link_plan(speed_gbps=800, lanes=4, infiniband=True) == XDR
    assert criteria.link_plan(speed_gbps=400, lanes=None, infiniband=True) == LinkPlan("IB-NDR", "4x")
    assert criteria.link_plan(speed_gbps=200, lanes=2, infiniband=True) == LinkPlan("IB-NDR", "2x")
    assert criteria.link_plan(speed_gbps=400, lanes=None, infiniband=False) == LinkPlan("400G", None)


def test_breakout_port_plan_comes_from_the_port_and_its_child_ports_not_their_number():
    two_planes = criteria.port_link_plan(speed_gbps=800, breakout=[("ib0/0", 400), ("ib0/1", 400)])
    assert (two_planes.speed, two_planes.width) == ("IB-XDR", "4x")  # was width 2x, speed None
    assert two_planes.lane_ports == ("ib0/0", "ib0/0", "ib0/1", "ib0/1") and two_planes.problems == ()
    four_planes = criteria.port_link_plan(speed_gbps=800, breakout=[(f"ib0/{k}", 200) for k in range(4)])
    assert (four_planes.speed, four_planes.width) == ("IB-XDR", "4x")
    assert four_planes.lane_ports == ("ib0/0", "ib0/1", "ib0/2", "ib0/3")
    assert criteria.port_link_plan(speed_gbps=400) == LinkPlan("IB-NDR", "4x")
    assert criteria.LinkPlan.from_dict(two_planes.as_dict()) == two_planes


def test_each_child_port_is_checked_against_the_port():
    odd = criteria.port_link_plan(speed_gbps=800, breakout=[("ib0/0", 400), ("ib0/1", 300)])
    assert odd.lane_ports == ()
    assert odd.problems == (
        "port ib0/1 at 300 Gb/s is not a whole number of the port's 200 Gb/s lanes",
        "the breakout ports (400 + 300 Gb/s) do not add up to the port's 800 Gb/s",
    )
    verdict = evaluate_link(healthy_link(), plan=odd, profile=PROFILE)
    assert verdict.outcome == Outcome.WARN and texts(verdict)[0].startswith("inventory: port ib0/1 at 300 Gb/s")


def test_a_bad_lane_names_the_breakout_port_it_carries():
    plan = criteria.port_link_plan(speed_gbps=800, breakout=[("ib0/0", 400), ("ib0/1", 400)])
    verdict = evaluate_link(healthy_link(module__rx_power_dbm=[1.0, 0.8, -12.0, 0.9]), plan=plan, profile=PROFILE)
    assert texts(verdict) == ["Rx power lane 2 (ib0/1) -12 dBm < module low limit -10.4 dBm"]


# -- bandwidth -----------------------------------------------------------------------------------------


def test_ndr_cpu_path_fixture_below_the_xdr_threshold_fails():
    result = perftest.parse(fixture_text("ib_write_bw_01_ndr_gbits.txt"))[0]
    verdict = evaluate_bandwidth(result, gpu=False, line_rate_gbps=400, profile=PROFILE)
    assert texts(verdict) == ["CPU-path bandwidth 392.34 Gb/s < fail level 440 Gb/s"]


def test_ndr_fixture_as_gpu_path_on_a_400g_link_passes():
    result = perftest.parse(fixture_text("ib_write_bw_01_ndr_gbits.txt"))[0]
    assert evaluate_bandwidth(result, gpu=True, line_rate_gbps=400, profile=PROFILE).outcome == Outcome.PASS


def test_cuda_fixture_on_a_200g_link_fails_with_the_share_of_line_rate():
    result = perftest.parse(fixture_text("ib_write_bw_02_use_cuda_roce_16qp_duration.txt"))[0]
    assert result.use_cuda
    verdict = evaluate_bandwidth(result, gpu=True, line_rate_gbps=200, profile=PROFILE)
    assert texts(verdict) == [
        "GPU RDMA write 181.46 Gb/s = 90.7% of 200 Gb/s line rate < fail level 95% (190 Gb/s)"
    ]


def test_bandwidth_uses_the_largest_message_size():
    result = {
        "rows": [
            {"bytes": 65536, "bw_avg_gbps": 300.0},
            {"bytes": 1 << 20, "bw_avg_gbps": 460.0},
            {"bytes": 4096, "bw_avg_gbps": 10.0},
        ]
    }
    assert criteria.measured_bandwidth(result) == 460.0


@pytest.mark.parametrize(
    ("bw", "outcome"),
    [(776.0, Outcome.PASS), (775.99, Outcome.WARN), (760.0, Outcome.WARN), (759.99, Outcome.FAIL)],
)
def test_gpu_rdma_boundaries_at_95_and_97_percent_of_800g(bw, outcome):
    verdict = evaluate_bandwidth(
        {"rows": [{"bytes": 65536, "bw_avg_gbps": bw}]}, gpu=True, line_rate_gbps=800, profile=PROFILE
    )
    assert verdict.outcome == outcome


@pytest.mark.parametrize(
    ("bw", "outcome"),
    [(445.0, Outcome.PASS), (444.99, Outcome.WARN), (440.0, Outcome.WARN), (439.99, Outcome.FAIL)],
)
def test_cpu_path_boundaries(bw, outcome):
    verdict = evaluate_bandwidth(
        {"rows": [{"bytes": 65536, "bw_avg_gbps": bw}]}, gpu=False, line_rate_gbps=800, profile=PROFILE
    )
    assert verdict.outcome == outcome


def test_bandwidth_without_rows_could_not_be_measured():
    verdict = evaluate_bandwidth({"rows": []}, gpu=True, line_rate_gbps=800, profile=PROFILE)
    assert verdict.outcome == Outcome.ERROR


def test_slow_outliers_against_the_median():
    median, slow = criteria.slow_outliers({"a": 780.0, "b": 786.0, "c": 470.0, "d": 787.0, "e": 707.0}, 0.9)
    assert median == 780.0
    assert slow == {"c": 470.0}  # 707 is just above 90% of 780 (702)


# -- NCCL ----------------------------------------------------------------------------------------------


def test_nccl_fixture_with_wrong_values_and_out_of_bounds_fails():
    result = nccl.parse(fixture_text("nccl_allreduce_03_wrong_failed.txt"))[0]
    verdict = evaluate_nccl(result, profile=PROFILE)
    assert verdict.outcome == Outcome.FAIL
    assert texts(verdict) == [
        "wrong values at 1 MiB (out-of-place 96, in-place 32); expected 0",
        "out-of-bounds values 4, expected 0 OK",
        "bus bandwidth 22.87 GB/s at 128 MiB < fail level 780 GB/s",
    ]


def test_aborted_nccl_run_fails_with_its_message():
    result = nccl.parse(fixture_text("nccl_allreduce_04_cuda_busy_abort.txt"))[0]
    verdict = evaluate_nccl(result, profile=PROFILE)
    assert verdict.outcome == Outcome.FAIL
    assert texts(verdict) == [
        "NCCL test aborted: gpu-1-1: Test CUDA failure common.cu:1304 "
        "'CUDA-capable device(s) is/are busy or unavailable'"
    ]


@pytest.mark.parametrize(
    ("fail", "warn", "outcome"),
    [(230, 235, Outcome.WARN), (235.27, 240, Outcome.FAIL), (200, 235.26, Outcome.WARN)],
)
def test_nccl_bus_bandwidth_at_the_largest_size(fail, warn, outcome):
    result = nccl.parse(fixture_text("nccl_allreduce_01.txt"))[0]  # 235.26 GB/s out-of-place at 8 GiB
    profile = dataclasses.replace(PROFILE, nccl_busbw_fail_gbs=fail, nccl_busbw_warn_gbs=warn)
    verdict = evaluate_nccl(result, profile=profile)
    assert verdict.outcome == outcome
    assert "values were not validated (wrong-value column N/A: run with -c 1)" in texts(verdict)


def test_nccl_clean_run_above_the_figure_passes():
    rows = [
        {
            "size_bytes": 1 << 34,
            "out_of_place": {"busbw_gbps": 821.5, "wrong": 0},
            "in_place": {"busbw_gbps": 820.9, "wrong": 0},
        }
    ]
    verdict = evaluate_nccl({"rows": rows, "out_of_bounds": 0, "failed": False}, profile=PROFILE)
    assert verdict.outcome == Outcome.PASS
    rows[0]["out_of_place"]["busbw_gbps"] = 779.99
    assert texts(evaluate_nccl({"rows": rows, "out_of_bounds": 0}, profile=PROFILE)) == [
        "bus bandwidth 779.99 GB/s at 16 GiB < fail level 780 GB/s"
    ]


OLD_LAYOUT_WITH_ERRORS = """\
# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144   float     sum    72.95   14.37   12.58  1e-07    73.07   14.35   12.56  2e-07
     2097152        524288   {type}     sum    77.28   27.14   23.75  {error}    75.84   27.65   24.20  2e-07
# Out of bounds values : {oob}
# Avg bus bandwidth    : 18.27
"""


def _old_nccl(*, error="2e-07", oob="0 OK", type="float"):
    text = OLD_LAYOUT_WITH_ERRORS.format(error=error, oob=oob, type=type)
    if oob is None:
        text = "\n".join(line for line in text.splitlines() if "Out of bounds" not in line) + "\n"
    [result] = nccl.parse(text)
    return result


def test_old_nccl_error_column_is_a_deviation_not_a_count_of_wrong_values():
    # A healthy old build prints its largest deviation, 1e-07 or 2e-07: no wrong values at all.
    profile = dataclasses.replace(PROFILE, nccl_busbw_fail_gbs=10, nccl_busbw_warn_gbs=20)
    healthy = _old_nccl()
    assert healthy.wrong_column == "error" and healthy.rows[0].out_of_place.wrong == 1e-07
    verdict = evaluate_nccl(healthy, profile=profile)
    assert verdict.outcome == Outcome.PASS, texts(verdict)
    # The same, as parse_output --json stores it (a dict), judges alike.
    assert evaluate_nccl(healthy.to_dict(), profile=profile).outcome == Outcome.PASS


def test_old_nccl_run_is_judged_by_its_out_of_bounds_trailer_and_the_type_tolerance():
    profile = dataclasses.replace(PROFILE, nccl_busbw_fail_gbs=10, nccl_busbw_warn_gbs=20)
    failed = evaluate_nccl(_old_nccl(error="0.25", oob="1 FAILED"), profile=profile)
    assert texts(failed) == [
        "largest error 0.25 at 2 MiB (out-of-place, float) > tolerance 1e-5",
        "out-of-bounds values 1, expected 0 OK",
    ]
    # A log cut before the trailer is still judged, by nccl-tests' own tolerance for the data type.
    cut = evaluate_nccl(_old_nccl(error="0.25", oob=None), profile=profile)
    assert cut.outcome == Outcome.FAIL and texts(cut)[0].startswith("largest error 0.25 at 2 MiB")
    # Half precision tolerates more; integers nothing.
    assert evaluate_nccl(_old_nccl(error="0.01", type="half"), profile=profile).outcome == Outcome.PASS
    assert evaluate_nccl(_old_nccl(error="1", type="int32"), profile=profile).outcome == Outcome.FAIL


def test_a_wrong_count_stored_without_its_column_kind_is_still_a_count():
    rows = [{"size_bytes": 1 << 20, "out_of_place": {"busbw_gbps": 900, "wrong": 3}, "in_place": None}]
    verdict = evaluate_nccl({"rows": rows, "out_of_bounds": 0}, profile=PROFILE)
    assert texts(verdict) == ["wrong values at 1 MiB (out-of-place 3); expected 0"]


def test_nccl_curve_points():
    result = nccl.parse(fixture_text("nccl_allreduce_02.txt"))[0]
    curve = criteria.nccl_curve(result)
    assert len(curve) == len(result.rows)
    assert curve[-1]["size_bytes"] == result.rows[-1].size_bytes


# -- versions ------------------------------------------------------------------------------------------


def test_versions_against_the_pinned_set():
    verdict = criteria.evaluate_versions(
        {"gpu_driver": "570.86.15", "ofed": "OFED-25.04"},
        expected={"gpu_driver": "580.65.06", "ofed": "OFED-25.04", "nccl": "2.27"},
        source="pinned",
    )
    assert texts(verdict) == ["gpu_driver 570.86.15 != pinned 580.65.06", "nccl not reported, pinned 2.27"]


def test_majority_versions():
    majority = criteria.majority_versions([{"fw": "40.45"}, {"fw": "40.44"}, {"fw": "40.45"}])
    assert majority == {"fw": "40.45"}


def test_verdict_of_picks_the_worst_and_keeps_notes():
    verdict = criteria.Verdict.of(
        [
            criteria.Reason(Outcome.PASS, "note"),
            criteria.Reason(Outcome.WARN, "w"),
            criteria.Reason(Outcome.ERROR, "e"),
            criteria.Reason(Outcome.FAIL, "f"),
        ]
    )
    assert verdict.outcome == Outcome.FAIL
    assert verdict.reasons_json()[0] == {"level": "pass", "text": "note"}
    assert criteria.Verdict.of([]).outcome == Outcome.PASS


def test_formatting_helpers():
    assert criteria.fmt_sci(1e-12) == "1e-12"
    assert criteria.fmt_sci(3.2e-10) == "3.2e-10"
    assert criteria.fmt_num(440.0) == "440"
    assert criteria.fmt_bytes(1 << 34) == "16 GiB"
    assert criteria.fmt_bytes(1000) == "1000 B"
