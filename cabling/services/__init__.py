"""Writes of the cabling app, by concept; import them from here (`from cabling.services import plan_apply`).

- plan_rules: how a plan maps onto rows (the fields of a planned cable, roles, what identifies a cable),
  and `plan_of`, the checked plan of a spec.
- project_state: the project as it is, as a plan sees it (read with a fixed number of queries).
- diff: what applying a plan would change and what stops it (`plan_diff`, `PlanDiff`, `PlanNotApplied`).
- writer: applying it in one transaction with bulk inserts (`plan_apply`).
- fabric_plans: the FabricPlan job row: preview, confirm (queues the apply), the task's run, apply now.
- label_exports: the LabelSheetExport job row: start (queues the render), the task's run.
- cables: writes to cables themselves (`cable_status_set`).

The fabric planner itself (pure Python) is cabling.planner; its spec format is in the README.
"""

from .cables import SETTABLE_CABLE_STATUSES, cable_status_set
from .diff import PlanDiff, PlanNotApplied, plan_diff
from .fabric_plans import (
    APPLY_PLAN_TASK,
    fabric_plan_apply_now,
    fabric_plan_confirm,
    fabric_plan_preview,
    fabric_plan_run,
)
from .label_exports import RENDER_LABELS_TASK, label_sheet_export_run, label_sheet_export_start
from .plan_rules import plan_of
from .writer import PlanApplyResult, plan_apply

__all__ = [
    "APPLY_PLAN_TASK",
    "RENDER_LABELS_TASK",
    "SETTABLE_CABLE_STATUSES",
    "PlanApplyResult",
    "PlanDiff",
    "PlanNotApplied",
    "cable_status_set",
    "fabric_plan_apply_now",
    "fabric_plan_confirm",
    "fabric_plan_preview",
    "fabric_plan_run",
    "label_sheet_export_run",
    "label_sheet_export_start",
    "plan_apply",
    "plan_diff",
    "plan_of",
]
