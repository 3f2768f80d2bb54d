"""One FilterSet per list, serving both the HTML pages and the API (check runs, check results)."""

import django_filters
from django.db.models import Q

from core.choices import JobStatus
from core.filters import FilterSet, IdFilter, IntegerFilter
from inventory.choices import Network
from inventory.models import Port

from .choices import CheckKind, ResultStatus, RunnerKind, Verdict
from .models import CheckResult, CheckRun


class CheckRunFilterSet(FilterSet):
    project = django_filters.CharFilter(field_name="project__code", label="Project code")
    kind = django_filters.ChoiceFilter(choices=CheckKind.choices)
    status = django_filters.ChoiceFilter(choices=JobStatus.choices)
    runner = django_filters.ChoiceFilter(choices=RunnerKind.choices)

    class Meta:
        model = CheckRun
        fields = ["project", "kind", "status", "runner"]


class CheckResultFilterSet(FilterSet):
    project = django_filters.CharFilter(field_name="run__project__code", label="Project code")
    run = IdFilter(field_name="run_id", label="Run")
    kind = django_filters.ChoiceFilter(field_name="run__kind", choices=CheckKind.choices)
    verdict = django_filters.ChoiceFilter(choices=Verdict.choices)
    status = django_filters.ChoiceFilter(choices=ResultStatus.choices)
    network = django_filters.ChoiceFilter(field_name="port__network", choices=Network.choices)
    plane = IntegerFilter(method="filter_plane", min_value=0, label="Plane")
    rack = django_filters.CharFilter(method="filter_rack", label="Rack (either node)")
    device = django_filters.CharFilter(method="filter_device", label="Device (either end)")
    port = IdFilter(method="filter_port", label="Port id (either end)")
    cable = IdFilter(field_name="cable_id", label="Cable id")

    class Meta:
        model = CheckResult
        fields = ["project", "run", "kind", "verdict", "status", "network", "plane", "rack", "device", "port",
                  "cable"]

    # The fields the results table of a run page offers (the run and project are the page's own).
    PAGE_FIELDS = ("verdict", "network", "plane", "rack", "device")

    def filter_plane(self, queryset, name, value):
        """A physical port carries the planes of its lanes: match the port's own plane or a lane's, through
        a subquery so a result is listed once without DISTINCT."""
        with_lane = Port.objects.filter(lanes__plane=value).values("pk")
        return queryset.filter(Q(port__plane=value) | Q(port_id__in=with_lane))

    def filter_rack(self, queryset, name, value):
        return queryset.filter(Q(device__rack__name=value) | Q(peer_device__rack__name=value))

    def filter_device(self, queryset, name, value):
        return queryset.filter(Q(device__name=value) | Q(peer_device__name=value))

    def filter_port(self, queryset, name, value):
        return queryset.filter(Q(port_id=value) | Q(peer_port_id=value))
