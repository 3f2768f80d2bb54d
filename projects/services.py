"""Writes for projects and their people."""

from datetime import date

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from projects.choices import ProjectStatus
from projects.models import Membership, Project


@transaction.atomic
def project_create(
    *, code: str, name: str, customer_name: str, site: str = "", description: str = "",
    status: str = ProjectStatus.PLANNING, start_date: date | None = None, target_date: date | None = None,
    name_zh: str = "", customer_name_zh: str = "",
) -> Project:
    """A new project (the tenant root); its code is unique and checked like every other field. The Chinese
    names (optional) are what the bilingual acceptance report prints beside the English ones."""
    project = Project(
        code=code, name=name, customer_name=customer_name, site=site, description=description, status=status,
        start_date=start_date, target_date=target_date, name_zh=name_zh, customer_name_zh=customer_name_zh,
    )
    project.full_clean()
    project.save()
    return project


def _lock_memberships_of(project: Project) -> None:
    """Serialise membership changes per project (row lock on the project), so two managers demoting
    each other at the same moment cannot both pass the last-manager check."""
    Project.objects.select_for_update().filter(pk=project.pk).first()


@transaction.atomic
def membership_set(*, project: Project, user, role: str) -> Membership:
    """Give the user this role in the project (creating the membership or changing its role). The last
    manager of a project cannot be demoted (Membership.clean says so on `role`)."""
    _lock_memberships_of(project)
    membership = Membership.objects.filter(project=project, user=user).first() or Membership(
        project=project, user=user
    )
    membership.role = role
    membership.full_clean()
    membership.save()
    return membership


class LastManagerError(ValidationError):
    """Removing this membership would leave its project without a manager."""


@transaction.atomic
def membership_delete(*, membership: Membership) -> None:
    """Remove someone from a project, unless they are its last manager."""
    _lock_memberships_of(membership.project)
    if membership.is_last_manager():
        raise LastManagerError(
            f"{membership.user} is the last manager of {membership.project.code}; make someone else a "
            "manager before removing them."
        )
    membership.delete()


@transaction.atomic
def user_ensure(
    *, username: str, password: str, email: str = "", first_name: str = "", last_name: str = "",
    superuser: bool = False,
):
    """Create the user if missing (never resets an existing user's password). `superuser=True` makes them
    staff and superuser as well (never taken away); a user already as asked is not saved again."""
    user, created = get_user_model().objects.get_or_create(
        username=username, defaults={"email": email, "first_name": first_name, "last_name": last_name}
    )
    if created:
        user.set_password(password)
        user.save()
    if superuser and not (user.is_staff and user.is_superuser):
        user.is_staff = user.is_superuser = True
        user.save(update_fields=["is_staff", "is_superuser"])
    return user


@transaction.atomic
def project_creator_grant(*, user) -> None:
    """Let `user` create projects from the site (the `projects.add_project` permission): what an
    administrator gives the managers who start deliveries. Granting it twice changes nothing."""
    from django.contrib.auth.models import Permission

    permission = Permission.objects.get(content_type__app_label="projects", codename="add_project")
    user.user_permissions.add(permission)
