"""Reads of tool-output uploads, scoped through projects.access like every other read."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from projects.access import scope_to_user
from projects.models import Project

from ..models import CheckResult, ToolUpload


def tool_upload_list(*, user, project: Project | None = None) -> QuerySet[ToolUpload]:
    """Uploads newest first, with what a list row shows (who, which node) joined in."""
    uploads = scope_to_user(ToolUpload.objects.all(), user)
    if project is not None:
        uploads = uploads.filter(project=project)
    return uploads.select_related("project", "requested_by", "device").order_by("-created_at", "-id")


def tool_upload_detail(*, user, project: Project, pk: int) -> ToolUpload:
    """One upload of the project, or 404 (also for outsiders, who must not learn it exists)."""
    return get_object_or_404(tool_upload_list(user=user, project=project).select_related("run"), pk=pk)


def tool_upload_results(*, user, upload: ToolUpload) -> QuerySet[CheckResult]:
    """The results an upload produced, each with the port, cable and optic it concerns."""
    if upload.run_id is None:
        return CheckResult.objects.none()
    results = scope_to_user(CheckResult.objects.filter(run_id=upload.run_id), user, "run__project")
    return (
        results.select_related("device", "port", "cable", "optic")
        .defer("raw_output", "stderr", "command")
        .order_by("id")
    )
