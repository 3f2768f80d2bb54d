"""nvidia-smi -q (text) and -q -x (XML): every sample in tests/fixtures/node-outputs, fragments, and refusals."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, nvidia_smi_q

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"


def read(name):
    return (NODE / name).read_text()


def test_full_h100_text_reads_identity_health_link_clocks_temperatures_power():
    [gpu] = nvidia_smi_q.parse(read("nvidia-smi-q_03_full_h100-sxm_drv545_clean.txt"))
    assert (gpu.format, gpu.index, gpu.minor_number, gpu.fragment) == ("text", 0, 0, False)
    assert (gpu.pci_bus_id, gpu.pci) == ("00000000:19:00.0", "0000:19:00")
    assert gpu.product_name == "NVIDIA H100 80GB HBM3" and gpu.product_architecture == "Hopper"
    assert (gpu.serial, gpu.uuid) == ("1654123038646", "GPU-10f35015-e921-bfab-2eb8-4e9b6664d5f1")
    assert (gpu.vbios_version, gpu.driver_version, gpu.cuda_version) == ("96.00.74.00.0D", "545.23.08", "12.3")
    assert gpu.attached_gpus == 1 and gpu.mig_mode == "Disabled" and gpu.reset_required is False
    assert (gpu.ecc_mode, gpu.ecc_mode_pending) == ("Enabled", "Enabled")
    assert gpu.ecc_volatile.counters == {
        "sram_correctable": 0, "sram_uncorrectable": 0, "dram_correctable": 0, "dram_uncorrectable": 0,
    }  # fmt: skip
    assert (gpu.ecc_aggregate.correctable, gpu.ecc_aggregate.uncorrectable) == (0, 0)
    # Retired pages are N/A on Hopper (rows are remapped instead): None, never 0.
    assert (gpu.retired_pages_single_bit, gpu.retired_pages_double_bit, gpu.retired_pages_pending) == (None,) * 3
    assert (gpu.remapped_rows_correctable, gpu.remapped_rows_uncorrectable) == (0, 0)
    assert (gpu.remapped_rows_pending, gpu.remapped_rows_failure) == (False, False)
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_gen_device_max, gpu.pcie_gen_host_max) == (5, 5, 5, 5)
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (16, 16)
    assert gpu.active_clock_event_reasons == ("idle",)
    assert gpu.clock_event_reasons["hw_power_brake_slowdown"] is False  # nested under "HW Slowdown"
    assert gpu.clock_event_reasons["sw_thermal_slowdown"] is False and len(gpu.clock_event_reasons) == 9
    assert (gpu.temperature_c, gpu.memory_temperature_c) == (33.0, 41.0)
    # R545 prints thresholds relative to the thermal limit, never absolute ones.
    assert (gpu.tlimit_c, gpu.slowdown_tlimit_c, gpu.shutdown_tlimit_c, gpu.max_operating_tlimit_c) == (
        54.0, -2.0, -8.0, 0.0,
    )  # fmt: skip
    assert gpu.slowdown_temperature_c is None and gpu.shutdown_temperature_c is None
    assert (gpu.power_draw_w, gpu.power_limit_w) == (72.02, 700.0)
    assert gpu.module_power_draw_w is None and gpu.line_no == 8


def test_full_gh200_text_has_module_power_and_a_c2c_x1_link():
    [gpu] = nvidia_smi_q.parse(read("nvidia-smi-q_04_full_gh200_clean.txt"))
    assert (gpu.product_name, gpu.serial, gpu.pci) == ("GH200 480GB", "1654223016127", "0009:01:00")
    assert gpu.uuid == "GPU-1986864f-4424-33ea-42a0-3ef03cc494ed" and gpu.vbios_version == "96.00.7E.00.02"
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_gen_device_max) == (4, 4, 5)
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (1, 1)
    assert (gpu.power_draw_w, gpu.power_limit_w) == (69.54, 900.0)
    assert (gpu.module_power_draw_w, gpu.module_power_limit_w) == (151.15, 900.0)
    assert gpu.line_no == 10  # the prompt line and a blank line come first


def test_page_retirement_output_of_8_gpus_gives_8_results_with_only_those_fields():
    gpus = nvidia_smi_q.parse(read("nvidia-smi-q_01_page_retirement_8gpu_clean.txt"))
    assert [gpu.index for gpu in gpus] == list(range(8))
    assert [gpu.pci_bus_id for gpu in gpus] == [f"0000000{i}:00:00.0" for i in range(1, 9)]
    assert gpus[0].pci == "0001:00:00"  # Azure's 8-digit domains keep their digits
    retired = {(gpu.retired_pages_single_bit, gpu.retired_pages_double_bit, gpu.retired_pages_pending) for gpu in gpus}
    assert retired == {(0, 0, False)}
    assert all(gpu.driver_version == "535.86.10" and gpu.cuda_version == "12.2" for gpu in gpus)
    # What -d PAGE_RETIREMENT does not print is absent, not zero.
    assert all(gpu.serial is None and gpu.ecc_volatile is None and gpu.remapped_rows_pending is None for gpu in gpus)
    assert all(gpu.temperature_c is None and gpu.clock_event_reasons == {} for gpu in gpus)


def test_edited_page_retirement_sample_reads_the_counts_and_pending_flags():
    """Azure's developers edited the numbers to make a failing case (UPSTREAM-EDITED): a layout sample."""
    gpus = nvidia_smi_q.parse(read("nvidia-smi-q_02_page_retirement_8gpu_pending_UPSTREAM-EDITED.txt"))
    assert [(g.retired_pages_single_bit, g.retired_pages_double_bit) for g in gpus] == [
        (60, 5), (2, 61), (0, 0), (6, 0), (0, 0), (20, 45), (0, 0), (8, 56),
    ]  # fmt: skip
    assert [g.index for g in gpus if g.retired_pages_pending] == [1, 3, 5, 7]


