"""The API's filter backend: DjangoFilterBackend whose FilterSets, declared or built from a view's
`filterset_fields`, bound their numbers (core.filters), so `?id=1e30` is a 400 naming the parameter;
and the schema says so (whole numbers with their bounds), so a client or a fuzzer knows the range."""

from django_filters import rest_framework as filters
from django_filters.rest_framework.filterset import FILTER_FOR_DBFIELD_DEFAULTS
from drf_spectacular.contrib.django_filters import DjangoFilterExtension

from core.filters import FilterSet, IntegerFilter, bounded_defaults


class ApiFilterSet(FilterSet):
    """What a view's `filterset_fields` builds: the REST flavour's booleans (true/false) and ISO dates,
    the numbers bounded."""

    FILTER_DEFAULTS = bounded_defaults(FILTER_FOR_DBFIELD_DEFAULTS)


class FilterBackend(filters.DjangoFilterBackend):
    filterset_base = ApiFilterSet


class BoundedFilterExtension(DjangoFilterExtension):
    """drf-spectacular's django-filter support, with an IntegerFilter documented as what it accepts: an
    integer between its bounds (drf-spectacular says `number` for one that filters through a method)."""

    target_class = "core.api.filters.FilterBackend"
    priority = 1

    def resolve_filter_field(self, auto_schema, model, filterset_class, field_name, filter_field):
        parameters = super().resolve_filter_field(auto_schema, model, filterset_class, field_name, filter_field)
        if isinstance(filter_field, IntegerFilter):
            bounds = {"minimum": filter_field.extra["min_value"], "maximum": filter_field.extra["max_value"]}
            for parameter in parameters:
                parameter["schema"] = {"type": "integer", "format": "int64", **bounds}
        return parameters
