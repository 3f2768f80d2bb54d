"""Filters of the floor's API lists. Cables take the one CableFilterSet of the HTML list and the
downloads, plus `label` (a script looks one cable up by its printed label)."""

import django_filters

from core.filters import FilterSet, IdFilter

from ..choices import ScanAction, ScanResult
from ..filters import CableFilterSet
from ..models import ScanEvent


class CableApiFilterSet(CableFilterSet):
    label = django_filters.CharFilter(field_name="label", lookup_expr="iexact", label="Label (exactly)")

    class Meta(CableFilterSet.Meta):
        fields = [*CableFilterSet.Meta.fields, "label"]


class ScanEventFilterSet(FilterSet):
    # Ids and names, not model choices: a choice field would read the table to check the id (outside the
    # user's projects too), and say whether a row it may not see exists.
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    user = django_filters.CharFilter(field_name="user__username", label="Username")
    action = django_filters.ChoiceFilter(choices=ScanAction.choices)
    result = django_filters.ChoiceFilter(choices=ScanResult.choices)
    cable = IdFilter(field_name="cable_id", label="Cable id")
    device = IdFilter(field_name="device_id", label="Device id")

    class Meta:
        model = ScanEvent
        fields = ["project", "user", "action", "result", "cable", "device"]
