"""Celery tasks of the delivery workflow: thin, they take ids and call a service; safe to run twice.

Services send them by name (core.jobs.enqueue_on_commit), so the names are the services' constants."""

from celery import shared_task

from .services import RECOMPUTE_TASK, gates_recompute_run


@shared_task(name=RECOMPUTE_TASK, acks_late=True)
def gates_recompute_task(project_id: int) -> int:
    """Recompute a project's stage gates; returns how many stages regressed."""
    return len(gates_recompute_run(project_id=project_id))
