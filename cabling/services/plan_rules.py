"""How a plan maps onto rows, the rules the diff and the apply share: the Cable fields a planned cable
gives, the role of a switch tier or a server kind, and what identifies a cable across re-plans."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError

from inventory.choices import DeviceRole, DeviceStatus, HardwareKind

from ..choices import CableType
from ..models import Cable
from ..planner import CableType as PlannedCableType
from ..planner import FabricSpec, Plan, PlanError, SpecError, SwitchTier, load_spec_text, plan
from ..planner.model import Cable as PlannedCable
from ..planner.model import capped as planner_capped

BATCH = 1000  # rows per INSERT
SHOWN = 100  # rows of each list kept in a stored diff (the counts are always complete)
MAX_ERRORS = 30

CABLE_TYPE = {
    PlannedCableType.PASSIVE_COPPER: CableType.DAC,
    PlannedCableType.ACTIVE_COPPER: CableType.ACC,
    PlannedCableType.FIBER: CableType.FIBER,
    PlannedCableType.TWISTED_PAIR: CableType.CAT6,
}
ROLE_OF_TIER = {
    SwitchTier.LEAF: DeviceRole.LEAF,
    SwitchTier.SPINE: DeviceRole.SPINE,
    SwitchTier.SUPER_SPINE: DeviceRole.SUPER_SPINE,
}
SWITCH_ROLES = frozenset(ROLE_OF_TIER.values())
ROLE_OF_KIND = {HardwareKind.GPU_SERVER: DeviceRole.GPU_NODE, HardwareKind.STORAGE_SERVER: DeviceRole.STORAGE_NODE}
# A device in one of these states stands in its rack: a re-plan does not delete or move it.
PLACED_DEVICE_STATUSES = frozenset({DeviceStatus.RACKED, DeviceStatus.POWERED, DeviceStatus.READY})
COMPARED_FIELDS = (
    "label", "network", "plane", "cable_type", "length_m", "speed_gbps", "optic_part_a", "optic_part_b",
    "removed_from_plan",
)
OPTIC_PART_MAX = Cable._meta.get_field("optic_part_a").max_length

Progress = Callable[[str, int, int], None]
EndKey = tuple[str, int, str, str]  # side, leg, device, port name


def capped(messages: list[str]) -> list[str]:
    """At most MAX_ERRORS messages, then how many more were alike (the planner's rule, a longer list)."""
    return planner_capped(messages, MAX_ERRORS)


def plan_of(*, spec_text: str | None = None, spec: FabricSpec | None = None) -> Plan:
    """The checked plan of a spec (text or parsed). A bad spec raises ValidationError on the field `spec`,
    each message naming the spec's own field (`networks.compute.scalable_unit: ...`)."""
    try:
        return plan(spec if spec is not None else load_spec_text(spec_text or "", source="spec"))
    except (SpecError, PlanError) as exc:
        raise ValidationError({"spec": capped(exc.errors)}, code="spec") from exc


def cable_values(cable: PlannedCable) -> dict[str, Any]:
    """The Cable fields a planned cable gives."""
    b_parts = list(dict.fromkeys(end.optic_part for end in cable.b_ends if end.optic_part))
    return {
        "label": cable.label,
        "network": cable.network,
        "plane": cable.planes[0] if len(cable.planes) == 1 else None,
        "cable_type": CABLE_TYPE[cable.cable_type],
        "length_m": Decimal(str(round(cable.length_m, 1))),
        "speed_gbps": cable.speed_gbps,
        "optic_part_a": cable.a_end.optic_part or "",
        "optic_part_b": "/".join(b_parts),
        "removed_from_plan": False,
    }


def planned_key(cable: PlannedCable) -> tuple[EndKey, ...]:
    return tuple(sorted((e.side, e.position, e.port.device, e.port.name) for e in cable.ends))

