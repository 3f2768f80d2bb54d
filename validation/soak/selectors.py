"""Reads for the soak pages and charts, scoped to what the user may see."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404

from projects.access import scope_to_user
from projects.models import Project

from ..choices import Verdict
from ..models import CheckResult, SoakSample, SoakWindow
from .maths import COUNTER_FIELDS


def soak_window_list(*, user, project: Project) -> QuerySet[SoakWindow]:
    """Windows newest first, each with its count of failed ports and of ports."""
    windows = scope_to_user(SoakWindow.objects.filter(project=project), user)
    return (
        windows.select_related("run", "started_by", "project")
        .annotate(
            failed_ports=Count("run__results", filter=Q(run__results__verdict=Verdict.FAIL)),
            port_count=Count("run__results"),
        )
        .order_by("-started_at", "-id")
    )


def soak_window_detail(*, user, project: Project, pk: int) -> SoakWindow:
    return get_object_or_404(soak_window_list(user=user, project=project), pk=pk)


def soak_failures(*, user, window: SoakWindow) -> list[CheckResult]:
    """The ports whose counters grew, earliest first, each linked to its cable and optic."""
    results = scope_to_user(CheckResult.objects.filter(run_id=window.run_id), user, "run__project")
    failed = list(
        results.filter(verdict=Verdict.FAIL)
        .select_related("device__rack", "port", "cable", "optic")
        .defer("raw_output", "stderr")
    )

    def first_growth(result: CheckResult) -> tuple:
        growth = (result.metrics or {}).get("growth") or {}
        return (min((g["sweep"] for g in growth.values()), default=10**9), result.target_key)

    return sorted(failed, key=first_growth)


def soak_series(*, user, window: SoakWindow, result_ids: Iterable[int] | None = None) -> dict[str, list[dict]]:
    """Counters over time per port (target key -> readings in order), for the soak chart. Give
    `result_ids` to chart a few ports; all ports of a 72-hour window on 576 ports is 166,000 readings."""
    samples = scope_to_user(SoakSample.objects.filter(window=window), user, "window__project")
    if result_ids is not None:
        samples = samples.filter(result_id__in=list(result_ids))
    series: dict[str, list[dict]] = {}
    rows = samples.order_by("result_id", "sweep").values(
        "result__target_key", "sweep", "taken_at", "error", "effective_ber", "symbol_ber", *COUNTER_FIELDS
    )
    for row in rows:
        key = row.pop("result__target_key")
        series.setdefault(key, []).append(row)
    return series
