"""Reads of the punch list, scoped to what the user may see: members read the project's items, a customer
only those marked customer-visible (an internal item is a 404 to them, as if it did not exist)."""

from __future__ import annotations

import django_filters
from django.db.models import F, Q, QuerySet, Value
from django.shortcuts import get_object_or_404

from cabling.models import Cable
from core.filters import FilterSet as BoundedFilterSet
from delivery.choices import UNRESOLVED_PUNCH_STATUSES, PunchObjectKind, PunchSeverity, PunchStatus
from delivery.models import PunchItem
from inventory.models import Device, Optic, Port
from projects.access import is_node, project_role, scope_to_user
from projects.choices import Role
from projects.models import Project
from validation.models import CheckResult, TopologyComparison


def punch_item_list(*, user, project: Project) -> QuerySet[PunchItem]:
    """The project's items the user may see, with the people each names (one query)."""
    items = scope_to_user(PunchItem.objects.filter(project=project), user).select_related(
        "project", "assignee", "opened_by", "fixed_by", "verified_by"
    )
    if project_role(user, project) == Role.CUSTOMER:
        items = items.filter(customer_visible=True)
    return items


def punch_item_detail(*, user, project: Project, pk: int) -> PunchItem:
    return get_object_or_404(punch_item_list(user=user, project=project), pk=pk)


def punch_items_of_object(*, user, project: Project, kind: str, object_id: int, limit: int = 5) -> dict:
    """The items still being worked on about one object (a panel on its page): how many, and the newest
    few (two queries)."""
    items = punch_item_list(user=user, project=project).filter(
        object_kind=kind, object_id=object_id, status__in=UNRESOLVED_PUNCH_STATUSES
    )
    return {"count": items.count(), "items": list(items.order_by("-opened_at", "-id")[:limit])}


# What a "new item" link may name (?kind=&id=), and how to read its label: (model, project lookup, label).
_OBJECTS = {
    PunchObjectKind.DEVICE: (Device, "project", lambda o: o.name, ()),
    PunchObjectKind.NODE_PAIR: (Device, "project", lambda o: o.name, ()),
    PunchObjectKind.PORT: (Port, "device__project", lambda o: f"{o.device.name}:{o.name}", ("device",)),
    PunchObjectKind.CABLE: (Cable, "project", lambda o: o.label, ()),
    PunchObjectKind.OPTIC: (Optic, "project", lambda o: f"optic {o.serial}", ()),
    PunchObjectKind.CHECK_RESULT: (CheckResult, "run__project", lambda o: o.target_key, ()),
    PunchObjectKind.MISWIRE: (TopologyComparison, "project", lambda o: f"topology comparison #{o.pk}", ()),
}


def punch_object_label(*, project: Project, kind: str, object_id) -> str | None:
    """The label of an object of `project` a new item may concern; None when the project has no such
    object (another project's ids name nothing)."""
    if kind not in _OBJECTS:
        return None
    try:
        object_id = int(object_id)
    except (TypeError, ValueError):
        return None
    if not 0 < object_id < 2**63:
        return None
    model, path, label, related = _OBJECTS[kind]
    obj = model.objects.filter(**{path: project}, pk=object_id).select_related(*related).first()
    return label(obj)[:255] if obj is not None else None


class PunchItemFilterSet(BoundedFilterSet):
    q = django_filters.CharFilter(method="filter_q", label="Title or object")
    status = django_filters.ChoiceFilter(choices=PunchStatus.choices)
    severity = django_filters.ChoiceFilter(choices=PunchSeverity.choices)
    assignee = django_filters.CharFilter(field_name="assignee__username", label="Assignee (user name)")
    customer_visible = django_filters.BooleanFilter(label="Customer-visible")

    class Meta:
        model = PunchItem
        fields = ["q", "status", "severity", "assignee", "customer_visible"]

    def filter_q(self, queryset, name, value):
        return queryset.filter(Q(title__icontains=value) | Q(object_label__icontains=value))


# Roles that read a project's internal punch items; a customer reads the customer-visible ones only.
TEAM_ROLES = [role for role in Role.values if role != Role.CUSTOMER]


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
