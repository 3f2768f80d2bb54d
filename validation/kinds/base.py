"""What a check kind is, and what the generic run machinery and a kind exchange.

A `Kind` declares everything one kind of check does: how it turns the project's GPU nodes into targets,
how long one of its commands may take, the run options it takes beyond the common ones, how one target
is executed and judged, what it judges over the whole run once every target finished, and what its
results show (the one figure a results table prints, the charts of a run page and of a result page,
built by validation.presenters). The generic code (validation.services, validation.presenters) looks a
kind up in the registry (validation.kinds) instead of asking "which kind is this?" itself.

A target is a `Target` when it is built and a CheckResult row once the run starts; executing it is
given `TargetInputs` (read from the database beforehand, so the long part touches none) and returns a
`Measurement`, which the services record on the target's row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

from inventory.models import Device, Optic, Port
from projects.models import Project

from .. import criteria
from ..choices import CheckKind, RunnerKind
from ..cluster import Node
from ..models import CheckResult, CheckRun
from ..parsers.base import ParseError
from ..runners import Runner, RunOutput

# ---------------------------------------------------------------------------------------------------
# Targets and their measurements


@dataclass
class Target:
    """One thing a run measures: a port, a node pair, a node or a group of nodes."""

    key: str
    params: dict
    round: int = 0
    host: str = ""
    command: str = ""
    device: Device | None = None
    peer_device: Device | None = None
    port: Port | None = None
    peer_port: Port | None = None
    cable_id: int | None = None
    optic: Optic | None = None


@dataclass(frozen=True)
class TargetInputs:
    """What executing a target needs from the database, read before the execution so that the long part
    (commands on nodes) touches no database and a busy one can be waited out before it starts."""

    runner: Runner
    profile: criteria.Profile
    timeout: float
    baseline: dict | None = None  # what the kind compares with (link health: the port's last counters)


@dataclass
class Measurement:
    raw_output: str = ""
    stderr: str = ""
    exit_code: int | None = None
    metrics: dict = field(default_factory=dict)
    verdict: criteria.Verdict = field(default_factory=lambda: criteria.Verdict(criteria.Outcome.PASS))


def tail(text: str, lines: int = 5) -> str:
    """The last lines of a tool's output on one line: what an error message quotes."""
    return " | ".join(text.strip().splitlines()[-lines:])


def failed_to_run(tool: str, output: RunOutput, where: str) -> Measurement:
    detail = tail(output.stderr) or tail(output.stdout) or "no output"
    return Measurement(
        raw_output=output.stdout,
        stderr=output.stderr,
        exit_code=output.exit_code,
        verdict=criteria.error_verdict(f"{tool} on {where} exited {output.exit_code}: {detail}"),
    )


def unparsable(tool: str, output: RunOutput, exc: ParseError) -> Measurement:
    return Measurement(
        raw_output=output.stdout,
        stderr=output.stderr,
        exit_code=output.exit_code,
        verdict=criteria.error_verdict(f"{tool} output unreadable at {exc}"),
    )


def reasons_from_json(reasons: Iterable[dict]) -> list[criteria.Reason]:
    """A result's stored reasons, to judge it again with more of them (a judgement over the whole run)."""
    return [criteria.Reason(criteria.Outcome(r["level"]), r["text"]) for r in reasons]


# ---------------------------------------------------------------------------------------------------
# Options: each checks one value and returns it cleaned, or raises ValueError saying what it expected.

OptionCheck = Callable[[Any], Any]
HOST_MAX_LENGTH = CheckResult._meta.get_field("host").max_length


@dataclass(frozen=True)
class Option:
    check: OptionCheck
    simulated_only: bool = False  # meaningless (and refused) with a runner that reaches real nodes


def whole_number(minimum: int) -> OptionCheck:
    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"expected a whole number of at least {minimum}")
        return value

    return check


def boolean(value):
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


MAX_HOSTS = 20_000  # names one option may list: past any cluster's node count, so checking them stays cheap


def host_list(value):
    """A list of host names, each checked as one (trimmed, at most HOST_MAX_LENGTH characters), duplicates
    dropped in the order given."""
    if not isinstance(value, list):
        raise ValueError("expected a list of host names")
    if len(value) > MAX_HOSTS:
        raise ValueError(f"expected at most {MAX_HOSTS:,} host names")
    names = []
    for item in value:
        if not isinstance(item, str):
            raise ValueError("expected a list of host names")
        names.append(host_name(item))
    return list(dict.fromkeys(names))


