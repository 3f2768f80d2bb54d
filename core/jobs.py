"""Helpers around the job row (core.models.Job): the one claim helper, enqueueing a job's task once the
transaction commits, progress a poller can see while a long transaction is still open, and the JSON a
progress bar polls."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import transaction

from .choices import JobStatus
from .models import Job
from .sql import job_progress_writer


def enqueue_on_commit(task_name: str, *args, countdown: float | None = None) -> None:
    """Send a task by its name once the current transaction commits (at once outside one); `countdown`: the
    seconds a worker waits before running it (none without a broker, where it runs eagerly).

    By name, not by import: a task module imports the services it calls, so a service that imported
    its task back would make an import cycle. Celery routes tasks by name anyway; with no broker
    (the embedded default) the task runs eagerly, in this process."""

    def send() -> None:
        from celery import current_app

        if task_name not in current_app.tasks:  # a web process imports the apps' tasks modules lazily
            current_app.loader.import_default_modules()
        current_app.tasks[task_name].apply_async(args=args, countdown=countdown)

    transaction.on_commit(send)


def job_queue(job: Job, *, task: str, from_statuses: Iterable[str], refused: str, **values) -> Job:
    """The one claim helper: move `job` to queued if it is still in one of `from_statuses` (one
    conditional UPDATE, so a double click or two managers confirming at once queue it once), then send
    `task` with the job's id after commit. Raises ValidationError(refused) when the job was not
    waiting for this."""
    values.setdefault("progress_step", "")
    if not job.transition(set(from_statuses), status=JobStatus.QUEUED, **values):
        raise ValidationError(refused)
    enqueue_on_commit(task, job.pk)
    return job


@contextmanager
def progress_reporter(job: Job) -> Iterator[Callable[..., None]]:
    """A callable `report(done, total=None, step=None)` whose progress the page's poller sees at once.

    Inside an open transaction (a plan applied in one atomic block) an UPDATE on the default connection
    stays invisible until commit; on PostgreSQL the report then goes through a connection of its own in
    autocommit (core.sql.job_progress_writer). SQLite allows one writer at a time, so there it is only seen
    at the end (the embedded default runs tasks inside the request anyway)."""
    with job_progress_writer(job=job) as aside:
        yield aside or (lambda done, total=None, step=None: job.advance(done, total=total, step=step))


def job_models() -> dict[str, type[Job]]:
    """Every concrete job model, by its job type ("<app>.<model>"): no registry to forget."""
    return {model._meta.label_lower: model for model in apps.get_models() if issubclass(model, Job)}


STATUS_FIELDS = ("id", "status", "progress_done", "progress_total", "progress_step", "errors", "finished_at")


def job_status(job: Job) -> dict:
    """What a progress bar polls (static/js/progress.js): the same keys for every kind of job."""
    return {
        "id": job.pk,
        "type": job.job_type,
        "status": job.status,
        "status_label": job.status_label,
        "step": job.progress_step,
        "done": job.progress_done,
        "total": job.progress_total,
        "percent": job.progress_percent,
        "settled": job.is_settled,
        "finished": job.is_settled,  # the poller stops (kept under this name for progress.js)
        "error_count": len(job.errors or []),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        **job.status_figures(),
    }
