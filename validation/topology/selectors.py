"""Reads of topology comparisons for the pages, the command and a cable's panel: scoped through
projects.access, with a fixed number of queries whatever the size of the fabric (links are paginated by
the views; the counts and changes are on the comparison row)."""

from __future__ import annotations

from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.http import Http404
from django.shortcuts import get_object_or_404

from cabling.models import Cable
from core.choices import JobStatus
from core.filters import INT64_MAX
from projects.access import scope_to_user
from projects.models import Project

from ..choices import CheckKind, LinkChange, LinkState, ResultStatus
from ..models import CheckResult, TopologyComparison, TopologyFile, TopologyLink

# Worst first on a page: what to fix comes before what is merely new.
STATE_ORDER = [LinkState.MISWIRED, LinkState.MISSING, LinkState.DEGRADED, LinkState.UNPLANNED, LinkState.OK]
RECENT_LINK_CHECKS = 5


def topology_comparison_list(*, user, project: Project) -> QuerySet[TopologyComparison]:
    comparisons = scope_to_user(TopologyComparison.objects.filter(project=project), user)
    return comparisons.select_related("requested_by", "run").defer("log").order_by("-created_at", "-id")


def topology_comparison_detail(*, user, project: Project, pk: int) -> TopologyComparison:
    """One comparison of the project, or 404 (also for outsiders)."""
    comparisons = scope_to_user(TopologyComparison.objects.filter(project=project), user)
    return get_object_or_404(comparisons.select_related("project", "requested_by", "run", "previous"), pk=pk)


def _state_rank():
    return Case(*(When(state=state, then=Value(rank)) for rank, state in enumerate(STATE_ORDER)),
                default=Value(len(STATE_ORDER)), output_field=IntegerField())


def topology_links(
    *, user, comparison: TopologyComparison, state: str = "", change: str = ""
) -> QuerySet[TopologyLink]:
    """The comparison's links (not ok, or fixed since the previous one), worst first."""
    links = scope_to_user(TopologyLink.objects.filter(comparison=comparison), user, "comparison__project")
    if state in LinkState.values:
        links = links.filter(state=state)
    if change in LinkChange.values:
        links = links.filter(change=change)
    return links.select_related("cable").annotate(rank=_state_rank()).order_by("rank", "key")


def topology_files(*, user, comparison: TopologyComparison) -> QuerySet[TopologyFile]:
    return scope_to_user(TopologyFile.objects.filter(comparison=comparison), user, "comparison__project").order_by("id")


def topology_file_detail(*, user, project: Project, comparison_pk: int, pk: int) -> TopologyFile:
    if not 0 < comparison_pk <= INT64_MAX:  # a path's number past any id: no such file (SQLite would overflow)
        raise Http404("No such comparison.")
    files = scope_to_user(TopologyFile.objects.filter(comparison__project=project), user, "comparison__project")
    return get_object_or_404(files, comparison_id=comparison_pk, pk=pk)


def comparison_json(comparison: TopologyComparison, links) -> dict:
    """What `compare_topology --json` prints: the counts, then every link that is not ok with its planned
    and observed ends, its cable label, the note and the advice."""
    counts = comparison.counts or {}
    return {
        "comparison": comparison.pk,
        "status": comparison.status,
        **{state: counts.get(state, 0) for state in LinkState.values},
        "swaps": counts.get("swaps", 0),
        "in_scope": counts.get("in_scope", 0),
        "observed": counts.get("observed", 0),
        "changes": comparison.changes or {},
        "links": [
            {
                "state": link.state,
                "cable": link.cable_label or None,
                "planned": {"a": link.planned_a, "b": link.planned_b} if link.planned_a else None,
                "observed": {"a": link.observed_a, "b": link.observed_b} if link.observed_a else None,
                "note": link.note,
                "advice": link.advice,
                "change": link.change,
            }
            for link in links
            if link.state != LinkState.OK
        ],
        "errors": comparison.errors or [],
        "notes": comparison.notes or [],
    }


def cable_fabric_panel(*, user, project: Project, cable: Cable) -> dict:
    """A cable's page: what the latest comparison made of it (and its advice, when not ok) and its recent
    link-health results. Four queries."""
    latest = (
        scope_to_user(TopologyComparison.objects.filter(project=project, status=JobStatus.DONE), user)
        .defer("log").order_by("-created_at", "-id").first()
    )
    link = None
    if latest is not None:
        link = (
            scope_to_user(TopologyLink.objects.filter(comparison=latest, cable=cable), user, "comparison__project")
            .exclude(change=LinkChange.FIXED).order_by("id").first()
        )
    checks = list(
        scope_to_user(CheckResult.objects.filter(cable=cable, run__kind=CheckKind.LINK_HEALTH), user, "run__project")
        .filter(status__in=[ResultStatus.DONE, ResultStatus.ERROR])
        .select_related("run", "port__device")
        .only("id", "verdict", "finished_at", "metrics", "reasons", "run__id", "run__kind", "port__name",
              "port__device__name", "target_key")
        .order_by("-finished_at", "-id")[:RECENT_LINK_CHECKS]
    )
    return {"cable": cable, "comparison": latest, "link": link, "checks": checks}
