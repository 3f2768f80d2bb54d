"""Node acceptance criteria (validation.criteria_node) on the real samples and at their boundaries."""

import dataclasses
import json
from pathlib import Path

import pytest

from validation import criteria_node as node
from validation.criteria import Outcome
from validation.parsers import dcgmi_diag, gpu_bandwidth, nvidia_smi_q, nvlink, parse, redfish, training_log, xid

FIXTURES = Path(__file__).parent.parent / "fixtures"
NODE = FIXTURES / "node-outputs"
MOCKUP = FIXTURES / "redfish" / "public-rackmount1"
PASS, WARN, FAIL, ERROR = Outcome.PASS, Outcome.WARN, Outcome.FAIL, Outcome.ERROR


def read(name):
    return (NODE / name).read_text()


def problems(verdict, level=None):
    return [r.text for r in verdict.reasons if r.level != PASS and (level is None or r.level == level)]


# ---------------------------------------------------------------------------------------------------
# GPU health


def h100():
    [gpu] = nvidia_smi_q.parse(read("nvidia-smi-q_03_full_h100-sxm_drv545_clean.txt"))
    return gpu


def test_healthy_gpus_pass_and_a_dict_reads_like_the_dataclass():
    assert node.judge_gpu_health([h100()], expected_count=1).outcome == PASS
    assert node.judge_gpu_health([h100().to_dict()], expected_count=1).outcome == PASS
    gh200 = nvidia_smi_q.parse(read("nvidia-smi-q_04_full_gh200_clean.txt"))
    assert node.judge_gpu_health(gh200, expected_count=1).outcome == PASS  # x1 of a x1 C2C link is its maximum


def test_gpu_count_against_the_plan():
    gpus = nvidia_smi_q.parse(read("nvidia-smi-q_01_page_retirement_8gpu_clean.txt"))
    assert node.judge_gpu_health(gpus, expected_count=8).outcome == PASS
    verdict = node.judge_gpu_health(gpus[:7], expected_count=8, node="gpu-001")
    assert verdict.outcome == ERROR  # the 8th GPU is attached, its health not shown
    assert problems(verdict) == ["gpu-001: the output lists 7 of the 8 attached GPUs: 1 not measured"]
    verdict = node.judge_gpu_health(gpus, expected_count=6, node="gpu-001")
    assert problems(verdict) == ["gpu-001: 8 GPUs found, 6 expected"]
    assert node.judge_gpu_health([], expected_count=8).outcome == ERROR
    [xml] = nvidia_smi_q.parse(read("nvidia-smi-q-x_01_a100-sxm4-80gb_v12_xml.xml"))
    assert problems(node.judge_gpu_health([xml], expected_count=4)) == [
        "the output lists 1 of the 4 attached GPUs: 3 not measured"
    ]


def test_pending_page_retirement_fails_naming_each_gpu():
    """The UPSTREAM-EDITED sample is a fair layout for the rule: GPUs 1, 3, 5 and 7 have pages pending."""
    gpus = nvidia_smi_q.parse(read("nvidia-smi-q_02_page_retirement_8gpu_pending_UPSTREAM-EDITED.txt"))
    verdict = node.judge_gpu_health(gpus, expected_count=8)
    assert verdict.outcome == FAIL
    assert problems(verdict, FAIL) == [
        f"GPU {i} (0000000{i + 1}:00:00.0): page retirement pending (reset the GPU or reboot to apply it)"
        for i in (1, 3, 5, 7)
    ]
    assert "GPU 0 (00000001:00:00.0): 5 pages retired for double-bit errors" in problems(verdict, WARN)


def test_uncorrectable_sram_errors_in_a_fragment_fail_and_the_count_is_not_measured():
    gpus = nvidia_smi_q.parse(read("nvidia-smi-q_06_ecc_sram-uncorrectable_fragment.txt"))
    verdict = node.judge_gpu_health(gpus, expected_count=8)
    assert verdict.outcome == FAIL
    assert problems(verdict, FAIL) == [
        "GPU (section pasted alone, line 1): 1 uncorrectable ECC errors since the driver loaded (sram_uncorrectable 1)"
    ]
    assert problems(verdict, ERROR) == ["only a section of nvidia-smi -q: GPU count not measured"]
    assert problems(verdict, WARN) == [
        "GPU (section pasted alone, line 1): 5 uncorrectable ECC errors in its lifetime (sram_uncorrectable 5)"
    ]


