"""The inventory as the checks see it: a project's GPU nodes with their compute rails (InfiniBand or
Ethernet/RoCE) and their storage-network ports, and the simulated cluster that mirrors them.

A read model, below both the check kinds (which build their targets from the nodes) and the services
(which start runs, and file uploaded outputs against a node's rails); validation.services re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from django.core.exceptions import ValidationError
from django.db.models import Q

from cabling.choices import CableType
from cabling.models import CableEnd
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import Device, Optic, Port
from projects.models import Project

from . import criteria
from .models import AcceptanceProfile
from .runners import SimCluster, SimModule, SimNode, SimRail
from .runners.simfabric import SimEnd, SimFabric, SimLink, sim_guid, sim_mac
from .topology.model import INFINIBAND, Inventory, PlannedLink, cyclic_gc_paused
from .topology.store import inventory_of, planned_links

# The networks whose host ports are RDMA fabric ports a check measures (the management networks are not).
FABRIC_NETWORKS = (Network.COMPUTE, Network.STORAGE)
FABRIC_PORT_KINDS = (PortKind.INFINIBAND, PortKind.ETHERNET)


@dataclass(frozen=True)
class Rail:
    """One fabric port of a GPU node. Assumed mapping (rail-optimized, one RDMA device per NIC port):
    compute rail i = the node's i-th physical compute port in creation order = RDMA device mlx5_<i> = GPU i.
    Storage ports come after them: the node's j-th storage port is RDMA device mlx5_<compute ports + j> and
    belongs to no GPU (its `index` is still j within its own network, `gpu` is None). A breakout port
    (planes) is still one device: its child ports are its lanes, listed in `breakout`."""

    index: int
    port: Port
    breakout: tuple[tuple[str, int], ...]  # (child port name, Gb/s) in lane order; () when not split
    cable_id: int | None
    cable_type: str | None
    optic: Optic | None
    device_index: int | None = None  # the RDMA device number when it is not `index` (storage ports)

    @property
    def rdma_device(self) -> str:
        return f"mlx5_{self.index if self.device_index is None else self.device_index}"

    @property
    def network(self) -> str:
        return self.port.network

    @property
    def ethernet(self) -> bool:
        """A RoCE port: mlxlink reports Ethernet speeds, ethtool reads its counters, perftest needs a GID."""
        return self.port.kind == PortKind.ETHERNET

    @property
    def gpu(self) -> int | None:
        """The GPU this rail serves: rail index = GPU only for compute ports."""
        return self.index if self.network == Network.COMPUTE else None

    @property
    def netdev(self) -> str:
        """What the host's OS calls the port (ethtool, mlnx_qos): the port's name in our inventory, which the
        catalogue's server models give as the OS names them (eth0..eth7, stor0)."""
        return self.port.name

    @property
    def plan(self) -> criteria.LinkPlan:
        """What mlxlink should report for the port: from its own speed and its child ports' speeds, in the
        port's own link layer (an Ethernet port reports "400G", an InfiniBand one "IB-NDR" at 4x)."""
        return _port_plan(self.port.speed_gbps, self.breakout, not self.ethernet)

    @property
    def serdes_lanes(self) -> int:
        width = self.plan.width or ""
        return int(width[:-1]) if width[:-1].isdigit() else criteria.PORT_SERDES_LANES


@lru_cache(maxsize=4096)
def _port_plan(speed_gbps: int, breakout: tuple[tuple[str, int], ...], infiniband: bool) -> criteria.LinkPlan:
    """criteria.port_link_plan, remembered: every node of a cluster repeats the same few port shapes (a plan
    is frozen, so one is shared by all the ports that have it)."""
    return criteria.port_link_plan(speed_gbps=speed_gbps, breakout=breakout, infiniband=infiniband)


@dataclass(frozen=True)
class Node:
    device: Device
    rails: tuple[Rail, ...] = field(default_factory=tuple)  # compute rails: rail i serves GPU i
    storage_rails: tuple[Rail, ...] = field(default_factory=tuple)  # storage-network ports, never GPU rails

    @property
    def name(self) -> str:
        return self.device.name


def gpu_nodes(project: Project, *, device_ids: list[int] | None = None) -> list[Node]:
    """GPU nodes (by role or by hardware kind) that have compute-fabric ports, each with its physical compute
    ports (InfiniBand or Ethernet) in creation order and, apart, its storage-network ports, with their
    breakout child ports. Four queries whatever the cluster size; lanes and cable ends are read as plain
    values (a 1,024-node fabric has 10,000 such ports and 30,000 cable ends: model rows of that size cost
    seconds). `device_ids` narrows it to those devices (an upload's node). Cyclic garbage collection waits
    meanwhile: 30,000 new objects, none in a cycle, would start collections that walk them all again."""
    with cyclic_gc_paused():
        return _gpu_nodes(project, device_ids)


