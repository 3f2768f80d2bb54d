"""A distributed training smoke test's log (torchrun / DDP over NCCL, Megatron-style or a plain script): what
it shows of the ranks joining, NCCL's communicator coming up, the steps done and their loss, and the
warnings and errors printed. One result per log; the judging is validation.criteria_node's.

Read, wherever they appear on a line (tqdm bars and rank prefixes are interleaved with the log):
- ranks: torchrun's `[rank3]:` prefix, `rank=3/7` (ezpz), `Rank 3: Completed store-based barrier ... with
  8 nodes`, `store for rank: 3`, NCCL's `rank 3 nranks 8` / `rank 3 nRanks 8`;
- world size: `nranks 8`, `with 8 nodes` (c10d's barrier), `WORLD_SIZE=8`, `"WORLD_SIZE_IN_USE": 8`,
  `world_size: 8`; every size stated is kept, so a disagreement shows;
- NCCL: `NCCL version 2.18.1+cuda12.1`, `... rank 0 nranks 8 cudaDev 0 busId 4f000 - Init COMPLETE`
  (and NCCL 2.19+'s `Init COMPLETE` lines with `nRanks`);
- steps: `step=5 loss=3.6606`, `step 5 ... loss: 3.66`, Megatron's `iteration 10/ 100 | ... lm loss:
  1.0E+01`; a loss printed as nan/inf is kept as not finite (its value is None: JSON has no NaN);
- warnings: `NCCL WARN` lines (an InfiniBand async event is tagged "ib_async_event"), `[WARNING]`,
  `UserWarning`; errors: Python tracebacks, `NCCL error`, `CUDA error`, watchdog timeouts,
  `ChildFailedError`, `RuntimeError`.

Lists are capped (MAX_ITEMS each); the counts are not.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .base import ParsedResult, ParseError, last_line_no, shown, split_lines
from .node_common import check_line_lengths, check_size

TOOL = "training_log"

MAX_TEXT_CHARS = 64 * 2**20
MAX_LINE_CHARS = 1024 * 1024  # a config dump can be one long line; a 10 MB line is not a log
MAX_ITEMS = 200
MAX_STEPS = 1_000_000
MAX_RANK = 1_000_000

# A loss is read loosely (any run of digits), then held to _STRICT_NUMBER: a 5,000-digit "loss" is refused with
# its line rather than skipped or cut to its first digits.
_LOSS_VALUE = r"(?P<loss>[-+]?(?:[0-9][0-9.]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|nan|-?inf(?:inity)?)(?![\w.])"
_STRICT_NUMBER = re.compile(r"[-+]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][-+]?[0-9]{1,3})?")
_STEP_LOSS = [
    re.compile(rf"\bstep\s*[=:]?\s*(?P<step>[0-9]+)\b(?:\s*/\s*[0-9]+)?.{{0,400}}?\bloss\s*[=:]\s*{_LOSS_VALUE}",
               re.IGNORECASE),
    re.compile(rf"\biteration\s+(?P<step>[0-9]+)\s*/\s*[0-9]+.{{0,400}}?\blm loss\s*:\s*{_LOSS_VALUE}",
               re.IGNORECASE),
]  # fmt: skip
_RANK_PATTERNS = [
    re.compile(r"^\[rank(?P<rank>[0-9]{1,7})\]:"),
    re.compile(r"\brank=(?P<rank>[0-9]{1,7})/[0-9]{1,7}\b"),
    re.compile(r"\bRank (?P<rank>[0-9]{1,7}): Completed store-based barrier\b"),
    re.compile(r"\bstore for rank: (?P<rank>[0-9]{1,7})\b"),
]
_NCCL_RANK = re.compile(r"\brank (?P<rank>[0-9]{1,7}) n[Rr]anks (?P<nranks>[0-9]{1,7})\b")
_INIT_COMPLETE = re.compile(r"\bInit COMPLETE\b")
_NCCL_VERSION = re.compile(r"\bNCCL version (?P<version>[0-9][0-9A-Za-z.+\-]{0,40})")
_NCCL_HOST = re.compile(r"^(?P<host>[A-Za-z0-9][A-Za-z0-9_.-]{0,253}):[0-9]{1,9}:[0-9]{1,9} \[[0-9]{1,4}\] NCCL ")
_WORLD_SIZE = [
    re.compile(r"\bwith (?P<size>[0-9]{1,7}) nodes\b"),
    re.compile(r"\bWORLD_SIZE(?:_IN_USE)?\"?\s*[=:]\s*\"?(?P<size>[0-9]{1,7})\b"),
    re.compile(r"\bworld[_ ]size\s*[=:]\s*(?P<size>[0-9]{1,7})\b", re.IGNORECASE),
]
_BACKEND = re.compile(r"\b(?:backend|DISTRIBUTED_BACKEND)\W{1,6}(?P<backend>nccl|gloo|mpi|xccl)\b", re.IGNORECASE)
_NCCL_WARN = re.compile(r"\bNCCL WARN\b")
_IB_ASYNC = re.compile(r"\bGot async event\b", re.IGNORECASE)
_WARNING = re.compile(r"\[WARNING\]|\bUserWarning\b|\bWARNING:")
# A line is searched for warnings and errors only when it holds one of these (lower case).
_MESSAGE_WORDS = ("warn", "error", "traceback", "timeout", "childfailed", "memory", "sigkill", "segmentation")
_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\bNCCL error\b|\bCUDA error\b|\bncclSystemError\b|\bncclInternalError\b"
    r"|\bWatchdog caught collective operation timeout\b|\bChildFailedError\b|^\s*RuntimeError:|\[ERROR\]"
    r"|\bout of memory\b|\bSIGKILL\b|\bSegmentation fault\b"
)


@dataclass(frozen=True, kw_only=True)
class TrainingStep:
    step: int
    loss: float | None  # None when not finite
    finite: bool
    loss_text: str
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class LogMessage:
    kind: str  # "nccl_warn", "ib_async_event", "warning", "error"
    text: str
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class TrainingLog(ParsedResult):
    tool: str = TOOL
    ranks_seen: tuple[int, ...] = ()
    world_sizes: tuple[int, ...] = ()  # every world size the log states, distinct, in order
    world_size: int | None = None  # the largest stated
    backend: str | None = None
    nccl_version: str | None = None
    nccl_init_complete_ranks: tuple[int, ...] = ()
    nccl_init_complete_lines: int = 0
    hosts: tuple[str, ...] = ()  # from NCCL's "host:pid:tid [dev] NCCL ..." prefixes
    steps: tuple[TrainingStep, ...] = ()
    last_step: int | None = None
    non_finite_steps: int = 0
    first_loss: float | None = None
    last_loss: float | None = None
    warnings: tuple[LogMessage, ...] = ()
    warning_count: int = 0
    ib_async_events: int = 0
    errors: tuple[LogMessage, ...] = ()
    error_count: int = 0
    line_no: int = 1


def parse(text: str) -> list[TrainingLog]:
    check_size(text, MAX_TEXT_CHARS, "training log")
    lines = split_lines(text)
    check_line_lengths(lines, MAX_LINE_CHARS)
    ranks: set[int] = set()
    world_sizes: list[int] = []
    init_ranks: set[int] = set()
    init_lines = 0
    hosts: list[str] = []
    steps: list[TrainingStep] = []
    warnings: list[LogMessage] = []
    errors: list[LogMessage] = []
    counts = {"warning": 0, "error": 0, "ib": 0}
    nccl_version = backend = None
    first_line = None
    for line in lines:
        raw = line.text
        if not raw.strip():
            continue
        # Each pattern is tried only on lines holding its key word: a 200 MB log costs a few scans, not a dozen.
        lower = raw.lower()
        found = False
        if "rank" in lower:
            for pattern in _RANK_PATTERNS:
                for match in pattern.finditer(raw):
                    _add_rank(ranks, match["rank"])
                    found = True
        if " NCCL " in raw or "NCCL INFO" in raw or "nranks" in lower:
            found |= _nccl_line(raw, ranks, world_sizes, init_ranks, hosts)
            if _INIT_COMPLETE.search(raw):
                init_lines += 1
            if nccl_version is None and (match := _NCCL_VERSION.search(raw)):
                nccl_version = match["version"]
        if "world" in lower or " nodes" in lower:
            for pattern in _WORLD_SIZE:
                if (match := pattern.search(raw)) and int(match["size"]) not in world_sizes and len(world_sizes) < 16:
                    world_sizes.append(int(match["size"]))
                    found = True
        if backend is None and "backend" in lower and (match := _BACKEND.search(raw)):
            backend = match["backend"].lower()
        if "loss" in lower:
            found |= _step(raw, line.no, steps)
        if any(word in lower for word in _MESSAGE_WORDS):
            found |= _messages(raw, line.no, warnings, errors, counts)
        if found and first_line is None:
            first_line = line.no
    if first_line is None:
        raise ParseError(
            last_line_no(lines),
            "no training log content found (no rank, NCCL, world size, step/loss, warning or error line)",
            "a torchrun/DDP log: 'step=5 loss=3.66' lines, NCCL 'Init COMPLETE' lines, rank prefixes",
        )
    finite = [step.loss for step in steps if step.loss is not None]
    return [
        TrainingLog(
            ranks_seen=tuple(sorted(ranks)),
            world_sizes=tuple(world_sizes),
            world_size=max(world_sizes) if world_sizes else None,
            backend=backend or ("nccl" if init_lines or nccl_version else None),
            nccl_version=nccl_version,
            nccl_init_complete_ranks=tuple(sorted(init_ranks)),
            nccl_init_complete_lines=init_lines,
            hosts=tuple(hosts),
            steps=tuple(steps),
            last_step=max((step.step for step in steps), default=None),
            non_finite_steps=sum(1 for step in steps if not step.finite),
            first_loss=finite[0] if finite else None,
            last_loss=finite[-1] if finite else None,
            warnings=tuple(warnings),
            warning_count=counts["warning"],
            ib_async_events=counts["ib"],
            errors=tuple(errors),
            error_count=counts["error"],
            line_no=first_line,
        )
    ]


def _add_rank(ranks: set[int], text: str) -> None:
    rank = int(text)
    if rank <= MAX_RANK and (len(ranks) < 100_000 or rank in ranks):
        ranks.add(rank)


def _nccl_line(raw: str, ranks: set[int], world_sizes: list[int], init_ranks: set[int], hosts: list[str]) -> bool:
    found = False
    if match := _NCCL_RANK.search(raw):
        _add_rank(ranks, match["rank"])
        size = int(match["nranks"])
        if size not in world_sizes and len(world_sizes) < 16:
            world_sizes.append(size)
        if _INIT_COMPLETE.search(raw) and len(init_ranks) < 100_000:
            init_ranks.add(int(match["rank"]))
        found = True
    if (match := _NCCL_HOST.match(raw.strip())) and match["host"] not in hosts and len(hosts) < 4096:
        hosts.append(match["host"])
        found = True
    return found or "NCCL INFO" in raw


def _step(raw: str, line_no: int, steps: list[TrainingStep]) -> bool:
    for pattern in _STEP_LOSS:
        if match := pattern.search(raw):
            if len(steps) >= MAX_STEPS:
                raise ParseError(line_no, f"more than {MAX_STEPS:,} steps", "a smoke test's log")
            text = match["loss"]
            if len(match["step"]) > 12:
                raise ParseError(line_no, f"step number {shown(match['step'])}", "a step number of at most 12 digits")
            if text.lower().lstrip("+-").startswith(("nan", "inf")):
                value = float("nan")
            elif _STRICT_NUMBER.fullmatch(text):
                value = float(text)
            else:
                raise ParseError(line_no, f"loss {shown(text)} is not a number of reasonable size", "a loss value")
            finite = math.isfinite(value)
            steps.append(
                TrainingStep(
                    step=int(match["step"]), loss=value if finite else None, finite=finite, loss_text=text,
                    line_no=line_no,
                )
            )  # fmt: skip
            return True
    return False


def _messages(raw: str, line_no: int, warnings: list, errors: list, counts: dict) -> bool:
    text = raw.strip()
    if _NCCL_WARN.search(raw):
        kind = "ib_async_event" if _IB_ASYNC.search(raw) else "nccl_warn"
        counts["warning"] += 1
        counts["ib"] += kind == "ib_async_event"
        if len(warnings) < MAX_ITEMS:
            warnings.append(LogMessage(kind=kind, text=text[:500], line_no=line_no))
        return True
    if _ERROR.search(raw):
        counts["error"] += 1
        if len(errors) < MAX_ITEMS:
            errors.append(LogMessage(kind="error", text=text[:500], line_no=line_no))
        return True
    if _WARNING.search(raw):
        counts["warning"] += 1
        if len(warnings) < MAX_ITEMS:
            warnings.append(LogMessage(kind="warning", text=text[:500], line_no=line_no))
        return True
    return False
