"""One FilterSet for swaps, serving the swaps page and GET /api/swaps/."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Q

from cabling.choices import CLOSED_RMA_STATES, RmaState, SwapKind
from cabling.models import Swap
from core.filters import FilterSet, IdFilter

MAX_QUERY = 100  # a serial or case number longer than this is not one


class SwapFilterSet(FilterSet):
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    q = django_filters.CharFilter(method="filter_q", max_length=MAX_QUERY, label="Serial or RMA case")
    kind = django_filters.ChoiceFilter(choices=SwapKind.choices)
    rma_state = django_filters.ChoiceFilter(choices=RmaState.choices, label="RMA state")
    rma_open = django_filters.BooleanFilter(
        method="filter_rma_open", label="RMA still open",
        widget=forms.Select(choices=[("", "—"), ("true", "Yes"), ("false", "No")]),
    )
    optic = IdFilter(method="filter_optic", label="Optic (out or in)")
    cable = IdFilter(method="filter_cable", label="Cable")

    class Meta:
        model = Swap
        fields = ["project", "q", "kind", "rma_state", "rma_open", "optic", "cable"]

    def filter_q(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(Q(old_serial__icontains=value) | Q(new_serial__icontains=value)
                               | Q(rma_case__icontains=value))

    def filter_rma_open(self, queryset, name, value):
        """An RMA under way: opened and not yet answered by the vendor (replaced, credited, rejected)."""
        still_open = ~Q(rma_state=RmaState.NONE) & ~Q(rma_state__in=CLOSED_RMA_STATES)
        if value is None:
            return queryset
        return queryset.filter(still_open) if value else queryset.exclude(still_open)

    def filter_optic(self, queryset, name, value):
        return queryset.filter(Q(optic_id=value) | Q(new_optic_id=value))

    def filter_cable(self, queryset, name, value):
        return queryset.filter(cable_id=value)
