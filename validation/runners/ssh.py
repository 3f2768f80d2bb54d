"""SSHRunner: run the command on the node over SSH (asyncssh), with keys, user and port from settings.

Settings (all optional; the lead adds them to bringup/settings.py, read from the environment):
  VALIDATION_SSH_USER            login name (default: the user the worker runs as)
  VALIDATION_SSH_PORT            default 22
  VALIDATION_SSH_KEY_FILES       list of private key paths (default: asyncssh's ~/.ssh defaults)
  VALIDATION_SSH_KNOWN_HOSTS     known_hosts path (default ~/.ssh/known_hosts); host keys are always checked
  VALIDATION_SSH_CONNECT_TIMEOUT seconds to establish the connection (default 10)

Which failures are worth a retry: refused, reset, timed out, dropped. Which are not: an unknown host
name, refused authentication, an unverifiable host key (someone must fix the setup first).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence
from dataclasses import dataclass

import asyncssh

from .base import Runner, RunnerError, RunOutput, TransientRunnerError

_PERMANENT_SSH_ERRORS = (
    asyncssh.PermissionDenied,
    asyncssh.HostKeyNotVerifiable,
    asyncssh.KeyExchangeFailed,
    asyncssh.KeyImportError,
)


@dataclass(frozen=True)
class SSHOptions:
    username: str | None = None
    port: int = 22
    client_keys: Sequence[str] | None = None  # None: asyncssh's defaults under ~/.ssh
    known_hosts: str | None = None  # None: ~/.ssh/known_hosts (never "no checking")
    connect_timeout: float = 10.0

    @classmethod
    def from_settings(cls) -> SSHOptions:
        from django.conf import settings

        keys = getattr(settings, "VALIDATION_SSH_KEY_FILES", None)
        if isinstance(keys, str):
            keys = [k for k in keys.split(",") if k]
        return cls(
            username=getattr(settings, "VALIDATION_SSH_USER", None) or None,
            port=int(getattr(settings, "VALIDATION_SSH_PORT", 22)),
            client_keys=keys or None,
            known_hosts=getattr(settings, "VALIDATION_SSH_KNOWN_HOSTS", None) or None,
            connect_timeout=float(getattr(settings, "VALIDATION_SSH_CONNECT_TIMEOUT", 10)),
        )


class SSHRunner(Runner):
    def __init__(self, options: SSHOptions | None = None):
        self.options = options or SSHOptions.from_settings()

    def run(self, host: str, command: str, timeout: float) -> RunOutput:
        return asyncio.run(self._run(host, command, timeout))

    def run_pair(
        self, *, server_host: str, server_command: str, client_host: str, client_command: str, timeout: float
    ) -> tuple[RunOutput, RunOutput]:
        return asyncio.run(self._pair(server_host, server_command, client_host, client_command, timeout))

    async def _pair(self, server_host, server_command, client_host, client_command, timeout):
        server = asyncio.create_task(self._run(server_host, server_command, timeout))
        await asyncio.sleep(self.server_start_s)
        try:
            client_output = await self._run(client_host, client_command, timeout)
        except BaseException:
            server.cancel()  # nothing will connect to it now
            raise
        return await server, client_output

    def _connect_kwargs(self) -> dict:
        kwargs = {"port": self.options.port, "connect_timeout": self.options.connect_timeout}
        if self.options.username:
            kwargs["username"] = self.options.username
        if self.options.client_keys is not None:
            kwargs["client_keys"] = list(self.options.client_keys)
        if self.options.known_hosts:
            kwargs["known_hosts"] = self.options.known_hosts
        return kwargs

    async def _run(self, host: str, command: str, timeout: float) -> RunOutput:
        where = f"{host}:{self.options.port}"
        try:
            async with asyncio.timeout(timeout):
                async with asyncssh.connect(host, **self._connect_kwargs()) as connection:
                    completed = await connection.run(command, check=False, encoding="utf-8", errors="replace")
        except TimeoutError as exc:  # asyncio's and asyncssh's timeouts are both TimeoutError
            raise TransientRunnerError(f"{where}: {command!r} timed out after {timeout:g} s") from exc
        except _PERMANENT_SSH_ERRORS as exc:
            raise RunnerError(f"{where}: {type(exc).__name__}: {exc.reason}") from exc
        except asyncssh.Error as exc:
            raise TransientRunnerError(f"{where}: connection failed: {exc}") from exc
        except socket.gaierror as exc:
            raise RunnerError(f"{where}: cannot resolve host name: {exc.strerror}") from exc
        except OSError as exc:  # refused, reset, unreachable
            raise TransientRunnerError(f"{where}: {exc.strerror or exc}") from exc
        return RunOutput(
            stdout=completed.stdout or "",
            stderr=completed.stderr or "",
            # A command killed by a signal has no exit status; report it the way a shell does.
            exit_code=completed.exit_status
            if completed.exit_status is not None
            else 128 + _signal_number(completed),
        )


def _signal_number(completed: asyncssh.SSHCompletedProcess) -> int:
    import signal

    name = (completed.exit_signal or ("KILL",))[0]
    return getattr(signal, f"SIG{name}", signal.SIGKILL).value
