"""Reads that need every domain app at once: the figures of the project home."""

from cabling.selectors import cable_list
from inventory.selectors import device_list, is_power_flagged, optic_list, rack_list
from projects.access import scope_to_user
from projects.models import Project
from validation.models import CheckRun


def project_overview(*, user, project: Project) -> dict:
    """The figures of the project home page, each one query whatever the project's size."""
    racks = list(rack_list(user=user, project=project))
    return {
        "rack_count": len(racks),
        "flagged_racks": [r for r in racks if is_power_flagged(used_w=r.power_used_w, budget_w=r.power_budget_w)],
        "device_count": device_list(user=user, project=project).count(),
        "optic_count": optic_list(user=user, project=project).count(),
        "cable_count": cable_list(user=user, project=project).count(),
        "check_run_count": scope_to_user(CheckRun.objects.filter(project=project), user).count(),
    }
