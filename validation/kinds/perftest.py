"""What the bandwidth kinds share (CPU path, GPU RDMA, the matrix): one rail's ib_write_bw pair between two
nodes, how it is run and what is kept of it; and the one shape of the two per-rail pair kinds, which
differ only in where the buffers live. Not a kind itself."""

from __future__ import annotations

from projects.models import Project

from .. import criteria
from ..choices import CheckKind
from ..cluster import Node, roce_settings
from ..parsers import perftest as perftest_parser
from ..parsers.base import ParseError
from ..runners import Runner, commands
from ..runners.schedule import cover_pairs
from .base import Kind, Measurement, Target, TargetInputs, failed_to_run, gbps


def perftest_params(
    a: Node, b: Node, rail_index: int, *, gpu: bool, roce: criteria.RoceSettings | None = None
) -> dict:
    """What one rail's test between `a` (client) and `b` (server) needs. On a RoCE rail the test passes the
    GID index and the traffic class of the project's `roce` settings (else the common defaults), and
    connects through RDMA-CM when they say so."""
    rail_a, rail_b = a.rails[rail_index], b.rails[rail_index]
    settings = (roce or criteria.RoceSettings()) if rail_a.ethernet else None
    pair = commands.ib_write_bw_commands(
        rdma_device=rail_a.rdma_device,
        server_host=b.name,
        rail=rail_index,
        gpu_index=rail_a.gpu if gpu else None,
        gid_index=settings.gid_index if settings else None,
        traffic_class=settings.traffic_class if settings else None,
        rdma_cm=settings.rdma_cm if settings else False,
    )
    return {
        "rail": rail_index,
        "client_host": a.name,
        "server_host": b.name,
        "client_command": pair.client_command,
        "server_command": pair.server_command,
        "line_rate_gbps": rail_a.port.speed_gbps,
        "use_cuda": gpu,
        "server_rdma_device": rail_b.rdma_device,
    }


def pair_bandwidth_targets(
    nodes: list[Node], *, gpu: bool, roce: criteria.RoceSettings | None = None
) -> list[Target]:
    """Each node's every rail against the same rail of a partner. Round = (pairing group, rail): in a
    round each node is in one test, so a measurement never competes with another on the same node."""
    targets = []
    rails = min((len(n.rails) for n in nodes), default=0)
    for group, pairs in enumerate(cover_pairs(nodes)):
        for rail_index in range(rails):
            for a, b in pairs:
                params = perftest_params(a, b, rail_index, gpu=gpu, roce=roce)
                rail_a, rail_b = a.rails[rail_index], b.rails[rail_index]
                targets.append(
                    Target(
                        key=f"{a.name}:{rail_a.port.name}~{b.name}:{rail_b.port.name}",
                        params=params,
                        round=group * rails + rail_index,
                        host=a.name,
                        command=params["client_command"],
                        device=a.device,
                        peer_device=b.device,
                        port=rail_a.port,
                        peer_port=rail_b.port,
                        cable_id=rail_a.cable_id,
                        optic=rail_a.optic,
                    )
                )
    return targets


def run_pair(runner: Runner, params: dict, timeout: float):
    """Run one rail's ib_write_bw pair; returns (raw text, stderr, exit code, client result or error)."""
    server, client = runner.run_pair(
        server_host=params["server_host"],
        server_command=params["server_command"],
        client_host=params["client_host"],
        client_command=params["client_command"],
        timeout=timeout,
    )
    # The client's output is the measurement and is always kept. The server prints the same table, so it
    # is kept only when it has something of its own to say (it failed): a 72-node matrix is 86 MB otherwise.
    server_failed = server.exit_code != 0 or not client.stdout.strip()
    raw = server.stdout + client.stdout if server_failed else client.stdout
    stderr = server.stderr + client.stderr
    exit_code = client.exit_code or server.exit_code
    where = f"{params['client_host']} -> {params['server_host']} rail {params['rail']}"
    if not client.stdout.strip():
        return raw, stderr, exit_code, failed_to_run("ib_write_bw", client, where).verdict
    try:
        runs = perftest_parser.parse(client.stdout)
    except ParseError as exc:
        return raw, stderr, exit_code, criteria.error_verdict(f"ib_write_bw output unreadable at {exc}")
    clients = [r for r in runs if r.role == "client"] or runs
    return raw, stderr, exit_code, clients[-1]


def bandwidth_metrics(parsed, params: dict) -> dict:
    row = max(parsed.rows, key=lambda r: r.bytes) if parsed.rows else None
    return {
        "rail": params["rail"],
        "bw_avg_gbps": criteria.measured_bandwidth(parsed),
        "bw_peak_gbps": getattr(row, "bw_peak_gbps", None),
        "msg_rate_mpps": getattr(row, "msg_rate_mpps", None),
        "line_rate_gbps": params["line_rate_gbps"],
        "use_cuda": params["use_cuda"],
        "qps": parsed.qps,
        "link_type": parsed.link_type,
    }


def execute_bandwidth(result, inputs: TargetInputs) -> Measurement:
    """One rail of one pair, judged against the line rate (GPU RDMA) or the profile's floor (CPU path)."""
    params = result.params
    raw, stderr, exit_code, parsed = run_pair(inputs.runner, params, inputs.timeout)
    if isinstance(parsed, criteria.Verdict):
        return Measurement(raw, stderr, exit_code, {}, parsed)
    verdict = criteria.evaluate_bandwidth(
        parsed, gpu=params["use_cuda"], line_rate_gbps=params["line_rate_gbps"], profile=inputs.profile
    )
    return Measurement(raw, stderr, exit_code, bandwidth_metrics(parsed, params), verdict)


def bandwidth_figure(metrics: dict) -> str:
    return gbps(metrics.get("bw_avg_gbps"))


def pair_bandwidth_kind(kind: CheckKind, *, gpu: bool) -> Kind:
    """A kind that measures every rail of every node against a partner's, from GPU memory or host memory."""

    def build_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
        roce = roce_settings(project) if any(r.ethernet for n in nodes for r in n.rails) else None
        return pair_bandwidth_targets(nodes, gpu=gpu, roce=roce)

    return Kind(
        kind,
        build_targets=build_targets,
        execute=execute_bandwidth,
        timeout_s=120,
        between_nodes=True,
        figure=bandwidth_figure,
        run_charts=("bandwidth_histogram",),
    )
