"""The acceptance profile: the thresholds one project's results are judged by."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from projects.access import Capability, can
from projects.models import Project

from ..models import AcceptanceProfile

# What a manager may set: the thresholds and the project's RoCE settings (criteria.RoceSettings overrides, which
# the model's clean() checks).
SETTABLE_FIELDS = frozenset([*AcceptanceProfile.THRESHOLD_FIELDS, "roce"])


def acceptance_profile_for(*, project: Project) -> AcceptanceProfile:
    """The project's profile, created with the defaults on first use."""
    profile, _ = AcceptanceProfile.objects.get_or_create(project=project)
    return profile


@transaction.atomic
def acceptance_profile_update(*, project: Project, user, **changes: Any) -> AcceptanceProfile:
    """Change thresholds. Only the project's managers may; every change is kept in the history."""
    if not can(user, Capability.MANAGE_PROJECT, project):
        raise PermissionDenied("Only the project's managers may change its acceptance profile.")
    profile = acceptance_profile_for(project=project)
    unknown = sorted(set(changes) - SETTABLE_FIELDS)
    if unknown:
        raise ValidationError({name: "Not a setting of the acceptance profile." for name in unknown})
    for name, value in changes.items():
        setattr(profile, name, value)
    profile.full_clean()
    profile.save()
    return profile