def test_remapped_rows_pending_and_failure_reset_required():
    gpu = dataclasses.replace(h100(), remapped_rows_pending=True, remapped_rows_failure=True, reset_required=True)
    texts = problems(node.judge_gpu_health([gpu]), FAIL)
    label = "GPU 0 (00000000:19:00.0, serial 1654123038646)"
    assert texts == [
        f"{label}: row remapping pending (reset the GPU to apply it)",
        f"{label}: row remapping failure occurred (no spare rows left: replace the GPU)",
        f"{label}: the driver says the GPU needs a reset",
    ]


def test_pcie_below_max_width_fails_generation_warns():
    gpu = dataclasses.replace(h100(), pcie_gen_current=4, pcie_width_current=8)
    verdict = node.judge_gpu_health([gpu])
    label = "GPU 0 (00000000:19:00.0, serial 1654123038646)"
    assert problems(verdict, FAIL) == [f"{label}: PCIe link x8, its maximum is x16"]
    assert problems(verdict, WARN) == [
        f"{label}: PCIe Gen4, its maximum is Gen5 (an idle GPU trains down: check under load)"
    ]
    strict = node.GpuHealthProfile(pcie_gen_below_max=FAIL)
    assert len(problems(node.judge_gpu_health([gpu], profile=strict), FAIL)) == 2


def test_active_slowdowns_fail_power_cap_warns_idle_is_fine():
    reasons = {"idle": True, "hw_slowdown": True, "sw_power_cap": True}
    gpu = dataclasses.replace(h100(), active_clock_event_reasons=tuple(reasons), clock_event_reasons=reasons)
    verdict = node.judge_gpu_health([gpu])
    assert [t.split(": ", 1)[1] for t in problems(verdict)] == [
        "clocks slowed down: hw slowdown active", "clocks held back: sw power cap active",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "level", "text"),
    [
        ({"temperature_c": 89.0, "slowdown_temperature_c": 89.0}, FAIL, "89 C, at or past its slowdown point 89 C"),
        ({"temperature_c": 84.5, "slowdown_temperature_c": 89.0}, WARN, "84.5 C, within 5 C of slowdown at 89 C"),
        ({"temperature_c": 83.9, "slowdown_temperature_c": 89.0}, None, None),
        ({"tlimit_c": -2.0}, FAIL, "-2 C from its thermal limit, slowdown at -2 C"),
        ({"tlimit_c": 4.0}, WARN, "only 4 C below its thermal limit"),
        ({"power_draw_w": 736.0}, FAIL, "power draw 736 W over its limit 700 W"),
        ({"power_draw_w": 720.0}, WARN, "power draw 720 W above its limit 700 W"),
        ({"power_draw_w": 700.0}, None, None),
    ],
)
def test_temperature_and_power_limits(changes, level, text):
    verdict = node.judge_gpu_health([dataclasses.replace(h100(), **changes)])
    if level is None:
        assert verdict.outcome == PASS
    else:
        assert verdict.outcome == level and problems(verdict)[0].endswith(text)


def test_the_profile_ceiling_on_temperature():
    profile = node.GpuHealthProfile(max_temperature_c=30.0)
    assert problems(node.judge_gpu_health([h100()], profile=profile)) == [
        "GPU 0 (00000000:19:00.0, serial 1654123038646): 33 C > the profile's 30 C"
    ]


# ---------------------------------------------------------------------------------------------------
# DCGM


def diag(name):
    [result] = dcgmi_diag.parse(read(name))
    return result


def test_dcgm_all_pass_with_eud_skipped_passes():
    verdict = node.judge_dcgm_diag(diag("dcgmi-diag_01_r3_pass_8x_h200_dcgm3.3.9.txt"))
    assert verdict.outcome == PASS and [r.text for r in verdict.reasons] == ["DCGM test EUD Test skipped"]
    assert node.judge_dcgm_diag(diag("dcgmi-diag_03_r3_pass_4gpu_dcgm4.0.0_nvidia-docs.txt")).outcome == PASS


