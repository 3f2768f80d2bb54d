"""Topology: the fabric as the switches and hosts see it, collected through the runners and compared with
the plan (validation.topology).

Targets: per InfiniBand fabric (the devices its planned cables join), `iblinkinfo` from one host on it
(a head node when the fabric has one, else the first GPU node by name), through the HCA port cabled into
that fabric; per Ethernet switch with planned cables, its LLDP neighbours (`lldpcli -f json`). Each target
only checks that its output reads; the run's end compares them all at once, keeps the comparison
(TopologyComparison, linked to the run) and moves the cables it saw
(cabling.services.fabric_states.cables_fabric_record).
"""

from __future__ import annotations

from collections import defaultdict

from core.choices import JobStatus
from inventory.choices import DeviceRole
from inventory.models import Device
from projects.models import Project

from .. import criteria
from ..choices import CheckKind, LinkState, ResultStatus, TopologySource, Verdict
from ..cluster import Node
from ..models import CheckRun
from ..parsers import PARSERS
from ..parsers.base import ParseError
from ..runners import commands
from ..topology.mapping import IB_TOOLS
from ..topology.model import Inventory, PlannedLink
from ..topology.services import TopologyInput, topology_compare_now
from ..topology.store import inventory_of, planned_links
from .base import Kind, Measurement, Target, failed_to_run, unparsable


def _fabrics(inventory: Inventory, planned: list[PlannedLink]) -> list[set[int]]:
    """Devices joined by planned InfiniBand links, one set per fabric (subnet)."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for link in planned:
        if link.infiniband:
            a, b = inventory.ports[link.a].device_id, inventory.ports[link.b].device_id
            parent[find(a)] = find(b)
    groups: dict[int, set[int]] = defaultdict(set)
    for device in list(parent):
        groups[find(device)].add(device)
    return sorted(groups.values(), key=lambda g: min(inventory.devices[d].name for d in g))


def build_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    inventory = inventory_of(project)
    planned = planned_links(project, inventory)
    heads = set(Device.objects.filter(project=project, role=DeviceRole.HEAD_NODE).values_list("id", flat=True))
    gpu_nodes = {node.device.pk for node in nodes}
    host_ports: dict[int, list[int]] = defaultdict(list)  # host device -> its ports on InfiniBand links
    for link in planned:
        if link.infiniband:
            for port_id in (link.a, link.b):
                device = inventory.devices[inventory.ports[port_id].device_id]
                if not device.is_switch and inventory.hca_of(port_id) is not None:
                    host_ports[device.id].append(port_id)
    picks: list[tuple[int, str, int]] = []
    for fabric in _fabrics(inventory, planned):
        hosts = [d for d in fabric if d in host_ports]
        hosts.sort(key=lambda d: (d not in heads, d not in gpu_nodes, inventory.devices[d].name))
        if hosts:
            ibdev, port = inventory.hca_of(min(host_ports[hosts[0]]))
            picks.append((hosts[0], ibdev, port))
    switches = sorted(
        {inventory.ports[port_id].device_id for link in planned if not link.infiniband for port_id in (link.a, link.b)
         if inventory.devices[inventory.ports[port_id].device_id].is_switch},
        key=lambda d: inventory.devices[d].name,
    )
    devices = Device.objects.in_bulk([device for device, _, _ in picks] + switches)
    targets = [
        Target(key=f"iblinkinfo@{inventory.devices[device].name}:{ibdev}", host=inventory.devices[device].name,
               command=commands.iblinkinfo_command(ibdev, port), params={"tool": "iblinkinfo", "ibdev": ibdev},
               device=devices.get(device))
        for device, ibdev, port in picks
    ]
    targets += [
        Target(key=f"lldp@{inventory.devices[device].name}", host=inventory.devices[device].name,
               command=commands.lldpcli_command(), params={"tool": "lldp"}, device=devices.get(device))
        for device in switches
    ]
    return targets


def execute(result, inputs) -> Measurement:
    tool = result.params.get("tool", "lldp")
    output = inputs.runner.run(result.host, result.command, inputs.timeout)
    if not output.stdout.strip():
        return failed_to_run(tool, output, result.host)
    try:
        parsed = PARSERS[tool](output.stdout)
    except ParseError as exc:
        return unparsable(tool, output, exc)
    if tool in IB_TOOLS:
        [fabric] = parsed
        metrics = {"tool": tool, "nodes": len(fabric.nodes), "links": len(fabric.links),
                   "down_ports": sum(not p.connected for p in fabric.ports)}
    else:
        metrics = {"tool": tool, "neighbours": len(parsed)}
    return Measurement(output.stdout, output.stderr, output.exit_code, metrics, criteria.Verdict(criteria.Outcome.PASS))


def finalise(run: CheckRun, profile: criteria.Profile) -> list[str]:
    """Compare everything the targets collected, at once, and keep the comparison with the run."""
    results = list(
        run.results.filter(status=ResultStatus.DONE).exclude(verdict=Verdict.ERROR)
        .order_by("id").only("target_key", "host", "raw_output", "params")
    )
    if not results:
        return ["topology: no output to compare"]
    inputs = [
        TopologyInput(name=f"{r.target_key}.txt", data=r.raw_output.encode("utf-8"),
                      host=r.host if r.params.get("tool") not in IB_TOOLS else "", tool=r.params.get("tool", ""))
        for r in results
    ]
    comparison = topology_compare_now(project=run.project, user=run.requested_by, inputs=inputs,
                                      source=TopologySource.CHECK_RUN, run=run)
    if comparison.status != JobStatus.DONE:
        return [f"topology comparison #{comparison.pk} failed: {'; '.join(comparison.errors or [])}"]
    counts = comparison.counts
    return [
        f"topology comparison #{comparison.pk}: "
        + ", ".join(f"{counts.get(state, 0)} {state}" for state in LinkState.values)
        + f"; {comparison.cables_changed} cable(s) moved"
    ]


def figure(metrics: dict) -> str:
    if "links" in metrics:
        return f"{metrics['links']} links, {metrics.get('down_ports', 0)} ports down"
    if "neighbours" in metrics:
        return f"{metrics['neighbours']} LLDP neighbours"
    return ""


KIND = Kind(
    CheckKind.TOPOLOGY,
    build_targets=build_targets,
    execute=execute,
    timeout_s=120,
    finalise=finalise,
    figure=figure,
    no_targets="Nothing to compare: the project has no planned cables between its devices yet (apply a fabric plan).",
)
