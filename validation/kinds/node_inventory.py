"""Node inventory: the GPU driver, firmware and library versions of every GPU node, held to the profile's
pinned versions or, with none pinned, to what the majority of the run's nodes runs (judged once every
node has answered)."""

from __future__ import annotations

from projects.models import Project

from .. import criteria
from ..choices import CheckKind, ResultStatus
from ..cluster import Node
from ..models import CheckRun
from ..parsers.base import ParseError
from ..runners import commands
from .base import Kind, Measurement, Target, TargetInputs, reasons_from_json, tail


def build_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    return [
        Target(
            key=node.name,
            host=node.name,
            device=node.device,
            params={},
            command="\n".join(p.command for p in commands.VERSION_PROBES),
        )
        for node in nodes
    ]


def execute(result, inputs: TargetInputs) -> Measurement:
    versions, raw, stderr, reasons = {}, [], [], []
    for probe in commands.VERSION_PROBES:
        output = inputs.runner.run(result.host, probe.command, inputs.timeout)
        raw.append(f"$ {probe.command}\n{output.stdout}")
        stderr.append(output.stderr)
        if output.exit_code != 0:
            reasons.append(
                criteria.Reason(
                    criteria.Outcome.FAIL,
                    f"{probe.key}: `{probe.command}` exited {output.exit_code}: {tail(output.stderr, 1)}",
                )
            )
            continue
        try:
            versions[probe.key] = probe.read(output.stdout)
        except ParseError as exc:
            reasons.append(criteria.Reason(criteria.Outcome.FAIL, f"{probe.key}: output unreadable at {exc}"))
    if inputs.profile.pinned_versions:
        pinned = criteria.evaluate_versions(versions, expected=inputs.profile.pinned_versions, source="pinned")
        reasons += pinned.reasons
    return Measurement("".join(raw), "".join(stderr), 0, {"versions": versions}, criteria.Verdict.of(reasons))


def commands_per_target(params: dict) -> int:
    """One probe per version."""
    return len(commands.VERSION_PROBES)


def finalise(run: CheckRun, profile: criteria.Profile) -> list[str]:
    """With no versions pinned, every node is held to what the majority of the run's nodes runs."""
    if profile.pinned_versions:
        return []
    results = list(run.results.filter(status=ResultStatus.DONE))
    majority = criteria.majority_versions(r.metrics.get("versions", {}) for r in results)
    for result in results:
        verdict = criteria.evaluate_versions(
            result.metrics.get("versions", {}), expected=majority, source="the majority of nodes runs"
        )
        verdict = criteria.Verdict.of([*verdict.reasons, *reasons_from_json(result.reasons)])
        result.verdict, result.reasons = verdict.outcome.value, verdict.reasons_json()
        result.save(update_fields=["verdict", "reasons"])
    return []


def figure(metrics: dict) -> str:
    versions = metrics.get("versions") or {}
    return ", ".join(f"{k} {v}" for k, v in sorted(versions.items())[:3])


KIND = Kind(
    CheckKind.NODE_INVENTORY,
    build_targets=build_targets,
    execute=execute,
    timeout_s=30,
    commands_per_target=commands_per_target,
    finalise=finalise,
    figure=figure,
    result_charts=("versions",),
)
