"""nvbandwidth (text, JSON), CUDA bandwidthTest and p2pBandwidthLatencyTest: every sample, and refusals."""

import json
from pathlib import Path

import pytest

from validation.parsers import ParseError, gpu_bandwidth

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"


def read(name):
    return (NODE / name).read_text()


@pytest.mark.parametrize(
    ("name", "device", "h2d", "d2h", "d2d", "first_line"),
    [
        ("bandwidthTest_01_a100-sxm4-40gb_quick_pinned.txt", "0: NVIDIA A100-SXM4-40GB", 12.3, 13.2, 1157.5, 1),
        ("bandwidthTest_02_v100-sxm2-16gb_quick_space-separated.txt", "0: Tesla V100-SXM2-16GB", 9.6, 11.4, 739.8, 4),
        ("bandwidthTest_03_tesla-t4_quick.txt", "0: Tesla T4", 9.7, 11.1, 239.6, 2),
    ],
)
def test_bandwidth_test_quick_mode(name, device, h2d, d2h, d2d, first_line):
    [run] = gpu_bandwidth.parse_bandwidth_test(read(name))
    assert (run.h2d_gbs, run.d2h_gbs, run.d2d_gbs) == (h2d, d2h, d2d)
    assert run.devices == (device,) and (run.mode, run.memory) == ("quick", "pinned")
    assert (run.result, run.complete, run.unit_printed, run.line_no) == ("PASS", True, "GB/s", first_line)
    assert [row.transfer_size_bytes for row in run.rows] == [32_000_000] * 3
    assert [row.direction for row in run.rows] == ["h2d", "d2h", "d2d"]


def test_bandwidth_test_old_mb_s_unit_and_a_run_cut_before_its_result():
    text = (
        "[CUDA Bandwidth Test] - Starting...\n Device 0: Tesla K80\n Quick Mode\n\n"
        " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n"
        "   Transfer Size (Bytes)\tBandwidth(MB/s)\n   33554432\t\t\t10240.5\n"
    )
    [run] = gpu_bandwidth.parse_bandwidth_test(text)
    assert run.h2d_gbs == 10.2405 and run.d2h_gbs is None and run.complete is False and run.result is None


def test_nvbandwidth_json_v0_5_with_waived_device_to_device_tests():
    cases = gpu_bandwidth.parse_nvbandwidth(read("nvbandwidth_01_json_1gpu_v0.5_h2d_d2h_waived_d2d.json"))
    assert len(cases) == 32
    by_name = {case.name: case for case in cases}
    h2d = by_name["host_to_device_memcpy_ce"]
    assert (h2d.format, h2d.status, h2d.unit) == ("json", "Passed", "GB/s")
    assert h2d.matrix.values == ((12.3964,),) and h2d.sum == pytest.approx(12.39636129125)
    assert (h2d.version, h2d.driver_version, h2d.cuda_runtime_version) == ("v0.5", "565.02", "12070")
    assert h2d.description == "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"
    waived = [case.name for case in cases if case.status == "Waived"]
    assert len(waived) == 17 and "device_to_device_memcpy_read_ce" in waived
    assert by_name["device_to_device_memcpy_write_ce"].matrix is None
    latency = by_name["host_device_latency_sm"]
    assert latency.unit == "ns" and latency.matrix.values == ((649.879,),)
    assert by_name["device_to_device_latency_sm"].status == "Waived"


def test_nvbandwidth_text_8gpu_matrix_without_sum_line():
    [case] = gpu_bandwidth.parse_nvbandwidth(read("nvbandwidth_02_text_8gpu_d2d_write_ce_matrix_readme.txt"))
    assert (case.name, case.format, case.status, case.unit, case.sum) == (
        "device_to_device_memcpy_write_ce", "text", "Passed", "GB/s", None,
    )  # fmt: skip
    matrix = case.matrix
    assert matrix.row_labels == matrix.column_labels == tuple(str(i) for i in range(8))
    assert matrix.cell(0, 1) == 276.07 and matrix.cell(6, 0) == 274.89 and matrix.cell(3, 3) == 0.0
    # The diagonal's 0.00 (no copy to itself) is kept but is not a measurement.
    assert (case.min, case.max) == (274.89, 276.76)


def test_nvbandwidth_text_v0_8_header_device_and_sum():
    [case] = gpu_bandwidth.parse_nvbandwidth(read("nvbandwidth_03_text_a100_h2d_sm_v0.8.txt"))
    assert (case.name, case.sum, case.min, case.max) == ("host_to_device_memcpy_sm", 25.13, 25.13, 25.13)
    assert (case.version, case.driver_version, case.cuda_runtime_version) == ("v0.8", "560.35.05", "12060")
    assert case.devices == ("NVIDIA A100-SXM4-40GB (00000000:99:00)",) and case.line_no == 11


def test_nvbandwidth_text_waived_error_and_na_cells():
    text = (
        "Running device_to_device_memcpy_read_ce.\nWaived: \n"
        "Running device_to_device_memcpy_write_ce.\nmemcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n"
        "           0         1\n 0       N/A    389.25\n 1    390.11       N/A\n\n"
        "SUM device_to_device_memcpy_write_ce 779.36\n"
        "Running host_to_device_memcpy_ce.\nERROR: cuda error\n"
    )
    waived, written, failed = gpu_bandwidth.parse_nvbandwidth(text)
    assert (waived.status, waived.matrix) == ("Waived", None)
    assert written.matrix.values == ((None, 389.25), (390.11, None)) and written.sum == 779.36
    assert (written.min, written.max) == (389.25, 390.11)
    assert (failed.status, failed.message) == ("Error", "cuda error")


