"""Reads of the stages and punch list API across every project the user belongs to (the pages read one
project at a time through delivery.roof.selectors and punch_selectors). Each list is one query, plus one
per prefetched relation, whatever the number of rows or projects."""

from __future__ import annotations

from django.db.models import F, Prefetch, Q, QuerySet, Value

from delivery.access import is_node, scope_to_user
from delivery.choices import Role

from ..models import ChecklistItem, PunchItem, Stage, Waiver

# Roles that read a project's internal punch items; a customer reads the customer-visible ones only.
TEAM_ROLES = [role for role in Role.values if role != Role.CUSTOMER]


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


def punch_items_visible(*, user) -> QuerySet[PunchItem]:
    """The punch items of the user's projects that they may see: all of them where they work (technician,
    manager, staff), the customer-visible ones where they are the customer. Each row carries `viewer_role`,
    the user's role in its project, read in the same query (the serializer hides internal fields from a
    customer without asking per project)."""
    rows = PunchItem.objects.select_related("project", "assignee", "opened_by", "fixed_by", "verified_by")
    if is_node(user) or not user.is_authenticated:
        return rows.none()
    if user.is_staff:
        return rows.annotate(viewer_role=Value(Role.MANAGER.value))
    # One filter() call, so the membership join that scopes the rows is the one the role is read from.
    mine = Q(project__memberships__user=user) & (
        Q(customer_visible=True) | Q(project__memberships__role__in=TEAM_ROLES)
    )
    return rows.filter(mine).annotate(viewer_role=F("project__memberships__role"))
