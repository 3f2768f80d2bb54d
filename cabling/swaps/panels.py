"""The swaps of a cable (on its page) and of an optic (on inventory's optic page, which shows it without
importing cabling), with the "Replace" button, through core.panels. Technicians and managers see them;
for anyone else the panel is left out (its context is None), as the swap pages are closed to them.
One query each, whatever the number of swaps."""

from __future__ import annotations

from django.urls import reverse

from cabling.choices import PHYSICAL_CABLE_STATUSES
from cabling.swaps.selectors import swaps_of_cable, swaps_of_optic
from core.panels import Panel, register_panel
from inventory.choices import OpticStatus
from projects.access import Capability, can


def cable_swaps(request, cable, project) -> dict | None:
    if not can(request.user, Capability.EDIT_INVENTORY, project):
        return None
    # The cable page loaded its ends with their ports (cable.end_list): the cages they sit in, for free.
    cages = sorted({end.port.parent_id or end.port_id for end in getattr(cable, "end_list", [])})
    return {
        "swaps": swaps_of_cable(user=request.user, project=project, cable=cable, cages=cages),
        # A planned cable is not on the floor yet: there is nothing to replace (the service refuses it too).
        "replace_url": reverse("cabling:swap-cable", args=[project.code, cable.pk])
        if cable.status in PHYSICAL_CABLE_STATUSES else "",
        "list_url": reverse("cabling:swap-list", args=[project.code]) + f"?cable={cable.pk}",
    }


def optic_swaps(request, optic, project) -> dict | None:
    if not can(request.user, Capability.EDIT_INVENTORY, project):
        return None
    seated = optic.status == OpticStatus.INSTALLED
    return {
        "swaps": swaps_of_optic(user=request.user, project=project, optic_id=optic.pk),
        "replace_url": reverse("cabling:swap-optic", args=[project.code, optic.pk]) if seated else "",
        "list_url": reverse("cabling:swap-list", args=[project.code]) + f"?optic={optic.pk}",
    }


def register() -> None:
    register_panel("cabling.cable", Panel(key="swaps", title="Swaps and RMA", template="cabling/swaps/_panel.html",
                                          context=cable_swaps, order=80))
    register_panel("inventory.optic", Panel(key="swaps", title="Swaps and RMA",
                                            template="cabling/swaps/_panel.html", context=optic_swaps, order=80))
