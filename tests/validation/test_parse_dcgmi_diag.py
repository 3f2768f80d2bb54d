"""dcgmi diag: DCGM 3.x and 4.x tables, cut and aborted outputs, -j JSON (whole, fragment, refused)."""

import json
from pathlib import Path

import pytest

from validation.parsers import ParseError, dcgmi_diag

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"


def read(name):
    return (NODE / name).read_text()


def statuses(result):
    return {test.name: test.status for test in result.tests}


def test_dcgm_3_r3_all_pass_but_eud_skipped():
    [result] = dcgmi_diag.parse(read("dcgmi-diag_01_r3_pass_8x_h200_dcgm3.3.9.txt"))
    assert (result.format, result.complete, result.incomplete_reason) == ("text", True, None)
    assert (result.dcgm_version, result.driver_version) == ("3.3.9", "570.133.20")
    assert result.gpu_device_ids == ("2335",) * 8 and result.ran_successfully is True
    assert result.run_level is None  # the capture does not show the command
    assert len(result.tests) == 16 and result.overall == "Pass"
    assert statuses(result)["EUD Test"] == "Skip" and result.test("eud test").all_gpus is True
    assert result.test("Page Retirement/Row Remap").section == "Deployment"
    assert result.test("Memory Bandwidth").section == "Stress" and result.test("PCIe").worst == "Pass"
    assert [t.name for t in result.tests if t.section == "Hardware"] == ["GPU Memory", "Diagnostic"]


def test_dcgm_4_r3_per_gpu_rows():
    [result] = dcgmi_diag.parse(read("dcgmi-diag_03_r3_pass_4gpu_dcgm4.0.0_nvidia-docs.txt"))
    assert result.complete and result.overall == "Pass" and result.dcgm_version == "4.0.0"
    assert result.gpu_device_ids == ("25b6",) * 4
    assert [t.name for t in result.tests] == [
        "software", "memory", "diagnostic", "pcie", "memory_bandwidth", "targeted_stress", "targeted_power",
    ]  # fmt: skip
    pcie = result.test("pcie")
    assert pcie.section == "Integration" and pcie.status == "Pass"
    assert [(r.entity, r.id, r.status) for r in pcie.results] == [("GPU", i, "Pass") for i in range(4)]


def test_dcgm_4_pcie_fail_with_dcgm_messages_and_a_cut_table():
    [result] = dcgmi_diag.parse(read("dcgmi-diag_04_pcie-FAIL_4x_l40s_dcgm4.2.3_truncated.txt"))
    assert result.complete is False
    assert result.incomplete_reason == "the table ends without its closing border (output truncated)"
    assert (result.dcgm_version, result.driver_version, result.overall) == ("4.2.3", "570.148.08", "Fail")
    pcie = result.test("pcie")
    assert pcie.status == "Fail" and pcie.worst == "Fail"
    assert [r.status for r in pcie.results] == ["Pass"] * 4  # each GPU row says Pass, the test failed
    assert [m.level for m in pcie.messages] == ["Warning"] * 4
    # DCGM cuts words at 45 characters; the pieces join back into DCGM's own message.
    assert pcie.messages[0].text == (
        "There was an internal error during the test: 'A child process (152) exited with non-zero status 1' "
        "Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics."
    )
    assert "'* Line 1, Column 1   Syntax error: value, object or array expected. ''" in pcie.messages[2].text
    assert pcie.messages[2].line_no == 34 and pcie.messages[0].test == "pcie"


def test_fragment_with_a_deployment_error_and_no_test():
    [result] = dcgmi_diag.parse(read("dcgmi-diag_06_row-remap-pending_error_fragment_truncated.txt"))
    assert result.complete is False and result.tests == () and result.overall is None
    [message] = result.messages
    assert (message.level, message.gpu, message.section, message.line_no) == ("Error", 3, "Deployment", 5)
    assert message.text == "GPU 3 has uncorrectable memory errors and row remappings are pending"


