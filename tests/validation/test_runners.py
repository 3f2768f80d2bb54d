"""Runners without a database: the round-robin schedule, command building, LocalRunner, and the
simulated cluster, whose every output goes through the same parsers and criteria as real output."""

import itertools
import shlex
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validation import criteria
from validation.parsers import mlxlink, nccl, perftest
from validation.parsers.base import ParseError
from validation.runners import (
    LocalRunner,
    RunnerError,
    SimCluster,
    SimModule,
    SimNode,
    SimRail,
    SimulatedRunner,
    TransientRunnerError,
    commands,
    plan_faults,
)
from validation.runners.schedule import cover_pairs, round_robin_rounds

PROFILE = criteria.Profile()
XDR = criteria.LinkPlan("IB-XDR", "4x")


def sim_cluster(nodes: int = 4, rails: int = 8, dac_rails: tuple[int, ...] = ()) -> SimCluster:
    return SimCluster(
        tuple(
            SimNode(
                f"gpu-{n:03d}",
                tuple(
                    SimRail(r, f"mlx5_{r}", f"ib{r}", module=SimModule(optical=r not in dac_rails))
                    for r in range(rails)
                ),
            )
            for n in range(1, nodes + 1)
        )
    )


# -- schedule ------------------------------------------------------------------------------------------


def _check_schedule(nodes):
    rounds = round_robin_rounds(nodes)
    for pairs in rounds:
        in_round = [n for pair in pairs for n in pair]
        assert len(in_round) == len(set(in_round)), f"a node is in two tests of one round: {pairs}"
    covered = [frozenset(p) for pairs in rounds for p in pairs]
    assert sorted(map(sorted, covered)) == sorted(
        map(sorted, map(frozenset, itertools.combinations(nodes, 2)))
    )
    assert len(covered) == len(set(covered)), "a pair was scheduled twice"
    return rounds


@pytest.mark.parametrize("count", range(0, 13))
def test_round_robin_covers_every_pair_once_and_no_node_twice_in_a_round(count):
    rounds = _check_schedule([f"n{i}" for i in range(count)])
    expected_rounds = 0 if count < 2 else (count - 1 if count % 2 == 0 else count)
    assert len(rounds) == expected_rounds


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=6), min_size=0, max_size=30, unique=True))
def test_round_robin_property(nodes):
    _check_schedule(nodes)


def test_round_robin_for_72_nodes_is_71_rounds_of_36_pairs():
    rounds = _check_schedule([f"gpu-{i:03d}" for i in range(1, 73)])
    assert len(rounds) == 71 and {len(r) for r in rounds} == {36}


def test_round_robin_refuses_duplicate_names():
    with pytest.raises(ValueError, match="unique"):
        round_robin_rounds(["a", "b", "a"])


@pytest.mark.parametrize("count", [2, 3, 4, 5, 9])
def test_cover_pairs_include_every_node_without_doubling_within_a_round(count):
    nodes = [f"n{i}" for i in range(count)]
    rounds = cover_pairs(nodes)
    assert {n for pairs in rounds for pair in pairs for n in pair} == set(nodes)
    for pairs in rounds:
        members = [n for pair in pairs for n in pair]
        assert len(members) == len(set(members))
    assert len(rounds) == (1 if count % 2 == 0 else 2)


# -- commands ------------------------------------------------------------------------------------------


def test_inventory_values_cannot_become_shell_syntax():
    command = commands.mlxlink_command("mlx5_0; rm -rf /")
    assert shlex.split(command) == ["mlxlink", "-d", "mlx5_0; rm -rf /", "-m", "-c"]
    pair = commands.ib_write_bw_commands(rdma_device="mlx5_1", server_host="$(reboot)", rail=1, gpu_index=1)
    assert shlex.split(pair.client_command)[-1] == "$(reboot)"
    assert "--use_cuda=1" in shlex.split(pair.server_command)
    assert "$(reboot)" not in shlex.split(pair.server_command)


