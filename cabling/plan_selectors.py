"""Reads of fabric plans, scoped through delivery.access like every other read. (Kept apart from
cabling/selectors.py, which another helper was writing at the same time; they may be merged.)"""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from delivery.access import Capability, projects_where, scope_to_user
from delivery.models import Project

from .models import FabricPlan

RECENT_PLANS = 20


def fabric_plan_list(*, user, project: Project) -> QuerySet[FabricPlan]:
    """The project's plans, newest first, without the heavy columns (spec text, stored diff)."""
    plans = scope_to_user(FabricPlan.objects.filter(project=project), user)
    return plans.select_related("created_by", "confirmed_by").defer("spec_text", "diff", "errors").order_by(
        "-created_at", "-id"
    )


def fabric_plan_detail(*, user, project: Project, pk: int) -> FabricPlan:
    plans = scope_to_user(FabricPlan.objects.filter(project=project), user)
    return get_object_or_404(plans.select_related("project", "created_by", "confirmed_by"), pk=pk)


def fabric_plan_status(*, user, project: Project, pk: int) -> dict:
    """What static/js/progress.js polls: {status, status_label, done, total, finished} (one query)."""
    plans = scope_to_user(FabricPlan.objects.filter(project=project), user)
    row = get_object_or_404(
        plans.only("id", "status", "progress_done", "progress_total", "progress_step"), pk=pk
    )
    label = row.get_status_display() + (f" ({row.progress_step})" if row.progress_step and not row.is_finished else "")
    return {
        "id": row.pk, "status": row.status, "status_label": label, "step": row.progress_step,
        "done": row.progress_done, "total": row.progress_total, "finished": row.is_finished,
    }


def fabric_plans_managed(*, user) -> QuerySet[FabricPlan]:
    """Plans of the projects the user manages (staff: every project), for the API."""
    managed = projects_where(user, Capability.MANAGE_PROJECT)
    plans = FabricPlan.objects.select_related("project", "created_by", "confirmed_by")
    return plans.filter(project__in=managed).order_by("-created_at", "-id")
