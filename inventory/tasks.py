"""Celery tasks of the inventory: thin, they take ids and call a service. Each is safe to run twice.
The services send them by name (core.jobs.enqueue_on_commit), so the names here are the services'."""

from celery import shared_task

from .imports.services import import_job_apply, import_job_preview
from .imports.services.jobs import APPLY_TASK, PREVIEW_TASK


@shared_task(name=PREVIEW_TASK, acks_late=True)
def preview_import_job(job_id: int) -> str:
    """Check an uploaded import file as a dry run and store its preview on the job."""
    return import_job_preview(job_id=job_id).status


@shared_task(name=APPLY_TASK, acks_late=True)
def apply_import_job(job_id: int) -> str:
    """Apply a confirmed import job in one transaction."""
    return import_job_apply(job_id=job_id).status
