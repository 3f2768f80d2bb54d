"""A project's inventory and planned links as the plain data of validation.topology.model: three queries
whatever the size of the fabric (values_list rows, no model instances: 100,000 ports in well under a
second). Each is fetched whole (tuples, tens of MB at most) rather than through a server-side cursor, whose
thousands of round trips cost more than the rows, and sorted here rather than by the database (which would
sort 100,000 rows on disk under the default work_mem).

`inventory_and_plan` gives both and reads the planned cable ends once: the inventory needs their ports
(a lane with its own cable is a split port), the plan needs them whole.
"""

from __future__ import annotations

from collections import defaultdict

from cabling.models import CableEnd
from inventory.models import Device, Port
from projects.models import Project

from .model import IB_PORT_LANES, INFINIBAND, InvDevice, Inventory, InvPort, PlannedLink


def _planned_ends(project: Project):
    """The ends of the project's planned cables, queried (not yet read)."""
    return CableEnd.objects.filter(cable__project=project, cable__removed_from_plan=False).order_by()


def inventory_of(project: Project) -> Inventory:
    return _inventory(project, cabled=set(_planned_ends(project).values_list("port_id", flat=True)))


def planned_links(project: Project, inventory: Inventory) -> list[PlannedLink]:
    """One link per cable; a breakout cable gives one per B end, from the A port's lane of the same
    position (the A port itself when it has no lanes)."""
    return _links(inventory, _end_rows(project))


def inventory_and_plan(project: Project) -> tuple[Inventory, list[PlannedLink]]:
    """inventory_of and planned_links, reading the cable ends once."""
    ends = _end_rows(project)
    inventory = _inventory(project, cabled={row[-1] for row in ends})
    return inventory, _links(inventory, ends)


def _inventory(project: Project, *, cabled: set[int]) -> Inventory:
    devices = {
        pk: InvDevice(pk, name, kind, fmt or "", guid or "")
        for pk, name, kind, fmt, guid in Device.objects.filter(project=project).values_list(
            "id", "name", "hardware_model__kind", "hardware_model__os_port_format", "node_guid"
        )
    }
    rows = Port.objects.filter(device__project=project).order_by().values_list(
        "id", "device_id", "name", "kind", "network", "speed_gbps", "parent_id", "lane", "guid_mac"
    )
    for pk, device_id, name, kind, network, speed, parent_id, lane, guid_mac in sorted(rows):  # id order:
        devices[device_id].ports.append(  # where two ports share a name, the naming rules take the first
            InvPort(pk, device_id, name, kind, network or "", speed or 0, parent_id, lane, guid_mac or "")
        )
    return Inventory(list(devices.values()), cabled=cabled)


def _end_rows(project: Project) -> list[tuple]:
    """(cable id, side, position, label, speed, port id) of each planned cable end, by cable, side, position."""
    return sorted(_planned_ends(project).values_list(
        "cable_id", "side", "position", "cable__label", "cable__speed_gbps", "port_id"))


def _links(inventory: Inventory, ends: list[tuple]) -> list[PlannedLink]:
    cables: dict[int, dict] = defaultdict(lambda: {"a": None, "b": []})
    for cable_id, side, position, label, speed, port_id in ends:
        cable = cables[cable_id]
        cable["label"], cable["speed"] = label, speed
        if side == "A":
            cable["a"] = port_id
        else:
            cable["b"].append((position, port_id))
    links = []
    for cable_id, cable in cables.items():
        a, legs = cable["a"], cable["b"]
        if a is None or not legs:
            continue  # a cable with only one end recorded links nothing
        lanes = {lane.lane: lane.id for lane in inventory.lanes_of(a)} if len(legs) > 1 else {}
        for position, b in legs:
            near = lanes.get(position, a)
            key = cable["label"] if len(legs) == 1 else f"{cable['label']}/B{position + 1}"
            links.append(_link(inventory, key, cable_id, cable["label"], cable["speed"], near, b))
    return links


def _width(inventory: Inventory, port: InvPort) -> int:
    """InfiniBand lanes a port runs: 4 for a whole port, 4 / L for a lane of an L-lane port."""
    if port.parent_id is None:
        return IB_PORT_LANES
    return max(1, IB_PORT_LANES // max(len(inventory.lanes_of(port.parent_id)), 1))


def _link(inventory: Inventory, key: str, cable_id: int, label: str, speed: int, a: int, b: int) -> PlannedLink:
    port_a, port_b = inventory.ports[a], inventory.ports[b]
    infiniband = port_a.kind == INFINIBAND and port_b.kind == INFINIBAND
    speeds = [s for s in (port_a.speed_gbps, port_b.speed_gbps) if s]
    return PlannedLink(
        key=key, cable_id=cable_id, cable_label=label, a=a, b=b, speed_gbps=min(speeds) if speeds else speed,
        infiniband=infiniband,
        width=min(_width(inventory, port_a), _width(inventory, port_b)) if infiniband else None,
    )
