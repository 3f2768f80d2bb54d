"""The life of an ImportJob (a core.models.Job): upload -> preview by a task (ends waiting for a person)
-> confirm -> apply by a task (done or failed). Tasks are sent by name after commit, so this module never
imports inventory.tasks (which imports it)."""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from core.choices import JobStatus
from core.jobs import enqueue_on_commit, job_queue, progress_reporter
from projects.models import Project

from ...models import ImportJob
from ..reader import ImportIssue
from .apply import ImportResult, inventory_import

logger = logging.getLogger(__name__)

# The Celery names of inventory.tasks.preview_import_job and apply_import_job.
PREVIEW_TASK = "inventory.tasks.preview_import_job"
APPLY_TASK = "inventory.tasks.apply_import_job"

NOT_WAITING = "This import is not waiting for confirmation."
UNEXPECTED_ERROR = (
    "the file could not be processed because of an unexpected error (logged for the administrators); "
    "nothing was imported"
)


@transaction.atomic
def import_job_create(*, project: Project, user, upload, kind: str = "") -> ImportJob:
    """Keep the uploaded file (whatever it holds) on a new job and queue its preview."""
    job = ImportJob(project=project, requested_by=user, original_name=upload.name[:255], kind=kind or "")
    job.file.save(upload.name, upload, save=False)
    job.full_clean()
    job.save()
    enqueue_on_commit(PREVIEW_TASK, job.pk)
    return job


def import_job_preview(*, job_id: int) -> ImportJob:
    """Check the job's file as a dry run and store the preview (or the errors); the job then waits for
    someone to confirm it. Safe to run twice: a job already previewed, or confirmed, is left alone; one
    left running by a lost worker is checked again (a dry run writes nothing)."""
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.confirmed_at or not (job.start(step="checking rows") or job.status == JobStatus.RUNNING):
        return job
    try:
        # Outside any transaction: each report is seen by the page's poller at once.
        with progress_reporter(job) as report:
            result = _run_job(job, dry_run=True, progress=report)
    except Exception:  # noqa: BLE001 - whatever went wrong, the job must end rather than stay "running"
        result = _unexpected_failure(job, "preview")
    _settle(job, result, succeeded=JobStatus.WAITING if result.ok else None)
    return job


@transaction.atomic
def import_job_confirm(*, job: ImportJob, user) -> ImportJob:
    """Queue the apply of a previewed job; only a job waiting for confirmation can be confirmed (once)."""
    return job_queue(
        job, task=APPLY_TASK, from_statuses={JobStatus.WAITING}, refused=NOT_WAITING,
        confirmed_at=timezone.now(), confirmed_by=user, progress_done=0,
    )


def import_job_apply(*, job_id: int) -> ImportJob:
    """Check the file again against the project as it is now and apply it, in one transaction with the
    job's outcome. Safe to run twice: the job row is locked and a job that ended is left alone.

    No live progress here: the progress reporter of core.jobs writes through a second connection, which
    would wait forever on the row this transaction holds locked."""
    job = ImportJob.objects.get(pk=job_id)
    if job.confirmed_at is None or not job.is_active:
        return job
    job.start(step="applying")  # a redelivered task finds it running already
    with transaction.atomic():
        locked = ImportJob.objects.select_for_update(of=("self",)).select_related("project", "confirmed_by")
        job = locked.get(pk=job_id)
        if not job.is_active:
            return job
        expected = (job.summary or {}).get("counts")
        try:
            with transaction.atomic():  # a savepoint: an error inside leaves this transaction usable
                result = _run_job(job, dry_run=False, user=job.confirmed_by, expected_counts=expected)
        except Exception:  # noqa: BLE001 - whatever went wrong, the job must end rather than stay "running"
            result = _unexpected_failure(job, "apply")
        _settle(job, result, succeeded=JobStatus.DONE if result.applied else None)
    return job


def _unexpected_failure(job: ImportJob, step: str) -> ImportResult:
    """A bug or a file nobody foresaw: log it with its traceback, and tell the user without details."""
    logger.exception("import job %s (%s): the %s failed unexpectedly", job.pk, job.original_name, step)
    return ImportResult(issues=[ImportIssue(job.original_name, UNEXPECTED_ERROR)])


def _run_job(
    job: ImportJob, *, dry_run: bool, user=None, progress=None, expected_counts: dict | None = None
) -> ImportResult:
    """Read the stored file as it streams (never whole into memory), within the settings' limits."""
    try:
        handle = job.file.open("rb")
    except OSError:
        return ImportResult(issues=[ImportIssue(job.original_name, "the uploaded file is no longer stored")])
    with handle:
        return inventory_import(
            project=job.project, filename=job.original_name, data=handle, kind=job.kind or None,
            dry_run=dry_run, user=user, progress=progress, expected_counts=expected_counts,
        )


def _settle(job: ImportJob, result: ImportResult, *, succeeded: str | None) -> None:
    """End the running job: in status `succeeded` with the plan's summary, or failed with the file's
    issues, each placed by sheet, row and column: at most IMPORT_MAX_ERRORS of them, the last saying how
    many more there were (ImportResult keeps them bounded)."""
    rows = sum(len(sheet.rows) for sheet in result.plan.sheets) if result.plan else 0
    values = {"kinds": result.kinds, "progress_done": rows, "progress_total": rows}
    if succeeded:
        job.finish(status=succeeded, summary=result.plan.summary(), errors=[], **values)
    else:  # the counts of a failed file would mislead beside its errors
        job.fail([issue.as_dict() for issue in result.issues], summary={}, **values)
