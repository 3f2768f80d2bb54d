"""Serializer fields shared by every app's API."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


def named_enum_field(choices) -> type[serializers.ChoiceField]:
    """A ChoiceField whose OpenAPI enum is a component named after its choices class. HardwareKind
    and PortKind are both served as `kind`, which drf-spectacular could otherwise only tell apart by
    a hash (and warn about)."""
    schema = {
        "type": "string",
        "enum": list(choices.values),
        "description": "\n".join(f"* `{value}` - {label}" for value, label in choices.choices),
    }
    field_class = type(f"{choices.__name__}Field", (serializers.ChoiceField,), {})
    return extend_schema_field(schema, component_name=f"{choices.__name__}Enum")(field_class)
