"""The plan: what the planner produces from a spec. Plain typed dataclasses, no Django.

Later steps build on these: plan_apply turns racks, servers, switches, links and cables into database
rows; the cut sheet, label sheet and fabric view read them. Names and port names follow the database
conventions of inventory.services.port_rows_from_templates: a physical port is `ib3` or `p12`, a breakout
lane of it is `ib3/0` or `p12/1` (lanes from 0), and switch ports are numbered from p1.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Any

from .spec import CableType, Holds

if TYPE_CHECKING:
    from .spec import FabricSpec


class PlanError(ValueError):
    """The spec reads fine but cannot be planned (too large, does not fit the room, a check failed)."""

    def __init__(self, errors: Iterable[str] | str):
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        super().__init__("\n".join(self.errors))


MAX_ERRORS_SHOWN = 20


def capped(errors: list[str], limit: int = MAX_ERRORS_SHOWN) -> list[str]:
    """At most `limit` messages, then one line saying how many more were alike."""
    if len(errors) <= limit:
        return errors
    return errors[:limit] + [f"... and {len(errors) - limit} more like these"]


class SwitchTier(StrEnum):
    """Values match inventory.choices.DeviceRole."""

    LEAF = "leaf"
    SPINE = "spine"
    SUPER_SPINE = "super_spine"


TIER_NAME = {SwitchTier.LEAF: "leaf", SwitchTier.SPINE: "spine", SwitchTier.SUPER_SPINE: "superspine"}


class LinkTier(StrEnum):
    NODE_LEAF = "node_leaf"
    LEAF_SPINE = "leaf_spine"
    SPINE_SUPER_SPINE = "spine_super_spine"


LINK_TIER_ORDER = {tier: i for i, tier in enumerate(LinkTier)}


@dataclass(frozen=True, slots=True)
class PlannedRack:
    name: str  # <row><position:02d>, e.g. A01
    row: str
    row_index: int  # floor order of the row
    position: int  # in the row, from 1
    holds: Holds


@dataclass(slots=True)
class PlannedServer:
    name: str
    group: str  # the spec's server group
    model: str  # hardware model part number
    order: int  # position among all servers of the spec, from 0
    rack: str
    position_u: int  # lowest U occupied
    height_u: int

    @property
    def top_u(self) -> int:
        return self.position_u + self.height_u - 1


@dataclass(slots=True)
class PlannedSwitch:
    name: str  # <prefix>[-p<plane>]-<tier>-<nn>
    network: str
    tier: SwitchTier
    number: int  # from 1 within (network, plane, tier)
    plane: int | None  # None when the network's planes share this switch
    planes: tuple[int, ...]  # planes its ports carry (several when planes share the switch)
    model: str  # part number
    height_u: int
    su: int | None = None  # leaves of a rail-optimized network: scalable unit, from 0
    rail: int | None = None  # leaves of a rail-optimized network: the rail it serves
    pod: int | None = None  # leaves and spines: pod, from 0 (one pod in two tiers)
    group: int | None = None  # super-spines: the spine index j whose uplinks it takes
    rack: str = ""
    position_u: int = 0

    @property
    def top_u(self) -> int:
        return self.position_u + self.height_u - 1


PORT_NAME = re.compile(r"^([a-z-]*?)(\d+)$")


@cache
def _split_port(port: str) -> tuple[str, int]:
    match = PORT_NAME.match(port)
    return (match[1], int(match[2])) if match else (port, 0)


@dataclass(frozen=True, slots=True)
class PortRef:
    """A port (lane None) or one breakout lane of it on a device."""

    device: str
    port: str  # physical port name: ib3, p12
    lane: int | None
    cage: str  # what holds the transceiver: the port itself, or cageN for twin-port cages

    @property
    def name(self) -> str:
        return self.port if self.lane is None else f"{self.port}/{self.lane}"

    @property
    def sort_key(self) -> tuple[str, int, int]:
        """Natural order: ib2 before ib10, a whole port before its lanes."""
        return *_split_port(self.port), -1 if self.lane is None else self.lane

    def __str__(self) -> str:
        return f"{self.device}:{self.name}"


@dataclass(slots=True)
class Link:
    """One port-to-port link as the fabric sees it: a node port or lane to a leaf port, or switch to switch.

    `a` is the lower tier (node, leaf, spine), `b` the upper. `lane_planes` is set when the planes share
    the switches: lane k of the port at either end belongs to plane lane_planes[k].
    """

    network: str
    tier: LinkTier
    planes: tuple[int, ...]
    a: PortRef
    b: PortRef
    speed_gbps: int
    rail: int | None = None
    lane_planes: tuple[int, ...] = ()
    cable: str = ""  # label of the cable that carries it


@dataclass(slots=True)
class CableEnd:
    side: str  # "A" (one) or "B" (one, or several for a breakout)
    position: int  # 0 for A; 0.. for the B ends
    port: PortRef
    rack: str
    position_u: int  # the device's top U: where the cable leaves it
    planes: tuple[int, ...]
    optic_part: str | None = None  # transceiver in this end's cage (fibre only)
    optic_count: int = 0  # 1 on the end that accounts for its cage's transceiver, 0 on the others sharing it
    tag: str = ""  # rack-U-device-port, printed on the label

    @property
    def device(self) -> str:
        return self.port.device


@dataclass(slots=True)
class Cable:
    network: str
    tier: LinkTier
    planes: tuple[int, ...]
    cable_type: CableType
    length_m: float  # a stock length
    distance_m: float  # the run it has to cover, slack included
    speed_gbps: int  # of the A end
    ends: tuple[CableEnd, ...]
    links: tuple[int, ...]  # indexes into Plan.links
    label: str = ""

    @property
    def a_end(self) -> CableEnd:
        return self.ends[0]

    @property
    def b_ends(self) -> tuple[CableEnd, ...]:
        return self.ends[1:]

    @property
    def is_breakout(self) -> bool:
        return len(self.ends) > 2


@dataclass(slots=True)
class NetworkPlan:
    """Per-network figures, also what the dry-run JSON reports."""

    key: str
    planes: int
    tiers: int
    pods: int
    leaves: int  # physical switches, summed over planes
    spines: int
    super_spines: int
    links: int
    cables: int = 0
    optics: int = 0
    max_servers: dict[int, int | None] = field(default_factory=dict)  # tiers -> largest size that fits


@dataclass(frozen=True, slots=True)
class BomLine:
    """One line of the bill of materials (cabling.planner.bom builds them). Here, beside the Plan that
    holds them, so the plan's model needs nothing from the module that computes it."""

    category: str  # switch | optic | cable
    network: str
    planes: tuple[int, ...]
    item: str  # part number; for cables "<type> <length> m" (+ " 1x<n> breakout")
    count: int
    tier: str = ""  # switches: leaf | spine | super_spine
    cable_type: str = ""
    length_m: float | None = None
    legs: int = 1  # cables: far ends (more than 1 for a breakout)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["planes"] = list(self.planes)
        return data


