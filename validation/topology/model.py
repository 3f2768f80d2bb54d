"""The plain data a topology comparison works on (pure Python): the inventory as the fabric names it, the
planned links, and the links the fabric showed, each end mapped to our ports where it could be.

The database reader (validation.topology.store) fills these from a project; the simulated fabric and the
bench build them too. Everything here is a dict lookup, so mapping 32,768 links costs milliseconds.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import naming

SWITCH_KINDS = frozenset({"ib_switch", "eth_switch", "mgmt_switch"})
INFINIBAND = "infiniband"
COMPUTE = "compute"
IB_PORT_LANES = 4  # electrical lanes of an OSFP/QSFP InfiniBand port: an unsplit port runs 4X


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a comparison runs. It builds a few hundred thousand small objects
    (parsed neighbours, ports, links), none of them in cycles, yet every few hundred allocations start a
    collection, and the older generations' ones walk everything built so far again: a third of the time
    of a whole fabric. Reference counting still frees everything as usual; collection resumes after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(slots=True, eq=False)
class InvPort:
    """One of our ports, as the store read it: one object per port, compared and hashed by identity, and
    read-only by convention (not frozen: a frozen dataclass's __init__ costs seven times as much, and a
    whole fabric makes 100,000 of them)."""

    id: int
    device_id: int
    name: str
    kind: str  # inventory.choices.PortKind value
    network: str = ""
    speed_gbps: int = 0
    parent_id: int | None = None
    lane: int | None = None
    guid_mac: str = ""


@dataclass(slots=True)
class InvDevice:
    id: int
    name: str
    hardware_kind: str  # inventory.choices.HardwareKind value
    os_port_format: str = ""
    node_guid: str = ""
    ports: list[InvPort] = field(default_factory=list)

    @property
    def is_switch(self) -> bool:
        return self.hardware_kind in SWITCH_KINDS


class Inventory:
    """A project's devices and ports with the indexes mapping needs. `cabled` holds the ids of ports a
    planned cable ends on: a lane with its own cable is a split port (the fabric reports it alone)."""

    def __init__(self, devices: list[InvDevice], *, cabled: set[int] | frozenset[int] = frozenset()):
        self.devices = {d.id: d for d in devices}
        self.ports: dict[int, InvPort] = {p.id: p for d in devices for p in d.ports}
        self.cabled = cabled
        self._by_name = {d.name.lower(): d for d in devices}
        self._by_guid = {d.node_guid: d for d in devices if d.node_guid}
        self._port_by_guid_mac = {p.guid_mac: p for p in self.ports.values() if p.guid_mac}
        self._lanes: dict[int, list[InvPort]] = {}
        for port in self.ports.values():
            if port.parent_id is not None:
                self._lanes.setdefault(port.parent_id, []).append(port)
        for lanes in self._lanes.values():
            lanes.sort(key=lambda p: (p.lane if p.lane is not None else 0, p.id))
        self._rails: dict[int, list[InvPort]] = {}
        self._os_names: dict[int, dict[str, int]] = {}
        self._ib_numbers: dict[int, dict[int, int]] = {}
        self._split: dict[int, bool] = {}

    # -- devices -------------------------------------------------------------------------------------

    def device_named(self, name: str | None) -> InvDevice | None:
        if not name:
            return None
        for candidate in naming.host_name_candidates(name):
            device = self._by_name.get(candidate.lower())
            if device is not None:
                return device
        return None

    def device_by_guid(self, guid: str | None) -> InvDevice | None:
        return self._by_guid.get(guid) if guid else None

    def port_by_guid_mac(self, value: str | None) -> InvPort | None:
        return self._port_by_guid_mac.get(value) if value else None

    def lanes_of(self, port_id: int) -> list[InvPort]:
        return self._lanes.get(port_id, [])

    # -- InfiniBand hosts: rails --------------------------------------------------------------------

    def rails(self, device_id: int) -> list[InvPort]:
        """The host's compute InfiniBand ports in port order: rail n is mlx5_<n>."""
        rails = self._rails.get(device_id)
        if rails is None:
            device = self.devices[device_id]
            rails = sorted(
                (p for p in device.ports if p.parent_id is None and p.kind == INFINIBAND and p.network == COMPUTE),
                key=lambda p: p.id,
            )
            self._rails[device_id] = rails
        return rails

    def hca_port(self, device_id: int, rail: int, port_number: int) -> InvPort | None:
        """Port `port_number` of HCA mlx5_<rail>: the rail's physical port, or its lane port_number - 1 when
        that lane carries a cable of its own."""
        rails = self.rails(device_id)
        if not 0 <= rail < len(rails):
            return None
        physical = rails[rail]
        lanes = [lane for lane in self.lanes_of(physical.id) if lane.id in self.cabled]
        if lanes:
            return next((lane for lane in self.lanes_of(physical.id) if lane.lane == port_number - 1), None)
        return physical if port_number == 1 else None

    def hca_of(self, port_id: int) -> tuple[str, int] | None:
        """(ibdev, port number) the host names this port by, or None for a port that is no rail."""
        port = self.ports[port_id]
        physical = self.ports[port.parent_id] if port.parent_id is not None else port
        rails = self.rails(port.device_id)
        if physical not in rails:
            return None
        number = (port.lane or 0) + 1 if port.parent_id is not None else 1
        return naming.ibdev_of_rail(rails.index(physical)), number

    # -- InfiniBand switches: port numbers ----------------------------------------------------------

    def is_split(self, device_id: int) -> bool:
        split = self._split.get(device_id)
        if split is None:
            split = any(p.parent_id is not None and p.id in self.cabled for p in self.devices[device_id].ports)
            self._split[device_id] = split
        return split

    def _lane_count(self, physical: InvPort) -> int:
        return max(len(self.lanes_of(physical.id)), 1)

    def ib_number(self, port_id: int) -> int | None:
        """The port number the switch reports for our port (or lane)."""
        port = self.ports[port_id]
        physical = self.ports[port.parent_id] if port.parent_id is not None else port
        number = naming.port_number(physical.name)
        if number is None:
            return None
        split = self.is_split(port.device_id)
        lane = port.lane if port.parent_id is not None else (0 if split else None)
        return naming.ib_switch_port(number, lane, self._lane_count(physical), split=split)

    def switch_port(self, device_id: int, fabric_port: int) -> InvPort | None:
        numbers = self._ib_numbers.get(device_id)
        if numbers is None:
            numbers = {}
            for port in self.devices[device_id].ports:
                if port.kind != INFINIBAND or port.parent_id is not None:
                    continue
                lanes = [lane for lane in self.lanes_of(port.id) if lane.id in self.cabled]
                for each in lanes or [port]:  # a port whose lanes carry cables of their own is split
                    number = self.ib_number(each.id)
                    if number is not None:
                        numbers.setdefault(number, each.id)
            self._ib_numbers[device_id] = numbers
        port_id = numbers.get(fabric_port)
        return self.ports[port_id] if port_id is not None else None

    # -- OS port names (LLDP) -----------------------------------------------------------------------

    def os_name(self, port_id: int) -> str:
        """What the device's OS calls the port: its model's format, else our name."""
        port = self.ports[port_id]
        device = self.devices[port.device_id]
        if not device.os_port_format or port.kind not in (INFINIBAND, "ethernet"):
            return port.name
        physical = self.ports[port.parent_id] if port.parent_id is not None else port
        number = naming.port_number(physical.name)
        if number is None:
            return port.name
        try:
            lane = port.lane if port.parent_id is not None else None
            return naming.os_port_name(device.os_port_format, number=number, lane=lane,
                                       lanes=self._lane_count(physical))
        except naming.FormatError:
            return port.name

    def port_by_os_name(self, device_id: int, name: str | None) -> InvPort | None:
        """A port by the name its OS prints, or by our own name (a mgmt port the format leaves alone)."""
        if not name:
            return None
        names = self._os_names.get(device_id)
        if names is None:
            names = {}
            for port in self.devices[device_id].ports:
                names.setdefault(naming.normalize_port_name(port.name), port.id)
            for port in self.devices[device_id].ports:  # the OS's names win over ours where both exist
                names[naming.normalize_port_name(self.os_name(port.id))] = port.id
            self._os_names[device_id] = names
        port_id = names.get(name)  # most names arrive spelled as the OS spells them: already normal
        if port_id is None:
            port_id = names.get(naming.normalize_port_name(name))
        return self.ports[port_id] if port_id is not None else None

    # -- display --------------------------------------------------------------------------------------

    def port_text(self, port_id: int) -> str:
        port = self.ports[port_id]
        return f"{self.devices[port.device_id].name}:{port.name}"