def test_dcgm_fail_in_a_cut_output_fails_with_dcgms_message():
    verdict = node.judge_dcgm_diag(diag("dcgmi-diag_04_pcie-FAIL_4x_l40s_dcgm4.2.3_truncated.txt"), node="l40s-03")
    assert verdict.outcome == FAIL  # a failure seen outranks "not measured"
    [failed] = problems(verdict, FAIL)
    assert failed.startswith("l40s-03: DCGM test pcie failed: There was an internal error during the test:")
    assert problems(verdict, ERROR) == [
        "l40s-03: dcgmi diag not measured: the table ends without its closing border (output truncated)"
    ]


def test_dcgm_deployment_error_and_gpu_memory_failure():
    verdict = node.judge_dcgm_diag(diag("dcgmi-diag_06_row-remap-pending_error_fragment_truncated.txt"))
    assert problems(verdict, FAIL) == [
        "DCGM Error (Deployment): GPU 3 has uncorrectable memory errors and row remappings are pending"
    ]
    verdict = node.judge_dcgm_diag(diag("dcgmi-diag_07_r2_gpu-memory-FAIL_thermal_fragment_truncated.txt"))
    assert problems(verdict, FAIL)[0].startswith("DCGM test GPU Memory failed on GPU 0: GPU 0 Thermal violations")


def test_dcgm_incomplete_without_failure_is_not_measured():
    verdict = node.judge_dcgm_diag(diag("dcgmi-diag-json_01_v4_fragment_diagnostic_8gpu_info-cap_truncated.txt"))
    assert verdict.outcome == ERROR  # every result read says Pass, yet this is no whole run


def test_dcgm_warn_and_required_level():
    result = diag("dcgmi-diag_03_r3_pass_4gpu_dcgm4.0.0_nvidia-docs.txt")
    memory = result.test("memory")
    gpu2 = dcgmi_diag.DiagEntityResult(entity="GPU", id=2, status="Warn")
    warned = dataclasses.replace(memory, results=(gpu2,), worst="Warn")
    result = dataclasses.replace(result, tests=(warned,), run_level=1)
    verdict = node.judge_dcgm_diag(result, required_level=3)
    assert verdict.outcome == ERROR
    assert problems(verdict) == ["dcgmi diag ran at level 1, level 3 required", "DCGM test memory warned on GPU 2"]


# ---------------------------------------------------------------------------------------------------
# XIDs


def test_xid_119_fails_and_names_the_gpu_by_nvidia_smi_when_given():
    events = xid.parse(read("xid_02_dmesg-T_xid119_gsp-rpc-timeout_xe9680.log"))
    verdict = node.judge_xids(events, node="xe9680-1")
    assert verdict.outcome == FAIL
    [text] = problems(verdict)
    assert text.startswith("xe9680-1: Xid 119 (GSP RPC timeout) x5 on GPU 0000:9b:00 (serial 1650124014249), "
                           "first at 2025-02-23T16:24:18 (line 3): Timeout after 6s")  # fmt: skip
    gpu = dataclasses.replace(h100(), index=4, pci_bus_id="00000000:9B:00.0", pci="0000:9b:00", serial="1650124014249")
    [text] = problems(node.judge_xids(events, gpus=[gpu]))
    assert "on GPU 4 (00000000:9B:00.0, serial 1650124014249)" in text


def test_xid_13_and_43_warn_by_default_and_fail_when_the_profile_says():
    events = xid.parse(read("xid_03_dmesg-decode-iso_636-lines_xid13-sm-exception_xid43.log"))
    verdict = node.judge_xids(events)
    assert verdict.outcome == WARN and len(problems(verdict)) == 2
    assert problems(verdict)[0].startswith("Xid 13 (graphics engine exception) x629 on GPU 0000:38:00")
    strict = node.XidProfile(fail_codes=frozenset({13}), warn_codes=frozenset(), ignore_codes=frozenset({43}))
    verdict = node.judge_xids(events, profile=strict)
    assert verdict.outcome == FAIL and len(problems(verdict)) == 1


