"""SSHRunner over a real SSH connection: an asyncssh server on 127.0.0.1 (a free port, its own host
key, one authorised client key) runs in a thread for the module, and the runner connects to it."""

import asyncio
import socket
import threading

import asyncssh
import pytest

from core.choices import JobStatus
from inventory.choices import DeviceRole
from inventory.services import device_create
from tests.factories import gpu_server_model
from validation import services
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.runners import RunnerError, SSHOptions, SSHRunner, TransientRunnerError


class LoopbackSSHServer:
    """A small sshd: public-key auth only, each command run by /bin/sh (or answered by `responder`)."""

    def __init__(self, directory):
        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.client_key = asyncssh.generate_private_key("ssh-ed25519")
        self.key_file = directory / "id_ed25519"
        self.key_file.write_bytes(self.client_key.export_private_key())
        self.known_hosts = directory / "known_hosts"
        self.responder = None  # command -> (stdout, stderr, exit status), instead of a shell
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="test-sshd", daemon=True)

    async def _handle(self, process: asyncssh.SSHServerProcess) -> None:
        if self.responder is not None:
            stdout, stderr, status = self.responder(process.command)
        else:
            child = await asyncio.create_subprocess_shell(
                process.command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            try:
                out, err = await child.communicate()
            except asyncio.CancelledError:  # the server is stopping: leave no command behind
                child.kill()
                await child.wait()
                raise
            stdout, stderr, status = out.decode(), err.decode(), child.returncode
        process.stdout.write(stdout)
        process.stderr.write(stderr)
        process.exit(status)

    def start(self) -> None:
        self.thread.start()
        authorized = asyncssh.import_authorized_keys(self.client_key.export_public_key().decode())

        async def listen():
            return await asyncssh.create_server(
                asyncssh.SSHServer,
                "127.0.0.1",
                0,
                server_host_keys=[self.host_key],
                authorized_client_keys=authorized,
                process_factory=self._handle,
            )

        self.server = asyncio.run_coroutine_threadsafe(listen(), self.loop).result(timeout=10)
        self.port = self.server.sockets[0].getsockname()[1]
        public = self.host_key.export_public_key().decode().strip()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {public}\n[localhost]:{self.port} {public}\n")

    def stop(self) -> None:
        async def shutdown():
            self.server.close()
            await self.server.wait_closed()
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in pending:  # e.g. a handler still running the command a client timed out on
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    def options(self, **overrides) -> SSHOptions:
        values = dict(
            port=self.port,
            client_keys=[str(self.key_file)],
            known_hosts=str(self.known_hosts),
            connect_timeout=5,
        )
        values.update(overrides)
        return SSHOptions(**values)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    server = LoopbackSSHServer(tmp_path_factory.mktemp("sshd"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def shell_sshd(sshd):
    sshd.responder = None
    return sshd


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_runs_a_command_over_ssh(shell_sshd):
    output = SSHRunner(shell_sshd.options()).run("127.0.0.1", "echo out; echo err >&2; exit 3", timeout=20)
    assert (output.stdout, output.stderr, output.exit_code) == ("out\n", "err\n", 3)


def test_pair_runs_server_then_client(shell_sshd):
    runner = SSHRunner(shell_sshd.options())
    runner.server_start_s = 0.05
    server, client = runner.run_pair(
        server_host="127.0.0.1",
        server_command="echo listening",
        client_host="127.0.0.1",
        client_command="echo connected",
        timeout=20,
    )
    assert (server.stdout, client.stdout) == ("listening\n", "connected\n")


def test_timeout_is_transient(shell_sshd):
    with pytest.raises(TransientRunnerError, match="timed out after 0.5 s"):
        SSHRunner(shell_sshd.options()).run("127.0.0.1", "sleep 3", timeout=0.5)


def test_connection_refused_is_transient(shell_sshd):
    with pytest.raises(TransientRunnerError, match="127.0.0.1"):
        SSHRunner(shell_sshd.options(port=free_port())).run("127.0.0.1", "true", timeout=10)


def test_refused_key_is_a_permanent_error(shell_sshd, tmp_path):
    stranger = tmp_path / "stranger"
    stranger.write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    with pytest.raises(RunnerError) as excinfo:
        SSHRunner(shell_sshd.options(client_keys=[str(stranger)])).run("127.0.0.1", "true", timeout=10)
    assert not isinstance(excinfo.value, TransientRunnerError)
    assert "PermissionDenied" in str(excinfo.value)


def test_unknown_host_key_is_a_permanent_error(shell_sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with pytest.raises(RunnerError) as excinfo:
        SSHRunner(shell_sshd.options(known_hosts=str(empty))).run("127.0.0.1", "true", timeout=10)
    assert not isinstance(excinfo.value, TransientRunnerError)
    assert "HostKeyNotVerifiable" in str(excinfo.value)


def test_options_come_from_settings(settings):
    settings.VALIDATION_SSH_USER = "bringup"
    settings.VALIDATION_SSH_PORT = "2222"
    settings.VALIDATION_SSH_KEY_FILES = "/etc/bringup/id_ed25519,/etc/bringup/id_rsa"
    settings.VALIDATION_SSH_KNOWN_HOSTS = "/etc/bringup/known_hosts"
    options = SSHOptions.from_settings()
    assert options == SSHOptions(
        username="bringup",
        port=2222,
        known_hosts="/etc/bringup/known_hosts",
        client_keys=["/etc/bringup/id_ed25519", "/etc/bringup/id_rsa"],
        connect_timeout=10,
    )


@pytest.mark.django_db
def test_link_health_run_over_ssh_end_to_end(sshd, settings, project, django_capture_on_commit_callbacks):
    """The node answers like a node (via the simulator), but every command travels over real SSH."""
    from validation.runners import SimulatedRunner

    device_create(
        project=project, hardware_model=gpu_server_model(), name="localhost", role=DeviceRole.GPU_NODE
    )
    node_runner = SimulatedRunner(services.sim_cluster_for(project), seed=0)
    seen = []

    def respond(command):
        seen.append(command)
        output = node_runner.run("localhost", command, 10)
        return output.stdout, output.stderr, output.exit_code

    sshd.responder = respond
    settings.VALIDATION_SSH_PORT = sshd.port
    settings.VALIDATION_SSH_KEY_FILES = [str(sshd.key_file)]
    settings.VALIDATION_SSH_KNOWN_HOSTS = str(sshd.known_hosts)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.SSH)
    run.refresh_from_db()
    assert run.status == JobStatus.DONE and run.progress_done == run.progress_total == 8
    assert sorted(seen) == sorted(f"mlxlink -d mlx5_{i} -m -c" for i in range(8))
    results = list(run.results.all())
    assert {r.status for r in results} == {ResultStatus.DONE}
    faulty = {node_runner.faults.dirty_fiber[1], node_runner.faults.hot_optic[1]}
    failed = {r.params["rdma_device"] for r in results if r.verdict == Verdict.FAIL}
    assert failed == faulty  # a one-node cluster holds both optical faults
    assert all("Operational Info" in r.raw_output for r in results)
