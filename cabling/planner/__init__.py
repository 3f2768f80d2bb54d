"""The fabric planner: from a cluster spec to switches, port maps, cables, labels and a bill of materials.

Pure Python (no Django, no database), so it is fast and testable on its own:

    from cabling.planner import load_spec, plan
    result = plan(load_spec("examples/fabric-72.yaml"))
    result.summary()["switches"]  # {"compute": {"leaf": 8, "spine": 4, "super_spine": 0}}

`plan` raises SpecError or PlanError (both ValueError, with `.errors`, one readable message each) and
never returns a plan that fails its checks. The YAML format is in docs/fabric-plan.md ("The cluster spec").
"""

from __future__ import annotations

from .bom import build_bom
from .cables import Devices, build_cables
from .checks import check_plan
from .labels import assign_labels, label_lines
from .model import (
    BomLine,
    Cable,
    CableEnd,
    Link,
    LinkTier,
    NetworkPlan,
    Plan,
    PlanError,
    PlannedRack,
    PlannedServer,
    PlannedSwitch,
    PortRef,
    SwitchTier,
)
from .placement import make_servers, place_servers, place_switches, room_racks
from .spec import CableType, FabricSpec, SpecError, load_spec, load_spec_text, parse_spec
from .topology import build_networks, preflight

__all__ = [
    "BomLine",
    "Cable",
    "CableEnd",
    "CableType",
    "FabricSpec",
    "Link",
    "LinkTier",
    "NetworkPlan",
    "Plan",
    "PlanError",
    "PlannedRack",
    "PlannedServer",
    "PlannedSwitch",
    "PortRef",
    "SpecError",
    "SwitchTier",
    "label_lines",
    "load_spec",
    "load_spec_text",
    "parse_spec",
    "plan",
]


def plan(spec: FabricSpec, *, check: bool = True) -> Plan:
    """Plan every network of the spec. With check=False the plan is returned unchecked (for tests of
    the checks themselves); anything that writes must keep the default."""
    preflight(spec)  # "too large" from the counts alone, before building anything
    servers = make_servers(spec)
    topologies = build_networks(spec, servers)  # before placement, so "too large" is said before "no room"
    switches = [s for t in topologies for s in t.switches]
    links = [link for t in topologies for link in t.links]
    racks = room_racks(spec.room)
    place_servers(spec, racks, servers)
    place_switches(spec, racks, switches)
    cables = build_cables(spec, links, Devices(spec, racks, servers, switches))
    assign_labels(spec, cables, links)
    networks = {t.summary.key: t.summary for t in topologies}
    for cable in cables:
        networks[cable.network].cables += 1
        networks[cable.network].optics += sum(end.optic_count for end in cable.ends)
    result = Plan(
        spec=spec,
        racks=racks,
        servers=servers,
        switches=switches,
        links=links,
        cables=cables,
        networks=networks,
    )
    result.bom = build_bom(result)
    if check:
        problems = check_plan(result)
        if problems:
            raise PlanError(problems)
    return result
