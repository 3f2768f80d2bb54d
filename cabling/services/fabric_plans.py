"""The life of a FabricPlan row (a core.models.Job): previewed when submitted (`waiting` for a manager, or
`failed` with the reasons), queued when confirmed, then applied by a task (`running`, `done` or
`failed`) while the plan page polls the row's progress."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.utils import timezone

from core.choices import ACTIVE_JOB_STATUSES, JobStatus
from core.jobs import job_queue, progress_reporter
from projects.models import Project

from ..choices import FabricPlanSource
from ..models import FabricPlan
from ..planner import Plan
from .diff import PlanDiff, PlanNotApplied, plan_diff
from .plan_rules import plan_of
from .writer import PlanApplyResult, plan_apply

# Sent by name (core.jobs): cabling.tasks imports this module, so importing the task back would be a cycle.
APPLY_PLAN_TASK = "cabling.tasks.apply_fabric_plan"
NOT_WAITING = "This plan is not waiting for confirmation."


def _store_preview(row: FabricPlan, the_plan: Plan, diff: PlanDiff) -> None:
    row.name = the_plan.spec.name[:200]
    row.summary = the_plan.summary()
    row.diff = diff.as_dict()
    row.errors = diff.errors
    row.status = JobStatus.FAILED if diff.errors else JobStatus.WAITING
    row.finished_at = timezone.now()


@transaction.atomic
def fabric_plan_preview(
    *, project: Project, user, spec_text: str, source: str = FabricPlanSource.FORM
) -> FabricPlan:
    """Plan the spec and diff it against the project now (planning even 1,024 servers takes seconds),
    and keep both on a new FabricPlan row waiting for confirmation. A spec that cannot be planned raises
    ValidationError on `spec`, each message naming the spec's field, and stores nothing; a plan the
    project cannot take (unknown hardware, missing ports) is stored as failed, with the reasons."""
    the_plan = plan_of(spec_text=spec_text)
    diff = plan_diff(project=project, plan=the_plan)
    row = FabricPlan(project=project, spec_text=spec_text, source=source, requested_by=user)
    _store_preview(row, the_plan, diff)
    row.full_clean()
    row.save()
    return row


@transaction.atomic
def fabric_plan_confirm(*, fabric_plan: FabricPlan, user, keep_installed: bool = False) -> FabricPlan:
    """Queue the apply of a previewed plan (once: a double click or two managers queue it once). A preview
    that drops installed cables or switches in place needs keep_installed."""
    counts = (fabric_plan.diff or {}).get("counts", {})
    if (counts.get("cables_blocked") or counts.get("switches_blocked")) and not keep_installed:
        raise ValidationError(
            {"keep_installed": "This plan drops installed cables or switches in place: tick keep installed to "
                               "keep them (flagged) and apply the rest, or change the spec."}
        )
    return job_queue(
        fabric_plan, task=APPLY_PLAN_TASK, from_statuses={JobStatus.WAITING}, refused=NOT_WAITING,
        confirmed_at=timezone.now(), confirmed_by=user, keep_installed=keep_installed, progress_done=0,
        progress_total=0,
    )


def fabric_plan_run(*, plan_id: int) -> FabricPlan:
    """Apply a confirmed plan (the task's body), against the project as it is now, in one transaction,
    and record the outcome on the row. Safe to run twice: a plan that is done or failed is left alone,
    one still running (its worker was lost, so its transaction rolled back) is applied again, and two
    runs of one project's plans are serialized by a lock on the project."""
    row = FabricPlan.objects.select_related("project", "confirmed_by").get(pk=plan_id)
    if row.confirmed_at is None or row.status not in ACTIVE_JOB_STATUSES:
        return row
    if not (row.start(step="diff") or row.status == JobStatus.RUNNING):
        return row  # another worker took it between the read and the start
    try:
        with transaction.atomic():
            Project.objects.select_for_update().filter(pk=row.project_id).first()
            if FabricPlan.objects.filter(pk=row.pk, status=JobStatus.DONE).exists():
                return FabricPlan.objects.get(pk=row.pk)
            with progress_reporter(row) as report:
                result = plan_apply(
                    project=row.project, spec_text=row.spec_text, user=row.confirmed_by,
                    keep_installed=row.keep_installed,
                    progress=lambda step, done, total: report(done, total=total, step=step),
                )
            _finish_applied(row, result)
    except PlanNotApplied as exc:
        row.fail(exc.messages, **({"diff": exc.diff.as_dict()} if exc.diff is not None else {}))
    except ValidationError as exc:
        row.fail(exc.messages)
    except DatabaseError as exc:  # refused by the database after the checks (a race): nothing was written
        row.fail(f"The database refused the plan ({exc.__class__.__name__}: {exc}); nothing was applied."[:500])
    return row


def _finish_applied(row: FabricPlan, result: PlanApplyResult) -> None:
    """Done, with what the apply did (inside its transaction: the row says done only if the rows are there)."""
    now = timezone.now()
    row.finish(
        from_statuses={JobStatus.RUNNING}, errors=[], summary=result.plan.summary(), diff=result.diff.as_dict(),
        applied_at=now, finished_at=now,
    )


def fabric_plan_apply_now(
    *, project: Project, spec_text: str, user=None, source: str = FabricPlanSource.COMMAND,
    keep_installed: bool = False,
) -> tuple[FabricPlan | None, PlanApplyResult]:
    """Plan, diff and apply in this process (the command, the demo), and record an applied FabricPlan
    row when anything changed (so running it again leaves no trace)."""
    with transaction.atomic():
        result = plan_apply(project=project, spec_text=spec_text, user=user, keep_installed=keep_installed)
        if not result.changed and not result.diff.cables_blocked:
            return None, result
        now = timezone.now()
        row = FabricPlan(
            project=project, spec_text=spec_text, source=source, requested_by=user, confirmed_by=user,
            confirmed_at=now, started_at=now, applied_at=now, finished_at=now, keep_installed=keep_installed,
            status=JobStatus.DONE, name=result.plan.spec.name[:200], summary=result.plan.summary(),
            diff=result.diff.as_dict(),
        )
        row.full_clean()
        row.save()
        return row, result
