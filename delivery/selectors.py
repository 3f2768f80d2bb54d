from django.db.models import Count, QuerySet

from .access import scope_to_user, visible_projects
from .models import Membership, Project


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


def project_overview(*, user, project: Project) -> dict:
    """The figures of the project home page, each one query whatever the project's size."""
    from cabling.selectors import cable_list
    from inventory.selectors import device_list, is_power_flagged, optic_list, rack_list
    from validation.models import CheckRun

    racks = list(rack_list(user=user, project=project))
    return {
        "rack_count": len(racks),
        "flagged_racks": [r for r in racks if is_power_flagged(used_w=r.power_used_w, budget_w=r.power_budget_w)],
        "device_count": device_list(user=user, project=project).count(),
        "optic_count": optic_list(user=user, project=project).count(),
        "cable_count": cable_list(user=user, project=project).count(),
        "check_run_count": scope_to_user(CheckRun.objects.filter(project=project), user).count(),
    }
