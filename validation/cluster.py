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


def sim_cluster_for(project: Project) -> SimCluster:
    """The simulated cluster mirrors the inventory: same nodes, rails, cables and optics."""
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
    return SimCluster(tuple(nodes))
