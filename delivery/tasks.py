"""Celery tasks of the delivery workflow: thin, they take ids and call a service; safe to run twice.

Services send them by name (core.jobs.enqueue_on_commit), so the names are the services' constants. Every process
imports this module at start-up (DeliveryConfig.ready, Celery's autodiscovery), so a feature's own tasks module is
imported here to register its tasks too."""

from celery import shared_task

from delivery.handover import tasks as handover_tasks  # noqa: F401  (the NetBox push)
from delivery.reports.services import (
    RENDER_TASK,
    SIGNED_COPIES_TASK,
    report_signed_copies_render,
    report_version_render,
)
from delivery.stages.services import RECOMPUTE_TASK, gates_recompute_run


@shared_task(name=RECOMPUTE_TASK, acks_late=True)
def gates_recompute_task(project_id: int) -> int:
    """Recompute a project's stage gates; returns how many stages regressed."""
    return len(gates_recompute_run(project_id=project_id))


@shared_task(name=RENDER_TASK, acks_late=True)
def report_version_render_task(version_id: int) -> str | None:
    """Render a version of the acceptance report (snapshot, PDFs, workbook); returns its status."""
    version = report_version_render(version_id=version_id)
    return version.status if version else None


@shared_task(name=SIGNED_COPIES_TASK, acks_late=True)
def report_signed_copies_task(version_id: int) -> str | None:
    """Render the signed copies of a signed version; returns the signature job's status."""
    signature = report_signed_copies_render(version_id=version_id)
    return signature.status if signature else None