def test_fragment_of_a_gpu_memory_failure_cut_mid_row():
    [result] = dcgmi_diag.parse(read("dcgmi-diag_07_r2_gpu-memory-FAIL_thermal_fragment_truncated.txt"))
    assert result.complete is False and result.incomplete_reason == "row on line 8 is cut off (output truncated)"
    [test] = result.tests
    assert test.name == "GPU Memory" and test.status is None and test.worst == "Fail"
    assert {r.id: r.status for r in test.results} == {0: "Fail", **{i: "Pass" for i in range(1, 8)}}
    [warning] = test.messages
    assert warning.gpu == 0 and warning.text.startswith("GPU 0 Thermal violations totaling 13.3 seconds started")
    assert warning.text.endswith("fans, and any other components.")


def test_json_fragment_is_read_as_incomplete():
    """The only -j sample is one test object cut from a document (it ends with '},'): its results are read
    and the result says it is not a whole document, so a caller cannot take it for a run that passed."""
    [result] = dcgmi_diag.parse(read("dcgmi-diag-json_01_v4_fragment_diagnostic_8gpu_info-cap_truncated.txt"))
    assert result.format == "json" and result.complete is False
    assert result.incomplete_reason.startswith("not a whole dcgmi diag -j document: 1 test object(s) cut from one")
    [test] = result.tests
    assert (test.name, test.status, test.worst) == ("diagnostic", "Pass", "Pass")
    assert [(r.entity, r.id, r.status) for r in test.results] == [("GPU", i, "Pass") for i in range(8)]
    assert [m.gpu for m in test.messages] == [0, 0, 0, 1, 1, 1, 2, 2]  # `info` only for GPUs 0-2
    assert test.messages[2].text == "GPU 0 calculated at approximately 859.08 gigaflops during this test"
    assert (test.messages[2].line_no, test.messages[5].line_no, test.line_no) == (13, 25, 2)


def test_json_fragment_cut_inside_an_object_is_refused_with_the_line():
    text = read("dcgmi-diag-json_01_v4_fragment_diagnostic_8gpu_info-cap_truncated.txt")
    cut = "\n".join(text.split("\n")[:40])
    with pytest.raises(ParseError) as caught:
        dcgmi_diag.parse(cut)
    assert caught.value.line_no == 40 and "not valid JSON" in caught.value.message


DCGM4_JSON = {
    "DCGM Diagnostic": {
        "test_categories": [
            {
                "category": "Deployment",
                "tests": [{"name": "software", "results": [{"entity_group": "GPU", "entity_group_id": 1,
                                                            "entity_id": 0, "status": "Pass"}],
                           "test_summary": {"status": "Pass"}}],
            },
            {
                "category": "Hardware",
                "tests": [{"name": "memory", "results": [
                    {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Fail",
                     "warnings": [{"error_category": 3, "error_id": 95, "error_severity": 2,
                                   "warning": "GPU 0 has uncorrectable memory errors"}]},
                    {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 1, "status": "Pass"}],
                    "test_summary": {"status": "Fail"}}],
            },
        ]
    },
    "metadata": {"version": "4.2.3", "Driver Version Detected": "570.148.08"},
}  # fmt: skip


def test_whole_dcgm4_json_document():
    text = "$ dcgmi diag -r 2 -j\n" + json.dumps(DCGM4_JSON, indent=4)
    [result] = dcgmi_diag.parse(text)
    assert (result.format, result.complete, result.run_level, result.overall) == ("json", True, 2, "Fail")
    assert (result.dcgm_version, result.driver_version) == ("4.2.3", "570.148.08")
    memory = result.test("memory")
    assert memory.section == "Hardware" and memory.status == "Fail"
    assert [(r.id, r.status) for r in memory.results] == [(0, "Fail"), (1, "Pass")]
    [warning] = memory.messages
    assert (warning.level, warning.gpu, warning.text) == ("Warning", 0, "GPU 0 has uncorrectable memory errors")


