"""Reads of the shared hardware catalogue for its pages. The catalogue belongs to no project: every
signed-in user may read it (the API's rule too), so these take no user; the pages that show it are
reached through a project the user belongs to."""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from ..models import HardwareModel, NicTemplate, PortTemplate


def _count_of(model, **filters) -> Subquery:
    rows = model.objects.filter(hardware_model=OuterRef("pk"), **filters).order_by()
    counted = rows.values("hardware_model").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def _lanes_of() -> Subquery:
    rows = PortTemplate.objects.filter(hardware_model=OuterRef("pk"), breakout_lanes__gt=1).order_by()
    summed = rows.values("hardware_model").annotate(n=Sum("breakout_lanes")).values("n")
    return Coalesce(Subquery(summed, output_field=IntegerField()), Value(0))


def catalogue_list() -> QuerySet[HardwareModel]:
    """Every hardware model with how many ports, breakout lanes and NICs a device of it gets (one query
    whatever the size: the counts are subqueries, not joins). Not how many devices use it: those are
    other projects' business."""
    return HardwareModel.objects.annotate(
        port_count=_count_of(PortTemplate), lane_count=_lanes_of(), nic_count=_count_of(NicTemplate),
    ).order_by("kind", "vendor", "model")


def catalogue_detail(*, pk: int) -> HardwareModel:
    """One model with its NIC and port templates in file order (three queries)."""
    ports = PortTemplate.objects.select_related("nic_template").order_by("id")
    models = catalogue_list().prefetch_related(
        Prefetch("nic_templates", queryset=NicTemplate.objects.order_by("id")),
        Prefetch("port_templates", queryset=ports),
    )
    return get_object_or_404(models, pk=pk)
