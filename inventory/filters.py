"""One FilterSet per list, serving both the HTML page and the API."""

import django_filters
from django.db.models import Q

from core.filters import FilterSet, IntegerFilter

from .choices import (
    DeviceRole,
    DeviceStatus,
    FormFactor,
    HardwareKind,
    Network,
    OpticStatus,
    PortKind,
    RackStatus,
)
from .models import Device, HardwareModel, Nic, Optic, Port, Rack, Site


class ProjectCodeFilterMixin(FilterSet):
    project = django_filters.CharFilter(field_name="project__code", label="Project code")


class SiteFilterSet(ProjectCodeFilterMixin):
    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Name contains")

    class Meta:
        model = Site
        fields = ["project", "q"]


class RackFilterSet(ProjectCodeFilterMixin):
    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Name contains")
    row = django_filters.CharFilter()
    status = django_filters.ChoiceFilter(choices=RackStatus.choices)

    class Meta:
        model = Rack
        fields = ["project", "q", "row", "status"]


class DeviceFilterSet(ProjectCodeFilterMixin):
    q = django_filters.CharFilter(method="filter_q", label="Name, serial or asset tag")
    rack = django_filters.CharFilter(field_name="rack__name", label="Rack")
    role = django_filters.ChoiceFilter(choices=DeviceRole.choices)
    status = django_filters.ChoiceFilter(choices=DeviceStatus.choices)
    kind = django_filters.ChoiceFilter(field_name="hardware_model__kind", choices=HardwareKind.choices)

    class Meta:
        model = Device
        fields = ["project", "q", "rack", "role", "status", "kind"]

    def filter_q(self, queryset, name, value):
        return queryset.filter(
            Q(name__icontains=value) | Q(serial__icontains=value) | Q(asset_tag__icontains=value)
        )


class NicFilterSet(FilterSet):
    project = django_filters.CharFilter(field_name="device__project__code", label="Project code")
    device = django_filters.CharFilter(field_name="device__name")
    model = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Nic
        fields = ["project", "device", "model"]


class PortFilterSet(FilterSet):
    project = django_filters.CharFilter(field_name="device__project__code", label="Project code")
    device = django_filters.CharFilter(field_name="device__name")
    kind = django_filters.ChoiceFilter(choices=PortKind.choices)
    network = django_filters.ChoiceFilter(choices=Network.choices)
    plane = IntegerFilter(min_value=0)
    is_lane = django_filters.BooleanFilter(
        field_name="parent", lookup_expr="isnull", exclude=True, label="Is a lane"
    )

    class Meta:
        model = Port
        fields = ["project", "device", "kind", "network", "plane", "is_lane", "status"]


class OpticFilterSet(ProjectCodeFilterMixin):
    q = django_filters.CharFilter(method="filter_q", label="Serial or part number")
    status = django_filters.ChoiceFilter(choices=OpticStatus.choices)
    form_factor = django_filters.ChoiceFilter(choices=FormFactor.choices)
    speed_gbps = IntegerFilter(min_value=0)
    device = django_filters.CharFilter(field_name="port__device__name", label="Device")

    class Meta:
        model = Optic
        fields = ["project", "q", "status", "form_factor", "speed_gbps", "device"]

    def filter_q(self, queryset, name, value):
        return queryset.filter(Q(serial__icontains=value) | Q(part_number__icontains=value))


class HardwareModelFilterSet(FilterSet):
    kind = django_filters.ChoiceFilter(choices=HardwareKind.choices)
    vendor = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = HardwareModel
        fields = ["kind", "vendor"]
