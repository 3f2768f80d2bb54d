"""ibdiagnet summaries, v1 (Stages Status Report: Errors before Warnings) and v2 (Summary table:
Warnings before Errors, blank lines between rows)."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, ibdiagnet

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"


def read(name):
    return (FIXTURES / name).read_text()


def test_v1_stages_status_report():
    [result] = ibdiagnet.parse(read("ibdiagnet_01_v1_1.5.7_archwiki.txt"))
    assert (result.format_version, result.ibdiagnet_version) == (1, "1.5.7")
    assert len(result.stages) == 8
    ipoib = result.stages[-1]
    assert (ipoib.name, ipoib.errors, ipoib.warnings) == ("IPoIB Subnets Check", 0, 1)
    assert (result.total_errors, result.total_warnings) == (0, 1)
    assert result.warning_messages == [
        "Topology file is not specified.",
        "Suboptimal rate for group. Lowest member rate:20Gbps > group-rate:10Gbps",
    ]
    assert result.error_messages == []


def test_v2_summary_with_doubled_newlines():
    [result] = ibdiagnet.parse(read("ibdiagnet_02_v2_summary_table_doubled_newlines.txt"))
    assert result.format_version == 2
    stages = {stage.name: stage for stage in result.stages}
    assert len(stages) == 11
    assert (stages["Discovery"].warnings, stages["Discovery"].errors) == (3, 0)
    assert stages["Nodes Information"].warnings == 16
    assert (stages["Speed / Width checks"].warnings, stages["Speed / Width checks"].errors) == (0, 15)
    assert (result.total_warnings, result.total_errors) == (19, 15)


def test_v2_comment_column_and_errors_naming_the_line():
    text = read("ibdiagnet_02_v2_summary_table_doubled_newlines.txt")
    [result] = ibdiagnet.parse(
        text.replace("Virtualization                      0          0", "Virtualization  0  0  Skipped")
    )
    assert next(s for s in result.stages if s.name == "Virtualization").comment == "Skipped"
    with pytest.raises(ParseError, match=r"^line 17: the Errors count is '1x5'"):
        ibdiagnet.parse(text.replace("0          15", "0          1x5"))
    with pytest.raises(ParseError, match="no ibdiagnet summary table found"):
        ibdiagnet.parse("-I- Done.\n")