def test_xid_63_warns_79_fails_unknown_warns_and_no_xid_passes():
    [event63] = xid.parse(read("xid_04_single-line_xid63_row-remapper.log"))
    assert node.judge_xids([event63]).outcome == WARN
    event79 = dataclasses.replace(event63, code=79, message="GPU has fallen off the bus.")
    assert node.judge_xids([event79]).outcome == FAIL
    assert "Xid 79 (GPU has fallen off the bus)" in problems(node.judge_xids([event79]))[0]
    assert node.judge_xids([dataclasses.replace(event63, code=999)]).outcome == WARN
    verdict = node.judge_xids([])
    assert verdict.outcome == PASS and verdict.reasons[0].text == "no XID in the kernel log"


# ---------------------------------------------------------------------------------------------------
# NVLink


def test_nvlink_active_links_and_speed():
    gpus = nvlink.parse(read("nvidia-smi-nvlink_01_status_a100_12links_25GBs.txt"))
    assert node.judge_nvlink(gpus, expected_links=12, expected_speed_gbs=25).outcome == PASS
    verdict = node.judge_nvlink(gpus, expected_links=12, expected_speed_gbs=26.562)
    assert verdict.outcome == FAIL and len(problems(verdict)) == 12
    assert problems(verdict)[0] == (
        "GPU 7 (GPU-c7e253b0-c227-6f10-e860-7482c85e7ce8) link 0: 25 GB/s, 26.562 GB/s expected"
    )
    [gpu] = nvlink.parse("GPU 0: X (UUID: GPU-1)\n\t Link 0: 25 GB/s\n\t Link 1: <inactive>\n")
    assert problems(node.judge_nvlink([gpu], expected_links=2)) == [
        "GPU 0 (GPU-1): 1 active NVLinks, 2 expected (inactive: 1)"
    ]


def test_nvlink_elided_output_is_not_measured():
    gpus = nvlink.parse(read("nvidia-smi-nvlink_06_status_gb200_18links_53.125GBs_elided.txt"))
    verdict = node.judge_nvlink(gpus, expected_links=18, expected_speed_gbs=53.125)
    assert verdict.outcome == ERROR
    assert problems(verdict) == [
        "GPU 1 (GPU-39ac7bce-e3d6-b426-008e-fa47897c72d5): links elided in this output, link count not measured"
    ]


def test_nvlink_error_counters_growth_between_readings():
    before = nvlink.parse(read("nvidia-smi-nvlink_03_errors_h100_elided.txt"))
    assert node.judge_nvlink(before).outcome == PASS
    text = read("nvidia-smi-nvlink_03_errors_h100_elided.txt").replace(
        "Link 17: Replay Errors: 0", "Link 17: Replay Errors: 4"
    )
    after = nvlink.parse(text)
    verdict = node.judge_nvlink(after, baseline=before)
    assert problems(verdict) == [
        "GPU 0 (GPU-abcdefab-cdef-abdc-abcd-abababababab) link 17: replay errors grew from 0 to 4"
    ]
    assert verdict.outcome == FAIL
    assert node.judge_nvlink(after).outcome == WARN  # non-zero without a baseline to compare with
    assert node.judge_nvlink(after, baseline=after).outcome == PASS  # no growth
    assert node.judge_nvlink([]).outcome == ERROR


# ---------------------------------------------------------------------------------------------------
# GPU bandwidth


def test_bandwidth_test_against_expected_figures():
    [a100] = gpu_bandwidth.parse_bandwidth_test(read("bandwidthTest_01_a100-sxm4-40gb_quick_pinned.txt"))
    assert node.judge_bandwidth_test(a100, expected={"h2d": 12.5, "d2h": 13.0, "d2d": 1100}).outcome == PASS
    verdict = node.judge_bandwidth_test(a100, expected={"h2d": 13.0, "d2h": 25.0})
    assert problems(verdict) == [
        "host to device bandwidth on 0: NVIDIA A100-SXM4-40GB: 12.3 GB/s, 94.6% of the expected 13 GB/s",
        "device to host bandwidth on 0: NVIDIA A100-SXM4-40GB: 13.2 GB/s, 52.8% of the expected 25 GB/s",
    ]
    assert [r.level for r in verdict.reasons] == [WARN, FAIL]
    cut = dataclasses.replace(a100, complete=False, result=None, d2d_gbs=None)
    assert node.judge_bandwidth_test(cut, expected={"d2d": 1000}).outcome == ERROR


