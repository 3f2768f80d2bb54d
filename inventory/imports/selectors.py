"""Reads of import jobs, scoped through delivery.access like every other read."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from delivery.access import scope_to_user
from delivery.models import Project

from ..models import ImportJob

RECENT_JOBS = 20


def import_job_list(*, user, project: Project) -> QuerySet[ImportJob]:
    jobs = scope_to_user(ImportJob.objects.filter(project=project), user)
    return jobs.select_related("created_by").defer("summary", "errors").order_by("-created_at", "-id")


def import_job_detail(*, user, project: Project, pk: int) -> ImportJob:
    jobs = scope_to_user(ImportJob.objects.filter(project=project), user)
    return get_object_or_404(jobs.select_related("project", "created_by", "confirmed_by"), pk=pk)


def import_job_status(*, user, project: Project, pk: int) -> dict:
    """The few fields the progress poller needs, in one query however big the preview is."""
    jobs = scope_to_user(ImportJob.objects.filter(project=project), user)
    job = get_object_or_404(jobs.only("id", "status", "progress_done", "progress_total"), pk=pk)
    return {
        "id": job.pk, "status": job.status, "status_label": job.get_status_display(),
        "done": job.progress_done, "total": job.progress_total, "finished": job.is_finished,
    }
