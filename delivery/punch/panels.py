"""What the punch list adds to the pages of the objects it concerns (core.panels): the items still being
worked on about this device or cable, and a link that opens a new one about it. Registered in
DeliveryConfig.ready(); two queries whatever the number of items."""

from __future__ import annotations

from core.panels import Panel, register_panel
from delivery.choices import PunchObjectKind
from delivery.punch.selectors import punch_items_of_object
from projects.access import Capability, can


def _context(kind: str):
    def context(request, obj, project) -> dict:
        found = punch_items_of_object(user=request.user, project=project, kind=kind, object_id=obj.pk)
        return {**found, "kind": kind, "object_id": obj.pk,
                "can_open": can(request.user, Capability.RUN_CHECKS, project)}

    return context


def register() -> None:
    for model, kind in (("inventory.device", PunchObjectKind.DEVICE), ("cabling.cable", PunchObjectKind.CABLE)):
        register_panel(model, Panel(key="punch", title="Punch items", template="delivery/punch/_panel.html",
                                    context=_context(kind), order=90))
