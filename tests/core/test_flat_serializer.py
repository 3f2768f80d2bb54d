"""core.api.serializers.FlatInputSerializer: shallow-copied fields, validating exactly as DRF's deep copies do."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from core.api.serializers import FlatInputSerializer


class Point(FlatInputSerializer):
    name = serializers.CharField(max_length=5)
    u = serializers.IntegerField(min_value=1, max_value=60)
    kind = serializers.ChoiceField(choices=["a", "b"], default="a")


class DeepPoint(serializers.Serializer):
    name = serializers.CharField(max_length=5)
    u = serializers.IntegerField(min_value=1, max_value=60)
    kind = serializers.ChoiceField(choices=["a", "b"], default="a")


@pytest.mark.parametrize("data", [
    {"name": "p1", "u": 3}, {"name": "p1", "u": "3", "kind": "b"}, {"name": "toolong", "u": 3},
    {"name": "p1", "u": 61}, {"name": "p1", "u": True}, {"name": ["p1"], "u": 3}, {"u": 3, "kind": "c"}, {},
])
def test_it_validates_and_refuses_exactly_as_the_deep_copying_serializer(data):
    flat, deep = Point(data=data), DeepPoint(data=data)
    assert flat.is_valid() == deep.is_valid()
    assert (flat.validated_data, flat.errors) == (deep.validated_data, deep.errors)


def test_each_instance_binds_its_own_copies_and_the_declared_fields_stay_unbound():
    first, second = Point(data={"name": "a", "u": 1}), Point(data={"name": "b", "u": 2})
    assert first.is_valid() and second.is_valid()
    assert first.fields["u"] is not second.fields["u"]
    assert first.fields["u"].parent is first and second.fields["u"].parent is second
    assert Point._declared_fields["u"].parent is None and Point._declared_fields["u"].field_name is None
    assert (first.validated_data["name"], second.validated_data["name"]) == ("a", "b")


@pytest.mark.parametrize("field", [
    DeepPoint(), DeepPoint(many=True), serializers.ListField(child=serializers.IntegerField()),
    serializers.DictField(child=serializers.CharField()),
    serializers.PrimaryKeyRelatedField(many=True, read_only=True),
])
def test_a_field_holding_other_fields_is_refused_when_the_class_is_made(field):
    # Its child would be shared between requests, and bound to whichever bound it last.
    with pytest.raises(TypeError, match="inner"):
        type("Nested", (FlatInputSerializer,), {"inner": field})
