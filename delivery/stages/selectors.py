"""Reads of a project's stages, scoped to what the user may see: one project's for the pages, every project's
of the user for the API. Each is a fixed number of queries whatever the number of stages."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from core.jobs import job_models
from delivery.choices import StageStatus
from delivery.models import ChecklistItem, Stage, Waiver
from projects.access import scope_to_user
from projects.models import Project


def stage_list(*, user, project: Project):
    """The project's stages in order, with who started and completed each (one query)."""
    return scope_to_user(Stage.objects.filter(project=project), user).select_related(
        "started_by", "completed_by"
    ).order_by("order", "id")


def stage_detail(*, user, project: Project, key: str):
    """One stage with its checklist and waivers (three queries); 404 for a key the project has not."""
    return get_object_or_404(
        stage_list(user=user, project=project).prefetch_related(
            Prefetch("checklist",
                     queryset=ChecklistItem.objects.select_related("confirmed_by").order_by("order", "id")),
            Prefetch("waivers", queryset=Waiver.objects.select_related("recorded_by").order_by("recorded_at", "id")),
        ),
        key=key,
    )


def stage_jobs(*, stage) -> list:
    """The job rows the stage's start started, newest first: one query per kind of job."""
    models = job_models()
    wanted: dict[str, list[int]] = {}
    for job_type, pk in stage.jobs or []:
        if job_type in models:
            wanted.setdefault(job_type, []).append(pk)
    jobs = []
    for job_type, ids in wanted.items():
        model = models[job_type]
        jobs += model._default_manager.filter(pk__in=ids, **{model.project_path: stage.project_id})
    return sorted(jobs, key=lambda job: job.created_at, reverse=True)


def current_stage(stages):
    """The stage a project is at: the first one in progress or blocked, else the first not started (None
    when every stage is done or skipped)."""
    stages = list(stages)
    active = [s for s in stages if s.status in (StageStatus.IN_PROGRESS, StageStatus.BLOCKED)]
    waiting = [s for s in stages if s.status == StageStatus.NOT_STARTED]
    return (active or waiting or [None])[0]


def stages_visible(*, user) -> QuerySet[Stage]:
    """The stages of the user's projects, in each project's order, with who started and completed each,
    their checklists and waivers (three queries)."""
    return scope_to_user(Stage.objects.all(), user).select_related(
        "project", "started_by", "completed_by"
    ).prefetch_related(
        Prefetch("checklist", queryset=ChecklistItem.objects.select_related("confirmed_by").order_by("order", "id")),
        Prefetch("waivers", queryset=Waiver.objects.select_related("recorded_by").order_by("recorded_at", "id")),
    ).order_by("project__code", "order", "id")


def checklist_items_visible(*, user) -> QuerySet[ChecklistItem]:
    return scope_to_user(ChecklistItem.objects.all(), user, "stage__project").select_related(
        "stage__project", "confirmed_by"
    )
