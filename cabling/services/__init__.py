"""Writes of the cabling app, by concept; import them from here (`from cabling.services import plan_apply`).

- plan_rules: how a plan maps onto rows (the fields of a planned cable, roles, what identifies a cable),
  and `plan_of`, the checked plan of a spec.
- project_state: the project as it is, as a plan sees it (read with a fixed number of queries).
- diff: what applying a plan would change and what stops it (`plan_diff`, `PlanDiff`, `PlanNotApplied`).
- writer: applying it in one transaction with bulk inserts (`plan_apply`).
- fabric_plans: the FabricPlan job row: preview, confirm (queues the apply), the task's run, apply now.
- label_exports: the LabelSheetExport job row: start (queues the render), the task's run.
- cables: writes to cables themselves (`cable_status_set`, with its cause).
- cable_ends: a manager's as-built change of an end's port (`cable_end_repatch`).
- scans: every scan on the floor (`scan_record`): lookup, rack a device, seat an optic, confirm a cable end.
- evidence: states that follow the evidence (`cables_link_observe`, `ports_move`);
  fabric_states: a whole comparison's (`cables_fabric_record`).

The fabric planner itself (pure Python) is cabling.planner; its spec format is in docs/fabric-plan.md.
"""

from .cable_ends import cable_end_repatch
from .cables import SETTABLE_CABLE_STATUSES, cable_status_set
from .diff import PlanDiff, PlanNotApplied, plan_diff
from .evidence import cables_link_observe, ports_move
from .fabric_plans import (
    APPLY_PLAN_TASK,
    fabric_plan_apply_now,
    fabric_plan_confirm,
    fabric_plan_preview,
    fabric_plan_run,
)
from .fabric_states import cables_fabric_record
from .label_exports import RENDER_LABELS_TASK, label_sheet_export_run, label_sheet_export_start
from .plan_rules import plan_of
from .scans import KEY_PATTERN, MAX_POSITION_U, ScanOutcome, scan_record
from .writer import PlanApplyResult, plan_apply

__all__ = [
    "APPLY_PLAN_TASK",
    "KEY_PATTERN",
    "MAX_POSITION_U",
    "RENDER_LABELS_TASK",
    "SETTABLE_CABLE_STATUSES",
    "PlanApplyResult",
    "PlanDiff",
    "PlanNotApplied",
    "ScanOutcome",
    "cable_end_repatch",
    "cable_status_set",
    "cables_fabric_record",
    "cables_link_observe",
    "fabric_plan_apply_now",
    "fabric_plan_confirm",
    "fabric_plan_preview",
    "fabric_plan_run",
    "label_sheet_export_run",
    "label_sheet_export_start",
    "plan_apply",
    "plan_diff",
    "plan_of",
    "ports_move",
    "scan_record",
]
