"""`dcgmi diag -r 1|2|3|4` (DCGM 3.x and 4.x text tables) and `dcgmi diag -j` (JSON): one result per run,
with every test's status, per GPU where shown, and DCGM's own messages.

Text layouts:
- DCGM 3.x: `| PCIe | Pass - All |`, or `| GPU Memory | Pass - GPUs: 1, 2 |` followed by a continuation row
  `|  | Fail - GPU: 0 |`; test names in words ("Targeted Stress").
- DCGM 4.x: `| pcie | Fail |` followed by `|  | GPU0: Pass |` rows; plugin names ("targeted_stress").
- `| Warning | ... |`, `| Error | ... |` and `| Info | ... |` rows carry a message that DCGM wraps at 45
  characters, cutting words: the pieces are joined exactly as printed ("non-zero s" + "tatus 1"). A message
  belongs to the test above it in its section; one with no test above it (a Deployment check that aborted
  the run) is kept on the result.

`complete` is False when the output was cut (no closing `+---+` border after the last row, a row cut in
the middle), when DCGM reported an error instead of results, or when a JSON document was only partly
there: the caller must read that as "not measured", whatever the statuses it holds say.

JSON: DCGM 3.x (`"DCGM GPU Diagnostic"`, results by `gpu_ids`) and 4.x (`"DCGM Diagnostic"` +
`"metadata"`, results by `entity_group`/`entity_id` with a `test_summary`). A text that is not a whole JSON
document but is one or more whole test objects (`{"name": ..., "results": [...]}`, as pasted from the
middle of a document, trailing comma and all) is read with `complete=False` and says so in
`incomplete_reason`; anything else that is not valid JSON is refused with the line JSON stopped at.

The run level (`-r 3`, `--run long`) is known only when the capture shows the command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .base import Line, ParsedResult, ParseError, last_line_no, shown, split_lines
from .node_common import LineIndex, check_line_lengths, check_size, json_start, line_of, load_json

TOOL = "dcgmi_diag"

MAX_TEXT_CHARS = 16 * 2**20
MAX_JSON_CHARS = 16 * 2**20
MAX_TESTS = 1000
MAX_MESSAGES = 5000

STATUSES = ("Pass", "Fail", "Warn", "Skip", "Not Run")
_STATUS_WORDS = {
    "pass": "Pass",
    "passed": "Pass",
    "fail": "Fail",
    "failed": "Fail",
    "warn": "Warn",
    "warning": "Warn",
    "skip": "Skip",
    "skipped": "Skip",
    "not run": "Not Run",
    "notrun": "Not Run",
}
_MESSAGE_LEVELS = {"warning": "Warning", "error": "Error", "info": "Info"}
_LEVEL_NAMES = {"short": 1, "medium": 2, "long": 3, "xlong": 4}

_BORDER = re.compile(r"^\+[-=]{3,}\+[-=]{3,}\+$")
_SECTION = re.compile(r"^[|+]-{2,}\s+(?P<name>[A-Za-z][A-Za-z /-]{0,40}?)\s+-{2,}\+-{2,}[|+]$")
_RESULT = re.compile(
    r"^(?P<status>Pass|Fail|Warn|Skip|Not Run)(?:\s+-\s+(?:(?P<all>All)|GPUs?:\s*(?P<gpus>[0-9][0-9 ,]{0,400})))?$"
)
_GPU_RESULT = re.compile(r"^GPU\s?(?P<gpu>[0-9]{1,4}):\s*(?P<status>Pass|Fail|Warn|Skip|Not Run)$")
_GPU_IN_TEXT = re.compile(r"\bGPU\s?(?P<gpu>[0-9]{1,4})\b")
_COMMAND = re.compile(r"\bdcgmi\s+diag\b[^\n]*?(?:-r|--run)[\s=]+['\"]?(?P<level>[1-4]|short|medium|long|xlong)\b")
_RAN = re.compile(r"^Successfully ran diagnostic for group\.?$")
_TABLE_LINE = re.compile(r"^[ \t]*[|+]", re.MULTILINE)
_ERROR_LINE = re.compile(r"^(?:Error|ERROR)\b[^|]*$")


@dataclass(frozen=True, kw_only=True)
class DiagMessage:
    level: str  # "Warning", "Error", "Info"
    text: str
    gpu: int | None = None  # the GPU the message names, when it names one
    test: str | None = None
    section: str | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class DiagEntityResult:
    entity: str  # "GPU" (DCGM 4.x JSON may also name "CPU")
    id: int
    status: str


@dataclass(frozen=True, kw_only=True)
class DiagTest:
    name: str
    section: str | None  # "Deployment", "Hardware", "Integration", "Stress" ... (JSON: the category)
    status: str | None  # the test's own result; None when only per-GPU results were printed
    all_gpus: bool = False  # 3.x "Pass - All"
    results: tuple[DiagEntityResult, ...] = ()
    messages: tuple[DiagMessage, ...] = ()
    worst: str | None = None  # the worst of `status` and every per-entity status (Fail > Warn > Pass > Skip)
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class DcgmDiagResult(ParsedResult):
    tool: str = TOOL
    format: str  # "text" or "json"
    complete: bool
    incomplete_reason: str | None = None
    run_level: int | None = None
    dcgm_version: str | None = None
    driver_version: str | None = None
    gpu_device_ids: tuple[str, ...] = ()
    ran_successfully: bool | None = None  # "Successfully ran diagnostic for group." was printed
    tests: tuple[DiagTest, ...] = ()
    messages: tuple[DiagMessage, ...] = ()  # messages attached to no test
    errors: tuple[str, ...] = ()  # DCGM's error lines outside the table / runtime_error
    overall: str | None = None  # the worst status of all tests (None when no test)
    line_no: int = 1

    def test(self, name: str) -> DiagTest | None:
        return next((test for test in self.tests if test.name.lower() == name.lower()), None)


_RANK = {"Fail": 4, "Warn": 3, "Not Run": 2, "Pass": 1, "Skip": 0}


def worst_status(statuses) -> str | None:
    known = [status for status in statuses if status in _RANK]
    return max(known, key=_RANK.__getitem__) if known else None


def parse(text: str) -> list[DcgmDiagResult]:
    """Text or JSON: JSON when a line opens a JSON document before any table line."""
    first_line, body = json_start(text)
    head = text[: len(text) - len(body)]
    if body.lstrip().startswith(("{", "[")) and not _TABLE_LINE.search(head):
        return [parse_json(body, first_line=first_line, whole=text)]
    return [parse_text(text)]


# ---------------------------------------------------------------------------------------------------
# Text


@dataclass
class _Entry:
    """A test (or a message) being read: its first row and its continuation rows."""

    kind: str  # "test" or "message"
    name: str
    section: str | None
    line_no: int
    status: str | None = None
    all_gpus: bool = False
    results: list[DiagEntityResult] = field(default_factory=list)
    messages: list[DiagMessage] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)  # a message's pieces
    level: str | None = None
    chunk_width: int = 0


@dataclass
class _Table:
    section: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    tests: list[_Entry] = field(default_factory=list)
    loose_messages: list[DiagMessage] = field(default_factory=list)
    current_test: _Entry | None = None
    current_message: _Entry | None = None
    metadata_key: str | None = None
    rows: int = 0
    closed_after_last_row: bool = False
    cut_row: int | None = None
    seen_header: bool = False


def parse_text(text: str) -> DcgmDiagResult:
    check_size(text, MAX_TEXT_CHARS, "dcgmi diag output")
    lines = split_lines(text)
    check_line_lengths(lines)
    table = _Table()
    run_level = None
    ran = None
    errors: list[str] = []
    for line in lines:
        stripped = line.stripped
        if not stripped:
            continue
        if match := _COMMAND.search(stripped):
            level = match["level"]
            run_level = int(level) if level.isdigit() else _LEVEL_NAMES[level]
        if stripped.startswith("|") or stripped.startswith("+"):
            _read_table_line(table, line, stripped)
        elif _RAN.match(stripped):
            ran = True
        elif _ERROR_LINE.match(stripped) and len(errors) < 100:
            errors.append(stripped)
    _close_message(table)
    if not table.rows:
        if errors:
            return DcgmDiagResult(
                format="text", complete=False, incomplete_reason=errors[0], errors=tuple(errors),
                run_level=run_level, ran_successfully=ran, line_no=1,
            )  # fmt: skip
        raise ParseError(
            last_line_no(lines),
            "no dcgmi diag table found",
            "a '| Diagnostic | Result |' table with rows such as '| PCIe | Pass - All |' (or dcgmi diag -j JSON)",
        )
    reason = None
    if table.cut_row is not None:
        reason = f"row on line {table.cut_row} is cut off (output truncated)"
    elif not table.closed_after_last_row:
        reason = "the table ends without its closing border (output truncated)"
    elif errors:
        reason = errors[0]
    tests = tuple(_finish_test(entry) for entry in table.tests)
    return DcgmDiagResult(
        format="text",
        complete=reason is None,
        incomplete_reason=reason,
        run_level=run_level,
        dcgm_version=table.metadata.get("dcgm version"),
        driver_version=table.metadata.get("driver version detected"),
        gpu_device_ids=tuple(
            part.strip() for part in table.metadata.get("gpu device ids detected", "").split(",") if part.strip()
        ),
        ran_successfully=ran,
        tests=tests,
        messages=tuple(table.loose_messages),
        errors=tuple(errors),
        overall=worst_status(test.worst for test in tests),
        line_no=tests[0].line_no if tests else (table.loose_messages[0].line_no if table.loose_messages else 1),
    )


def _read_table_line(table: _Table, line: Line, stripped: str) -> None:
    if _BORDER.match(stripped):
        _close_message(table)
        table.closed_after_last_row = table.rows > 0
        return
    if match := _SECTION.match(stripped):
        _close_message(table)
        table.section = match["name"].strip()
        table.current_test = None
        table.metadata_key = None
        table.closed_after_last_row = False
        return
    if not stripped.startswith("|"):
        return
    second = stripped.find("|", 1)
    if second < 0:
        # "| ts." : the author cut the row before its second cell; a continuation of the message above
        if table.current_message is not None:
            table.current_message.chunks.append(stripped[1:].strip())
        table.cut_row = line.no
        table.rows += 1
        return
    first = stripped[1:second].strip()
    rest = stripped[second + 1 :]
    closed = rest.endswith("|")
    cell = rest[:-1] if closed else rest
    if not closed:
        table.cut_row = line.no
    content = cell.strip()
    table.closed_after_last_row = False
    if first.lower() == "diagnostic" and content.lower() == "result":
        table.seen_header = True
        return
    table.rows += 1
    if len(table.tests) > MAX_TESTS:
        raise ParseError(line.no, f"more than {MAX_TESTS} tests in one table", "one dcgmi diag run per file")
    if first:
        _close_message(table)
        _first_cell(table, line, first, content, cell if closed else None)
    else:
        _continuation(table, line, content, cell if closed else None)


def _chunk(cell: str | None, content: str) -> tuple[str, int]:
    """A message piece exactly as DCGM cut it: the cell minus its one leading space and two trailing ones.
    (A row pasted without its right border gives its stripped text.)"""
    if cell is None or len(cell) < 4:
        return content, 0
    return cell[1 : len(cell) - 2], len(cell) - 3


def _first_cell(table: _Table, line: Line, first: str, content: str, cell: str | None) -> None:
    section = table.section
    if section and section.lower() == "metadata":
        table.metadata_key = first.lower()
        table.metadata[first.lower()] = content
        return
    level = _MESSAGE_LEVELS.get(first.lower())
    if level:
        piece, width = _chunk(cell, content)
        table.current_message = _Entry(
            "message", first, section, line.no, level=level, chunks=[piece], chunk_width=width
        )
        return
    match = _RESULT.match(content)
    if not match:
        raise ParseError(
            line.no,
            f"result of {shown(first)} is {shown(content)}",
            "Pass, Fail, Warn or Skip (optionally '- All' or '- GPUs: 0, 1')",
        )
    entry = _Entry("test", first, section, line.no)
    _apply_result(entry, match, line.no)
    table.tests.append(entry)
    table.current_test = entry


def _apply_result(entry: _Entry, match: re.Match, line_no: int) -> None:
    status = match["status"]
    if match["gpus"]:
        for part in match["gpus"].split(","):
            if part.strip():
                gpu = int(part.strip()) if part.strip().isdigit() else None
                if gpu is None:
                    raise ParseError(line_no, f"GPU list {shown(match['gpus'])}", "GPU numbers separated by commas")
                entry.results.append(DiagEntityResult(entity="GPU", id=gpu, status=status))
    elif match["all"]:
        entry.status = worst_status([entry.status, status]) if entry.status else status
        entry.all_gpus = True
    else:
        entry.status = status


def _continuation(table: _Table, line: Line, content: str, cell: str | None) -> None:
    message = table.current_message
    if message is not None:
        previous_full = message.chunk_width and len(message.chunks[-1].rstrip()) >= message.chunk_width
        looks_like_result = _GPU_RESULT.match(content) or _RESULT.match(content)
        if previous_full or not looks_like_result:
            piece, _ = _chunk(cell, content)
            if not previous_full and message.chunks:  # a new line of the message, not a cut word
                message.chunks[-1] = message.chunks[-1].rstrip()
                piece = " " + piece.strip()
            message.chunks.append(piece)
            return
        _close_message(table)
    if table.section and table.section.lower() == "metadata" and table.metadata_key:
        table.metadata[table.metadata_key] += " " + content
        return
    test = table.current_test
    if test is None or not content:
        if content:
            raise ParseError(line.no, f"continuation row {shown(content)} follows no test", "a test row above it")
        return
    if match := _GPU_RESULT.match(content):
        test.results.append(DiagEntityResult(entity="GPU", id=int(match["gpu"]), status=match["status"]))
    elif match := _RESULT.match(content):
        _apply_result(test, match, line.no)
    else:
        raise ParseError(
            line.no, f"row {shown(content)} under {shown(test.name)}", "'GPU0: Pass' or 'Fail - GPU: 0' rows"
        )


def _close_message(table: _Table) -> None:
    message = table.current_message
    if message is None:
        return
    table.current_message = None
    text = "".join(message.chunks).strip()
    gpu = _GPU_IN_TEXT.search(text)
    test = table.current_test
    item = DiagMessage(
        level=message.level or "Info",
        text=text,
        gpu=int(gpu["gpu"]) if gpu else None,
        test=test.name if test else None,
        section=message.section,
        line_no=message.line_no,
    )
    if test is not None:
        test.messages.append(item)
    elif len(table.loose_messages) < MAX_MESSAGES:
        table.loose_messages.append(item)


def _finish_test(entry: _Entry) -> DiagTest:
    return DiagTest(
        name=entry.name,
        section=entry.section,
        status=entry.status,
        all_gpus=entry.all_gpus,
        results=tuple(entry.results),
        messages=tuple(entry.messages[:MAX_MESSAGES]),
        worst=worst_status([entry.status, *(result.status for result in entry.results)]),
        line_no=entry.line_no,
    )


# ---------------------------------------------------------------------------------------------------
# JSON


def parse_json(text: str, *, first_line: int = 1, whole: str | None = None) -> DcgmDiagResult:
    whole = text if whole is None else whole
    run_level = None
    if match := _COMMAND.search(whole[: 64 * 1024]):
        level = match["level"]
        run_level = int(level) if level.isdigit() else _LEVEL_NAMES[level]
    check_size(text, MAX_JSON_CHARS, "dcgmi diag -j")
    try:
        document = load_json(text, what="dcgmi diag -j", max_chars=MAX_JSON_CHARS, first_line=first_line)
    except ParseError as error:
        fragment = _fragment_tests(text, first_line)
        if fragment is None:
            raise error from None
        lines = LineIndex(text, first_line)
        tests = tuple(_json_test(test, None, lines) for test in fragment)
        return DcgmDiagResult(
            format="json",
            complete=False,
            incomplete_reason=(
                f"not a whole dcgmi diag -j document: {len(tests)} test object(s) cut from one "
                f"({error.message} on line {error.line_no})"
            ),
            run_level=run_level,
            tests=tests,
            overall=worst_status(test.worst for test in tests),
            line_no=first_line,
        )
    lines = LineIndex(text, first_line)
    if not isinstance(document, dict):
        raise ParseError(first_line, "the JSON is not an object", "dcgmi diag -j output: {\"DCGM Diagnostic\": ...}")
    root_key = next((key for key in ("DCGM Diagnostic", "DCGM GPU Diagnostic") if key in document), None)
    if root_key is None:
        if "name" in document and "results" in document:  # one whole test object on its own
            test = _json_test(document, None, lines)
            return DcgmDiagResult(
                format="json", complete=False, run_level=run_level, tests=(test,), overall=test.worst,
                incomplete_reason="one test object, not a whole dcgmi diag -j document", line_no=first_line,
            )  # fmt: skip
        raise ParseError(
            first_line, "no \"DCGM Diagnostic\" object", "dcgmi diag -j output ({\"DCGM Diagnostic\": {...}})"
        )
    root = _object(document[root_key], root_key, lines)
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    categories = root.get("test_categories") or []
    if not isinstance(categories, list):
        raise ParseError(line_of(text, '"test_categories"') + first_line - 1, "test_categories is not a list",
                         "a list of {\"category\": ..., \"tests\": [...]}")  # fmt: skip
    tests = []
    for category in categories:
        if category is None:
            continue
        category = _object(category, "a test category", lines)
        for test in category.get("tests") or []:
            if test is not None:
                tests.append(_json_test(test, _str(category.get("category")), lines))
                if len(tests) > MAX_TESTS:
                    raise ParseError(first_line, f"more than {MAX_TESTS} tests", "one dcgmi diag run per file")
    errors = [str(root["runtime_error"])[:2000]] if root.get("runtime_error") else []
    version = _str(root.get("version")) or _str(metadata.get("version")) or _str(metadata.get("DCGM Version"))
    driver = _str(metadata.get("Driver Version Detected")) or _str(document.get("Driver Version Detected"))
    device_ids = document.get("GPU Device IDs") or metadata.get("GPU Device IDs") or ()
    if not isinstance(device_ids, list):
        device_ids = []
    tests_tuple = tuple(tests)
    reason = errors[0] if errors else (None if tests_tuple else "the document holds no test results")
    return DcgmDiagResult(
        format="json",
        complete=reason is None,
        incomplete_reason=reason,
        run_level=run_level,
        dcgm_version=version,
        driver_version=driver,
        gpu_device_ids=tuple(str(item) for item in device_ids[:1024]),
        tests=tests_tuple,
        errors=tuple(errors),
        overall=worst_status(test.worst for test in tests_tuple),
        line_no=first_line,
    )


def _fragment_tests(text: str, first_line: int) -> list[dict] | None:
    """Whole test objects pasted without the document around them ("{...}, {...},"), or None."""
    body = text.strip().rstrip(",").strip()
    if not body.startswith("{"):
        return None
    try:
        items = load_json("[" + body + "]", what="dcgmi diag -j", max_chars=MAX_JSON_CHARS + 2, first_line=first_line)
    except ParseError:
        return None
    if items and all(isinstance(item, dict) and "name" in item and "results" in item for item in items):
        return items
    return None


def _object(value: Any, what: str, lines: LineIndex) -> dict:
    if not isinstance(value, dict):
        raise ParseError(lines.first_line, f"{what} is not a JSON object", "dcgmi diag -j output")
    return value


def _str(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _status(value: Any, lines: LineIndex) -> str:
    word = " ".join(str(value).split()).lower() if isinstance(value, str) else None
    if word not in _STATUS_WORDS:
        raise ParseError(
            lines.line(value if isinstance(value, str) else None, "status"),
            f"status {shown(str(value))}",
            "Pass, Fail, Warn, Skip or Not Run",
        )
    return _STATUS_WORDS[word]


def _json_test(test: Any, category: str | None, lines: LineIndex) -> DiagTest:
    test = _object(test, "a test", lines)
    name = _str(test.get("name")) or "?"
    results: list[DiagEntityResult] = []
    messages: list[DiagMessage] = []
    all_status = None
    for result in test.get("results") or []:
        if result is None:
            continue
        result = _object(result, f"a result of {name}", lines)
        status = _status(result.get("status"), lines)
        ids = _entity_ids(result)
        entity = _str(result.get("entity_group")) or "GPU"
        if ids is None:
            all_status = worst_status([all_status, status]) if all_status else status
        else:
            results.extend(DiagEntityResult(entity=entity, id=one, status=status) for one in ids)
        gpu = ids[0] if ids and len(ids) == 1 else None
        for level, key in (("Warning", "warnings"), ("Error", "errors"), ("Info", "info")):
            for item in _as_list(result.get(key)):
                message = item.get("warning") or item.get("error") if isinstance(item, dict) else item
                if isinstance(message, str) and message.strip() and len(messages) < MAX_MESSAGES:
                    messages.append(
                        DiagMessage(level=level, text=" ".join(message.split())[:4000], gpu=gpu, test=name,
                                    section=category, line_no=lines.line(message))
                    )  # fmt: skip
    summary = test.get("test_summary")
    summary_status = None
    if isinstance(summary, dict) and summary.get("status") is not None:
        summary_status = _status(summary.get("status"), lines)
    status = summary_status or all_status
    return DiagTest(
        name=name,
        section=category,
        status=status,
        all_gpus=all_status is not None and not results,
        results=tuple(results),
        messages=tuple(messages),
        worst=worst_status([status, *(result.status for result in results)]),
        line_no=lines.line(name),
    )


def _entity_ids(result: dict) -> list[int] | None:
    """DCGM 4.x: entity_id; 3.x: gpu_ids as a number or a "0,1,2" string. None when the result is for
    all GPUs at once (3.x deployment checks list every GPU in one string, which is also a list)."""
    if isinstance(result.get("entity_id"), int) and not isinstance(result.get("entity_id"), bool):
        return [result["entity_id"]]
    ids = result.get("gpu_ids", result.get("gpu_id"))
    if isinstance(ids, int) and not isinstance(ids, bool):
        return [ids]
    if isinstance(ids, str):
        parts = [part.strip() for part in ids.split(",") if part.strip()]
        if parts and all(part.isdigit() and len(part) < 6 for part in parts):
            return [int(part) for part in parts] if len(parts) == 1 else None
    return None


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]