@dataclass(slots=True)
class Plan:
    spec: FabricSpec
    racks: list[PlannedRack]
    servers: list[PlannedServer]
    switches: list[PlannedSwitch]
    links: list[Link]
    cables: list[Cable]
    networks: dict[str, NetworkPlan]
    bom: list[BomLine] = field(default_factory=list)

    def switches_of(self, network: str, tier: SwitchTier | None = None) -> list[PlannedSwitch]:
        return [s for s in self.switches if s.network == network and (tier is None or s.tier == tier)]

    def summary(self) -> dict[str, Any]:
        """The dry-run JSON: switch, link, plane and cable counts per network, and the BOM."""
        nets = self.networks.values()
        return {
            "name": self.spec.name,
            "switches": {n.key: {"leaf": n.leaves, "spine": n.spines, "super_spine": n.super_spines} for n in nets},
            "links": {n.key: n.links for n in nets},
            "planes": {n.key: n.planes for n in nets},
            "tiers": {n.key: n.tiers for n in nets},
            "cables": len(self.cables),
            "cables_by_network": {n.key: n.cables for n in nets},
            "optics": sum(n.optics for n in nets),
            "optics_by_network": {n.key: n.optics for n in nets},
            "servers": len(self.servers),
            "racks": len(self.racks),
            "bom": [line.as_dict() for line in self.bom],
        }
