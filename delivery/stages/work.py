"""What starting a stage starts: its work, through validation's own services (each enqueues its task after
commit), never a copy of them. Returns the job rows started, for the stage page's progress bars."""

from __future__ import annotations

from core.models import Job
from delivery.choices import StageWork
from validation.choices import CheckKind, RunnerKind
from validation.services import check_run_start
from validation.soak.services import soak_window_start

# Runners a manager may start a stage's work with (the local runner only suits NCCL).
STAGE_RUNNERS = (RunnerKind.SIMULATED, RunnerKind.SSH)

_CHECK_KINDS = {
    StageWork.TOPOLOGY: (CheckKind.TOPOLOGY,),
    StageWork.NODE_INVENTORY: (CheckKind.NODE_INVENTORY,),
    StageWork.LINK_HEALTH: (CheckKind.LINK_HEALTH,),
    StageWork.BENCHMARKS: (CheckKind.BANDWIDTH_MATRIX, CheckKind.NCCL),
}


def work_start(*, work: str, project, user, runner: str = RunnerKind.SIMULATED) -> list[Job]:
    """Start the stage's work for `project` as `user`; a refusal (no GPU nodes, a soak already open) is
    the validation service's ValidationError, unchanged."""
    if work == StageWork.SOAK:
        return [soak_window_start(project=project, user=user, runner=runner).run]
    return [check_run_start(project=project, kind=kind, runner=runner, requested_by=user)
            for kind in _CHECK_KINDS.get(work, ())]
