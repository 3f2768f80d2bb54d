"""Celery tasks of the cabling app: thin, they take ids and call a service. Each is safe to run twice."""

from celery import shared_task


@shared_task(acks_late=True)
def apply_fabric_plan(plan_id: int) -> str:
    """Apply a confirmed fabric plan in one transaction and record the outcome on its row."""
    from .services import fabric_plan_run

    return fabric_plan_run(plan_id=plan_id).status
