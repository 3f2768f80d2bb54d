"""One FilterSet for cables, serving the HTML list, the downloads (cut sheet, labels) and later the API."""

import django_filters

from core.filters import FilterSet, IntegerFilter
from inventory.choices import Network

from .choices import CableStatus, CableType
from .models import Cable, CableEnd


class CableFilterSet(FilterSet):
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    q = django_filters.CharFilter(field_name="label", lookup_expr="icontains", label="Label contains")
    network = django_filters.ChoiceFilter(choices=Network.choices)
    plane = IntegerFilter(min_value=0)
    rack = django_filters.CharFilter(method="filter_rack", label="Rack (either end)")
    device = django_filters.CharFilter(method="filter_device", label="Device (either end)")
    status = django_filters.ChoiceFilter(choices=CableStatus.choices)
    type = django_filters.ChoiceFilter(field_name="cable_type", choices=CableType.choices, label="Type")

    class Meta:
        model = Cable
        fields = ["project", "q", "network", "plane", "rack", "device", "status", "type"]

    # A cable has several ends: filter through a subquery of ends so a cable with two ends in the
    # rack is listed once, without DISTINCT over the whole (wide) row.
    def filter_rack(self, queryset, name, value):
        return queryset.filter(pk__in=CableEnd.objects.filter(port__device__rack__name=value).values("cable"))

    def filter_device(self, queryset, name, value):
        return queryset.filter(pk__in=CableEnd.objects.filter(port__device__name=value).values("cable"))