def node_pairs_list(value):
    """host_list for a test between pairs of nodes: at least two distinct names (one has no pair)."""
    names = host_list(value)
    if len(names) < 2:
        raise ValueError("name at least two GPU nodes: the matrix measures pairs of them (leave the option out "
                         "for every node)")
    return names


def shortened_names(names: list[str], *, shown: int = 5, length: int = 40) -> str:
    """Names echoed back in a refusal: the first few, each cut to `length` characters, and how many more."""
    cut = [name if len(name) <= length else name[: length - 1] + "…" for name in names[:shown]]
    more = f" and {len(names) - shown:,} more" if len(names) > shown else ""
    return ", ".join(cut) + more


def host_counts(value):
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and whole_number(0)(v) >= 0 for k, v in value.items()
    ):
        raise ValueError("expected an object of host name: number of refused attempts")
    return value


def positive_seconds(value):
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError("expected a positive number of seconds")
    return value


def host_name(value):
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected a host name")
    if len(value.strip()) > HOST_MAX_LENGTH:
        raise ValueError(f"expected a host name of at most {HOST_MAX_LENGTH} characters")
    return value.strip()


def one_of(values: Iterable[str]) -> OptionCheck:
    allowed = list(values)

    def check(value):
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return value

    return check


def clean_options(options: Mapping | None, table: Mapping[str, Option], *, runner: str, refusal: str) -> dict:
    """Check options against `table`; a bad one is a ValidationError naming it ("options.<name>"), never a
    crash later in a task. `refusal` is the message for an option the table does not hold."""
    cleaned, errors = {}, {}
    for name, value in (options or {}).items():
        spec = table.get(name)
        if spec is None or (spec.simulated_only and runner != RunnerKind.SIMULATED):
            errors[f"options.{name}"] = refusal
            continue
        try:
            cleaned[name] = spec.check(value)
        except ValueError as exc:
            errors[f"options.{name}"] = str(exc)
    if errors:
        raise ValidationError(errors)
    return cleaned


# ---------------------------------------------------------------------------------------------------
# The kind


TargetsBuilder = Callable[[list[Node], dict, Project], list[Target]]
Executor = Callable[[CheckResult, TargetInputs], Measurement]


def _one_command(params: dict) -> int:
    return 1


def _no_figure(metrics: dict) -> str:
    return ""


@dataclass(frozen=True)
class Kind:
    """Everything one check kind does. Kinds that are not started as a run of targets (a soak, port
    states that only arrive as uploads) leave `build_targets` and `execute` out and say why."""

    kind: CheckKind
    # -- running it -----------------------------------------------------------------------------------
    build_targets: TargetsBuilder | None = None  # (nodes, cleaned options, project) -> targets
    execute: Executor | None = None  # one target: run its command(s) and judge; no database access
    timeout_s: float = 120  # seconds one command may take unless the run's options say otherwise
    options: Mapping[str, Option] = field(default_factory=dict)  # beyond those every run takes (soak: all)
    commands_per_target: Callable[[dict], int] = _one_command  # from a target's params: sizes its lease
    baseline: Callable[[CheckResult], dict | None] | None = None  # read before executing, for comparing
    # `baseline` for a chunk of one run's targets at once, by result id (one query for the chunk, not one
    # a target); a kind with a baseline should have it. validation.services.execution prefers it.
    baselines: Callable[[list[CheckResult]], dict[int, dict | None]] | None = None
    finalise: Callable[[CheckRun, criteria.Profile], list[str]] | None = None  # over the run; log lines
    between_nodes: bool = False  # measures between nodes, so a project needs two of them at least
    local_runner: bool = False  # may run with the local runner (launched from this server)
    not_startable: str = ""  # why a person cannot start it as a run
    no_targets: str = ""  # what a project without targets lacks, when not GPU nodes with compute ports
    # -- showing it -----------------------------------------------------------------------------------
    figure: Callable[[dict], str] = _no_figure  # metrics -> the one figure a results table prints
    run_charts: tuple[str, ...] = ()  # what a run page draws (validation.presenters.RUN_CHARTS)
    result_charts: tuple[str, ...] = ()  # what a result page draws (validation.presenters.RESULT_CHARTS)

    @property
    def startable(self) -> bool:
        return self.build_targets is not None and self.execute is not None


def gbps(value) -> str:
    """A bandwidth as a results table prints it."""
    return f"{criteria.fmt_num(value, 1)} Gb/s" if isinstance(value, int | float) else ""
