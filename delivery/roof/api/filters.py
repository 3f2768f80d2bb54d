"""Filters of the stages and punch list API. The punch list takes the one PunchItemFilterSet of its page
(status, severity, assignee, customer_visible, q) plus what a script needs across projects: the project's
code and the object an item concerns."""

from __future__ import annotations

import django_filters

from core.filters import FilterSet, IdFilter

from ..choices import PunchObjectKind, StageStatus
from ..models import Stage
from ..punch_selectors import PunchItemFilterSet


class StageFilterSet(FilterSet):
    # A code, not a model choice: a choice field would read the table and tell an outsider the project exists.
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    status = django_filters.ChoiceFilter(choices=StageStatus.choices)
    key = django_filters.CharFilter(field_name="key", label="Stage key (site_readiness, racking, ...)")

    class Meta:
        model = Stage
        fields = ["project", "status", "key"]


class PunchItemApiFilterSet(PunchItemFilterSet):
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    object_kind = django_filters.ChoiceFilter(choices=PunchObjectKind.choices, label="Kind of object it concerns")
    object_id = IdFilter(field_name="object_id", label="Id of the object it concerns (with object_kind)")

    class Meta(PunchItemFilterSet.Meta):
        fields = ["project", *PunchItemFilterSet.Meta.fields, "object_kind", "object_id"]
