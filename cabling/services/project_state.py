"""The project as it is, as a plan sees it: racks, devices, their ports and lanes, cables and their ends,
and the rack units taken, read with a fixed number of queries whatever the size of the project."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from inventory.models import Device, DeviceUnit, HardwareModel, Port, Rack
from projects.models import Project

from ..choices import PHYSICAL_CABLE_STATUSES
from ..models import Cable, CableEnd
from .plan_rules import PLACED_DEVICE_STATUSES, EndKey


@dataclass(frozen=True, slots=True)
class PortState:
    """A port (or lane) as the database has it, or as a device still to be created will have it."""

    id: int | None  # None: the device is still to be created
    plane: int | None
    lane_planes: tuple[int | None, ...] = ()  # planes of its lanes by lane number; empty: no lanes
    parent_id: int | None = None
    lane_ids: tuple[int, ...] = ()


@dataclass(slots=True)
class DbDevice:
    id: int
    name: str
    role: str
    status: str
    rack: str | None
    position_u: int | None
    part_number: str
    height_u: int

    @property
    def placed(self) -> bool:
        return self.status in PLACED_DEVICE_STATUSES


@dataclass(slots=True)
class DbCable:
    id: int
    label: str
    network: str
    plane: int | None
    cable_type: str
    length_m: Decimal
    speed_gbps: int
    optic_part_a: str
    optic_part_b: str
    status: str
    removed_from_plan: bool
    ends: list[EndKey] = field(default_factory=list)
    port_ids: list[int] = field(default_factory=list)

    @property
    def key(self) -> tuple[EndKey, ...]:
        return tuple(sorted(self.ends))

    @property
    def installed(self) -> bool:
        return self.status in PHYSICAL_CABLE_STATUSES

    def ends_text(self) -> str:
        return " - ".join(f"{device}:{port}" for _, _, device, port in sorted(self.ends))


def template_ports(model: HardwareModel) -> dict[str, PortState]:
    """The ports a device of this model gets (inventory.services.port_rows_from_templates), by name."""
    ports: dict[str, PortState] = {}
    for template in model.port_templates.all():
        lanes = template.breakout_lanes if template.breakout_lanes > 1 else 0
        planes = tuple(k if template.planes_per_lane else None for k in range(lanes))
        ports[template.name] = PortState(None, None, planes)
        for k in range(lanes):
            ports[f"{template.name}/{k}"] = PortState(None, planes[k])
    return ports


class ProjectState:
    """What the project already has, read with a fixed number of queries."""

    def __init__(self, project: Project):
        self.project = project
        racks = Rack.objects.filter(project=project).values("id", "name", "row", "position", "site_id", "height_u")
        self.racks = {r["name"]: r for r in racks}
        devices = Device.objects.filter(project=project).values_list(
            "id", "name", "role", "status", "rack__name", "position_u", "hardware_model__part_number",
            "hardware_model__height_u",
        )
        self.devices = {row[1]: DbDevice(*row) for row in devices}
        self.ports = self._ports()
        self.cables = self._cables()
        self.cable_of_port = {port_id: c.id for c in self.cables.values() for port_id in c.port_ids}
        self.units: dict[str, dict[tuple[int, str], str]] = defaultdict(dict)
        for rack, unit, face, device in DeviceUnit.objects.filter(rack__project=project).values_list(
            "rack__name", "unit", "face", "device__name"
        ):
            self.units[rack][(unit, face)] = device

    def _ports(self) -> dict[str, dict[str, PortState]]:
        rows = list(
            Port.objects.filter(device__project=self.project).values_list(
                "id", "device__name", "name", "plane", "parent_id", "lane"
            )
        )
        lanes: dict[int, list[tuple[int, int, int | None]]] = defaultdict(list)
        for port_id, _, _, plane, parent_id, lane in rows:
            if parent_id is not None:
                lanes[parent_id].append((lane, port_id, plane))
        ports: dict[str, dict[str, PortState]] = defaultdict(dict)
        for port_id, device, name, plane, parent_id, _ in rows:
            children = sorted(lanes.get(port_id, ()), key=lambda item: item[0])
            ports[device][name] = PortState(
                port_id, plane, tuple(p for _, _, p in children), parent_id, tuple(i for _, i, _ in children)
            )
        return ports

    def _cables(self) -> dict[int, DbCable]:
        cables = {
            row[0]: DbCable(*row)
            for row in Cable.objects.filter(project=self.project).values_list(
                "id", "label", "network", "plane", "cable_type", "length_m", "speed_gbps", "optic_part_a",
                "optic_part_b", "status", "removed_from_plan",
            )
        }
        for cable_id, side, position, port_id, device, port in CableEnd.objects.filter(
            cable__project=self.project
        ).values_list("cable_id", "side", "position", "port_id", "port__device__name", "port__name"):
            cables[cable_id].ends.append((side, position, device, port))
            cables[cable_id].port_ids.append(port_id)
        return cables

