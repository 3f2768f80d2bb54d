"""Celery tasks of the inventory: thin, they take ids and call a service. Each is safe to run twice."""

from celery import shared_task


@shared_task(acks_late=True)
def preview_import_job(job_id: int) -> str:
    """Check an uploaded import file as a dry run and store its preview on the job."""
    from .imports.services import import_job_preview

    return import_job_preview(job_id=job_id).status


@shared_task(acks_late=True)
def apply_import_job(job_id: int) -> str:
    """Apply a confirmed import job in one transaction."""
    from .imports.services import import_job_apply

    return import_job_apply(job_id=job_id).status