def test_p2p_bandwidth_latency_8x_a100():
    [result] = gpu_bandwidth.parse_p2p(read("p2pBandwidthLatencyTest_01_8x_a100-sxm4-80gb_nvswitch.txt"))
    assert result.complete is True and len(result.devices) == 8
    assert (result.devices[0].name, result.devices[0].pci_bus_id) == ("NVIDIA A100-SXM4-80GB", "0000:07:00")
    assert result.devices[7].pci_bus_id == "0000:c4:00"
    assert len(result.peer_access) == 56 and all(can for _, _, can in result.peer_access)
    assert result.connectivity.values == ((1.0,) * 8,) * 8
    assert [m.name for m in result.matrices] == [
        "unidirectional_p2p_disabled_bandwidth", "unidirectional_p2p_enabled_bandwidth",
        "bidirectional_p2p_disabled_bandwidth", "bidirectional_p2p_enabled_bandwidth",
        "p2p_disabled_latency_gpu", "p2p_disabled_latency_cpu", "p2p_enabled_latency_gpu", "p2p_enabled_latency_cpu",
    ]  # fmt: skip
    uni = result.matrix("unidirectional_p2p_enabled_bandwidth")
    assert (uni.unit, uni.direction, uni.p2p_enabled) == ("GB/s", "unidirectional", True)
    assert uni.cell(0, 1) == 268.94 and uni.cell(0, 0) == 1528.86
    assert min(value for _, _, value in uni.off_diagonal()) == 265.05
    bi = result.matrix("bidirectional_p2p_enabled_bandwidth")
    assert min(value for _, _, value in bi.off_diagonal()) == 416.29 and bi.cell(4, 5) == 517.8
    latency = result.matrix("p2p_enabled_latency_gpu")
    assert (latency.unit, latency.side, latency.cell(7, 7)) == ("us", "GPU", 2.48)
    assert result.matrix("p2p_disabled_latency_cpu").cell(0, 0) == 2.33


def test_parse_picks_the_tool():
    assert gpu_bandwidth.parse(read("bandwidthTest_03_tesla-t4_quick.txt"))[0].tool == "cuda_bandwidth_test"
    assert gpu_bandwidth.parse(read("nvbandwidth_03_text_a100_h2d_sm_v0.8.txt"))[0].tool == "nvbandwidth"
    p2p = read("p2pBandwidthLatencyTest_01_8x_a100-sxm4-80gb_nvswitch.txt")
    assert gpu_bandwidth.parse(p2p)[0].tool == "p2p_bandwidth_latency"


# ---------------------------------------------------------------------------------------------------
# Refused


def test_garbage_is_refused_by_each():
    for parse in (gpu_bandwidth.parse_bandwidth_test, gpu_bandwidth.parse_nvbandwidth, gpu_bandwidth.parse_p2p):
        with pytest.raises(ParseError):
            parse("hello world\n")


def test_a_huge_or_garbled_number_names_its_line():
    text = read("bandwidthTest_01_a100-sxm4-40gb_quick_pinned.txt").replace("12.3", "1e999")
    with pytest.raises(ParseError) as caught:
        gpu_bandwidth.parse_bandwidth_test(text)
    assert caught.value.line_no == 10
    text = read("nvbandwidth_02_text_8gpu_d2d_write_ce_matrix_readme.txt").replace("276.07", "9" * 5000)
    with pytest.raises(ParseError) as caught:
        gpu_bandwidth.parse_nvbandwidth(text)
    assert caught.value.line_no == 4
    p2p = read("p2pBandwidthLatencyTest_01_8x_a100-sxm4-80gb_nvswitch.txt").replace(" 268.94", " x", 1)
    with pytest.raises(ParseError) as caught:
        gpu_bandwidth.parse_p2p(p2p)
    assert caught.value.line_no == 92


def test_a_row_with_a_missing_cell_is_refused():
    text = read("nvbandwidth_02_text_8gpu_d2d_write_ce_matrix_readme.txt").replace("    276.33\n", "\n", 1)
    with pytest.raises(ParseError, match="matrix row 0 .* has 7 values"):
        gpu_bandwidth.parse_nvbandwidth(text)


def test_hostile_json_and_a_10_mb_line():
    with pytest.raises(ParseError, match="nested"):
        gpu_bandwidth.parse_nvbandwidth('{"nvbandwidth": ' + "[" * 3000 + "]" * 3000 + "}")
    document = json.loads(read("nvbandwidth_01_json_1gpu_v0.5_h2d_d2h_waived_d2d.json"))
    document["nvbandwidth"]["testcases"][0]["sum"] = "many"
    with pytest.raises(ParseError, match="sum is 'many'"):
        gpu_bandwidth.parse_nvbandwidth(json.dumps(document, indent=2))
    with pytest.raises(ParseError) as caught:
        gpu_bandwidth.parse_nvbandwidth('{"nvbandwidth": {"testcases": [{"name": "x", "sum": NaN}]}}')
    assert "finite" in caught.value.message
    with pytest.raises(ParseError) as caught:
        gpu_bandwidth.parse_bandwidth_test("[CUDA Bandwidth Test] - Starting...\n" + "9" * 10_000_000)
    assert caught.value.line_no == 2
