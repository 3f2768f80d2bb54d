"""Reads of a project's stages, scoped to what the user may see: one project's for the pages, every project's
of the user for the API. Each is a fixed number of queries whatever the number of stages."""

from __future__ import annotations

from django.apps import apps
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


# How a waiver names what it covers, by the ref's model (app_label.model): the fields that say what the object
# is to a person, and how to scope it to the project. Anything else keeps its ref.
REF_NAMES = {
    "cabling.cable": (("label",), "project"),
    "inventory.device": (("name",), "project"),
    "inventory.port": (("device__name", "name"), "device__project"),
    "inventory.optic": (("serial",), "project"),
    "inventory.rack": (("name",), "project"),
    "delivery.checklistitem": (("text",), "stage__project"),
}


def ref_labels(refs, *, project: Project) -> dict[str, str]:
    """What each ref ("cabling.cable:962") names, in words a person reads ("cable C00962", "port gpu-001:ib0"):
    one query per kind of object, only the project's objects (a ref of another project keeps its ref)."""
    wanted: dict[str, dict[int, str]] = {}
    for ref in refs:
        label, _, pk = str(ref).partition(":")
        if label in REF_NAMES and pk.isdigit():
            wanted.setdefault(label, {})[int(pk)] = ref
    found = {}
    for label, by_pk in wanted.items():
        fields, scope = REF_NAMES[label]
        model = apps.get_model(label)
        noun = model._meta.verbose_name
        rows = model._default_manager.filter(pk__in=list(by_pk), **{scope: project}).values_list("pk", *fields)
        for pk, *parts in rows:
            found[by_pk[pk]] = f"{noun} {':'.join(str(part) for part in parts)}"
    return found


def waivers_named(waivers: list[Waiver], *, project: Project) -> list[tuple[Waiver, list[str]]]:
    """Each waiver with the names of the items it covers (its refs where an object is gone)."""
    labels = ref_labels({ref for waiver in waivers for ref in waiver.items or []}, project=project)
    return [(waiver, [labels.get(ref, ref) for ref in waiver.items or []]) for waiver in waivers]
