"""Reads of NetBox pushes, scoped like every read (projects.access)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from delivery.models import NetBoxPush
from projects.access import scope_to_user
from projects.models import Project

RECENT_PUSHES = 20


def netbox_push_list(*, user, project: Project) -> QuerySet[NetBoxPush]:
    return scope_to_user(NetBoxPush.objects.filter(project=project), user).select_related("requested_by")


def netbox_push_detail(*, user, project: Project, pk: int) -> NetBoxPush:
    return get_object_or_404(netbox_push_list(user=user, project=project), pk=pk)


def last_netbox_url(*, project: Project) -> str:
    """The NetBox the project last pushed to, to fill the form with."""
    return NetBoxPush.objects.filter(project=project).values_list("netbox_url", flat=True).first() or ""