def test_nvbandwidth_cells_waived_and_missing_tests():
    cases = gpu_bandwidth.parse_nvbandwidth(read("nvbandwidth_01_json_1gpu_v0.5_h2d_d2h_waived_d2d.json"))
    assert node.judge_nvbandwidth(cases, expected={"host_to_device_memcpy_ce": 12.0}).outcome == PASS
    expected = {"host_to_device_memcpy_ce": 25.0, "device_to_device_memcpy_read_ce": 300.0, "nope": 1.0}
    verdict = node.judge_nvbandwidth(cases, expected=expected)
    assert problems(verdict) == [
        "nvbandwidth host_to_device_memcpy_ce row 0, column 0: 12.4 GB/s, 49.6% of the expected 25 GB/s",
        "nvbandwidth device_to_device_memcpy_read_ce waived by the tool: not measured",
        "nvbandwidth nope not in the output: not measured",
    ]
    [matrix] = gpu_bandwidth.parse_nvbandwidth(read("nvbandwidth_02_text_8gpu_d2d_write_ce_matrix_readme.txt"))
    verdict = node.judge_nvbandwidth([matrix], expected={"device_to_device_memcpy_write_ce": 276.0})
    assert problems(verdict) == []  # 274.89 is 99.6%; the 0.00 diagonal is no measurement
    verdict = node.judge_nvbandwidth([matrix], expected={"device_to_device_memcpy_write_ce": 300.0})
    assert verdict.outcome == WARN and len(problems(verdict)) == 41  # 40 listed + "and 16 more"
    assert problems(verdict)[-1] == "and 16 more cells of device_to_device_memcpy_write_ce"


def test_p2p_pairs_against_the_fabric_figures():
    [p2p] = gpu_bandwidth.parse_p2p(read("p2pBandwidthLatencyTest_01_8x_a100-sxm4-80gb_nvswitch.txt"))
    assert node.judge_p2p(p2p, expected_unidirectional_gbs=265, expected_bidirectional_gbs=420).outcome == PASS
    verdict = node.judge_p2p(p2p, expected_bidirectional_gbs=440)
    assert problems(verdict) == [
        "bidirectional P2P GPU 0 (0000:07:00) <-> GPU 1 (0000:0a:00): 416.29 GB/s, 94.6% of the expected 440 GB/s",
        "bidirectional P2P GPU 0 (0000:07:00) <-> GPU 3 (0000:4a:00): 417.51 GB/s, 94.9% of the expected 440 GB/s",
    ]
    verdict = node.judge_p2p(p2p, expected_unidirectional_gbs=300)
    assert verdict.outcome == FAIL and len(problems(verdict)) == 41  # 56 directed pairs: 40 listed, 16 summed up
    assert problems(verdict)[7] == (
        "unidirectional P2P GPU 1 (0000:0a:00) -> GPU 0 (0000:07:00): 265.05 GB/s, 88.3% of the expected 300 GB/s"
    )
    blocked = dataclasses.replace(p2p, peer_access=((0, 1, False),))
    assert problems(node.judge_p2p(blocked)) == ["GPU 0 (0000:07:00) cannot access GPU 1 (0000:0a:00) as a peer"]


# ---------------------------------------------------------------------------------------------------
# Storage


