"""A run's targets: built by its kind from the project's GPU nodes, stored as pending CheckResult rows."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from projects.models import Project

from ..cluster import gpu_nodes
from ..kinds import Target, kind_of
from ..models import CheckResult, CheckRun


def build_targets(*, project: Project, kind: str, options: dict) -> list[Target]:
    entry = kind_of(kind)
    if not entry.startable:
        raise ValidationError({"kind": entry.not_startable})
    return entry.build_targets(gpu_nodes(project), options, project)


def not_startable_message(kind: str) -> str:
    return kind_of(kind).not_startable


def result_row(run: CheckRun, target: Target) -> CheckResult:
    """The target's pending row in the run."""
    return CheckResult(
        run=run,
        target_key=CheckResult.fit_key(target.key),
        round=target.round,
        params=target.params,
        host=target.host,
        command=target.command,
        device=target.device,
        peer_device=target.peer_device,
        port=target.port,
        peer_port=target.peer_port,
        cable_id=target.cable_id,
        optic=target.optic,
    )
