"""NCCL: all_reduce_perf across the GPU nodes (all at once, or in groups of `group_size`), launched with
mpirun or srun from the head node (or `launch_host`), judged on the bus bandwidth at the largest message
size. The only kind the local runner may run: its one command is launched from this server."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from inventory.choices import DeviceRole
from inventory.models import Device
from projects.models import Project

from .. import criteria
from ..choices import CheckKind, NcclLauncher
from ..cluster import Node, roce_settings
from ..parsers import nccl as nccl_parser
from ..parsers.base import ParseError
from ..runners import commands
from .base import (
    Kind,
    Measurement,
    Option,
    Target,
    TargetInputs,
    failed_to_run,
    host_name,
    one_of,
    unparsable,
    whole_number,
)


def _launch_host(project: Project, options: dict, group: list[Node]) -> str:
    if options.get("launch_host"):
        return options["launch_host"]
    head = Device.objects.filter(project=project, role=DeviceRole.HEAD_NODE).order_by("name").first()
    return head.name if head else group[0].name


def _groups(nodes: list[Node], size: int) -> list[list[Node]]:
    groups = [nodes[i : i + size] for i in range(0, len(nodes), size)]
    if len(groups) > 1 and len(groups[-1]) < 2:
        groups[-2] += groups.pop()  # a lone node has no network to test: fold it into the previous group
    return groups


def build_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    """One target per group of nodes (one group of all of them unless `group_size` says otherwise)."""
    if not nodes:
        return []  # check_run_start says there is nothing to check
    if len(nodes) < 2:
        # One node's NCCL run never leaves the node: it would pass without testing the network.
        raise ValidationError(
            {
                "kind": f"NCCL tests the network between nodes: it needs at least two GPU nodes with "
                f"compute-fabric ports, and {project.code} has one ({nodes[0].name})."
            }
        )
    groups = _groups(nodes, options.get("group_size") or len(nodes))
    # A RoCE fabric: NCCL must use the RoCE v2 GID and mark its traffic for the lossless priority.
    settings = roce_settings(project) if any(r.ethernet for n in nodes for r in n.rails) else None
    roce = (settings.gid_index, settings.traffic_class) if settings else None
    targets = []
    for group in groups:
        hosts = [n.name for n in group]
        gpus = min(len(n.rails) for n in group)
        command = commands.nccl_command(
            launcher=options.get("launcher", NcclLauncher.MPIRUN),
            hosts=hosts,
            gpus_per_node=gpus,
            hcas=[r.rdma_device for r in group[0].rails[:gpus]],
            roce=roce,
        )
        launch_host = _launch_host(project, options, group)
        key = "nccl:all" if len(groups) == 1 else f"nccl:{hosts[0]}..{hosts[-1]}"
        targets.append(
            Target(
                key=key,
                host=launch_host,
                command=command,
                params={"hosts": hosts, "launch_host": launch_host},
                device=group[0].device,
            )
        )
    return targets


def execute(result, inputs: TargetInputs) -> Measurement:
    output = inputs.runner.run(result.host, result.command, inputs.timeout)
    if not output.stdout.strip():
        return failed_to_run("nccl-tests", output, result.host)
    try:
        parsed = nccl_parser.parse(output.stdout)[0]
    except ParseError as exc:
        return unparsable("nccl-tests", output, exc)
    metrics = parsed.to_dict()
    metrics["curve"] = criteria.nccl_curve(parsed)
    verdict = criteria.evaluate_nccl(parsed, profile=inputs.profile)
    return Measurement(output.stdout, output.stderr, output.exit_code, metrics, verdict)


def figure(metrics: dict) -> str:
    avg = metrics.get("avg_busbw_gbps")
    return f"avg busbw {criteria.fmt_num(avg, 2)} GB/s" if isinstance(avg, int | float) else ""


KIND = Kind(
    CheckKind.NCCL,
    build_targets=build_targets,
    execute=execute,
    timeout_s=3600,
    options={
        "launcher": Option(one_of(NcclLauncher.values)),
        "launch_host": Option(host_name),
        "group_size": Option(whole_number(2)),  # NCCL on groups of N nodes instead of all at once
    },
    between_nodes=True,
    local_runner=True,
    figure=figure,
    run_charts=("nccl_curves",),
    result_charts=("nccl_curve",),
)