@pytest.mark.parametrize("launcher", ["mpirun", "srun"])
def test_nccl_launch_command_names_every_host(launcher):
    hosts = ["gpu-001", "gpu-002", "gpu-003"]
    command = commands.nccl_command(
        launcher=launcher, hosts=hosts, gpus_per_node=8, hcas=["mlx5_0", "mlx5_1"]
    )
    assert commands.hosts_of_nccl_command(command) == hosts
    argv = shlex.split(command)
    assert argv[0] == launcher and "all_reduce_perf" in argv
    if launcher == "mpirun":
        assert argv[argv.index("-np") + 1] == "24"
        assert "gpu-001:8,gpu-002:8,gpu-003:8" in argv
    else:
        assert "--ntasks-per-node=8" in argv and "--nodes=3" in argv


def test_unknown_launcher_is_refused():
    with pytest.raises(ValueError, match="mpirun or srun"):
        commands.nccl_command(launcher="pdsh", hosts=["a"], gpus_per_node=8, hcas=[])


def test_version_readers():
    assert commands.read_ofed("MLNX_OFED_LINUX-24.10-1.1.4.0:\n") == "MLNX_OFED_LINUX-24.10-1.1.4.0"
    assert commands.read_distinct_lines("40.45.1200\n40.45.1200\n40.44.1036\n") == "40.44.1036,40.45.1200"
    assert (
        commands.read_gpu_count("GPU 0: NVIDIA B300 (UUID: GPU-1)\nGPU 1: NVIDIA B300 (UUID: GPU-2)\n") == "2"
    )
    with pytest.raises(ParseError, match="line 2"):
        commands.read_gpu_count("GPU 0: NVIDIA B300 (UUID: GPU-1)\nNVIDIA-SMI has failed\n")
    with pytest.raises(ParseError, match="line 1: empty output"):
        commands.read_first_line("\n\n")


# -- LocalRunner ---------------------------------------------------------------------------------------


def test_local_runner_returns_stdout_stderr_and_exit_code():
    output = LocalRunner().run("head-01", "echo out; echo err >&2; exit 3", timeout=10)
    assert (output.stdout, output.stderr, output.exit_code) == ("out\n", "err\n", 3)
    assert not output.ok


def test_local_runner_timeout_is_transient_and_kills_the_command():
    started = time.monotonic()
    with pytest.raises(TransientRunnerError, match="timed out after 0.5 s"):
        LocalRunner().run("head-01", "sleep 30; echo never", timeout=0.5)
    assert time.monotonic() - started < 5


def test_local_runner_without_its_shell_is_a_permanent_error():
    with pytest.raises(RunnerError) as excinfo:
        LocalRunner(shell="/nonexistent/sh").run("head-01", "true", timeout=5)
    assert not isinstance(excinfo.value, TransientRunnerError)


def test_local_runner_pair_runs_server_and_client():
    runner = LocalRunner()
    runner.server_start_s = 0.05
    server, client = runner.run_pair(
        server_host="a",
        server_command="echo server",
        client_host="b",
        client_command="echo client",
        timeout=5,
    )
    assert (server.stdout, client.stdout) == ("server\n", "client\n")


class ClientHostRefuses(LocalRunner):
    """The client's node refuses the connection; the server's command runs here for real."""

    def run(self, host, command, timeout):
        if host == "client-node":
            raise TransientRunnerError("client-node:22: Connection refused")
        return super().run(host, command, timeout)


def test_a_pair_whose_client_cannot_run_stops_its_server_instead_of_waiting_out_the_timeout(tmp_path):
    runner = ClientHostRefuses()
    runner.server_start_s = 0.3  # long enough for the server's shell to note its pid
    pid_file = tmp_path / "server.pid"
    started = time.monotonic()
    with pytest.raises(TransientRunnerError, match="Connection refused"):
        runner.run_pair(
            server_host="server-node",
            server_command=f"echo $$ > {shlex.quote(str(pid_file))}; exec sleep 30",
            client_host="client-node",
            client_command="ib_write_bw server-node",
            timeout=30,
        )
    assert time.monotonic() - started < 5  # not the server's 30 s
    deadline = time.monotonic() + 5
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid), "the listening server was left running"


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child not yet reaped by its waiting thread still answers signal 0: look at its state.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


# -- SimulatedRunner: faults in one place, deterministic ---------------------------------------------------


def test_fault_plan_is_deterministic_and_spread_over_nodes():
    cluster = sim_cluster(nodes=6)
    plan = plan_faults(cluster, seed=11)
    assert plan == plan_faults(cluster, seed=11)
    assert plan.dirty_fiber[0] != plan.hot_optic[0]
    assert plan.slow_gpu_rdma_node != plan.nccl_corruption_node
    assert len({plan_faults(cluster, seed=s) for s in range(8)}) > 1
    assert len(plan.describe()) == 4


