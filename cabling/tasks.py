"""Celery tasks of the cabling app: thin, they take ids and call a service. Each is safe to run twice.

Services send them by name (core.jobs.enqueue_on_commit), so the names are the services' constants."""

from celery import shared_task

from .services import (
    APPLY_PLAN_TASK,
    RENDER_LABELS_TASK,
    fabric_plan_run,
    label_sheet_export_run,
)


@shared_task(name=APPLY_PLAN_TASK, acks_late=True)
def apply_fabric_plan(plan_id: int) -> str:
    """Apply a confirmed fabric plan in one transaction and record the outcome on its row."""
    return fabric_plan_run(plan_id=plan_id).status


@shared_task(name=RENDER_LABELS_TASK, acks_late=True)
def render_label_sheet(export_id: int) -> str:
    """Render a label sheet export's PDF into its row."""
    return label_sheet_export_run(export_id=export_id).status
