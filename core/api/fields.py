"""Serializer fields shared by every app's API."""

from django.core.exceptions import FieldDoesNotExist
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import serializers

BLANK = {"type": "string", "enum": [""]}
MAX_KEY_LENGTH = 200  # longer than any code, name or part number a row has


def is_storable_key(data) -> bool:
    """Whether `data` could name a row at all: text the database could hold, no longer than any key. On
    PostgreSQL a lookup with a NUL byte fails in the database (a 500) instead of finding nothing."""
    return not isinstance(data, str) or ("\x00" not in data and len(data) <= MAX_KEY_LENGTH)


def shown_key(data) -> str:
    text = str(data).replace("\x00", "\\x00")
    return text if len(text) <= 40 else text[:40] + "..."


class NaturalKeyField(serializers.SlugRelatedField):
    """A related row named by its text key (a project's code, a rack's name, a part number). A key no row
    could have is refused as not found before the lookup reaches the database."""

    def to_internal_value(self, data):
        if not is_storable_key(data):
            self.fail("does_not_exist", slug_name=self.slug_field, value=shown_key(data))
        return super().to_internal_value(data)


class NamedEnumField(serializers.ChoiceField):
    """A ChoiceField whose OpenAPI enum is a component named after its choices class (see
    named_enum_field)."""

    choices_class: type


def named_enum_field(choices) -> type[NamedEnumField]:
    """A ChoiceField whose OpenAPI enum is a component named after its choices class. HardwareKind
    and PortKind are both served as `kind`, which drf-spectacular could otherwise only tell apart by
    a hash (and warn about)."""
    return type(f"{choices.__name__}Field", (NamedEnumField,), {"choices_class": choices})


class NamedEnumFieldExtension(OpenApiSerializerFieldExtension):
    """The schema of a NamedEnumField: a reference to its `<Choices>Enum` component, or that enum or ""
    where the field allows blank (a blank fabric state: never compared), as it answers."""

    target_class = NamedEnumField
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        choices = self.target.choices_class
        component = ResolvedComponent(
            name=f"{choices.__name__}Enum",
            type=ResolvedComponent.SCHEMA,
            object=choices,
            schema={
                "type": "string",
                "enum": list(choices.values),
                "description": "\n".join(f"* `{value}` - {label}" for value, label in choices.choices),
            },
        )
        auto_schema.registry.register_on_missing(component)
        if self.target.allow_blank:
            return {"oneOf": [component.ref, BLANK]}
        return component.ref


def _nullable_source(field) -> bool:
    """Whether the model path a serializer field reads (its `source`) passes through a nullable column:
    `requested_by` of a run (a run the scheduler started has none)."""
    model = getattr(getattr(field.parent, "Meta", None), "model", None)
    for name in field.source.split(".") if model is not None and field.source != "*" else ():
        try:
            model_field = model._meta.get_field(name)
        except FieldDoesNotExist:
            return False
        if getattr(model_field, "null", False):
            return True
        model = model_field.related_model
        if model is None:
            return False
    return False


class ReadOnlyRelationExtension(OpenApiSerializerFieldExtension):
    """A read-only relation declared by hand (`SlugRelatedField(slug_field="username", read_only=True)`)
    answers null when its foreign key is empty, whatever its allow_null says: the schema says so too,
    read from the model, so no declaration can forget it."""

    target_class = serializers.RelatedField
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if self.target.read_only and not self.target.allow_null and _nullable_source(self.target):
            schema = {**schema, "nullable": True}
        return schema


class TextField(serializers.CharField):
    """Text and nothing else: a number, list or object where text belongs is a 400 naming the field, not
    coerced to its string. A NUL byte is refused by CharField itself."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