def test_faults_only_land_on_optical_ports():
    cluster = sim_cluster(nodes=2, dac_rails=(0, 1, 2, 3, 4, 5, 6))  # rail 7 is the only optical one
    plan = plan_faults(cluster, seed=3)
    assert {plan.dirty_fiber[1], plan.hot_optic[1]} == {"mlx5_7"}


def test_same_question_same_answer():
    runner = SimulatedRunner(sim_cluster(), seed=5)
    command = commands.mlxlink_command("mlx5_3")
    assert runner.run("gpu-002", command, 10) == SimulatedRunner(sim_cluster(), seed=5).run(
        "gpu-002", command, 10
    )


# -- SimulatedRunner: output goes through the real parsers ---------------------------------------------


def _link_verdict(runner, host, device):
    output = runner.run(host, commands.mlxlink_command(device), 10)
    parsed = mlxlink.parse(output.stdout)
    assert len(parsed) == 1
    return parsed[0], criteria.evaluate_link(parsed[0], plan=XDR, profile=PROFILE)


def test_simulated_mlxlink_parses_and_only_the_faulty_ports_fail():
    runner = SimulatedRunner(sim_cluster(), seed=2)
    faulty = {runner.faults.dirty_fiber, runner.faults.hot_optic}
    for node in runner.cluster.nodes:
        for rail in node.rails:
            parsed, verdict = _link_verdict(runner, node.name, rail.rdma_device)
            assert (parsed.state, parsed.speed, parsed.width) == ("Active", "IB-XDR", "4x")
            expected = (
                criteria.Outcome.FAIL if (node.name, rail.rdma_device) in faulty else criteria.Outcome.PASS
            )
            assert verdict.outcome == expected, (node.name, rail.rdma_device, verdict)


def test_dirty_fiber_fails_on_ber_and_hot_optic_on_rx_power():
    runner = SimulatedRunner(sim_cluster(), seed=2)
    _, dirty = _link_verdict(runner, *runner.faults.dirty_fiber)
    assert any(t.startswith("effective BER") and "> fail level 1e-12" in t for t in dirty.problems())
    hot_parsed, hot = _link_verdict(runner, *runner.faults.hot_optic)
    assert hot_parsed.module.temperature_c > 70
    assert any(t.startswith("Rx power lane") and "< module low limit -10.4 dBm" in t for t in hot.problems())


def test_simulated_passive_dac_has_no_dom_and_passes():
    runner = SimulatedRunner(sim_cluster(dac_rails=(0,)), seed=2)
    parsed, verdict = _link_verdict(runner, "gpu-001", "mlx5_0")
    assert parsed.module.is_passive_copper
    assert verdict.outcome == criteria.Outcome.PASS


def _pair(runner, client, server, rail, gpu):
    pair = commands.ib_write_bw_commands(
        rdma_device=f"mlx5_{rail}", server_host=server, rail=rail, gpu_index=rail if gpu else None
    )
    server_out, client_out = runner.run_pair(
        server_host=server,
        server_command=pair.server_command,
        client_host=client,
        client_command=pair.client_command,
        timeout=10,
    )
    return perftest.parse(server_out.stdout), perftest.parse(client_out.stdout)


def test_simulated_ib_write_bw_with_and_without_cuda_parses():
    runner = SimulatedRunner(sim_cluster(), seed=4)
    healthy = [n.name for n in runner.cluster.nodes if n.name != runner.faults.slow_gpu_rdma_node]
    servers, clients = _pair(runner, healthy[0], healthy[1], 3, gpu=True)
    assert [r.role for r in servers + clients] == ["server", "client"]
    client = clients[0]
    assert client.use_cuda and client.qps == 4 and client.device == "mlx5_3"
    bw = client.rows[0].bw_avg_gbps
    assert 786 < bw < 789  # DOMAIN.md: ~787.7 Gb/s
    assert client.rows[0].msg_rate_mpps == pytest.approx(1.50, abs=0.01)
    assert (
        criteria.evaluate_bandwidth(client, gpu=True, line_rate_gbps=800, profile=PROFILE).outcome == "pass"
    )
    _, cpu = _pair(runner, healthy[0], healthy[1], 3, gpu=False)
    assert not cpu[0].use_cuda and 440 < cpu[0].rows[0].bw_avg_gbps < 470


