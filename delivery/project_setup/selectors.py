"""What a new project still needs before the floor can start, in order, each with where to do it: the
hardware catalogue, the fabric (a plan or an import), the racks' power budgets, the team, the stages. The
project home shows them until each is done. One query a step, whatever the project's size."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from delivery.models import Stage
from inventory.models import Device, HardwareModel, Rack
from projects.choices import Role
from projects.models import Membership, Project


@dataclass(frozen=True)
class NextStep:
    key: str
    title: str
    done: bool
    detail: str
    links: tuple[tuple[str, str], ...] = ()  # (text, url)


def next_steps(*, project: Project) -> list[NextStep]:
    code = project.code
    catalogue = HardwareModel.objects.exists()
    devices = Device.objects.filter(project=project).exists()
    racks = list(Rack.objects.filter(project=project).values_list("power_budget_w", flat=True)[:10_001])
    unbudgeted = sum(1 for budget in racks if not budget)
    roles = set(Membership.objects.filter(project=project).values_list("role", flat=True).distinct())
    stages = Stage.objects.filter(project=project).exists()
    return [
        NextStep("catalogue", "Load the hardware catalogue", catalogue,
                 "The servers, switches and PDUs the plan and the import refer to, by part number."
                 if not catalogue else "Loaded.",
                 (("Catalogue", reverse("inventory:catalogue", args=[code])),)),
        NextStep("fabric", "Plan the fabric or import the inventory", devices,
                 "A cluster spec gives racks, switches, ports and every cable; an import brings what exists."
                 if not devices else "The project has its devices.",
                 (("Plan the fabric", reverse("plans:page", args=[code])),
                  ("Import the inventory", reverse("imports:page", args=[code])))),
        NextStep("power", "Give each rack its power budget", bool(racks) and not unbudgeted,
                 (f"{unbudgeted} of {len(racks)} racks have no budget: the feeds' power, so headroom can be checked."
                  if unbudgeted else "Every rack has its budget.") if racks else "No racks yet.",
                 (("Racks", reverse("inventory:rack-list", args=[code])),)),
        NextStep("team", "Add the team", {Role.TECHNICIAN, Role.CUSTOMER} <= roles,
                 "A technician to work the floor and the customer to follow and sign: the administration's "
                 "memberships, or POST /api/memberships/." if not {Role.TECHNICIAN, Role.CUSTOMER} <= roles
                 else "Technicians and the customer are members."),
        NextStep("stages", "Create the delivery stages", stages,
                 "The stages and their gates, from a template." if not stages else "Created.",
                 (("Stages", reverse("stages:list", args=[code])),)),
    ]
