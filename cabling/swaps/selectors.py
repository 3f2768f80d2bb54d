"""Reads of swaps, scoped to what the user may see: swaps are the floor's business, read by the project's
technicians and managers (EDIT_INVENTORY), never by its customers. Every shape loads what its page shows
in one query (select_related), so a page's query count does not grow with the swaps."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404

from cabling.models import Cable, Swap
from projects.access import Capability, projects_where, scope_to_user
from projects.models import Project

HISTORY_ROWS = 20  # swaps shown on a cable's or an optic's page (the swaps page has them all)
SWAP_RELATIONS = ("project", "optic", "new_optic", "port__device", "cable", "recorded_by")


def swap_list(*, user, project: Project | None = None) -> QuerySet[Swap]:
    """Swaps of the projects where the user may swap parts (one project's when given), newest first."""
    swaps = scope_to_user(Swap.objects.all(), user)
    swaps = swaps.filter(project__in=projects_where(user, Capability.EDIT_INVENTORY))
    if project is not None:
        swaps = swaps.filter(project=project)
    return swaps.select_related(*SWAP_RELATIONS).order_by("-recorded_at", "-id")


def swap_detail(*, user, project: Project, pk: int) -> Swap:
    return get_object_or_404(swap_list(user=user, project=project), pk=pk)


def swaps_of_cable(*, user, project: Project, cable: Cable, cages: list[int]) -> list[Swap]:
    """The cable's own swaps and the optic swaps in the cages its ends are plugged into, newest first."""
    found = Q(cable=cable) | Q(port_id__in=cages) if cages else Q(cable=cable)
    return list(swap_list(user=user, project=project).filter(found)[:HISTORY_ROWS])


def swaps_of_optic(*, user, project: Project, optic_id: int) -> list[Swap]:
    """The swaps that took the optic out or put it in, newest first."""
    found = Q(optic_id=optic_id) | Q(new_optic_id=optic_id)
    return list(swap_list(user=user, project=project).filter(found)[:HISTORY_ROWS])