def test_ecc_section_pasted_alone_is_a_fragment_with_everything_else_absent():
    [gpu] = nvidia_smi_q.parse(read("nvidia-smi-q_06_ecc_sram-uncorrectable_fragment.txt"))
    assert gpu.fragment is True and gpu.index is None and gpu.pci_bus_id is None and gpu.serial is None
    assert gpu.ecc_volatile.counters["sram_uncorrectable"] == 1 and gpu.ecc_volatile.uncorrectable == 1
    assert gpu.ecc_aggregate.counters["sram_uncorrectable"] == 5 and gpu.ecc_aggregate.uncorrectable == 5
    assert gpu.ecc_volatile.correctable == 0
    assert gpu.remapped_rows_pending is None and gpu.retired_pages_pending is None and gpu.temperature_c is None


def test_xml_a100_with_mig_on():
    text = read("nvidia-smi-q-x_01_a100-sxm4-80gb_v12_xml.xml")
    [gpu] = nvidia_smi_q.parse(text)
    assert gpu.format == "xml" and gpu.line_no == 8
    assert (gpu.pci_bus_id, gpu.pci, gpu.minor_number) == ("00000000:01:00.0", "0000:01:00", 1)
    assert (gpu.product_name, gpu.serial) == ("NVIDIA A100-SXM4-80GB", "1650522003820")
    assert gpu.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298" and gpu.vbios_version == "92.00.36.00.02"
    assert (gpu.driver_version, gpu.cuda_version, gpu.mig_mode) == ("535.54.03", "12.2", "Enabled")
    # attached_gpus says 4 but the file holds one <gpu>: no index can be claimed.
    assert gpu.attached_gpus == 4 and gpu.index is None
    assert gpu.ecc_volatile.uncorrectable == 0 and gpu.ecc_aggregate.correctable == 0
    # MIG on: <remapped_rows>N/A</remapped_rows>, retired pages N/A.
    assert (gpu.remapped_rows_pending, gpu.remapped_rows_correctable, gpu.retired_pages_pending) == (None, None, None)
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_width_current, gpu.pcie_width_max) == (4, 4, 16, 16)
    assert gpu.active_clock_event_reasons == () and gpu.clock_event_reasons["idle"] is False
    assert (gpu.temperature_c, gpu.slowdown_temperature_c, gpu.shutdown_temperature_c) == (27.0, 89.0, 92.0)
    assert gpu.max_operating_temperature_c == 85.0 and gpu.tlimit_c is None
    assert (gpu.power_draw_w, gpu.power_limit_w) == (67.03, 500.0)


def test_xml_with_remapped_rows_pending_and_old_throttle_reasons():
    """The newer XML layout's row-remap block and the pre-R535 'clocks_throttle_reasons' tag names."""
    text = (
        '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">\n<nvidia_smi_log>\n'
        "<driver_version>525.85.12</driver_version><attached_gpus>1</attached_gpus>\n"
        '<gpu id="00000000:10:1C.0"><serial>1</serial>\n'
        "<clocks_throttle_reasons><clocks_throttle_reason_hw_slowdown>Active</clocks_throttle_reason_hw_slowdown>"
        "</clocks_throttle_reasons>\n"
        "<ecc_errors><volatile><sram_uncorrectable_parity>2</sram_uncorrectable_parity>"
        "<sram_uncorrectable_secded>1</sram_uncorrectable_secded><dram_uncorrectable>3</dram_uncorrectable>"
        "<sram_threshold_exceeded>No</sram_threshold_exceeded></volatile></ecc_errors>\n"
        "<remapped_rows><remapped_row_corr>0</remapped_row_corr><remapped_row_unc>1</remapped_row_unc>"
        "<remapped_row_pending>Yes</remapped_row_pending><remapped_row_failure>No</remapped_row_failure>"
        "</remapped_rows>\n</gpu></nvidia_smi_log>\n"
    )
    [gpu] = nvidia_smi_q.parse(text)
    assert gpu.index == 0 and gpu.pci == "0000:10:1c"
    assert gpu.active_clock_event_reasons == ("hw_slowdown",)
    assert gpu.ecc_volatile.uncorrectable == 6 and gpu.ecc_volatile.flags == {"sram_threshold_exceeded": False}
    assert (gpu.remapped_rows_uncorrectable, gpu.remapped_rows_pending, gpu.remapped_rows_failure) == (1, True, False)


