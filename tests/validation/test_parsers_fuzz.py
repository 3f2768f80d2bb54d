"""Property: whatever text arrives, every parser (and detection) either returns results or raises
ParseError, never any other exception, and what it returns serialises to strict JSON.

Inputs are random text, plus every fixture mutated the ways real uploads go wrong: cut off,
lines deleted or repeated, numbers replaced by garbage. Example counts are kept small so the whole
module runs in a few seconds in CI.
"""

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validation.parsers import PARSERS, ParseError, detect_tool, parse

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "tool-outputs").glob("*.txt"))
FIXTURE_TEXTS = [path.read_text() for path in FIXTURES]
NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
GARBAGE = [
    "x",
    "1e999",
    "-",
    "NaN",
    "inf",
    "",
    "9" * 5000,
    "0x",
    "\u0661\u0662",
    "1.2.3",
    "N/A",
    "[",
    "'",
    "==",
]
TOOL_TOKENS = [
    "#",
    " ",
    "\t",
    ":",
    "[",
    "]",
    "(",
    ")",
    "==(",
    ")==>",
    "0",
    "1.5",
    "N/A",
    "\n",
    "-",
    "x",
    "GPU0",
]
TOOL_TOKENS += ["CA '", "Port 1:", "lid", "'", "Operational Info\n---\n", "# nThread 1 nGpus 1\n", "Test\n"]

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def assert_parses_or_raises_parse_error(function, text):
    try:
        results = function(text)
    except ParseError as error:
        assert isinstance(error.line_no, int) and error.line_no >= 1
        assert str(error).startswith(f"line {error.line_no}: ")
        return
    assert isinstance(results, list)
    for result in results:
        json.dumps(result.to_dict(), allow_nan=False)


def run_everything(text):
    for parser in PARSERS.values():
        assert_parses_or_raises_parse_error(parser, text)
    assert_parses_or_raises_parse_error(parse, text)
    try:
        assert detect_tool(text) in PARSERS
    except ParseError:
        pass


@st.composite
def mutated_fixture(draw):
    lines = draw(st.sampled_from(FIXTURE_TEXTS)).split("\n")
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
@given(st.text(max_size=400))
def test_random_text_never_breaks_a_parser(text):
    run_everything(text)


@FUZZ
@given(st.lists(st.sampled_from(TOOL_TOKENS), max_size=80))
def test_random_tool_like_tokens_never_break_a_parser(tokens):
    run_everything("".join(tokens))


@settings(FUZZ, max_examples=500)
@given(mutated_fixture())
def test_mutated_fixtures_never_break_a_parser(text):
    run_everything(text)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_every_number_of_every_fixture_garbled_in_turn(path):
    """A deterministic sweep the random search can miss: each line in turn gets all its numbers
    replaced by one kind of garbage (kinds rotate by line), parsed by the fixture's own tool."""
    lines = path.read_text().split("\n")
    tool = detect_tool("\n".join(lines))
    kinds = ["9" * 5000, "x", "1e999", "-", "\u0661"]
    for index, line in enumerate(lines):
        if NUMBER.search(line):
            garbled = NUMBER.sub(kinds[index % len(kinds)], line)
            assert_parses_or_raises_parse_error(
                PARSERS[tool], "\n".join(lines[:index] + [garbled] + lines[index + 1 :])
            )
