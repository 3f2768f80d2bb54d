"""Tool detection picks the right parser for every fixture and refuses text it cannot place."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, detect_tool, parse

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"
EXPECTED_BY_PREFIX = {
    "nvue_show_qos_roce_": "nvue_qos",  # before "nvue_": the first prefix that matches names the tool
    "nvue_show_interface_qos_roce_": "nvue_qos",
    "mlnx_qos_": "mlnx_qos",
    "ethtool_S_": "ethtool_stats",
    "nccl_": "nccl",
    "ib_": "perftest",
    "mlxlink_": "mlxlink",
    "ibstatus_": "ibstatus",
    "ibstat_": "ibstat",
    "perfquery_": "perfquery",
    "ethtool_m_": "ethtool",
    "nvidia_smi_topo_": "nvsmi_topo",
    "iblinkinfo_": "iblinkinfo",
    "ibnetdiscover_": "ibnetdiscover",
    "lldpcli_": "lldp",
    "nvue_": "nvue_lldp",
    "ibdiagnet_": "ibdiagnet",
}
FIXTURE_FILES = sorted(FIXTURES.glob("*.txt"))
# Real samples the parser must refuse (SOURCES.md says why): detected, then a ParseError with the line.
REFUSED = {"ib_write_bw_06_roce_hns_server_client_interleaved.txt": 11}


def expected_tool(path):
    return next(tool for prefix, tool in EXPECTED_BY_PREFIX.items() if path.name.startswith(prefix))


def test_every_fixture_names_its_source():
    sources = (FIXTURES / "SOURCES.md").read_text()
    names = sorted(p.name for p in FIXTURES.iterdir() if p.name != "SOURCES.md")
    assert len(FIXTURE_FILES) == 44 and len(names) == 46
    assert [name for name in names if f"| {name} |" not in sources] == []


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda path: path.name)
def test_detection_picks_the_tool_and_the_file_parses(path):
    text = path.read_text()
    assert detect_tool(text) == expected_tool(path)
    if path.name in REFUSED:
        with pytest.raises(ParseError) as refused:
            parse(text)
        assert refused.value.line_no == REFUSED[path.name]
        return
    results = parse(text)
    assert results and all(result.tool == expected_tool(path) for result in results)


def test_unknown_text_is_a_parse_error_naming_line_one():
    with pytest.raises(ParseError) as caught:
        detect_tool("nothing to see here\n")
    assert caught.value.line_no == 1
    assert str(caught.value).startswith("line 1: could not tell which tool produced this output; expected")


def test_an_explicit_tool_overrides_detection():
    with pytest.raises(ParseError, match="no mlxlink section found"):
        parse((FIXTURES / "nccl_allreduce_02.txt").read_text(), "mlxlink")


def test_mpirun_tag_output_is_detected_as_the_tool_it_wraps():
    text = (FIXTURES / "nccl_allreduce_03_wrong_failed.txt").read_text()
    tagged = "".join(f"[1,0]<stdout>:{line}\n" for line in text.splitlines())
    assert detect_tool(tagged) == "nccl"
    [result] = parse(tagged)
    assert result.out_of_bounds == 4 and result.line_no == parse(text)[0].line_no


def test_detection_reads_only_the_head_of_a_large_file():
    """A signature within the first DETECT_CHARS is found whatever follows; one only after them is not
    looked for (a 60 MB file costs what its head costs to recognise)."""
    from validation.parsers.detect import DETECT_CHARS

    table = (FIXTURES / "iblinkinfo_02_edr_sb7700_down_polling.txt").read_text()
    assert detect_tool(table + "junk line\n" * 1_000_000) == "iblinkinfo"
    with pytest.raises(ParseError, match="could not tell which tool"):
        detect_tool("x" * (DETECT_CHARS + 10) + "\n" + table)
