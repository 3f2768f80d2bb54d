"""Reading a port's counters for a soak, through the window's runner; and the simulated cluster under
soak, whose counters grow on chosen ports."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .. import criteria
from ..choices import RunnerKind
from ..cluster import sim_cluster_for
from ..kinds.base import tail
from ..models import CheckResult, SoakWindow
from ..parsers import mlxlink as mlxlink_parser
from ..parsers.base import ParseError
from ..runners import Runner, RunnerError, RunOutput, SimCluster, SimulatedRunner, plan_faults
from ..runners.ssh import SSHRunner
from .maths import COUNTER_FIELDS


def counters_command(rdma_device: str) -> str:
    """Counters and BER only (-c): the module's DOM is the link-health run's business."""
    return shlex.join(["mlxlink", "-d", rdma_device, "-c"])


_GROWTH_PER_SAMPLE = {
    "Symbol Errors": 1500,
    "Effective Physical Errors": 40,
    "Link Error Recovery Counter": 1,
}
_COUNTER_LINE = re.compile(
    r"^(?P<key>" + "|".join(map(re.escape, _GROWTH_PER_SAMPLE)) + r")(?P<sep>\s*:\s*)(?P<value>\d+)\s*$",
    re.MULTILINE,
)


def grow_counters(text: str, steps: int) -> str:
    """mlxlink text with its error counters raised as `steps` readings of a degrading link would show."""

    def raise_value(match: re.Match) -> str:
        value = int(match.group("value")) + steps * _GROWTH_PER_SAMPLE[match.group("key")]
        return f"{match.group('key')}{match.group('sep')}{value}"

    return _COUNTER_LINE.sub(raise_value, text)


class SoakSimulatedRunner(SimulatedRunner):
    """The demo cluster read at sample `sweep`: ports in `growing` ((host, rdma device) pairs) gain errors
    at every reading from sample `grow_from` on; every other port's counters stay where they are."""

    def __init__(
        self,
        cluster: SimCluster,
        *,
        seed: int,
        sweep: int,
        growing: Iterable[tuple[str, str]],
        grow_from: int,
        down_hosts: Iterable[str] = (),
    ):
        super().__init__(cluster, seed=seed, down_hosts=down_hosts)
        self.sweep = sweep
        self.growing = set(growing)
        self.grow_from = grow_from

    def run(self, host: str, command: str, timeout: float) -> RunOutput:
        output = super().run(host, command, timeout)
        argv = shlex.split(command)
        device = argv[argv.index("-d") + 1] if "-d" in argv[:-1] else None
        steps = self.sweep - self.grow_from + 1
        if not output.ok or steps <= 0 or (host, device) not in self.growing:
            return output
        return RunOutput(grow_counters(output.stdout, steps), output.stderr, output.exit_code)


def growing_ports(options: Mapping, cluster: SimCluster) -> list[tuple[str, str]]:
    """The simulated ports whose counters grow: the window's `growing_ports` ("host:mlx5_N"), or by default
    the dirty fiber the fault plan puts in the cluster (a dirty connector keeps taking errors)."""
    if "growing_ports" in options:
        return [tuple(entry.split(":", 1)) for entry in options["growing_ports"]]
    dirty = plan_faults(cluster, options.get("seed", 0)).dirty_fiber
    return [dirty] if dirty else []


def soak_runner(window: SoakWindow, sweep: int) -> Runner:
    run = window.run
    if run.runner == RunnerKind.SIMULATED:
        cluster = sim_cluster_for(window.project)
        return SoakSimulatedRunner(
            cluster,
            seed=run.options.get("seed", 0),
            sweep=sweep,
            growing=growing_ports(run.options, cluster),
            grow_from=run.options.get("grow_from_sample", 1),
            down_hosts=run.options.get("down_hosts", ()),
        )
    return SSHRunner()


@dataclass(frozen=True)
class Reading:
    counters: dict | None = None
    error: str = ""


def read_counters(runner: Runner, result: CheckResult, timeout: float) -> Reading:
    """One port's counters through the runner, or why they could not be read. Never raises: a port that
    cannot be read at one sampling is tried again at the next."""
    try:
        output = runner.run(result.host, result.command, timeout)
    except RunnerError as exc:
        return Reading(error=f"could not run on {result.host}: {exc}")
    if not output.stdout.strip():
        return Reading(error=f"mlxlink exited {output.exit_code}: {tail(output.stderr, 3) or 'no output'}")
    try:
        parsed = mlxlink_parser.parse(output.stdout)
    except ParseError as exc:
        return Reading(error=f"mlxlink output unreadable at {exc}")
    counters = criteria.as_dict(parsed[0].counters) if parsed else {}
    if all(counters.get(key) is None for key in COUNTER_FIELDS):
        return Reading(error="mlxlink printed no error counters (is -c supported?)")
    return Reading(counters=counters)
