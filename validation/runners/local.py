"""LocalRunner: run the command on this machine, for a head node that launches cluster-wide tools
itself (mpirun, srun) or a single-node check. The `host` is only recorded, never contacted."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from .base import Runner, RunnerError, RunOutput, TransientRunnerError

# How often a stoppable command looks whether it was told to stop.
STOP_POLL_S = 0.1


class LocalRunner(Runner):
    def __init__(self, *, shell: str = "/bin/sh"):
        self.shell = shell

    def run(self, host: str, command: str, timeout: float) -> RunOutput:
        return self.run_stoppable(host, command, timeout, threading.Event())

    def run_stoppable(self, host: str, command: str, timeout: float, stop: threading.Event) -> RunOutput:
        process = self._start(host, command)
        deadline = time.monotonic() + timeout
        while True:
            try:
                stdout, stderr = process.communicate(timeout=max(min(STOP_POLL_S, deadline - time.monotonic()), 0))
                break
            except subprocess.TimeoutExpired as exc:
                if stop.is_set():
                    _kill_group(process)
                    raise RunnerError(f"{host}: {command!r} stopped: its other side could not run") from exc
                if time.monotonic() >= deadline:
                    _kill_group(process)
                    raise TransientRunnerError(f"{host}: {command!r} timed out after {timeout:g} s") from exc
        return RunOutput(
            stdout=stdout.decode("utf-8", errors="replace"),
            stderr=stderr.decode("utf-8", errors="replace"),
            exit_code=process.returncode,
        )

    def _start(self, host: str, command: str) -> subprocess.Popen:
        try:
            process = subprocess.Popen(
                [self.shell, "-c", command],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group, so a timeout kills what it started too
            )
        except OSError as exc:
            raise RunnerError(f"{host}: cannot start {self.shell}: {exc}") from exc
        return process


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate()
