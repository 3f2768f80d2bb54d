"""What every runner promises: run one command on one host and return its output.

A runner raises only `RunnerError` (the command could not be run at all, retrying will not help,
e.g. authentication refused) or its subclass `TransientRunnerError` (worth retrying with backoff:
connection refused, timed out, connection lost). A command that ran and failed is not an error
here: it is a RunOutput with a non-zero exit code, judged by the caller.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass


@dataclass(frozen=True)
class RunOutput:
    stdout: str
    stderr: str
    exit_code: int

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class RunnerError(Exception):
    """The command could not be run; retrying will not help."""


class TransientRunnerError(RunnerError):
    """The command could not be run this time (refused, timed out, dropped); retry with backoff."""


class Runner(ABC):
    #: How long a two-sided test's server gets to start listening before its client connects.
    server_start_s: float = 1.0

    @abstractmethod
    def run(self, host: str, command: str, timeout: float) -> RunOutput:
        """Run `command` on `host`, waiting at most `timeout` seconds."""

    def run_stoppable(self, host: str, command: str, timeout: float, stop: threading.Event) -> RunOutput:
        """Like run(), but ends the command as soon as `stop` is set (raising RunnerError). A runner that
        cannot interrupt a command keeps this default, which lets it run to its end or its timeout."""
        return self.run(host, command, timeout)

    def run_pair(
        self, *, server_host: str, server_command: str, client_host: str, client_command: str, timeout: float
    ) -> tuple[RunOutput, RunOutput]:
        """A two-sided tool (ib_write_bw): start the server, let it listen, run the client against it.
        Returns (server output, client output). The server exits by itself once the client is done; if the
        client could not run at all, nothing will connect to the server, so it is stopped rather than
        waited for until its timeout."""
        stop = threading.Event()
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runner-server")
        try:
            server = pool.submit(self.run_stoppable, server_host, server_command, timeout, stop)
            time.sleep(self.server_start_s)
            client_output = self.run(client_host, client_command, timeout)
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)  # a runner that cannot stop must not hold us
            raise
        pool.shutdown(wait=True)
        return server.result(), client_output
