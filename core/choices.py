from django.db import models


class JobStatus(models.TextChoices):
    """Where a long piece of work stands. Every job row (a check run, an import, a fabric plan, an
    upload being parsed, an export) uses this one set; a model may give a status a label of its own
    (an applied plan is "Applied") through Job.STATUS_LABELS."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    WAITING = "waiting", "Waiting for confirmation"  # a preview that a person must confirm
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


# Nothing more happens to a job in these states without someone acting: the poller stops.
SETTLED_JOB_STATUSES = frozenset({JobStatus.WAITING, JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED})
# Ended for good.
FINISHED_JOB_STATUSES = frozenset({JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED})
ACTIVE_JOB_STATUSES = frozenset({JobStatus.QUEUED, JobStatus.RUNNING})
