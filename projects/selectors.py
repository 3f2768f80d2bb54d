from django.db.models import Count, QuerySet

from projects.access import scope_to_user, visible_projects
from projects.models import Membership, Project


def project_list(*, user) -> QuerySet[Project]:
    return visible_projects(user).annotate(member_count=Count("memberships", distinct=True)).order_by("code")


def membership_list(*, user) -> QuerySet[Membership]:
    return (
        scope_to_user(Membership.objects.all(), user)
        .select_related("user", "project")
        .order_by("project__code", "user__username")
    )


def project_members(*, project: Project) -> QuerySet[Membership]:
    return project.memberships.select_related("user").order_by("role", "user__username")
