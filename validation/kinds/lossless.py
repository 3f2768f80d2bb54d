"""Lossless RoCE configuration: on every Ethernet (RoCE) port of every GPU node, compute and storage alike,
`mlnx_qos -i <if>` and the port's ECN switches, judged against the project's RoCE settings (the lossless
priority, the DSCP that must map to it, the trust mode, ECN on): PFC on that priority and only there, the
DSCP mapped to it, a receive buffer of its own with room in it, ECN's notification and reaction points on.

RoCE drops and retransmits without this, silently: the bandwidth tests still pass on an idle fabric and
the training job collapses under load. A switch port's side arrives as an uploaded `nv show interface <if>
qos ...` output and is judged by criteria.evaluate_switch_lossless."""

from __future__ import annotations

from projects.models import Project

from .. import criteria
from ..choices import CheckKind
from ..cluster import Node, roce_settings
from ..parsers import mlnx_qos as mlnx_qos_parser
from ..parsers.base import ParseError
from ..runners import commands
from .base import Kind, Measurement, Target, TargetInputs, failed_to_run, tail, unparsable


def build_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    """One target per Ethernet port of a GPU node (InfiniBand ports have no PFC to configure)."""
    rails = [(node, rail) for node in nodes for rail in (*node.rails, *node.storage_rails) if rail.ethernet]
    if not rails:
        return []
    settings = roce_settings(project)
    return [
        Target(
            key=f"{node.name}:{rail.port.name}",
            host=node.name,
            command=commands.mlnx_qos_command(rail.netdev),
            params={
                "netdev": rail.netdev,
                "network": rail.network,
                "ecn_command": commands.ecn_command(rail.netdev, settings.pfc_priority),
                "roce": settings.as_dict(),
            },
            device=node.device,
            port=rail.port,
            cable_id=rail.cable_id,
        )
        for node, rail in rails
    ]


def execute(result, inputs: TargetInputs) -> Measurement:
    params = result.params
    settings = criteria.RoceSettings.from_dict(params.get("roce") or {})
    output = inputs.runner.run(result.host, result.command, inputs.timeout)
    if output.exit_code != 0 or not output.stdout.strip():
        return failed_to_run("mlnx_qos", output, f"{result.host} {params['netdev']}")
    try:
        qos = mlnx_qos_parser.parse(output.stdout)[-1]  # a setup log prints several: the last one holds
    except ParseError as exc:
        return unparsable("mlnx_qos", output, exc)
    measurement = Measurement(output.stdout, output.stderr, output.exit_code, qos.to_dict())
    ecn = _read_ecn(inputs, result, measurement) if settings.ecn else None
    measurement.metrics["ecn"] = ecn
    measurement.verdict = criteria.evaluate_lossless(qos, settings=settings, ecn=ecn)
    return measurement


def _read_ecn(inputs: TargetInputs, result, measurement: Measurement) -> dict | None:
    command = result.params["ecn_command"]
    output = inputs.runner.run(result.host, command, inputs.timeout)
    measurement.raw_output += f"\n$ {command}\n{output.stdout}"
    measurement.stderr += output.stderr
    if output.exit_code != 0:
        measurement.stderr += f"{command} exited {output.exit_code}: {tail(output.stderr) or 'no output'}\n"
        return None
    try:
        return commands.read_ecn(output.stdout)
    except ParseError:
        return None


def figure(metrics: dict) -> str:
    enabled = metrics.get("pfc_enabled") or []
    on = ",".join(str(p) for p, flag in enumerate(enabled) if flag) or "none"
    return f"trust {metrics.get('trust') or '?'}, PFC on {on}"


KIND = Kind(
    CheckKind.LOSSLESS,
    build_targets=build_targets,
    execute=execute,
    timeout_s=30,
    commands_per_target=lambda params: 2,
    no_targets="Nothing to check: the project's GPU nodes have no Ethernet (RoCE) ports to hold lossless.",
    figure=figure,
)
