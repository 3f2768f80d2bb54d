"""NVLink: nvidia-smi nvlink -s / -e and dcgmi nvlink -e, from every sample, plus merging and refusals."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, nvlink

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"


def read(name):
    return (NODE / name).read_text()


def test_a100_status_12_links_at_25_gbs():
    [gpu] = nvlink.parse(read("nvidia-smi-nvlink_01_status_a100_12links_25GBs.txt"))
    assert (gpu.source, gpu.gpu, gpu.name) == ("nvidia-smi", 7, "NVIDIA A100-SXM4-80GB")
    assert gpu.uuid == "GPU-c7e253b0-c227-6f10-e860-7482c85e7ce8"
    assert [link.link for link in gpu.links] == list(range(12))
    assert {link.speed_gbs for link in gpu.links} == {25.0} and all(link.active for link in gpu.links)
    assert (gpu.active_links, gpu.inactive_links, gpu.elided) == (12, 0, False)


def test_h100_error_counters_with_the_authors_elision():
    [gpu] = nvlink.parse(read("nvidia-smi-nvlink_03_errors_h100_elided.txt"))
    assert (gpu.gpu, gpu.name, gpu.elided) == (0, "NVIDIA H100 80GB HBM3", True)
    assert [link.link for link in gpu.links] == [0, 1, 17]
    assert gpu.link(17).counters == {"replay": 0, "recovery": 0, "crc": 0}
    assert gpu.active_links is None  # -e says nothing of the links' state
    assert gpu.link(1).active is None and gpu.link(1).speed_gbs is None


def test_h100_status_26_562_gbs_elided():
    [gpu] = nvlink.parse(read("nvidia-smi-nvlink_04_status_h100_26.562GBs_elided.txt"))
    assert [(link.link, link.speed_gbs) for link in gpu.links] == [(0, 26.562), (17, 26.562)]
    assert gpu.elided is True and gpu.active_links == 2


def test_gb200_18_links_then_a_second_gpu_cut_short():
    gpu0, gpu1 = nvlink.parse(read("nvidia-smi-nvlink_06_status_gb200_18links_53.125GBs_elided.txt"))
    assert (gpu0.gpu, gpu0.name, gpu0.active_links, gpu0.elided) == (0, "NVIDIA GB200", 18, False)
    assert {link.speed_gbs for link in gpu0.links} == {53.125}
    assert gpu0.uuid == "GPU-d1b93026-6d5b-03bd-3a71-f85b47a61bde"
    assert (gpu1.gpu, gpu1.active_links, gpu1.elided) == (1, 2, True)  # "..." after its second link


def test_dcgmi_nvlink_error_table():
    [gpu] = nvlink.parse(read("dcgmi-nvlink_01_errors_gpu0_4links_nvidia-docs.txt"))
    assert (gpu.source, gpu.gpu) == ("dcgmi", 0)
    assert [link.link for link in gpu.links] == [0, 1, 2, 3]
    assert gpu.link(3).counters == {"crc_flit": 0, "crc_data": 0, "replay": 0, "recovery": 0}


def test_status_and_errors_of_one_gpu_merge_and_inactive_links_count():
    text = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n"
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: Replay Errors: 3\n\t Link 0: CRC Errors: N/A\n"
    )
    [gpu] = nvlink.parse(text)
    assert (gpu.active_links, gpu.inactive_links) == (1, 1)
    assert gpu.link(0).counters == {"replay": 3, "crc": None} and gpu.link(0).speed_gbs == 26.562
    assert gpu.link(1).active is False


def test_a_gpu_with_all_links_inactive():
    text = "GPU 0: Tesla T4 (UUID: GPU-2)\nNVML: Unable to retrieve NVLink information as all links are inActive\n"
    [gpu] = nvlink.parse(text)
    assert gpu.links == () and gpu.active_links == 0 and gpu.messages


def test_refused():
    with pytest.raises(ParseError, match="no NVLink output"):
        nvlink.parse("garbage\n")
    with pytest.raises(ParseError) as caught:
        nvlink.parse("GPU 0: X (UUID: GPU-1)\n\t Link 0: Replay Errors: " + "9" * 500 + "\n")
    assert caught.value.line_no == 2 and "replay count" in caught.value.message
    with pytest.raises(ParseError) as caught:
        nvlink.parse("GPU 0: X (UUID: GPU-1)\n\t Link 0: fast\n")
    assert caught.value.line_no == 2
    with pytest.raises(ParseError) as caught:
        nvlink.parse("GPU 0: X (UUID: GPU-1)\n" + "x" * 10_000_000 + "\n")
    assert caught.value.line_no == 2
