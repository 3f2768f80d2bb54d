"""Reads of the acceptance report's versions, scoped to what the user may see (projects.access): every member
of a project reads its versions; an outsider gets a 404, as if they did not exist."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from delivery.models import ReportVersion
from projects.access import scope_to_user
from projects.models import Project


def report_versions_visible(user, project: Project | None = None) -> QuerySet[ReportVersion]:
    """The versions the user may see (of one project when given), newest first, with who asked for each, who
    issued it, the version that superseded it or that it is an addendum to, and the customer's decision (one
    query however many there are)."""
    versions = scope_to_user(ReportVersion.objects.all(), user)
    if project is not None:
        versions = versions.filter(project=project)
    return versions.select_related("project", "requested_by", "issued_by", "superseded_by", "addendum_to",
                                   "signature", "signature__signed_by").order_by(
        "project__code", "-number"
    )


def report_version_for(user, project: Project, number: int) -> ReportVersion:
    """Version `number` of the project, or 404 (for outsiders too)."""
    return get_object_or_404(report_versions_visible(user, project), number=number)
