"""What every upload builder shares: the result about to be filed, and where it is filed. A tool names a
port its own way (mlxlink and perftest an RDMA device, mlx5_8; ethtool and mlnx_qos the OS's interface,
eth3 or stor0; NVUE a switch port, swp16); `PortFinder` turns that name into a port of the upload's device:
a GPU node's compute and storage rails (numbered as the check runs number them), or, on a switch or any
other device, its ports by the names its OS prints (the model's `os_port_format`: p16 is swp16)."""

from __future__ import annotations

from dataclasses import dataclass

from cabling.models import CableEnd
from inventory.models import Device, Optic, Port
from projects.models import Project

from .. import criteria
from ..cluster import Rail, gpu_nodes
from ..topology import naming
from ..topology.model import InvDevice, Inventory, InvPort
from .judge import rail_index


class UploadRejected(Exception):
    """The file cannot become results; `line` is the 1-based line that says why."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Place:
    """Where a result is filed: a port, its cable and optic, and on a GPU node the rail it is."""

    port: Port
    cable_id: int | None = None
    optic: Optic | None = None
    rail: Rail | None = None


@dataclass
class Filed:
    """One result about to become a CheckResult."""

    key: str
    verdict: criteria.Verdict
    metrics: dict
    raw: str
    place: Place | None = None


def _place_of(rail: Rail) -> Place:
    return Place(port=rail.port, cable_id=rail.cable_id, optic=rail.optic, rail=rail)


class PortFinder:
    """The ports of one device by the names tools print for them."""

    def __init__(self, device: Device, *, by_number: dict[int, Place], by_name: dict[str, Place], what: str,
                 listed: str):
        self.device = device
        self._by_number = by_number  # RDMA device number -> rail (GPU nodes only)
        self._by_name = by_name  # normalised port or interface name -> place
        self._what = what  # "compute or storage port", "port"
        self._listed = listed  # what the unmatched note lists

    @property
    def name(self) -> str:
        return self.device.name

    def find(self, name: str | None) -> Place | None:
        """The place a tool's device or interface name means, or None."""
        number = rail_index(name)
        if number is not None and number in self._by_number:
            return self._by_number[number]
        text = (name or "").strip()
        return self._by_name.get(naming.normalize_port_name(text)) if text else None

    def unmatched(self, name: str | None, *, how: str = "its device (mlx5_N)") -> criteria.Reason:
        if not name:
            text = f"the output does not name {how}, so it was not matched to a port"
        else:
            text = f"{name!r} matches no {self._what} of {self.name}"
            if self._listed:
                text += f" ({self._listed})"
        return criteria.Reason(criteria.Outcome.WARN, text)

    def key(self, place: Place | None, name: str | None, index: int) -> str:
        if place is not None:
            return f"{self.name}:{place.port.name}"
        return f"{self.name}:{name or f'#{index + 1}'}"


def port_finder(project: Project, device: Device) -> PortFinder:
    """A GPU node's rails, else the device's own ports by their OS names."""
    nodes = gpu_nodes(project, device_ids=[device.pk])
    if nodes:
        return _rail_finder(device, (*nodes[0].rails, *nodes[0].storage_rails))
    return _device_port_finder(device)


def _rail_finder(device: Device, rails: tuple[Rail, ...]) -> PortFinder:
    by_number, by_name = {}, {}
    for rail in rails:
        place = _place_of(rail)
        by_number[int(rail.rdma_device.removeprefix("mlx5_"))] = place
        by_name.setdefault(naming.normalize_port_name(rail.port.name), place)
    listed = ""
    if rails:
        listed = f"mlx5_0..{rails[-1].rdma_device}: {', '.join(r.port.name for r in rails)}"
    return PortFinder(device, by_number=by_number, by_name=by_name, what="compute or storage port", listed=listed)


def _device_port_finder(device: Device) -> PortFinder:
    """A switch's (or any device's) ports: three queries. The names its OS prints (swp16, swp1s0) come from
    the model's port format, as the topology check reads them; our own names (p16) match too."""
    ports = {port.pk: port for port in Port.objects.filter(device=device).select_related("optic")}
    cabled = dict(CableEnd.objects.filter(port__device=device).values_list("port_id", "cable_id"))
    fmt = getattr(device.hardware_model, "os_port_format", "") if device.hardware_model_id else ""
    inventory_device = InvDevice(device.pk, device.name, getattr(device.hardware_model, "kind", "") or "", fmt or "")
    inventory_device.ports = [
        InvPort(p.pk, device.pk, p.name, p.kind, p.network or "", p.speed_gbps or 0, p.parent_id, p.lane)
        for p in sorted(ports.values(), key=lambda p: p.pk)
    ]
    inventory = Inventory([inventory_device], cabled=set(cabled))
    places = {
        pk: Place(port=model, cable_id=cabled.get(pk), optic=getattr(model, "optic", None))
        for pk, model in ports.items()
    }
    by_name: dict[str, Place] = {}
    for port in inventory_device.ports:
        by_name.setdefault(naming.normalize_port_name(port.name), places[port.id])
    for port in inventory_device.ports:  # the OS's names win over ours where both exist
        by_name[naming.normalize_port_name(inventory.os_name(port.id))] = places[port.id]
    physical = [p for p in inventory_device.ports if p.parent_id is None]
    listed = ""
    if physical:
        listed = f"ports {inventory.os_name(physical[0].id)}..{inventory.os_name(physical[-1].id)}"
    return PortFinder(device, by_number={}, by_name=by_name, what="port", listed=listed)