@dataclass(frozen=True, slots=True)
class PlannedLink:
    """One planned link: a cable, or one leg of a breakout cable. `a` is the cable's A end (a lane of it
    for a breakout leg), `b` the far end. `width`: the InfiniBand lanes it should run (4 for a whole
    port, fewer for a lane of a split port); None for Ethernet."""

    key: str  # the cable label, with /B<n> for a leg of a breakout
    cable_id: int | None
    cable_label: str
    a: int  # port ids
    b: int
    speed_gbps: int
    infiniband: bool
    width: int | None = None

    def other(self, port_id: int) -> int:
        return self.b if port_id == self.a else self.a

    @property
    def generation(self) -> str | None:
        if not self.infiniband or not self.width:
            return None
        return naming.generation_of_lane(self.speed_gbps / self.width)


@dataclass(slots=True)
class ObservedEnd:
    """One end of a link as a tool showed it: `text` in the tool's own words, and what it mapped to."""

    text: str
    device_id: int | None = None
    port_id: int | None = None


@dataclass(slots=True)
class ObservedLink:
    a: ObservedEnd
    b: ObservedEnd
    source: str = ""  # the file (or target) it came from
    line_no: int = 0
    infiniband: bool = False
    width: int | None = None  # InfiniBand: lanes running
    generation: str | None = None  # InfiniBand: "XDR"
    speed_gbps: float | None = None  # Ethernet: the speed the output reports, when it does

    @property
    def resolved(self) -> bool:
        return self.a.port_id is not None and self.b.port_id is not None


@dataclass(slots=True)
class Observation:
    """Everything the outputs showed, mapped: links, ports seen down, which devices the outputs cover
    (InfiniBand fabrics and LLDP tables separately), and the GUIDs and MACs learned on the way."""

    links: list[ObservedLink] = field(default_factory=list)
    down: dict[int, str] = field(default_factory=dict)  # port id -> state as printed ("Down/Polling")
    ib_devices: set[int] = field(default_factory=set)
    lldp_devices: set[int] = field(default_factory=set)
    device_guids: dict[int, str] = field(default_factory=dict)  # learned: device id -> node GUID
    port_ids: dict[int, str] = field(default_factory=dict)  # learned: port id -> GUID or MAC
    notes: list[str] = field(default_factory=list)
