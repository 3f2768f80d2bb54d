"""Serializer bases shared by every app's API."""

from __future__ import annotations

import copy

from rest_framework import serializers


class FlatInputSerializer(serializers.Serializer):
    """An input serializer of plain fields only (no nested serializer, no field holding per-request state),
    read on a hot path: its fields are shallow copies of the declared ones instead of DRF's deep copies,
    which rebuild every field and its validators per request (140 us of a scan's few milliseconds). A
    shallow copy is safe because validating never changes a field's validators, choices or messages; what
    binding sets (field_name, parent) lands on the copy. A nested serializer here would share its own
    fields between requests: refused when the class is made."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        nested = [name for name, field in cls._declared_fields.items()
                  if isinstance(field, serializers.BaseSerializer | serializers.ManyRelatedField)
                  or hasattr(field, "child") or hasattr(field, "child_relation")]  # a list's, a dict's child
        if nested:
            raise TypeError(f"{cls.__name__}: {', '.join(nested)} would be shared between requests; "
                            "use serializers.Serializer")

    def get_fields(self):
        return {name: copy.copy(field) for name, field in self._declared_fields.items()}


def validated_body(serializer_class, request, **kwargs) -> dict:
    """The request's body checked by `serializer_class`: its validated data, or a 400 naming the fields."""
    given = serializer_class(data=request.data, **kwargs)
    given.is_valid(raise_exception=True)
    return given.validated_data
