"""A project's inventory and planned links as the plain data of validation.topology.model: three queries
whatever the size of the fabric (values_list rows, no model instances: 100,000 ports in well under a
second)."""

from __future__ import annotations

from collections import defaultdict

from cabling.models import CableEnd
from delivery.models import Project
from inventory.models import Device, Port

from .model import IB_PORT_LANES, INFINIBAND, InvDevice, Inventory, InvPort, PlannedLink


def inventory_of(project: Project) -> Inventory:
    devices = {
        pk: InvDevice(pk, name, kind, fmt or "", guid or "")
        for pk, name, kind, fmt, guid in Device.objects.filter(project=project).values_list(
            "id", "name", "hardware_model__kind", "hardware_model__os_port_format", "node_guid"
        )
    }
    rows = Port.objects.filter(device__project=project).order_by("id").values_list(
        "id", "device_id", "name", "kind", "network", "speed_gbps", "parent_id", "lane", "guid_mac"
    )
    for pk, device_id, name, kind, network, speed, parent_id, lane, guid_mac in rows.iterator(chunk_size=5000):
        devices[device_id].ports.append(
            InvPort(pk, device_id, name, kind, network or "", speed or 0, parent_id, lane, guid_mac or "")
        )
    ends = CableEnd.objects.filter(cable__project=project, cable__removed_from_plan=False)
    cabled = set(ends.values_list("port_id", flat=True))
    return Inventory(list(devices.values()), cabled=cabled)


def planned_links(project: Project, inventory: Inventory) -> list[PlannedLink]:
    """One link per cable; a breakout cable gives one per B end, from the A port's lane of the same
    position (the A port itself when it has no lanes)."""
    ends = (
        CableEnd.objects.filter(cable__project=project, cable__removed_from_plan=False)
        .order_by("cable_id", "side", "position")
        .values_list("cable_id", "cable__label", "cable__speed_gbps", "side", "position", "port_id")
    )
    cables: dict[int, dict] = defaultdict(lambda: {"a": None, "b": []})
    for cable_id, label, speed, side, position, port_id in ends.iterator(chunk_size=5000):
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
        lanes = {lane.lane: lane.id for lane in inventory.lanes_of(a)}
        for position, b in legs:
            near = lanes.get(position, a) if len(legs) > 1 else a
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
