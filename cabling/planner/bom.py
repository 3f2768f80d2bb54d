"""Bill of materials: switches, transceivers and cables, per network and plane.

`planes` on a line is the set of planes the items serve: (0,) for plane 0, (0, 1, 2, 3) for a
switch whose ASICs carry four planes, (0, 1) for a breakout cable whose legs go to two planes.
"""

from __future__ import annotations

from collections import Counter

from .model import BomLine, Plan
from .spec import NETWORK_ORDER

CATEGORY_ORDER = {"switch": 0, "optic": 1, "cable": 2}


def cable_item(cable_type: str, length_m: float, legs: int) -> str:
    text = f"{cable_type} {length_m:g} m"
    return text + (f" 1x{legs} breakout" if legs > 1 else "")


def build_bom(plan: Plan) -> list[BomLine]:
    switches = Counter((s.network, s.planes, s.tier.value, s.model) for s in plan.switches)
    optics: Counter = Counter()
    cables: Counter = Counter()
    for cable in plan.cables:
        legs = len(cable.b_ends)
        cables[(cable.network, cable.planes, cable.cable_type.value, cable.length_m, legs)] += 1
        for end in cable.ends:
            if end.optic_count:
                optics[(cable.network, end.planes, end.optic_part)] += end.optic_count
    lines = [BomLine("switch", net, planes, part, n, tier=tier) for (net, planes, tier, part), n in switches.items()]
    lines += [BomLine("optic", net, planes, part, n) for (net, planes, part), n in optics.items()]
    lines += [
        BomLine(
            "cable",
            net,
            planes,
            cable_item(kind, length, legs),
            n,
            cable_type=kind,
            length_m=length,
            legs=legs,
        )
        for (net, planes, kind, length, legs), n in cables.items()
    ]
    tier_order = {"leaf": 0, "spine": 1, "super_spine": 2, "": 3}
    lines.sort(
        key=lambda line: (
            NETWORK_ORDER.index(line.network),
            line.planes,
            CATEGORY_ORDER[line.category],
            tier_order[line.tier],
            line.cable_type,
            line.length_m or 0.0,
            line.legs,
            line.item,
        )
    )
    return lines
