"""The inventory as the checks see it: a project's GPU nodes with their compute rails, and the simulated
cluster that mirrors them.

A read model, below both the check kinds (which build their targets from the nodes) and the services
(which start runs, and file uploaded outputs against a node's rails); validation.services re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Prefetch, Q

from cabling.choices import CableType
from cabling.models import CableEnd
from delivery.models import Project
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import Device, Optic, Port

from . import criteria
from .runners import SimCluster, SimModule, SimNode, SimRail
from .runners.simfabric import SimEnd, SimFabric, SimLink, sim_guid, sim_mac
from .topology.model import INFINIBAND, Inventory, PlannedLink
from .topology.store import inventory_of, planned_links


@dataclass(frozen=True)
class Rail:
    """One compute port of a GPU node. Assumed mapping (rail-optimized, one RDMA device per NIC port):
    rail i = the node's i-th physical compute port in creation order = RDMA device mlx5_<i> = GPU i. A
    breakout port (planes) is still one device: its child ports are its lanes, listed in `breakout`."""

    index: int
    port: Port
    breakout: tuple[tuple[str, int], ...]  # (child port name, Gb/s) in lane order; () when not split
    cable_id: int | None
    cable_type: str | None
    optic: Optic | None

    @property
    def rdma_device(self) -> str:
        return f"mlx5_{self.index}"

    @property
    def plan(self) -> criteria.LinkPlan:
        """What mlxlink should report for the port: from its own speed and its child ports' speeds."""
        return criteria.port_link_plan(speed_gbps=self.port.speed_gbps, breakout=self.breakout, infiniband=True)

    @property
    def serdes_lanes(self) -> int:
        width = self.plan.width or ""
        return int(width[:-1]) if width[:-1].isdigit() else criteria.PORT_SERDES_LANES


@dataclass(frozen=True)
class Node:
    device: Device
    rails: tuple[Rail, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return self.device.name


def gpu_nodes(project: Project) -> list[Node]:
    """GPU nodes (by role or by hardware kind), each with its physical compute-fabric ports in creation
    order and their breakout child ports. Four queries whatever the cluster size."""
    devices = list(
        Device.objects.filter(project=project)
        .filter(Q(role=DeviceRole.GPU_NODE) | Q(hardware_model__kind=HardwareKind.GPU_SERVER))
        .select_related("hardware_model")
        .order_by("name")
    )
    ports = list(
        Port.objects.filter(
            device__in=devices, parent__isnull=True, network=Network.COMPUTE, kind=PortKind.INFINIBAND
        )
        .select_related("optic")
        .prefetch_related(Prefetch("lanes", queryset=Port.objects.order_by("lane", "id")))
        .order_by("device_id", "id")
    )
    ends = CableEnd.objects.filter(Q(port__in=ports) | Q(port__parent__in=ports)).select_related(
        "cable", "port"
    )
    cable_of_port: dict[int, tuple[int, str]] = {}
    for end in ends:
        physical = end.port.parent_id or end.port_id
        cable_of_port.setdefault(physical, (end.cable_id, end.cable.cable_type))
    by_device: dict[int, list[Port]] = {}
    for port in ports:
        by_device.setdefault(port.device_id, []).append(port)
    nodes = []
    for device in devices:
        rails = []
        for index, port in enumerate(by_device.get(device.pk, [])):
            cable_id, cable_type = cable_of_port.get(port.pk, (None, None))
            optic = getattr(port, "optic", None)
            breakout = tuple((lane.name, lane.speed_gbps) for lane in port.lanes.all())
            rails.append(Rail(index, port, breakout, cable_id, cable_type, optic))
        if rails:
            nodes.append(Node(device=device, rails=tuple(rails)))
    return nodes


def sim_cluster_for(project: Project, *, with_fabric: bool = False) -> SimCluster:
    """The simulated cluster mirrors the inventory: same nodes, rails, cables and optics; `with_fabric`
    adds the cabled fabric as the switches and hosts would show it (topology checks)."""
    nodes = []
    for node in gpu_nodes(project):
        rails = []
        for rail in node.rails:
            optic = rail.optic
            module = SimModule(
                optical=rail.cable_type != CableType.DAC,
                vendor=optic.vendor if optic else "NVIDIA",
                part_number=optic.part_number if optic else "980-9I693-00NS00",
                serial=optic.serial if optic else "",
            )
            rails.append(
                SimRail(
                    rail.index,
                    rail.rdma_device,
                    rail.port.name,
                    rail.port.speed_gbps,
                    rail.serdes_lanes,
                    module,
                )
            )
        nodes.append(SimNode(node.name, tuple(rails)))
    fabric = sim_fabric_for(project) if with_fabric else None
    return SimCluster(tuple(nodes), fabric=fabric)


def sim_fabric_for(project: Project) -> SimFabric:
    inventory = inventory_of(project)
    return sim_fabric_from(inventory, planned_links(project, inventory))


def _sim_end(inventory: Inventory, port_id: int) -> SimEnd:
    """A port as the fabric shows it: the switch's port number or the HCA's ibdev and port, the OS's name,
    and identities that stay the same for the same device and port names."""
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
        ib_port=ib_port, ibdev=ibdev, guid=guid, mac=sim_mac(device.name, port.name), network=port.network,
        speed_gbps=port.speed_gbps,
    )


def sim_fabric_from(inventory: Inventory, planned: list[PlannedLink]) -> SimFabric:
    """The plan's links as the fabric would show them, every InfiniBand port of the devices they join (so
    unlinked ones print Down/Polling), and the free ports of each Ethernet switch."""
    links = tuple(
        SimLink(key=p.key, a=_sim_end(inventory, p.a), b=_sim_end(inventory, p.b), infiniband=p.infiniband,
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
            if port.kind != "ethernet" or port.parent_id is not None or not port.network:
                continue
            lanes = inventory.lanes_of(port.id)
            if port.id in inventory.cabled or any(lane.id in inventory.cabled for lane in lanes):
                if lanes and port.id not in inventory.cabled:
                    free += [_sim_end(inventory, lane.id) for lane in lanes if lane.id not in inventory.cabled]
                continue
            free += [_sim_end(inventory, lane.id) for lane in lanes] if lanes else [_sim_end(inventory, port.id)]
        if free:
            free_ports[device.name] = tuple(free)
    return SimFabric(links=links, ib_ports=ib_ports, free_ports=free_ports)