def test_text_with_old_ecc_layout_and_absolute_thresholds():
    text = """==============NVSMI LOG==============

Driver Version                            : 470.82.01
Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : Tesla V100-SXM2-32GB
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 3
                Register File             : 0
                Total                     : 3
            Double Bit
                Device Memory             : 1
                Total                     : 1
        Aggregate
            Single Bit
                Total                     : 12
            Double Bit
                Total                     : N/A
    Clocks Throttle Reasons
        SW Power Cap                      : Active
    Temperature
        GPU Current Temp                  : 91 C
        GPU Shutdown Temp                 : 90 C
        GPU Slowdown Temp                 : 87 C
    Power Readings
        Power Draw                        : [GPU requires reset]
        Power Limit                       : 300.00 W
"""
    [gpu] = nvidia_smi_q.parse(text)
    assert gpu.ecc_volatile.counters["single_bit_device_memory"] == 3
    assert (gpu.ecc_volatile.correctable, gpu.ecc_volatile.uncorrectable) == (3, 1)
    assert (gpu.ecc_aggregate.correctable, gpu.ecc_aggregate.uncorrectable) == (12, None)
    assert gpu.active_clock_event_reasons == ("sw_power_cap",)
    assert (gpu.temperature_c, gpu.slowdown_temperature_c, gpu.shutdown_temperature_c) == (91.0, 87.0, 90.0)
    assert gpu.power_draw_w is None and gpu.power_limit_w == 300.0
    assert gpu.notes == ("power draw: [GPU requires reset]",)


# ---------------------------------------------------------------------------------------------------
# Refused


def test_garbage_is_refused():
    with pytest.raises(ParseError, match="no GPU found"):
        nvidia_smi_q.parse("hello\nworld\n")


def test_a_number_that_is_not_one_names_its_line():
    text = read("nvidia-smi-q_03_full_h100-sxm_drv545_clean.txt").replace(
        "Minor Number                          : 0", "Minor Number                          : " + "9" * 5000
    )
    with pytest.raises(ParseError) as caught:
        nvidia_smi_q.parse(text)
    assert caught.value.line_no == 26 and "minor number" in caught.value.message


def test_a_10_mb_line_is_refused_with_its_line():
    text = read("nvidia-smi-q_03_full_h100-sxm_drv545_clean.txt") + "x" * 10_000_000 + "\n"
    with pytest.raises(ParseError) as caught:
        nvidia_smi_q.parse(text)
    assert caught.value.line_no == 205 and "characters long" in caught.value.message


def test_xml_entity_declarations_are_refused_before_parsing():
    bomb = (
        '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [\n <!ENTITY a "aaaaaaaaaa">\n'
        ' <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n]>\n<nvidia_smi_log>&b;</nvidia_smi_log>\n'
    )
    with pytest.raises(ParseError) as caught:
        nvidia_smi_q.parse(bomb)
    assert caught.value.line_no == 3 and "entity" in caught.value.message


def test_xml_internal_subset_and_external_entities_are_refused():
    with pytest.raises(ParseError, match="internal DTD subset"):
        nvidia_smi_q.parse('<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [ ]>\n<nvidia_smi_log/>\n')
    with pytest.raises(ParseError):
        nvidia_smi_q.parse('<!DOCTYPE x [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><x/>')


def test_xml_that_is_not_well_formed_or_not_nvidia_smi_or_too_deep():
    with pytest.raises(ParseError) as caught:
        nvidia_smi_q.parse("<nvidia_smi_log>\n<gpu>\n</nvidia_smi_log>\n")
    assert caught.value.line_no == 3 and "not well-formed" in caught.value.message
    with pytest.raises(ParseError, match="root element"):
        nvidia_smi_q.parse("<html></html>")
    with pytest.raises(ParseError, match="nested more than"):
        nvidia_smi_q.parse("<nvidia_smi_log>" + "<a>" * 100 + "</a>" * 100 + "</nvidia_smi_log>")
    with pytest.raises(ParseError, match="no <gpu>"):
        nvidia_smi_q.parse("<nvidia_smi_log><driver_version>1</driver_version></nvidia_smi_log>")


def test_trees_past_their_caps_are_refused_with_the_line(monkeypatch):
    monkeypatch.setattr(nvidia_smi_q, "MAX_NODES", 10)
    with pytest.raises(ParseError) as caught:
        nvidia_smi_q.parse(read("nvidia-smi-q_03_full_h100-sxm_drv545_clean.txt"))
    assert caught.value.line_no == 19 and "more than 10 nvidia-smi lines" in caught.value.message
    monkeypatch.setattr(nvidia_smi_q, "MAX_XML_ELEMENTS", 10)
    with pytest.raises(ParseError) as caught:
        nvidia_smi_q.parse(read("nvidia-smi-q-x_01_a100-sxm4-80gb_v12_xml.xml"))
    assert caught.value.line_no == 13 and "more than 10 XML elements" in caught.value.message
