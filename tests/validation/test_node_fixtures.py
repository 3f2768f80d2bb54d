"""The node-tool samples (tests/fixtures/node-outputs, tests/fixtures/redfish): each is the copy SOURCES.md
describes (same sha256), each is recognised as its tool's output and parses to strict JSON."""

import hashlib
import json
import re
from pathlib import Path

import pytest

from validation.parsers import PARSERS, ParseError, detect_tool, parse

FIXTURES = Path(__file__).parent.parent / "fixtures"
NODE = FIXTURES / "node-outputs"
MOCKUP = FIXTURES / "redfish" / "public-rackmount1"
SAMPLES = sorted(path for path in NODE.iterdir() if path.name != "SOURCES.md")
EXPECTED_BY_PREFIX = {
    "bandwidthTest_": "cuda_bandwidth_test",
    "dcgmi-diag": "dcgmi_diag",
    "dcgmi-nvlink_": "nvlink",
    "fio-": "fio",
    "ior_": "ior",
    "ipmitool_": "ipmitool",
    "nvbandwidth_": "nvbandwidth",
    "nvidia-smi-nvlink_": "nvlink",
    "nvidia-smi-q": "nvidia_smi_q",
    "p2pBandwidthLatencyTest_": "p2p_bandwidth_latency",
    "redfish_": "redfish",
    "training-log_": "training_log",
    "xid_": "xid",
}
NODE_TOOLS = sorted(set(EXPECTED_BY_PREFIX.values()))


def expected_tool(path):
    return next(tool for prefix, tool in EXPECTED_BY_PREFIX.items() if path.name.startswith(prefix))


def sources():
    text = (NODE / "SOURCES.md").read_text()
    return dict(re.findall(r"## `([^`]+)`\n.*?- sha256: `([0-9a-f]{64})`", text, re.S))


def test_every_sample_is_the_copy_sources_md_describes():
    recorded = sources()
    assert len(SAMPLES) == 47 and sorted(recorded) == [path.name for path in SAMPLES]
    changed = [p.name for p in SAMPLES if hashlib.sha256(p.read_bytes()).hexdigest() != recorded[p.name]]
    assert changed == []


def test_cc_by_sa_excerpts_keep_their_attribution_and_the_mockup_its_licence():
    text = (NODE / "SOURCES.md").read_text()
    assert "CC BY-SA 4.0" in text and "stas00/ml-engineering" in text
    for name in ("dcgmi-diag_06", "dcgmi-diag_07", "nvidia-smi-nvlink_03", "nvidia-smi-nvlink_04", "nvidia-smi-q_06",
                 "xid_04"):  # fmt: skip
        entry = text[text.index(f"## `{name}") :].split("\n## ", 1)[0]
        assert "CC-BY-SA-4.0" in entry and "stas00/ml-engineering" in entry
    licence = (MOCKUP / "LICENSE.DMTF.md").read_text()
    assert "Distributed Management Task Force" in licence and "BSD 3-Clause" in licence
    assert len(list(MOCKUP.rglob("index.json"))) == 252


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: path.name)
def test_detection_picks_the_tool_and_the_sample_parses_to_strict_json(path):
    text = path.read_text()
    tool = expected_tool(path)
    assert detect_tool(text) == tool
    results = parse(text)
    assert results and all(result.tool == tool for result in results)
    json.dumps([result.to_dict() for result in results], allow_nan=False)


def test_the_node_parsers_are_registered():
    assert set(NODE_TOOLS) <= set(PARSERS)


def test_the_fabric_tools_detection_is_unchanged_by_the_node_signatures():
    """Each node signature comes after the fabric tools': their fixtures still go to their own tools."""
    tool_outputs = FIXTURES / "tool-outputs"
    for path in sorted(tool_outputs.glob("*.txt")):
        assert detect_tool(path.read_text()) not in NODE_TOOLS, path.name


def test_every_mockup_resource_is_json_redfish_reads_or_skips():
    from validation.parsers import redfish

    for path in sorted(MOCKUP.rglob("index.json")):
        document = json.loads(path.read_text())
        redfish.read_resource(document)  # never raises on a resource of any type
    with pytest.raises(ParseError):
        parse((MOCKUP / "AccountService" / "index.json").read_text(), "redfish")  # no type it reads
