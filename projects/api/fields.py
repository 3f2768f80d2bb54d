"""Serializer fields for rows of a project, shared by every app's API. This module reads only delivery's
ground (access and models), never its services, so a domain app's serializers may import it."""

from django.contrib.auth import get_user_model
from rest_framework import serializers

from core.api.fields import NaturalKeyField, is_storable_key
from projects.access import visible_projects


class VisibleProjectField(NaturalKeyField):
    """A project given by its code, chosen among the projects the requesting user can see, so an
    outsider's write gets a 400 that does not reveal whether the project exists."""

    def __init__(self, **kwargs):
        kwargs.setdefault("slug_field", "code")
        super().__init__(**kwargs)

    def get_queryset(self):
        return visible_projects(self.context["request"].user)


class UsernameField(serializers.CharField):
    """A user given by their exact username. Not a related field on purpose: it offers no list of
    choices (the browsable form would otherwise show every account of every tenant), and whatever the
    reason a name is refused, the answer is the same one sentence."""

    default_error_messages = {"no_such_user": "No active account has exactly this username."}

    def to_internal_value(self, data):
        username = super().to_internal_value(data)
        if not is_storable_key(username):  # a NUL byte would fail the lookup itself on PostgreSQL
            self.fail("no_such_user")
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            self.fail("no_such_user")
        return user

    def to_representation(self, value):
        return value.get_username()


class PersonField(serializers.SlugRelatedField):
    """A person as their username (null when nobody: the system, or an account since deleted)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", "A username; null: nobody (or the system).")
        super().__init__(slug_field="username", read_only=True, **kwargs)