def test_slow_gpu_node_runs_at_60_percent_on_gpu_tests_only():
    runner = SimulatedRunner(sim_cluster(), seed=4)
    slow = runner.faults.slow_gpu_rdma_node
    other = next(n.name for n in runner.cluster.nodes if n.name != slow)
    _, gpu = _pair(runner, other, slow, 0, gpu=True)  # the slow node as the server side still limits
    assert gpu[0].rows[0].bw_avg_gbps == pytest.approx(787.7 * 0.6, rel=0.002)
    verdict = criteria.evaluate_bandwidth(gpu[0], gpu=True, line_rate_gbps=800, profile=PROFILE)
    assert verdict.outcome == criteria.Outcome.FAIL
    _, cpu = _pair(runner, other, slow, 0, gpu=False)
    assert (
        criteria.evaluate_bandwidth(cpu[0], gpu=False, line_rate_gbps=800, profile=PROFILE).outcome == "pass"
    )


def test_simulated_nccl_clean_and_corrupt_runs_parse():
    runner = SimulatedRunner(sim_cluster(nodes=6), seed=8)
    faults = runner.faults
    clean_hosts = [
        n.name
        for n in runner.cluster.nodes
        if n.name not in (faults.slow_gpu_rdma_node, faults.nccl_corruption_node)
    ][:2]
    command = commands.nccl_command(
        launcher="srun", hosts=clean_hosts, gpus_per_node=8, hcas=[f"mlx5_{i}" for i in range(8)]
    )
    clean = nccl.parse(runner.run(clean_hosts[0], command, 60).stdout)[0]
    assert clean.test == "all_reduce_perf" and clean.n_ranks == 16 and clean.out_of_bounds == 0
    assert len(clean.rows) == 32 and clean.rows[-1].size_bytes == 1 << 34
    assert clean.rows[-1].out_of_place.busbw_gbps == pytest.approx(820, abs=6)
    assert criteria.evaluate_nccl(clean, profile=PROFILE).outcome == criteria.Outcome.PASS

    bad_hosts = [clean_hosts[0], faults.nccl_corruption_node]
    command = commands.nccl_command(launcher="mpirun", hosts=bad_hosts, gpus_per_node=8, hcas=["mlx5_0"])
    output = runner.run(bad_hosts[0], command, 60)
    assert output.exit_code != 0
    corrupt = nccl.parse(output.stdout)[0]
    assert corrupt.out_of_bounds > 0
    verdict = criteria.evaluate_nccl(corrupt, profile=PROFILE)
    assert verdict.problems()[0].startswith("wrong values at 1 MiB (out-of-place 96, in-place 32)")


def test_simulated_version_probes_read_back():
    runner = SimulatedRunner(sim_cluster(), seed=1)
    versions = {p.key: p.read(runner.run("gpu-001", p.command, 10).stdout) for p in commands.VERSION_PROBES}
    assert versions == {
        "kernel": "6.8.0-60-generic",
        "gpu_driver": "580.65.06",
        "gpu_count": "8",
        "ofed": "OFED-internal-25.04-0.6.1",
        "nic_firmware": "40.45.1200",
        "nccl": "2.27.5-1+cuda12.9",
    }


def test_simulated_unknown_command_is_not_found():
    output = SimulatedRunner(sim_cluster(), seed=1).run("gpu-001", "frobnicate --all", 10)
    assert output.exit_code == 127 and "frobnicate: not found" in output.stderr


def test_simulated_down_and_flaky_hosts_are_transient_errors():
    cluster = sim_cluster()
    with pytest.raises(TransientRunnerError, match="Connection refused"):
        SimulatedRunner(cluster, down_hosts=["gpu-002"]).run("gpu-002", "uname -r", 10)
    with pytest.raises(TransientRunnerError, match="No route to host"):
        SimulatedRunner(cluster).run("gpu-999", "uname -r", 10)
    flaky = {"gpu-003": 2}
    for attempt in (1, 2):
        with pytest.raises(TransientRunnerError):
            SimulatedRunner(cluster, flaky_hosts=flaky, attempt=attempt).run("gpu-003", "uname -r", 10)
    assert SimulatedRunner(cluster, flaky_hosts=flaky, attempt=3).run("gpu-003", "uname -r", 10).ok
