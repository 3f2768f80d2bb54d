"""One FilterSet per list, serving both the HTML pages and the API (check runs, check results)."""

import django_filters
from django.db.models import Q

from core.choices import JobStatus
from core.filters import FilterSet, IdFilter, IntegerFilter
from inventory.choices import Network
from inventory.models import Port

from . import selectors
from .choices import CheckKind, ResultStatus, RunnerKind, Verdict
from .criteria import fmt_sci
from .models import CheckResult, CheckRun


def ber_bucket_choices() -> list[tuple[str, str]]:
    """The effective-BER buckets a run page's chart links to: below the floor, each decade, no reading."""
    decades = [(str(k), f"{fmt_sci(10.0**k)} to {fmt_sci(10.0 ** (k + 1))}") for k in selectors.BER_DECADES]
    return [(selectors.BER_BELOW, f"< {fmt_sci(selectors.BER_FLOOR)}"), *decades, (selectors.BER_NONE, "no reading")]


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
    ber = django_filters.ChoiceFilter(choices=ber_bucket_choices, method="filter_ber", label="Effective BER")
    pair = django_filters.CharFilter(method="filter_pair", max_length=200, label="Node pair (a~b)")

    class Meta:
        model = CheckResult
        fields = ["project", "run", "kind", "verdict", "status", "network", "plane", "rack", "device", "port",
                  "cable", "ber", "pair"]

    # The fields the results table of a run page offers (the run and project are the page's own); a chart's
    # bar or cell links to the table filtered by `ber` or `pair`, and the page shows those when set.
    PAGE_FIELDS = ("verdict", "network", "plane", "rack", "device")
    CHART_FIELDS = ("ber", "pair")

    def filter_plane(self, queryset, name, value):
        """A physical port carries the planes of its lanes: match the port's own plane or a lane's, through
        a subquery so a result is listed once without DISTINCT."""
        with_lane = Port.objects.filter(lanes__plane=value).values("pk")
        return queryset.filter(Q(port__plane=value) | Q(port_id__in=with_lane))

    def filter_rack(self, queryset, name, value):
        return queryset.filter(Q(device__rack__name=value) | Q(peer_device__rack__name=value))

    def filter_device(self, queryset, name, value):
        return queryset.filter(Q(device__name=value) | Q(peer_device__name=value))

    def filter_ber(self, queryset, name, value: str):
        """Link-health results whose effective BER falls in the bucket (as the run page's chart counts them)."""
        return selectors.with_effective_ber(queryset).filter(selectors.ber_bucket_filter(value))

    def filter_pair(self, queryset, name, value: str):
        """The result of a node pair, measured either way round ("gpu-001~gpu-002"); nothing for text that
        names no pair."""
        a, sep, b = value.partition("~")
        if not (sep and a and b):
            return queryset.none()
        return queryset.filter(Q(device__name=a, peer_device__name=b) | Q(device__name=b, peer_device__name=a))

    def filter_port(self, queryset, name, value):
        return queryset.filter(Q(port_id=value) | Q(peer_port_id=value))
