"""ibdiagnet summaries: v1's "Stages Status Report" (STAGE / Errors / Warnings) and ibdiagnet2's
"Summary" table (Stage / Warnings / Errors / Comment). The two order their columns differently, so
the header decides. ibdiagnet2 logs are often pasted with blank lines between rows; blank lines
inside the table are skipped. `-W-` and `-E-` lines anywhere in the log are kept as messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import Line, ParsedResult, ParseError, last_line_no, parse_int, split_lines

TOOL = "ibdiagnet"

_V1_HEADER = re.compile(
    r"^STAGE\s+(?P<first>Errors|Warnings)\s+(?P<second>Errors|Warnings)\s*$", re.IGNORECASE
)
_V2_HEADER = re.compile(
    r"^(?:-I-\s+)?Stage\s+(?P<first>Warnings|Errors)\s+(?P<second>Warnings|Errors)(?:\s+Comment)?\s*$",
    re.IGNORECASE,
)
# The counts are the first two cells that start with a digit after the stage name.
_ROW = re.compile(
    r"^(?:-I-\s+)?(?P<stage>\S.*?)\s+(?P<first>[+-]?[0-9]\S*)\s+(?P<second>[+-]?[0-9]\S*)"
    r"(?:\s+(?P<comment>\S.*?))?\s*$"
)
_MESSAGE = re.compile(r"^-(?P<level>[EW])-\s*(?P<text>.*)$")
_VERSION = re.compile(
    r"ibdiagnet(?P<major>2)?[ /]?(?:version\s*)?(?P<version>[0-9]+(?:\.[0-9]+)+)", re.IGNORECASE
)


@dataclass(kw_only=True)
class IbdiagnetStage:
    name: str
    warnings: int
    errors: int
    comment: str | None = None


@dataclass(kw_only=True)
class IbdiagnetResult(ParsedResult):
    tool: str = TOOL
    format_version: int  # 1 for "Stages Status Report", 2 for the ibdiagnet2 "Summary"
    ibdiagnet_version: str | None = None
    stages: list[IbdiagnetStage] = field(default_factory=list)
    total_warnings: int = 0
    total_errors: int = 0
    warning_messages: list[str] = field(default_factory=list)
    error_messages: list[str] = field(default_factory=list)
    line_no: int = 1


def parse(text: str) -> list[IbdiagnetResult]:
    lines = split_lines(text)
    results: list[IbdiagnetResult] = []
    warnings, errors = [], []
    version = next((m["version"] for line in lines if (m := _VERSION.search(line.text))), None)
    index = 0
    while index < len(lines):
        line = lines[index]
        header = _V1_HEADER.match(line.stripped) or _V2_HEADER.match(line.stripped)
        if header:
            result = IbdiagnetResult(
                format_version=1 if _V1_HEADER.match(line.stripped) else 2,
                ibdiagnet_version=version,
                line_no=line.no,
            )
            index = _read_table(lines, index + 1, header, result)
            results.append(result)
            continue
        if message := _MESSAGE.match(line.stripped):
            (errors if message["level"] == "E" else warnings).append(message["text"].strip())
        index += 1
    if not results:
        raise ParseError(
            last_line_no(lines),
            "no ibdiagnet summary table found",
            "a 'Stages Status Report' (STAGE Errors Warnings) or a 'Stage Warnings Errors Comment' summary",
        )
    for result in results:
        result.warning_messages, result.error_messages = warnings, errors
    return results


def _read_table(lines: list[Line], index: int, header: re.Match, result: IbdiagnetResult) -> int:
    """Rows until a line that is not one; v1 tables also end at their first blank line."""
    warnings_first = header["first"].lower() == "warnings"
    while index < len(lines):
        line = lines[index]
        if not line.stripped:
            if result.format_version == 1 and result.stages:
                return index
            index += 1
            continue
        row = _ROW.match(line.stripped)
        if not row:
            return index
        first = parse_int(row["first"], line.no, f"the {header['first']} count")
        second = parse_int(row["second"], line.no, f"the {header['second']} count")
        warnings, errors = (first, second) if warnings_first else (second, first)
        result.stages.append(
            IbdiagnetStage(name=row["stage"], warnings=warnings, errors=errors, comment=row["comment"])
        )
        result.total_warnings += warnings
        result.total_errors += errors
        index += 1
    return index
