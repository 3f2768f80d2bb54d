"""The property of test_parsers_fuzz.py (results or ParseError, never another exception; results serialise to
strict JSON) over the node-tool samples: mutated the ways uploads go wrong, every number garbled in turn,
and hostile inputs (huge lines, huge numbers, entity declarations, deep JSON) given to every node parser,
which must refuse them fast with a line number."""

import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validation.parsers import PARSERS, ParseError, detect_tool, parse

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"
SAMPLES = sorted(path for path in NODE.iterdir() if path.name != "SOURCES.md")
SAMPLE_TEXTS = [path.read_text() for path in SAMPLES]
NODE_TOOLS = ["nvidia_smi_q", "dcgmi_diag", "xid", "nvlink", "nvbandwidth", "cuda_bandwidth_test",
              "p2p_bandwidth_latency", "fio", "ior", "training_log", "redfish", "ipmitool"]  # fmt: skip
NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
GARBAGE = ["x", "1e999", "-", "NaN", "inf", "", "9" * 5000, "0x", "\u0661\u0662", "1.2.3", "N/A", "[", '"', "|"]
FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def parses_or_refuses(function, text):
    try:
        results = function(text)
    except ParseError as error:
        assert isinstance(error.line_no, int) and error.line_no >= 1
        assert str(error).startswith(f"line {error.line_no}: ")
        return error
    assert isinstance(results, list)
    for result in results:
        json.dumps(result.to_dict(), allow_nan=False)
    return results


@st.composite
def mutated_sample(draw):
    lines = draw(st.sampled_from(SAMPLE_TEXTS)).split("\n")
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        action = draw(st.sampled_from(["truncate", "delete", "duplicate", "garble", "insert", "swap"]))
        index = draw(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)))
        if action == "truncate":
            text = "\n".join(lines)
            lines = text[: draw(st.integers(min_value=0, max_value=len(text)))].split("\n")
        elif action == "delete" and lines:
            del lines[index]
        elif action == "duplicate" and lines:
            lines.insert(index, lines[index])
        elif action == "garble" and lines:
            numbers = list(NUMBER.finditer(lines[index]))
            if numbers:
                number = draw(st.sampled_from(numbers))
                junk = draw(st.sampled_from(GARBAGE) | st.text(max_size=6))
                lines[index] = lines[index][: number.start()] + junk + lines[index][number.end() :]
        elif action == "insert":
            lines.insert(index, draw(st.text(max_size=40)))
        elif action == "swap" and len(lines) > 1:
            other = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
    return "\n".join(lines)


@FUZZ
@given(mutated_sample())
def test_mutated_node_samples_never_break_a_parser(text):
    for tool in NODE_TOOLS:
        parses_or_refuses(PARSERS[tool], text)
    parses_or_refuses(parse, text)
    try:
        assert detect_tool(text) in PARSERS
    except ParseError:
        pass


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: path.name)
def test_every_number_of_every_node_sample_garbled_in_turn(path):
    """Each line in turn (the first 80 of the long samples) gets all its numbers replaced by one kind of
    garbage, parsed by the sample's own tool."""
    lines = path.read_text().split("\n")
    tool = detect_tool("\n".join(lines))
    kinds = ["9" * 5000, "x", "1e999", "-", "\u0661"]
    for index, line in enumerate(lines[:80]):
        if NUMBER.search(line):
            garbled = NUMBER.sub(kinds[index % len(kinds)], line)
            parses_or_refuses(PARSERS[tool], "\n".join(lines[:index] + [garbled] + lines[index + 1 :]))


HOSTILE = {
    "garbage": "\x00\x01 garbage {[<\n" * 50,
    "deep json": "[" * 100_000 + "]" * 100_000,
    "deep json object": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "xml entities": '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>\n'
    "<nvidia_smi_log>&lol2;</nvidia_smi_log>\n",
    "huge number": "GPU 0: X (UUID: GPU-1)\n\t Link 0: " + "9" * 100_000 + " GB/s\n",
    "many pipes": "|" * 60_000 + "\n",
    "many colons": "a :" * 20_000 + "\n",
}


@pytest.mark.parametrize("tool", NODE_TOOLS)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_refused_or_read_fast(tool, name):
    started = time.perf_counter()
    parses_or_refuses(PARSERS[tool], HOSTILE[name])
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize("tool", NODE_TOOLS)
def test_a_10_mb_line_is_refused_naming_its_line(tool):
    started = time.perf_counter()
    outcome = parses_or_refuses(PARSERS[tool], "first line\n" + "a b: 1 | " * 1_200_000 + "\n")
    assert isinstance(outcome, ParseError) and outcome.line_no in (1, 2)
    assert time.perf_counter() - started < 5.0


def test_xml_entities_are_refused_on_their_line():
    outcome = parses_or_refuses(PARSERS["nvidia_smi_q"], HOSTILE["xml entities"])
    assert isinstance(outcome, ParseError) and outcome.line_no == 2 and "entity" in outcome.message