def test_storage_floors_fio_json_text_groups_and_ior():
    jobs = parse(read("fio-json_01_randread_4k_qd16_8jobs_group-reporting_fio3.1.json"))
    floors = node.StorageFloors(read_mib_s=180, read_iops=46000, p99_clat_us=3100)
    assert node.judge_storage(jobs, floors=floors).outcome == PASS
    verdict = node.judge_storage(jobs, floors=node.StorageFloors(read_mib_s=200, write_mib_s=100), node="stor-01")
    assert problems(verdict) == [
        "stor-01: fio job random-read read bandwidth 181.33 MiB/s < floor 200 MiB/s",
        "stor-01: write bandwidth not measured (floor 100 MiB/s)",
    ]
    groups = parse(read("fio-text_04_howto_run-status-group_read-write.txt"))
    assert problems(node.judge_storage(groups, floors=node.StorageFloors(read_mib_s=25))) == [
        "fio group 0 read bandwidth 20.9 MiB/s < floor 25 MiB/s"
    ]
    ior = parse(read("ior_01_tutorial_shared-file_64procs_lustre_elided.txt"))
    assert problems(node.judge_storage(ior, floors=node.StorageFloors(read_mib_s=300, write_mib_s=400))) == [
        "IOR read read bandwidth 239.08 MiB/s < floor 300 MiB/s"
    ]
    [job] = parse(read("fio-text_03_howto_per-job-write-block_client1.txt"))
    failed = dataclasses.replace(job, error=5)
    assert problems(node.judge_storage([failed], floors=node.StorageFloors())) == ["fio job Client1 ended with error 5"]


def test_hash_agreement_across_nodes():
    same = "9f1274edaf4794e0a49bb07d50283d4e3a29d8cba9249a071d8346479e8b70ef"
    assert node.judge_hash_agreement({"n1": same, "n2": same.upper(), "n3": same}).outcome == PASS
    verdict = node.judge_hash_agreement({"n1": same, "n2": same, "n3": "0" * 64, "n4": None})
    assert verdict.outcome == FAIL
    assert problems(verdict) == [
        "n4: no hash of the test file: not measured",
        f"n3: the test file hash {'0' * 16} differs from 2 other nodes' {same[:16]}",
    ]
    assert node.judge_hash_agreement({"n1": same, "n2": "1" * 64}).outcome == FAIL  # no majority
    assert node.judge_hash_agreement({"n1": same}).outcome == ERROR


# ---------------------------------------------------------------------------------------------------
# Training log


def test_training_log_of_8_ranks_and_100_steps_passes():
    [log] = training_log.parse(read("training-log_01_ddp-nccl_8-ranks_2-nodes_polaris_loss-steps.txt"))
    expectations = node.TrainingExpectations(world_size=8, min_steps=100)
    assert node.judge_training_log(log, expected=expectations).outcome == PASS
    verdict = node.judge_training_log(log, expected=node.TrainingExpectations(world_size=16, min_steps=200))
    assert problems(verdict) == [
        "world size 8, 16 expected",
        "ranks 8-15 of 16 never appear in the log",
        "100 steps done, 200 required",
    ]
    strict = node.TrainingExpectations(world_size=8, require_nccl_init=True)
    assert problems(node.judge_training_log(log, expected=strict), ERROR)[0].startswith("no NCCL 'Init COMPLETE' line")


def test_training_log_excerpt_without_steps_and_with_ib_events():
    name = "training-log_03_nccl-init-complete_8-ranks_ib-async-event-warn_excerpt_truncated.txt"
    [log] = training_log.parse(read(name))
    verdict = node.judge_training_log(log, expected=node.TrainingExpectations(world_size=8))
    assert verdict.outcome == FAIL
    assert problems(verdict, FAIL) == ["no training step with a loss in the log"]
    assert problems(verdict, WARN)[0].startswith("4 InfiniBand async events, first at line 11: gpu1:5021:5386")


def test_training_loss_not_finite_rising_missing_init_and_errors():
    text = "\n".join(
        ["rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE", "step=1 loss=2.0", "step=2 loss=2.5",
         "step=3 loss=nan", "step=4 loss=3.0", "Traceback (most recent call last):"]
    )  # fmt: skip
    [log] = training_log.parse(text)
    verdict = node.judge_training_log(log, expected=node.TrainingExpectations(world_size=2), node="gpu-007")
    assert problems(verdict) == [
        "gpu-007: ranks 1 of 2 never appear in the log",
        "gpu-007: NCCL Init COMPLETE missing for ranks 1 of 2",
        "gpu-007: loss not finite (nan) at step 3, line 4 (1 steps)",
        "gpu-007: loss rising: 2 at the first step, 3 at the last",
        "gpu-007: 1 error lines, first at line 6: Traceback (most recent call last):",
    ]