def _gpu_nodes(project: Project, device_ids: list[int] | None) -> list[Node]:
    nodes_qs = (
        Device.objects.filter(project=project)
        .filter(Q(role=DeviceRole.GPU_NODE) | Q(hardware_model__kind=HardwareKind.GPU_SERVER))
    )
    if device_ids is not None:
        nodes_qs = nodes_qs.filter(pk__in=device_ids)
    devices = list(nodes_qs.order_by("name"))
    if not devices:
        return []
    # The nodes' ids as a list rather than the node query as a subquery: the planner then reads each node's
    # ports by the device index, where the subquery had it hash-join every port of the database (and, its
    # estimate that large, compile the plan). Rows are sorted here, not by the database.
    ids = [device.pk for device in devices]
    fabric = dict(network__in=FABRIC_NETWORKS, kind__in=FABRIC_PORT_KINDS)
    ports = sorted(
        Port.objects.filter(device_id__in=ids, parent__isnull=True, **fabric).select_related("optic").order_by(),
        key=lambda port: (port.device_id, port.pk),
    )
    fabric_ids = {port.pk for port in ports}
    lanes: dict[int, list[tuple[str, int]]] = {}
    lane_rows = Port.objects.filter(device_id__in=ids, parent__isnull=False).order_by().values_list(
        "parent_id", "lane", "id", "name", "speed_gbps"
    )
    in_lane_order = sorted(
        (row for row in lane_rows if row[0] in fabric_ids),
        key=lambda row: (row[0], row[1] is None, row[1] or 0, row[2]),  # by lane, an unnumbered one last
    )
    for parent_id, _lane, _id, name, speed in in_lane_order:
        lanes.setdefault(parent_id, []).append((name, speed))
    cable_of_port: dict[int, tuple[int, str]] = {}
    end_rows = CableEnd.objects.filter(port__device_id__in=ids).order_by().values_list(
        "id", "port_id", "port__parent_id", "cable_id", "cable__cable_type"
    )
    for _id, port_id, parent_id, cable_id, cable_type in sorted(end_rows):
        cable_of_port.setdefault(parent_id or port_id, (cable_id, cable_type))
    by_device: dict[int, list[Port]] = {}
    for port in ports:
        by_device.setdefault(port.device_id, []).append(port)
    nodes = []
    for device in devices:
        mine = by_device.get(device.pk, [])
        compute = [p for p in mine if p.network == Network.COMPUTE]
        if not compute:
            continue  # a GPU server without compute ports is nothing the checks can measure
        storage = [p for p in mine if p.network == Network.STORAGE]
        rails = tuple(_rail(i, port, cable_of_port, lanes) for i, port in enumerate(compute))
        storage_rails = tuple(
            _rail(j, port, cable_of_port, lanes, device_index=len(compute) + j) for j, port in enumerate(storage)
        )
        nodes.append(Node(device=device, rails=rails, storage_rails=storage_rails))
    return nodes


def _rail(index: int, port: Port, cable_of_port: dict, lanes: dict, *, device_index: int | None = None) -> Rail:
    cable_id, cable_type = cable_of_port.get(port.pk, (None, None))
    breakout = tuple(lanes.get(port.pk, ()))
    return Rail(index, port, breakout, cable_id, cable_type, getattr(port, "optic", None), device_index)


def roce_settings(project: Project) -> criteria.RoceSettings:
    """The project's RoCE settings (lossless priority, DSCP, GID index, traffic class): the acceptance profile's
    `roce` overrides when the profile has them, else the common defaults (criteria.RoceSettings)."""
    profile = AcceptanceProfile.objects.filter(project=project).first()
    overrides = getattr(profile, "roce", None) if profile else None
    try:
        return criteria.RoceSettings.from_dict(overrides or {})
    except ValueError as exc:  # stored past the profile service's check (the admin): refuse the run, clearly
        raise ValidationError({"roce": f"The acceptance profile's RoCE settings are wrong: {exc}"}) from exc


def networks_served(inventory: Inventory, planned: list[PlannedLink]) -> dict[int, str]:
    """The network each switch serves, by device id: a switch's ports have no network of their own when its
    catalogue entry serves any (the shipped switches), so it is the network of the host ports its cables reach,
    passed on tier by tier (a spine serves what its leaves serve)."""
    served: dict[int, str] = {}
    changed = True
    while changed:
        changed = False
        for link in planned:
            ends = [inventory.ports[link.a], inventory.ports[link.b]]
            network = next((port.network or served.get(port.device_id, "") for port in ends
                            if port.network or port.device_id in served), "")
            for port in ends:
                if network and inventory.devices[port.device_id].is_switch and port.device_id not in served:
                    served[port.device_id] = network
                    changed = True
    return served


