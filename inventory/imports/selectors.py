"""Reads of import jobs, scoped through projects.access like every other read. Their progress is polled
from the one job status endpoint (/api/jobs/inventory.importjob/<id>/)."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from projects.access import scope_to_user
from projects.models import Project

from ..models import ImportJob

RECENT_JOBS = 20


def import_job_list(*, user, project: Project) -> QuerySet[ImportJob]:
    jobs = scope_to_user(ImportJob.objects.filter(project=project), user)
    return jobs.select_related("requested_by").defer("summary", "errors", "log").order_by("-created_at", "-id")


def import_job_detail(*, user, project: Project, pk: int) -> ImportJob:
    jobs = scope_to_user(ImportJob.objects.filter(project=project), user)
    return get_object_or_404(jobs.select_related("project", "requested_by", "confirmed_by"), pk=pk)
