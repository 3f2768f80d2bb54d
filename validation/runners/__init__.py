"""How a command reaches a node: `Runner.run(host, command, timeout) -> RunOutput`.

LocalRunner (subprocess on this machine), SSHRunner (asyncssh), SimulatedRunner (the demo cluster).
"""

from .base import Runner, RunnerError, RunOutput, TransientRunnerError
from .local import LocalRunner
from .simulated import SimCluster, SimModule, SimNode, SimRail, SimulatedRunner, plan_faults
from .ssh import SSHOptions, SSHRunner

__all__ = [
    "LocalRunner",
    "RunOutput",
    "Runner",
    "RunnerError",
    "SSHOptions",
    "SSHRunner",
    "SimCluster",
    "SimModule",
    "SimNode",
    "SimRail",
    "SimulatedRunner",
    "TransientRunnerError",
    "plan_faults",
]