# ---------------------------------------------------------------------------------------------------
# Redfish


def mockup():
    return redfish.read_resources(json.loads(path.read_text()) for path in sorted(MOCKUP.rglob("index.json")))


def test_the_mockup_fails_on_its_warning_psu_naming_it():
    verdict = node.judge_redfish(mockup(), expected_serial="437XR1138R2", node="contoso-1",
                                 expected_macs=["12:44:6a:3b:04:11"])  # fmt: skip
    assert verdict.outcome == FAIL
    assert problems(verdict, FAIL) == [
        "contoso-1: PSU 'Power Supply Bay': health Warning (state Enabled)",
        "contoso-1: PSU 'Power Supply Bay 1': health Warning (state Enabled)",
    ]
    assert problems(verdict, WARN) == [
        "contoso-1: Redundancy 'PowerSupplyRedundancy[0] Failover': state UnavailableOffline",
        "contoso-1: StorageDevice 'SATA Bay 2': health Warning (state Enabled)",
    ]
    # The absent Bay 2 supply and the disabled CPU2 temperature are not problems.
    assert not [t for t in problems(verdict) if "Bay 2'" in t and "PSU" in t or "CPU2" in t]


def test_single_resources_serial_mismatch_and_warning_chassis():
    system = redfish.parse(read("redfish_10_computersystem_cisco-ucsc-c240-m5sx.json"))
    assert node.judge_redfish(system, expected_serial="WZP23450C8K").outcome == PASS
    assert problems(node.judge_redfish(system, expected_serial="WZP00000000", node="ucs-1")) == [
        "ucs-1: serial WZP23450C8K reported by the BMC, WZP00000000 expected"
    ]
    dell = redfish.parse(read("redfish_12_chassis_dell-r820_health-WARNING.json"))
    verdict = node.judge_redfish(dell, expected_serial="CN747514CF0014")
    assert verdict.outcome == WARN and problems(verdict) == [
        "Chassis System.Embedded.1: health Warning", "Chassis System.Embedded.1: health rollup Warning",
    ]  # fmt: skip
    thermal = redfish.parse(read("redfish_04_chassis-thermal_dmtf-1U_fans-ok.json"))
    assert node.judge_redfish(thermal).outcome == PASS
    power = redfish.parse(read("redfish_05_chassis-power_dmtf-1U_psu1-WARNING.json"))
    assert problems(node.judge_redfish(power)) == ["PSU 'Power Supply Bay': health Warning (state Enabled)"]
    root = redfish.parse(read("redfish_01_serviceroot_dmtf-public-rackmount1.json"))
    assert problems(node.judge_redfish(root, expected_serial="x")) == [
        "the BMC reports no serial number: serial not measured"
    ]
    assert node.judge_redfish([]).outcome == ERROR


def test_redfish_readings_past_thresholds_and_failed_fans():
    [thermal_cpu1, *_] = redfish.parse(read("redfish_04_chassis-thermal_dmtf-1U_fans-ok.json"))
    hot = dataclasses.replace(thermal_cpu1, reading=46.0)
    assert problems(node.judge_redfish([hot])) == [
        "temperature sensor 'CPU1 Temp': reading 46 Cel at or past its upper critical threshold 45"
    ]
    warm = dataclasses.replace(thermal_cpu1, reading=42.0)
    assert node.judge_redfish([warm]).outcome == WARN
    fan = redfish.read_resource({"@odata.type": "#Fan.v1_3_0.Fan", "Name": "Fan 3",
                                 "Status": {"State": "Enabled", "Health": "Critical"}})  # fmt: skip
    assert problems(node.judge_redfish(fan)) == ["Fan 'Fan 3': health Critical (state Enabled)"]
    nic = redfish.parse(read("redfish_06_ethernetinterface_dmtf-12446A3B0411.json"))
    assert problems(node.judge_redfish(nic, expected_macs=["12:44:6A:3B:04:12"])) == [
        "NIC 12:44:6A:3B:04:12 not among the BMC's Ethernet interfaces"
    ]