def test_dcgm3_json_with_gpu_ids_and_runtime_error():
    document = {
        "DCGM GPU Diagnostic": {
            "test_categories": [{"category": "Deployment", "tests": [
                {"name": "Denylist", "results": [{"gpu_ids": "0,1,2,3", "status": "PASS"}]}, None,
                {"name": "SM Stress", "results": [{"gpu_ids": "0", "status": "FAIL", "warnings": ["bad"]}]}]}],
            "version": "3.1.7",
            "runtime_error": "NVVS was killed",
        }
    }  # fmt: skip
    [result] = dcgmi_diag.parse(json.dumps(document))
    assert result.dcgm_version == "3.1.7" and result.complete is False
    assert result.incomplete_reason == "NVVS was killed" and result.errors == ("NVVS was killed",)
    assert result.test("Denylist").status == "Pass" and result.test("Denylist").all_gpus is True
    assert result.test("SM Stress").results[0].status == "Fail" and result.overall == "Fail"


def test_an_aborted_run_without_a_table_is_incomplete_not_a_pass():
    text = (
        "Error: Unable to complete diagnostic for group 2147483647. Return: (-21) Host engine connection "
        "invalid/disconnected.\n"
    )
    [result] = dcgmi_diag.parse(text)
    assert result.complete is False and result.tests == () and result.incomplete_reason.startswith("Error: Unable")


def test_a_closed_table_followed_by_an_error_line_is_incomplete():
    text = read("dcgmi-diag_01_r3_pass_8x_h200_dcgm3.3.9.txt") + "Error: the diagnostic was killed\n"
    [result] = dcgmi_diag.parse(text)
    assert result.complete is False and result.incomplete_reason == "Error: the diagnostic was killed"


def test_run_level_from_the_command_line():
    text = "$ dcgmi diag --run long\n" + read("dcgmi-diag_01_r3_pass_8x_h200_dcgm3.3.9.txt")
    [result] = dcgmi_diag.parse(text)
    assert result.run_level == 3 and result.complete


# ---------------------------------------------------------------------------------------------------
# Refused


def test_garbage_and_unknown_results_are_refused_with_their_line():
    with pytest.raises(ParseError, match="no dcgmi diag table"):
        dcgmi_diag.parse("nothing\nhere\n")
    text = read("dcgmi-diag_01_r3_pass_8x_h200_dcgm3.3.9.txt").replace("Pass - All    ", "Maybe         ", 1)
    with pytest.raises(ParseError) as caught:
        dcgmi_diag.parse(text)
    assert caught.value.line_no == 20 and "Maybe" in caught.value.message


def test_a_huge_gpu_number_or_status_in_json_is_refused():
    document = {"DCGM Diagnostic": {"test_categories": [{"category": "x", "tests": [
        {"name": "t", "results": [{"entity_id": int("9" * 50), "status": "Pass"}]}]}]}}  # fmt: skip
    with pytest.raises(ParseError, match="not a finite number of reasonable size"):
        dcgmi_diag.parse(json.dumps(document, indent=1))
    document["DCGM Diagnostic"]["test_categories"][0]["tests"][0]["results"][0] = {"entity_id": 1, "status": "Great"}
    with pytest.raises(ParseError, match="status 'Great'"):
        dcgmi_diag.parse(json.dumps(document, indent=1))


def test_a_10_mb_line_and_deep_json_are_refused():
    text = read("dcgmi-diag_01_r3_pass_8x_h200_dcgm3.3.9.txt").replace("\n", "\n" + "|" + "x" * 10_000_000 + "\n", 1)
    with pytest.raises(ParseError) as caught:
        dcgmi_diag.parse(text)
    assert caught.value.line_no == 2 and "characters long" in caught.value.message
    with pytest.raises(ParseError, match="nested"):
        dcgmi_diag.parse('{"DCGM Diagnostic": ' + "[" * 5000 + "]" * 5000 + "}")
