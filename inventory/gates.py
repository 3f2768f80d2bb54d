"""The inventory's stage gates (projects.gates), registered in InventoryConfig.ready():

- site readiness: every rack's nameplate load leaves the headroom settings.RACK_POWER_HEADROOM asks of
  its power budget (20% by default), and the project has racks at all;
- racking: every device racked and confirmed by a scan (racked_at set by inventory.services.device_rack).

Each counts with one aggregate query and fetches at most MISSING_EXAMPLES rows.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, ExpressionWrapper, F, FloatField, Q
from django.urls import reverse

from projects.gates import MISSING_EXAMPLES, GateOutcome, MissingItem, outcome_of, ref_of, register_gate

from .models import Device, Rack
from .selectors import with_power

SITE_READINESS = "inventory.site_readiness"
RACKING = "inventory.racking"


def site_readiness_gate(project) -> GateOutcome:
    headroom = settings.RACK_POWER_HEADROOM
    allowed = ExpressionWrapper(F("power_budget_w") * (1 - headroom), output_field=FloatField())
    racks = with_power(Rack.objects.filter(project=project))
    if not racks.exists():
        return GateOutcome(passed=False, missing_count=1, summary="No racks yet.", missing=[MissingItem(
            label="Racks", reason="The project has no racks: import or add them first.", ref="gate:no-racks",
            url=reverse("inventory:rack-list", args=[project.code]),
        )])
    short = racks.annotate(allowed_w=allowed).filter(Q(power_budget_w=0) | Q(power_used_w__gt=F("allowed_w")))
    count = short.count()
    examples = [
        MissingItem(
            label=rack.name,
            reason=f"{rack.power_used_w} W of {rack.power_budget_w} W: less than {headroom:.0%} headroom.",
            ref=ref_of(rack), url=reverse("inventory:rack-detail", args=[project.code, rack.pk]),
        )
        for rack in short.order_by("row", "position", "name")[:MISSING_EXAMPLES]
    ]
    return outcome_of(count, examples, passed_summary=f"Every rack keeps {headroom:.0%} power headroom.",
                      failed_summary=f"{count} rack(s) short of {headroom:.0%} power headroom.")


def racking_gate(project) -> GateOutcome:
    devices = Device.objects.filter(project=project)
    counts = devices.aggregate(total=Count("pk"), unconfirmed=Count("pk", filter=Q(racked_at=None)))
    if not counts["total"]:
        return GateOutcome(passed=False, missing_count=1, summary="No devices yet.", missing=[MissingItem(
            label="Devices", reason="The project has no devices: import or add them first.", ref="gate:no-devices",
            url=reverse("inventory:device-list", args=[project.code]),
        )])
    examples = [
        MissingItem(
            label=device.name,
            reason="Not racked yet." if device.rack_id is None else "Placed in its rack, not confirmed by a scan.",
            ref=ref_of(device), url=reverse("inventory:device-detail", args=[project.code, device.pk]),
        )
        for device in devices.filter(racked_at=None).order_by("name")[:MISSING_EXAMPLES]
    ]
    missing = counts["unconfirmed"]
    return outcome_of(missing, examples,
                      passed_summary=f"All {counts['total']} devices racked and confirmed by scan.",
                      failed_summary=f"{missing} of {counts['total']} devices not confirmed in their rack by a scan.")


def register() -> None:
    register_gate(SITE_READINESS, site_readiness_gate, title="Every rack within its power headroom")
    register_gate(RACKING, racking_gate, title="Every device racked and confirmed by scan")
