"""The base of every FilterSet: numbers in a query string bounded to what a database can compare.

A query string is hostile input. django-filter's NumberFilter reads any decimal up to 1e50, and a value
compared through a foreign key (`?cable=1e30` is `cable_id = 10**30`) reaches the database unchecked:
SQLite stores signed 64-bit integers and raised OverflowError, a 500. Here a whole number is read as a
whole number (1.5 and 1e30 are not one), bounded to signed 64 bits, and an id to 1 and up, so anything
else is a form error naming the parameter: a 400 from the API (DjangoFilterBackend), the filter form's
message on a page.

Declare numbers with IntegerFilter (a count, a plane) or IdFilter (a row's id), and derive every
FilterSet from `FilterSet` here: the filters it builds from `Meta.fields` are bounded the same way.
"""

from __future__ import annotations

import django_filters
from django import forms
from django.db import models
from django_filters.filterset import FILTER_FOR_DBFIELD_DEFAULTS

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class IntegerFilter(django_filters.NumberFilter):
    """A whole number within signed 64 bits (narrower with min_value / max_value)."""

    field_class = forms.IntegerField

    def __init__(self, *args, min_value: int = INT64_MIN, max_value: int = INT64_MAX, **kwargs):
        super().__init__(*args, min_value=max(min_value, INT64_MIN), max_value=min(max_value, INT64_MAX), **kwargs)

    def get_max_validator(self):
        return None  # the field's own max_value bounds it


class IdFilter(IntegerFilter):
    """A row's id: a whole number from 1. An id is not a choice field on purpose: a choice field reads
    the table to check it (other projects' rows too) and says whether a row the user may not see exists."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        super().__init__(*args, **kwargs)


class DecimalFilter(django_filters.NumberFilter):
    """A finite decimal within the signed 64-bit range (NaN and Infinity are already refused)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", INT64_MIN)
        kwargs.setdefault("max_value", INT64_MAX)
        super().__init__(*args, **kwargs)

    def get_max_validator(self):
        return None


_INTEGER_FIELDS = (
    models.AutoField, models.BigAutoField, models.SmallAutoField, models.IntegerField, models.BigIntegerField,
    models.SmallIntegerField, models.PositiveIntegerField, models.PositiveBigIntegerField,
    models.PositiveSmallIntegerField,
)


def bounded_defaults(defaults: dict) -> dict:
    """A FilterSet's FILTER_DEFAULTS with every number field's filter bounded (ids from 1)."""
    bounded = dict(defaults)
    for field_class in _INTEGER_FIELDS:
        bounded[field_class] = {"filter_class": IntegerFilter}
    for field_class in (models.PositiveIntegerField, models.PositiveBigIntegerField, models.PositiveSmallIntegerField):
        bounded[field_class] = {"filter_class": IntegerFilter, "extra": lambda field: {"min_value": 0}}
    for field_class in (models.AutoField, models.BigAutoField, models.SmallAutoField):
        bounded[field_class] = {"filter_class": IdFilter}
    for field_class in (models.DecimalField, models.FloatField):
        bounded[field_class] = {"filter_class": DecimalFilter}
    return bounded


class FilterSet(django_filters.FilterSet):
    """django-filter's FilterSet with the filters it derives from `Meta.fields` bounded as above."""

    FILTER_DEFAULTS = bounded_defaults(FILTER_FOR_DBFIELD_DEFAULTS)