def sim_cluster_for(project: Project, *, with_fabric: bool = False, nodes: list[Node] | None = None) -> SimCluster:
    """The simulated cluster mirrors the inventory: same nodes, rails (compute and storage), cables and
    optics; `with_fabric` adds the cabled fabric as the switches and hosts would show it (topology checks).
    `nodes`: the project's gpu_nodes when the caller has read them already (a run's start builds its targets
    from them: reading them twice is a second at 1,024 servers)."""
    sim_nodes = [
        SimNode(node.name, tuple(_sim_rail(r) for r in node.rails), tuple(_sim_rail(r) for r in node.storage_rails))
        for node in (gpu_nodes(project) if nodes is None else nodes)
    ]
    fabric = sim_fabric_for(project) if with_fabric else None
    return SimCluster(tuple(sim_nodes), fabric=fabric)


def _sim_rail(rail: Rail) -> SimRail:
    optic = rail.optic
    module = SimModule(
        optical=rail.cable_type != CableType.DAC,
        vendor=optic.vendor if optic else "NVIDIA",
        part_number=optic.part_number if optic else "980-9I693-00NS00",
        serial=optic.serial if optic else "",
    )
    return SimRail(
        rail.index, rail.rdma_device, rail.port.name, rail.port.speed_gbps, rail.serdes_lanes, module,
        ethernet=rail.ethernet, netdev=rail.netdev,
    )


def sim_fabric_for(project: Project) -> SimFabric:
    inventory = inventory_of(project)
    return sim_fabric_from(inventory, planned_links(project, inventory))


def _sim_end(inventory: Inventory, port_id: int, served: dict[int, str] | None = None) -> SimEnd:
    """A port as the fabric shows it: the switch's port number or the HCA's ibdev and port, the OS's name,
    and identities that stay the same for the same device and port names. `served`: the network each switch
    serves, for a port without a network of its own."""
    port = inventory.ports[port_id]
    device = inventory.devices[port.device_id]
    ib_port, ibdev = 1, ""
    if device.is_switch:
        ib_port = inventory.ib_number(port_id) or 0
        guid = sim_guid(device.name)
    else:
        hca = inventory.hca_of(port_id)
        if hca is not None:
            ibdev, ib_port = hca
        guid = sim_guid(device.name, port.name)
    return SimEnd(
        device=device.name, port=port.name, switch=device.is_switch, os_name=inventory.os_name(port_id),
        ib_port=ib_port, ibdev=ibdev, guid=guid, mac=sim_mac(device.name, port.name),
        network=port.network or (served or {}).get(device.id, ""), speed_gbps=port.speed_gbps,
    )


def sim_fabric_from(inventory: Inventory, planned: list[PlannedLink]) -> SimFabric:
    """The plan's links as the fabric would show them, every InfiniBand port of the devices they join (so
    unlinked ones print Down/Polling), and the free ports of each Ethernet switch."""
    served = networks_served(inventory, planned)
    links = tuple(
        SimLink(key=p.key, a=_sim_end(inventory, p.a, served), b=_sim_end(inventory, p.b, served),
                infiniband=p.infiniband,
                width=p.width, generation=p.generation, speed_gbps=p.speed_gbps)
        for p in planned
    )
    ib_devices = {inventory.ports[port].device_id for p in planned if p.infiniband for port in (p.a, p.b)}
    ib_ports: dict[str, tuple[SimEnd, ...]] = {}
    free_ports: dict[str, tuple[SimEnd, ...]] = {}
    for device_id in sorted(ib_devices):
        device = inventory.devices[device_id]
        ports = []
        for port in device.ports:
            if port.kind != INFINIBAND or port.parent_id is not None:
                continue
            cabled_lanes = [lane for lane in inventory.lanes_of(port.id) if lane.id in inventory.cabled]
            for each in cabled_lanes or [port]:
                if device.is_switch or inventory.hca_of(each.id) is not None:
                    ports.append(_sim_end(inventory, each.id))
        ib_ports[device.name] = tuple(ports)
    for device in inventory.devices.values():
        if not device.is_switch:
            continue
        free = []
        for port in device.ports:
            if port.kind != "ethernet" or port.parent_id is not None or not (port.network or device.id in served):
                continue
            lanes = inventory.lanes_of(port.id)
            if port.id in inventory.cabled or any(lane.id in inventory.cabled for lane in lanes):
                if lanes and port.id not in inventory.cabled:
                    free += [_sim_end(inventory, lane.id, served) for lane in lanes if lane.id not in inventory.cabled]
                continue
            free += [_sim_end(inventory, lane.id, served) for lane in lanes] if lanes \
                else [_sim_end(inventory, port.id, served)]
        if free:
            free_ports[device.name] = tuple(free)
    return SimFabric(links=links, ib_ports=ib_ports, free_ports=free_ports)
