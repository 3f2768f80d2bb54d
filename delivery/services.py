"""Writes for projects and their people."""

from django.contrib.auth import get_user_model
from django.db import transaction

from .models import Membership, Project


@transaction.atomic
def membership_set(*, project: Project, user, role: str) -> Membership:
    """Give the user this role in the project (creating the membership or changing its role)."""
    membership = Membership.objects.filter(project=project, user=user).first() or Membership(
        project=project, user=user
    )
    membership.role = role
    membership.full_clean()
    membership.save()
    return membership


@transaction.atomic
def user_ensure(*, username: str, password: str, email: str = "", first_name: str = "", last_name: str = ""):
    """Create the user if missing (never resets an existing user's password)."""
    user, created = get_user_model().objects.get_or_create(
        username=username, defaults={"email": email, "first_name": first_name, "last_name": last_name}
    )
    if created:
        user.set_password(password)
        user.save()
    return user
