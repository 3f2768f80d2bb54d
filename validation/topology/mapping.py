"""What the tools printed, mapped to our devices and ports (pure Python).

    observation = map_sources(inventory, [Source("leaf-03.json", "lldp", neighbours, host="stor-leaf-03"), ...])

InfiniBand (iblinkinfo, ibnetdiscover): a node is found by its GUID first (a GUID learned by an earlier
comparison, so a renamed host is still found), then by its node description as validation.topology.naming
reads it; a switch port is the number the switch reports, an HCA port the rail its ibdev names. The
switch's own SHARP aggregation node is no cable and is left out.

LLDP (lldpcli text, JSON or keyvalue; NVUE tables): the table was read on `host` (or the device its JSON
names); its interface is a port of that device as its OS names it; the neighbour is found by its port MAC
(learned before) or its system name, and its port by the name it sends (port ID, else description).

Every GUID or MAC seen on an end found by name is learned (`device_guids`, `port_ids`) for the next time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cabling.codes import normalize_guid_mac

from ..parsers.fabric import FabricResult, LinkEnd
from ..parsers.lldp import LldpNeighbor
from . import naming
from .model import InvDevice, Inventory, InvPort, Observation, ObservedEnd, ObservedLink

IB_TOOLS = ("iblinkinfo", "ibnetdiscover")
LLDP_TOOLS = ("lldp", "nvue_lldp")
TOPOLOGY_TOOLS = IB_TOOLS + LLDP_TOOLS
_MAC = re.compile(r"^[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}$|^[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2}$")
_MAC_LENGTHS = (14, 17)  # the only lengths _MAC matches: most port IDs (swp17) are told apart without it
_MAC_NORMAL = re.compile(r"^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$")  # already as normalize_guid_mac spells it
MAX_NOTES = 50


@dataclass
class Source:
    """One tool output: its name (the file, or the check target), the tool, its parsed results, and the
    device it was taken on (LLDP needs it; for InfiniBand it does not matter)."""

    name: str
    tool: str
    results: list = field(default_factory=list)
    host: str | None = None


def map_sources(inventory: Inventory, sources: list[Source]) -> Observation:
    mapper = _Mapper(inventory)
    for source in sources:
        if source.tool in IB_TOOLS:
            for result in source.results:
                mapper.fabric(result, source)
        elif source.tool in LLDP_TOOLS:
            mapper.lldp(source)
    mapper.deduplicate()
    return mapper.observation


@dataclass(slots=True)
class _Node:
    device: InvDevice | None
    switch: bool
    port: InvPort | None = None  # a CA found by its port GUID
    rail: int | None = None  # a CA found by its description
    description: str = ""


class _Mapper:
    def __init__(self, inventory: Inventory):
        self.inventory = inventory
        self.observation = Observation()
        self._unknown: set[str] = set()
        self._devices: dict[str | None, InvDevice | None] = {}  # a system name, looked up once

    def note(self, text: str) -> None:
        notes = self.observation.notes
        if text not in notes and len(notes) < MAX_NOTES:
            notes.append(text)

    # -- InfiniBand ------------------------------------------------------------------------------------

    def fabric(self, result: FabricResult, source: Source) -> None:
        nodes = {node.guid: node for node in result.nodes}
        matched: dict[str, _Node] = {}

        def node_of(guid: str | None, description: str | None, kind: str | None) -> _Node:
            key = guid or f"desc:{description}"
            if key not in matched:
                matched[key] = self._node(guid, description or "", kind)
            return matched[key]

        for node in result.nodes:
            found = node_of(node.guid, node.description, node.kind)
            if found.device is not None:
                self.observation.ib_devices.add(found.device.id)
        for link in result.links:
            ends = []
            for end in (link.a, link.b):
                node = nodes.get(end.guid) if end.guid else None
                described = end.description or (node.description if node else None)
                if described and naming.AGGREGATION_NODE in described:
                    break
                found = node_of(end.guid, described, node.kind if node else None)
                ends.append(self._ib_end(found, end, described))
            else:
                width = naming.ib_width(link.width)
                self.observation.links.append(ObservedLink(
                    a=ends[0], b=ends[1], source=source.name, infiniband=True, width=width,
                    generation=naming.ib_generation(link.speed),
                ))
        for port in result.ports:
            if port.connected or not port.guid:
                continue
            state = "/".join(s for s in (port.state, port.physical_state) if s)
            node = nodes.get(port.guid)
            found = node_of(port.guid, node.description if node else None, node.kind if node else None)
            ours = self._port_of(found, port.port)
            if ours is not None and state:
                self.observation.down.setdefault(ours.id, state)

    def _node(self, guid: str | None, description: str, kind: str | None) -> _Node:
        inventory = self.inventory
        normal = normalize_guid_mac(guid) if guid else None
        switch = kind == "switch" if kind else description.startswith("MF0;")
        if normal:
            device = inventory.device_by_guid(normal)
            if device is not None:
                return _Node(device, True, description=description)
            port = inventory.port_by_guid_mac(normal)
            if port is not None:
                return _Node(inventory.devices[port.device_id], False, port=port, description=description)
        if switch or kind is None:
            for name in naming.switch_name_candidates(description):
                device = inventory.device_named(name)
                if device is not None and (device.is_switch or switch):
                    if normal and device.node_guid != normal:
                        self.observation.device_guids[device.id] = normal
                    return _Node(device, True, description=description)
        if not switch:
            host, ibdev = naming.split_hca_description(description)
            device = inventory.device_named(host)
            if device is not None and not device.is_switch:
                rail = naming.rail_of_ibdev(ibdev)
                if rail is None and len(inventory.rails(device.id)) == 1:
                    rail = 0  # a renamed ibdev on a host with one rail can only be that rail
                if rail is None:
                    self.note(f"{description!r}: {ibdev!r} names no rail of {device.name} (mlx5_<n> expected); "
                              "its links are compared by device only")
                found = _Node(device, False, rail=rail, description=description)
                port = self._port_of(found, 1)
                if normal and port is not None and port.guid_mac != normal:
                    self.observation.port_ids[port.id] = normal
                return found
        if description and description not in self._unknown:
            self._unknown.add(description)
            self.note(f"{description!r} is not a device of the project")
        return _Node(None, switch, description=description)

    def _port_of(self, node: _Node, number: int) -> InvPort | None:
        if node.device is None:
            return None
        if node.switch:
            return self.inventory.switch_port(node.device.id, number)
        if node.port is not None:  # found by its port GUID: that port, or a lane of its physical port
            physical = node.port if node.port.parent_id is None else self.inventory.ports[node.port.parent_id]
            if number == 1 and node.port.parent_id is None:
                return node.port
            rails = self.inventory.rails(node.device.id)
            if physical in rails:
                return self.inventory.hca_port(node.device.id, rails.index(physical), number)
            return node.port
        if node.rail is None:
            return None
        return self.inventory.hca_port(node.device.id, node.rail, number)

    def _ib_end(self, node: _Node, end: LinkEnd, description: str | None) -> ObservedEnd:
        port = self._port_of(node, end.port)
        name = description or end.guid or f"LID {end.lid}"
        text = f"{name} port {end.port}" if node.switch or node.device is None else f"{name} (port {end.port})"
        return ObservedEnd(text=text, device_id=node.device.id if node.device else None,
                           port_id=port.id if port else None)

    # -- LLDP ------------------------------------------------------------------------------------------

    def lldp(self, source: Source) -> None:
        neighbors: list[LldpNeighbor] = source.results
        host = source.host or next((n.local_system_name for n in neighbors if n.local_system_name), None)
        local = self.inventory.device_named(host)
        if local is None:
            self.note(f"{source.name}: LLDP table of {host!r}, which is not a device of the project" if host
                      else f"{source.name}: which device's LLDP table is it? Name the file after the device, "
                      "or give HOST=FILE")
            return
        self.observation.lldp_devices.add(local.id)
        # Tens of thousands of neighbours: the lookups are bound once, outside the loop.
        links, port_by_os_name, gbps = self.observation.links, self.inventory.port_by_os_name, naming.ethernet_gbps
        local_id, local_name, name = local.id, local.name, source.name
        for neighbor in neighbors:
            interface = neighbor.interface
            port = port_by_os_name(local_id, interface)
            if port is None:
                self.note(f"{local_name} has no port its OS calls {interface!r}")
            near = ObservedEnd(f"{local_name} {interface}", local_id, port.id if port else None)
            links.append(ObservedLink(near, self._neighbor_end(neighbor), name, neighbor.line_no,
                                      speed_gbps=gbps(neighbor.speed) or gbps(neighbor.mau_type)))

    def _neighbor_end(self, neighbor: LldpNeighbor) -> ObservedEnd:
        inventory = self.inventory
        port_id = neighbor.port_id or ""
        mac = None
        if neighbor.port_id_type == "mac" or (len(port_id) in _MAC_LENGTHS and _MAC.match(port_id)):
            mac = port_id if _MAC_NORMAL.match(port_id) else normalize_guid_mac(port_id)
        names = [] if mac else [port_id]
        if neighbor.port_description:
            names.append(neighbor.port_description)
        shown = neighbor.port_description if mac and neighbor.port_description else port_id or "?"
        text = f"{neighbor.system_name or neighbor.chassis_id or '?'} {shown}"
        port = inventory.port_by_guid_mac(mac)
        if port is not None:
            return ObservedEnd(text=text, device_id=port.device_id, port_id=port.id)
        device = self._devices.get(neighbor.system_name)
        if device is None and neighbor.system_name not in self._devices:
            device = self._devices[neighbor.system_name] = inventory.device_named(neighbor.system_name)
        if device is None:
            if neighbor.system_name and neighbor.system_name not in self._unknown:
                self._unknown.add(neighbor.system_name)
                self.note(f"{neighbor.system_name!r} is not a device of the project")
            return ObservedEnd(text=text)
        for name in names:
            port = inventory.port_by_os_name(device.id, name)
            if port is not None:
                if mac and port.guid_mac != mac:
                    self.observation.port_ids[port.id] = mac
                return ObservedEnd(text=text, device_id=device.id, port_id=port.id)
        return ObservedEnd(text=text, device_id=device.id)

    # -- one link, once ----------------------------------------------------------------------------------

    def deduplicate(self) -> None:
        """A link seen from both ends (two LLDP tables, or an output listing both directions) is one link;
        a half-mapped sighting of a port another sighting maps fully adds nothing."""
        links = self.observation.links
        full: dict[tuple[int, int], ObservedLink] = {}
        for link in links:
            if link.resolved:
                a, b = link.a.port_id, link.b.port_id
                key = (a, b) if a < b else (b, a)
                kept = full.get(key)
                if kept is None:
                    full[key] = link
                elif kept.speed_gbps is None and link.speed_gbps is not None:
                    kept.speed_gbps = link.speed_gbps
        taken = {port for key in full for port in key}
        kept_links, seen_partial = [], set()
        for link in links:
            if link.resolved:
                a, b = link.a.port_id, link.b.port_id
                if full.get((a, b) if a < b else (b, a)) is link:
                    kept_links.append(link)
                continue
            ports = {end.port_id for end in (link.a, link.b) if end.port_id is not None}
            if ports & taken:
                continue
            key = (frozenset(ports), link.a.text, link.b.text)
            if key not in seen_partial:
                seen_partial.add(key)
                kept_links.append(link)
        self.observation.links = kept_links
