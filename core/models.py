"""The job row: one abstract model for every piece of work that leaves the web request.

A check run, an inventory import, a fabric plan, an uploaded tool output and an export are all rows a
page polls while a Celery task fills them in. They share the status set, the progress counters, the
log, the errors, who asked and when, and what the job produced, and they move through their states with
the methods below, each one conditional UPDATE so two workers (a redelivered task) cannot both win.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from .choices import ACTIVE_JOB_STATUSES, FINISHED_JOB_STATUSES, SETTLED_JOB_STATUSES, JobStatus


def job_output_path(job: Job, filename: str) -> str:
    return f"jobs/{job._meta.label_lower}/{job.pk or 'new'}/{filename}"


def log_line(line: str, at=None) -> str:
    """One log line with its time, as every job's log shows them."""
    return f"{(at or timezone.now()).strftime('%Y-%m-%d %H:%M:%S')} {line}\n"


class Job(models.Model):
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    progress_step = models.CharField(max_length=80, blank=True, help_text="What the job is doing now.")
    log = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True, help_text="Why the job failed, one message each.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, help_text="When the job was asked for.")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When the job last settled.")
    output = models.FileField(upload_to=job_output_path, max_length=300, blank=True, help_text="What it produced.")

    # The lookup from the job to its project, for scoping the one status endpoint.
    project_path: ClassVar[str] = "project"
    # Labels a model gives some statuses in its own words (an applied plan, a parsed upload).
    STATUS_LABELS: ClassVar[dict[str, str]] = {}

    class Meta:
        abstract = True

    # --- reading --------------------------------------------------------------------------------------

    @property
    def job_type(self) -> str:
        """How the status endpoint names this kind of job: "<app>.<model>"."""
        return self._meta.label_lower

    @property
    def status_label(self) -> str:
        label = self.STATUS_LABELS.get(self.status) or JobStatus(self.status).label
        if self.progress_step and self.status == JobStatus.RUNNING:
            return f"{label} ({self.progress_step})"
        return label

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_JOB_STATUSES

    @property
    def is_settled(self) -> bool:
        """Nothing more happens without someone acting: the progress poller stops here."""
        return self.status in SETTLED_JOB_STATUSES

    @property
    def is_finished(self) -> bool:
        """Ended for good (done, failed or cancelled)."""
        return self.status in FINISHED_JOB_STATUSES

    @property
    def progress_percent(self) -> int:
        if self.status == JobStatus.DONE and not self.progress_total:
            return 100
        return min(100, round(100 * self.progress_done / self.progress_total)) if self.progress_total else 0

    def status_figures(self) -> dict:
        """Figures beyond the progress that the status endpoint sends (a run's verdict counts)."""
        return {}

    # --- moving through the states -------------------------------------------------------------------

    def _rows(self):
        return type(self)._default_manager.filter(pk=self.pk)

    def transition(self, from_statuses, **values) -> bool:
        """Apply `values` only if the row is still in one of `from_statuses` (one UPDATE); keep this
        instance in step when it won."""
        won = bool(self._rows().filter(status__in=list(from_statuses)).update(**values))
        if won:
            for name, value in values.items():
                if not hasattr(value, "resolve_expression"):
                    setattr(self, name, value)
        return won

    def start(self, *, step: str = "", total: int | None = None) -> bool:
        """Queued -> running. False when another worker has it already, or it is over."""
        values = {"status": JobStatus.RUNNING, "started_at": timezone.now(), "progress_step": step[:80]}
        if total is not None:
            values["progress_total"] = total
        return self.transition({JobStatus.QUEUED}, **values)

    def advance(self, done: int | None = None, *, total: int | None = None, step: str | None = None,
                by: int = 0) -> None:
        """Record progress: `done` as a count, or `by` more (one statement however many workers count)."""
        values: dict = {}
        if done is not None:
            values["progress_done"] = done
        elif by:
            values["progress_done"] = F("progress_done") + by
        if total is not None:
            values["progress_total"] = total
        if step is not None:
            values["progress_step"] = step[:80]
        if values:
            self._rows().update(**values)
            for name, value in values.items():
                if not hasattr(value, "resolve_expression"):
                    setattr(self, name, value)

    def finish(self, *, status: str = JobStatus.DONE, from_statuses=ACTIVE_JOB_STATUSES, **values) -> bool:
        """Running (or queued) -> done, waiting (a preview to confirm) or cancelled, with what the job
        produced in `values`. A finished job reports its whole progress."""
        values.setdefault("finished_at", timezone.now())
        values.setdefault("progress_step", "")
        if status in (JobStatus.DONE, JobStatus.WAITING) and "progress_done" not in values:
            values["progress_done"] = F("progress_total")
        won = self.transition(from_statuses, status=status, **values)
        if won and isinstance(values.get("progress_done"), F):
            self.progress_done = self.progress_total
        return won

    def fail(self, errors: list[str] | str, *, from_statuses=ACTIVE_JOB_STATUSES, **values) -> bool:
        """-> failed, with the reasons (each a message a person can act on)."""
        messages = [errors] if isinstance(errors, str) else list(errors)
        values.setdefault("finished_at", timezone.now())
        values.setdefault("progress_step", "")
        return self.transition(from_statuses, status=JobStatus.FAILED, errors=messages, **values)

    def append_log(self, line: str, *, at=None) -> None:
        """Add a line to the log in one statement (concurrent workers each keep theirs)."""
        text = log_line(line, at)
        self._rows().update(log=Concat(F("log"), Value(text), output_field=models.TextField()))
        self.log = (self.log or "") + text
