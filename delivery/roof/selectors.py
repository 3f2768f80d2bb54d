"""Reads that need every domain app at once: the figures of the project home."""

from cabling.selectors import cable_list
from delivery.access import scope_to_user
from delivery.models import Project
from inventory.selectors import device_list, is_power_flagged, optic_list, rack_list
from validation.models import CheckRun


def project_overview(*, user, project: Project) -> dict:
    """The figures of the project home page, each one query whatever the project's size."""
    racks = list(rack_list(user=user, project=project))
    return {
        "rack_count": len(racks),
        "flagged_racks": [r for r in racks if is_power_flagged(used_w=r.power_used_w, budget_w=r.power_budget_w)],
        "device_count": device_list(user=user, project=project).count(),
        "optic_count": optic_list(user=user, project=project).count(),
        "cable_count": cable_list(user=user, project=project).count(),
        "check_run_count": scope_to_user(CheckRun.objects.filter(project=project), user).count(),
    }


# --- stages --------------------------------------------------------------------------------------------


def stage_list(*, user, project: Project):
    """The project's stages in order, with who started and completed each (one query)."""
    from .models import Stage

    return scope_to_user(Stage.objects.filter(project=project), user).select_related(
        "started_by", "completed_by"
    ).order_by("order", "id")


def stage_detail(*, user, project: Project, key: str):
    """One stage with its checklist and waivers (three queries); 404 for a key the project has not."""
    from django.db.models import Prefetch
    from django.shortcuts import get_object_or_404

    from .models import ChecklistItem, Waiver

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
    from core.jobs import job_models

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
    from .choices import StageStatus

    stages = list(stages)
    active = [s for s in stages if s.status in (StageStatus.IN_PROGRESS, StageStatus.BLOCKED)]
    waiting = [s for s in stages if s.status == StageStatus.NOT_STARTED]
    return (active or waiting or [None])[0]
