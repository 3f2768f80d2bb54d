"""Writes of the cabling app: applying a fabric plan to a project (`plan_apply`), what applying would
change (`plan_diff`), and the life of a FabricPlan row (preview, confirm, apply by a task).

How a plan becomes rows (the planner is cabling/planner, its format in the README):

- Racks are matched by name. Missing ones are created on the project's first site (a new site named
  after the project's site when it has none), with power budget 0: unknown, so the rack shows as
  flagged until someone enters its feeds.
- Servers are matched by name and used as they are (a different place only gives a warning: lengths
  and labels assume the plan's place). Missing ones are created from the hardware model whose part
  number is the server group's `model`. Switches likewise, from `switch_models.<part number>`; their
  role is their tier. An unknown part number, or a catalogue height that is not the spec's, is an error
  naming the spec field.
- Ports: a plan end without a lane is the physical port (`ib0`, `p12`), with lane k the lane child port
  (`ib0/2`, `p12/1`). Any port the plan needs and the device lacks is an error naming device and port.
- Planes: when planes share the switches (fabric 1), a cable sits on the physical ports and lane k of
  both ends is plane k, so the ports must HAVE those lanes: their port templates give them (breakout
  lanes with planes_per_lane). A port without them is refused with an error naming the hardware model;
  lanes the catalogue does not know are never invented. In a network with separate planes, a port or
  lane the plan puts in plane p gets plane p. A plane already recorded differently is an error.
- Cables: label, network, plane (when the cable is in one plane; null for a cable carrying several),
  type (passive copper -> dac, active copper -> acc, fibre -> fiber, twisted pair -> cat6), stock
  length, speed, the transceiver part at the A end and at the B end(s). Ends: one A end, one or more
  B ends (breakouts), each on the port or lane above; the database keeps every port to one end.

Re-planning: a cable is identified by its ends (side, leg, device, port). A planned cable with the same
ends as a cable of the project is the same cable, `changed` if its label or attributes differ;
planned cables without a match are `added`; cables of the spec's networks that the plan no longer
has are `removed` (deleted when applied). Networks the spec does not mention are left alone.
Installed cables (installed, verified, faulty) are never removed silently: the diff lists them as
`blocked` and the apply refuses, unless told `keep_installed`, which keeps them (nothing is deleted)
flagged `removed_from_plan` and relabelled `<label>-out` (so the plan may give the label to another
cable) for the floor to take out; their ports stay taken, so a plan that needs those ports is refused.
Switches follow the same rule: one that is racked, powered, ready, holds an optic or keeps a cable is
blocked rather than removed, and a switch in place is never moved or replaced by a re-plan (move it
in the inventory first). Servers and racks are never deleted by a re-plan.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, DatabaseError, IntegrityError, connections, transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history, bulk_update_with_history

from core.history import history_user
from delivery.models import Project
from inventory.choices import DeviceRole, DeviceStatus, Face, HardwareKind, RackStatus
from inventory.models import Device, DeviceUnit, HardwareModel, Optic, Port, Rack, Site
from inventory.rack_space import units_of
from inventory.services import devices_create_bulk

from .choices import PHYSICAL_CABLE_STATUSES, CableType, FabricPlanSource, FabricPlanStatus
from .models import Cable, CableEnd, FabricPlan
from .planner import CableType as PlannedCableType
from .planner import FabricSpec, Plan, PlanError, SpecError, SwitchTier, load_spec_text, plan
from .planner.model import Cable as PlannedCable
from .planner.model import PlannedRack, PlannedServer, PlannedSwitch

BATCH = 1000  # rows per INSERT
CABLE_CHUNK = 2000  # cables (and their ends) built in memory at a time
SHOWN = 100  # rows of each list kept in a stored diff (the counts are always complete)
MAX_ERRORS = 30

CABLE_TYPE = {
    PlannedCableType.PASSIVE_COPPER: CableType.DAC,
    PlannedCableType.ACTIVE_COPPER: CableType.ACC,
    PlannedCableType.FIBER: CableType.FIBER,
    PlannedCableType.TWISTED_PAIR: CableType.CAT6,
}
ROLE_OF_TIER = {
    SwitchTier.LEAF: DeviceRole.LEAF,
    SwitchTier.SPINE: DeviceRole.SPINE,
    SwitchTier.SUPER_SPINE: DeviceRole.SUPER_SPINE,
}
SWITCH_ROLES = frozenset(ROLE_OF_TIER.values())
ROLE_OF_KIND = {HardwareKind.GPU_SERVER: DeviceRole.GPU_NODE, HardwareKind.STORAGE_SERVER: DeviceRole.STORAGE_NODE}
# A device in one of these states stands in its rack: a re-plan does not delete or move it.
PLACED_DEVICE_STATUSES = frozenset({DeviceStatus.RACKED, DeviceStatus.POWERED, DeviceStatus.READY})
COMPARED_FIELDS = (
    "label", "network", "plane", "cable_type", "length_m", "speed_gbps", "optic_part_a", "optic_part_b",
    "removed_from_plan",
)
OPTIC_PART_MAX = Cable._meta.get_field("optic_part_a").max_length

Progress = Callable[[str, int, int], None]
EndKey = tuple[str, int, str, str]  # side, leg, device, port name


class PlanNotApplied(ValidationError):
    """The plan was not applied (nothing was written); `diff` says what it would have changed."""

    def __init__(self, messages: list[str], diff: PlanDiff | None = None):
        super().__init__(messages)
        self.diff = diff


def capped(messages: list[str], limit: int = MAX_ERRORS) -> list[str]:
    if len(messages) <= limit:
        return messages
    return messages[:limit] + [f"... and {len(messages) - limit} more like these"]


# --- the plan ------------------------------------------------------------------------------------------


def plan_of(*, spec_text: str | None = None, spec: FabricSpec | None = None) -> Plan:
    """The checked plan of a spec (text or parsed). A bad spec raises ValidationError whose messages each
    name the spec field (`networks.compute.scalable_unit: ...`)."""
    try:
        return plan(spec if spec is not None else load_spec_text(spec_text or "", source="spec"))
    except (SpecError, PlanError) as exc:
        raise ValidationError(capped(exc.errors), code="spec") from exc


def cable_values(cable: PlannedCable) -> dict[str, Any]:
    """The Cable fields a planned cable gives."""
    b_parts = list(dict.fromkeys(end.optic_part for end in cable.b_ends if end.optic_part))
    return {
        "label": cable.label,
        "network": cable.network,
        "plane": cable.planes[0] if len(cable.planes) == 1 else None,
        "cable_type": CABLE_TYPE[cable.cable_type],
        "length_m": Decimal(str(round(cable.length_m, 1))),
        "speed_gbps": cable.speed_gbps,
        "optic_part_a": cable.a_end.optic_part or "",
        "optic_part_b": "/".join(b_parts),
        "removed_from_plan": False,
    }


def planned_key(cable: PlannedCable) -> tuple[EndKey, ...]:
    return tuple(sorted((e.side, e.position, e.port.device, e.port.name) for e in cable.ends))


# --- the project as it is -------------------------------------------------------------------------------


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


def _template_ports(model: HardwareModel) -> dict[str, PortState]:
    """The ports a device of this model gets (inventory.services.ports_from_templates), by name."""
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


# --- the difference between the plan and the project ----------------------------------------------------


class _Problems:
    """Error messages, the same problem on many devices of one model said once with a count."""

    def __init__(self) -> None:
        self.messages: dict[Any, list] = {}

    def add(self, message: str, group: Any = None) -> None:
        key = group if group is not None else message
        if key in self.messages:
            self.messages[key][1] += 1
        else:
            self.messages[key] = [message, 1]

    def as_list(self) -> list[str]:
        return [text if n == 1 else f"{text} (and {n - 1} more like it)" for text, n in self.messages.values()]


@dataclass
class PlanDiff:
    """What applying a plan to a project would change, and what stops it."""

    plan: Plan
    racks_added: list[PlannedRack] = field(default_factory=list)
    servers_added: list[PlannedServer] = field(default_factory=list)
    servers_existing: int = 0
    switches_added: list[PlannedSwitch] = field(default_factory=list)
    switches_moved: list[tuple[DbDevice, PlannedSwitch]] = field(default_factory=list)
    switches_retiered: list[tuple[DbDevice, PlannedSwitch]] = field(default_factory=list)
    switches_removed: list[DbDevice] = field(default_factory=list)
    switches_blocked: list[tuple[DbDevice, str]] = field(default_factory=list)
    switches_replaced: list[DbDevice] = field(default_factory=list)  # also in removed and added
    cables_added: list[PlannedCable] = field(default_factory=list)
    cables_changed: list[tuple[DbCable, PlannedCable, list[str]]] = field(default_factory=list)
    cables_removed: list[DbCable] = field(default_factory=list)
    cables_blocked: list[DbCable] = field(default_factory=list)
    cables_kept: int = 0  # flagged removed_from_plan by an earlier apply and still out of the plan
    cables_unchanged: int = 0
    port_planes: dict[int, int] = field(default_factory=dict)  # existing port id -> plane to record
    new_port_planes: dict[tuple[str, str], int] = field(default_factory=dict)  # ports of new devices
    models: dict[str, HardwareModel] = field(default_factory=dict)  # part number -> catalogue entry
    state: ProjectState | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> list[str]:
        cables = [
            f"cable {c.label} ({c.status}) {c.ends_text()} is installed and the new plan drops it"
            for c in self.cables_blocked
        ]
        return cables + [f"switch {d.name} ({d.status}): {why}" for d, why in self.switches_blocked]

    @property
    def is_empty(self) -> bool:
        return not any(self.counts()[key] for key in CHANGE_COUNTS)

    def counts(self) -> dict[str, int]:
        return {
            "racks_added": len(self.racks_added),
            "servers_added": len(self.servers_added),
            "servers_existing": self.servers_existing,
            "switches_added": len(self.switches_added),
            "switches_moved": len(self.switches_moved),
            "switches_retiered": len(self.switches_retiered),
            "switches_removed": len(self.switches_removed),
            "switches_blocked": len(self.switches_blocked),
            "cables_added": len(self.cables_added),
            "cables_changed": len(self.cables_changed),
            "cables_removed": len(self.cables_removed),
            "cables_blocked": len(self.cables_blocked),
            "cables_kept": self.cables_kept,
            "cables_unchanged": self.cables_unchanged,
            "port_planes": len(self.port_planes),
        }

    def as_dict(self, limit: int = SHOWN) -> dict[str, Any]:
        """JSON for the stored preview: complete counts, the first `limit` rows of each list."""
        return {
            "counts": self.counts(),
            "is_empty": self.is_empty,
            "limit": limit,
            "racks_added": [r.name for r in self.racks_added[:limit]],
            "servers_added": [s.name for s in self.servers_added[:limit]],
            "switches_added": [
                {"name": s.name, "model": s.model, "role": ROLE_OF_TIER[s.tier], "rack": s.rack,
                 "position_u": s.position_u}
                for s in self.switches_added[:limit]
            ],
            "switches_moved": [
                {"name": d.name, "from": f"{d.rack} U{d.position_u}", "to": f"{s.rack} U{s.position_u}"}
                for d, s in self.switches_moved[:limit]
            ],
            "switches_removed": [{"name": d.name, "status": d.status} for d in self.switches_removed[:limit]],
            "cables_added": [
                {"label": c.label, "network": c.network, "ends": [e.tag for e in c.ends]}
                for c in self.cables_added[:limit]
            ],
            "cables_changed": [
                {"label": c.label, "was": db.label, "status": db.status, "changes": changes}
                for db, c, changes in self.cables_changed[:limit]
            ],
            "cables_removed": [
                {"label": c.label, "status": c.status, "ends": c.ends_text()} for c in self.cables_removed[:limit]
            ],
            "blocked": self.blocked[:limit],
            "warnings": capped(self.warnings),
            "errors": self.errors,
        }


CHANGE_COUNTS = (
    "racks_added", "servers_added", "switches_added", "switches_moved", "switches_retiered", "switches_removed",
    "cables_added", "cables_changed", "cables_removed", "port_planes",
)


def _switch_name_pattern(spec: FabricSpec) -> re.Pattern:
    """Names the planner gives switches of the spec's networks: <prefix>[-p<plane>]-<tier>-<nn>."""
    prefixes = "|".join(re.escape(net.prefix) for net in spec.networks)
    return re.compile(rf"^(?:{prefixes})(?:-p\d+)?-(?:leaf|spine|superspine)-\d+$")


class _Differ:
    def __init__(self, project: Project, the_plan: Plan):
        self.plan, self.spec = the_plan, the_plan.spec
        self.state = ProjectState(project)
        self.diff = PlanDiff(plan=the_plan, state=self.state)
        self.errors = _Problems()
        self.book: dict[str, dict[str, PortState]] = {}  # device name -> its ports (as they are or will be)
        self.model_of: dict[str, HardwareModel] = {}  # device to create -> its hardware model
        self.leaving: list[DbDevice] = []  # switches of the spec's networks the plan no longer has
        self.deleted: set[int] = set()  # cables the apply deletes

    def run(self) -> PlanDiff:
        self.catalogue()
        if not self.errors.messages:
            self.racks()
            self.servers()
            self.switches()
            self.cables()  # decides which switches leave, so before placement
            self.placement()
            self.planes()
            self.ends_exist()
        self.diff.errors = capped(self.errors.as_list())
        return self.diff

    # -- hardware models ------------------------------------------------------------------------------

    def catalogue(self) -> None:
        wanted: dict[str, tuple[str, int]] = {}  # part -> (spec field, height)
        for gi, group in enumerate(self.spec.servers):
            wanted.setdefault(group.model, (f"servers[{gi}]", group.height_u))
        for part, model in self.spec.switch_models.items():
            if any(s.model == part for s in self.plan.switches):
                wanted.setdefault(part, (f"switch_models.{part}", model.height_u))
        found = HardwareModel.objects.filter(part_number__in=wanted).prefetch_related("port_templates")
        self.diff.models = {m.part_number: m for m in found}
        for part, (path, height) in wanted.items():
            model = self.diff.models.get(part)
            part_field = f"{path}.model" if path.startswith("servers") else path
            if model is None:
                self.errors.add(f"{part_field}: no hardware model with part number {part!r} in the catalogue")
            elif max(model.height_u, 1) != height:
                self.errors.add(
                    f"{path}.height_u: the spec says {height}U but hardware model {part} is {model.height_u}U"
                )

    # -- racks, servers, switches ------------------------------------------------------------------------

    def racks(self) -> None:
        taken = {(r["row"], r["position"]): name for name, r in self.state.racks.items()}
        for rack in self.plan.racks:
            existing = self.state.racks.get(rack.name)
            if existing is None:
                other = taken.get((rack.row, rack.position))
                if other:
                    self.errors.add(
                        f"room.rows: rack {rack.name} would stand at row {rack.row} position {rack.position}, "
                        f"where rack {other} already stands"
                    )
                self.diff.racks_added.append(rack)
            elif (existing["row"], existing["position"]) != (rack.row, rack.position):
                self.diff.warnings.append(
                    f"rack {rack.name} stands at row {existing['row']} position {existing['position']}; the plan "
                    f"has row {rack.row} position {rack.position} (cable lengths assume the plan)"
                )

    def servers(self) -> None:
        for server in self.plan.servers:
            device = self.state.devices.get(server.name)
            if device is None:
                self.diff.servers_added.append(server)
                self.model_of[server.name] = self.diff.models[server.model]
                continue
            self.diff.servers_existing += 1
            self.book[server.name] = self.state.ports.get(server.name, {})
            if (device.rack, device.position_u) != (server.rack, server.position_u):
                where = f"{device.rack} U{device.position_u}" if device.rack else "no rack"
                self.diff.warnings.append(
                    f"{server.name} stands in {where}; the plan has it in {server.rack} U{server.position_u} "
                    "(cable lengths and labels assume the plan)"
                )

    def switches(self) -> None:
        planned = {s.name: s for s in self.plan.switches}
        for switch in self.plan.switches:
            device = self.state.devices.get(switch.name)
            if device is None:
                self.add_switch(switch)
                continue
            self.book[switch.name] = self.state.ports.get(switch.name, {})  # unless replaced below
            if device.role not in SWITCH_ROLES:
                self.errors.add(
                    f"networks.{switch.network}.prefix: {switch.name} already exists and is not a switch "
                    f"({device.role}); rename that device or choose another prefix"
                )
            elif device.part_number != switch.model:
                if device.placed:
                    self.errors.add(
                        f"{switch.name} ({device.status}) is a {device.part_number}; the plan wants a "
                        f"{switch.model}: a switch in place is not replaced by a re-plan"
                    )
                    continue
                self.diff.switches_replaced.append(device)
                self.diff.switches_removed.append(device)
                del self.book[switch.name]
                self.add_switch(switch)
            else:
                if (device.rack, device.position_u) != (switch.rack, switch.position_u):
                    if device.placed:
                        self.errors.add(
                            f"{switch.name} ({device.status}) stands in {device.rack} U{device.position_u}; the plan "
                            f"moves it to {switch.rack} U{switch.position_u}: move it in the inventory first"
                        )
                    else:
                        self.diff.switches_moved.append((device, switch))
                if device.role != ROLE_OF_TIER[switch.tier]:
                    self.diff.switches_retiered.append((device, switch))
        ours = _switch_name_pattern(self.spec)
        self.leaving = [
            d for d in self.state.devices.values()
            if d.role in SWITCH_ROLES and d.name not in planned and ours.match(d.name)
        ]

    def add_switch(self, switch: PlannedSwitch) -> None:
        self.diff.switches_added.append(switch)
        self.model_of[switch.name] = self.diff.models[switch.model]

    def placement(self) -> None:
        """New and moved devices must fit where the plan puts them, around what stays."""
        leaving = {d.name for d in self.diff.switches_removed} | {d.name for d, _ in self.diff.switches_moved}
        taken = {rack: {k: v for k, v in units.items() if v not in leaving} for rack, units in self.state.units.items()}
        heights = {r["name"]: r["height_u"] for r in self.state.racks.values()}
        for rack in self.diff.racks_added:
            heights[rack.name] = self.spec.room.rack_height_u
        placing = [(s.name, s.rack, s.position_u, s.model) for s in self.diff.servers_added]
        placing += [(s.name, s.rack, s.position_u, s.model) for s in self.diff.switches_added]
        placing += [(s.name, s.rack, s.position_u, s.model) for _, s in self.diff.switches_moved]
        for name, rack, position_u, part in placing:
            model = self.diff.models[part]
            units = units_of(position_u, model.height_u)
            if units.stop - 1 > heights[rack]:
                self.errors.add(f"{name} at U{position_u} sticks out of rack {rack} ({heights[rack]}U)")
                continue
            faces = [Face.FRONT, Face.REAR] if model.is_full_depth else [Face.FRONT]
            rack_units = taken.setdefault(rack, {})
            clash = next(((u, rack_units[(u, f)]) for u in units for f in faces if (u, f) in rack_units), None)
            if clash:
                self.errors.add(f"{name}: U{clash[0]} of rack {rack} is already taken by {clash[1]}")
                continue
            rack_units.update({(u, f): name for u in units for f in faces})

    # -- cables ---------------------------------------------------------------------------------------------

    def cables(self) -> None:
        diff, state = self.diff, self.state
        replaced = {d.name for d in diff.switches_replaced}
        by_key = {c.key: c for c in state.cables.values() if not {e[2] for e in c.ends} & replaced}
        matched: set[int] = set()
        for cable in self.plan.cables:
            existing = by_key.get(planned_key(cable))
            if existing is None:
                diff.cables_added.append(cable)
                continue
            matched.add(existing.id)
            changes = _changes(existing, cable_values(cable))
            if changes:
                diff.cables_changed.append((existing, cable, changes))
            else:
                diff.cables_unchanged += 1
        networks = {net.key for net in self.spec.networks}
        for cable in state.cables.values():
            if cable.id in matched or cable.network not in networks:
                continue
            if cable.removed_from_plan:
                diff.cables_kept += 1
            elif cable.installed:
                diff.cables_blocked.append(cable)
            else:
                diff.cables_removed.append(cable)
        self.deleted = {c.id for c in diff.cables_removed}
        self.labels_free(matched)
        self.leaving_switches()
        self.ports_free()
        for part in {e.optic_part for c in diff.cables_added for e in c.ends if e.optic_part}:
            if len(part) > OPTIC_PART_MAX:
                self.errors.add(f"optic part {part[:40]}...: longer than {OPTIC_PART_MAX} characters")

    def labels_free(self, matched: set[int]) -> None:
        """A cable that stays under its label without being the plan's (another network's, or one kept from
        an earlier plan) must not hold a label the plan gives. Blocked cables are renamed when kept."""
        blocked = {c.id for c in self.diff.cables_blocked}
        staying = {
            c.label: c for c in self.state.cables.values()
            if c.id not in matched and c.id not in self.deleted and c.id not in blocked
        }
        for cable in self.plan.cables:
            other = staying.get(cable.label)
            if other is not None:
                self.errors.add(
                    f"cable label {cable.label}: already used by a {other.network} cable ({other.ends_text()}) that "
                    f"this plan does not manage; change networks.{cable.network}.label_prefix or rename that cable"
                )

    def leaving_switches(self) -> None:
        """Switches of the spec's networks that the plan no longer has: removed, or blocked when in place.
        A switch replaced by another model must be free to delete: no optic, no cable that stays."""
        diff, state = self.diff, self.state
        replaced = {d.name for d in diff.switches_replaced}
        names = {d.name for d in self.leaving} | replaced
        cables_on: dict[str, set[int]] = defaultdict(set)
        for cable in state.cables.values():
            for _, _, device, _ in cable.ends:
                if device in names:
                    cables_on[device].add(cable.id)
        optics = set(
            Optic.objects.filter(port__device__project=state.project, port__device__name__in=names).values_list(
                "port__device__name", flat=True
            )
        )
        for device in self.leaving:
            staying = sorted(state.cables[i].label for i in cables_on[device.name] - self.deleted)
            if device.placed:
                diff.switches_blocked.append((device, "it is in place and the new plan drops it"))
            elif device.name in optics:
                diff.switches_blocked.append((device, "it holds optics and the new plan drops it"))
            elif staying:
                diff.switches_blocked.append((device, f"cables {', '.join(staying[:5])} stay on it"))
            else:
                diff.switches_removed.append(device)
        for name in sorted(replaced):
            staying = sorted(state.cables[i].label for i in cables_on[name] - self.deleted)
            if staying or name in optics:
                what = f"cables {', '.join(staying[:5])} stay on it" if staying else "it holds optics"
                self.errors.add(f"{name} would be replaced by another model, but {what}")

    def ports_free(self) -> None:
        """Every end of an added cable must be free: not on a cable that stays, nor its port's parent or lanes."""
        state = self.state
        staying = {port: cable for port, cable in state.cable_of_port.items() if cable not in self.deleted}
        for cable in self.diff.cables_added:
            for end in cable.ends:
                port = self.book.get(end.port.device, {}).get(end.port.name)
                if port is None or port.id is None:
                    continue  # a port of a new device is free; a missing one is reported by ends_exist
                for port_id in (port.id, port.parent_id, *port.lane_ids):
                    holder = staying.get(port_id)
                    if holder is not None:
                        other = state.cables[holder]
                        self.errors.add(
                            f"{end.port}: already taken by cable {other.label} ({other.status}), which stays; "
                            f"the plan puts cable {cable.label} there"
                        )
                        break

    # -- ports and planes --------------------------------------------------------------------------------

    def device_ports(self, device: str) -> dict[str, PortState]:
        if device not in self.book:
            self.book[device] = _template_ports(self.model_of[device])
        return self.book[device]

    def part_of(self, device: str) -> str:
        model = self.model_of.get(device)
        return model.part_number if model else self.state.devices[device].part_number

    def missing(self, device: str, port: str, need: str) -> None:
        part = self.part_of(device)
        self.errors.add(
            f"{device}:{port}: no such port on this {part}; the plan needs it ({need})", group=(part, port, need)
        )

    def ends_exist(self) -> None:
        for cable in self.diff.cables_added:
            for end in cable.ends:
                if end.port.name not in self.device_ports(end.port.device):
                    self.missing(end.port.device, end.port.name, f"networks.{cable.network}")

    def planes(self) -> None:
        """Record the plan's planes on the ports and lanes; refuse ports that lack the lanes the plan uses."""
        shared: dict[tuple[str, str], tuple[tuple[int, ...], str]] = {}
        single: dict[tuple[str, str], tuple[int, str]] = {}
        multi = {net.key for net in self.spec.networks if net.planes > 1}
        for link in self.plan.links:
            for ref in (link.a, link.b):
                if link.lane_planes:
                    shared[(ref.device, ref.port)] = (link.lane_planes, link.network)
                elif link.network in multi and len(link.planes) == 1:
                    single[(ref.device, ref.name)] = (link.planes[0], link.network)
        for (device, name), (lane_planes, network) in shared.items():
            port = self.device_ports(device).get(name)
            if port is None:
                self.missing(device, name, f"networks.{network}")
            elif len(port.lane_planes) < len(lane_planes):
                part = self.part_of(device)
                self.errors.add(
                    f"{device}:{name}: networks.{network} puts planes {_planes_text(lane_planes)} on lanes 0.."
                    f"{len(lane_planes) - 1} of this port (planes_share_switches), but this {part} port has "
                    f"{len(port.lane_planes) or 'no'} lanes: give its port template {len(lane_planes)} lanes with "
                    "planes_per_lane",
                    group=(part, "lanes", network),
                )
            else:
                for k, plane in enumerate(lane_planes):
                    self.want_plane(device, f"{name}/{k}", plane, network)
        for (device, name), (plane, network) in single.items():
            self.want_plane(device, name, plane, network)

    def want_plane(self, device: str, name: str, plane: int, network: str) -> None:
        port = self.device_ports(device).get(name)
        if port is None:
            self.missing(device, name, f"networks.{network}")
        elif port.plane is None:
            if port.id is None:
                self.diff.new_port_planes[(device, name)] = plane
            else:
                self.diff.port_planes[port.id] = plane
        elif port.plane != plane:
            self.errors.add(f"{device}:{name} is recorded in plane {port.plane}; the plan puts it in plane {plane}")


def _planes_text(planes: Iterable[int]) -> str:
    return ",".join(str(p) for p in planes)


def _changes(existing: DbCable, values: dict[str, Any]) -> list[str]:
    changes = []
    for name in COMPARED_FIELDS:
        old, new = getattr(existing, name), values[name]
        if old != new:
            changes.append(f"{name}: {_shown(old)} -> {_shown(new)}")
    return changes


def _shown(value: Any) -> str:
    return "(none)" if value in (None, "") else str(value)


def plan_diff(*, project: Project, plan: Plan) -> PlanDiff:
    """What applying `plan` to `project` would add, change and remove, what is blocked (installed
    things the plan drops), and the errors that stop it (unknown hardware, missing or taken ports, no
    room). Reads only, with a fixed number of queries whatever the size of the plan."""
    return _Differ(project, plan).run()


# --- applying -------------------------------------------------------------------------------------------------


@dataclass
class PlanApplyResult:
    plan: Plan
    diff: PlanDiff

    @property
    def changed(self) -> bool:
        return not self.diff.is_empty


@transaction.atomic
def plan_apply(
    *,
    project: Project,
    spec_text: str | None = None,
    spec: FabricSpec | None = None,
    planned: Plan | None = None,
    user=None,
    keep_installed: bool = False,
    progress: Progress | None = None,
) -> PlanApplyResult:
    """Write the plan of a spec to the project in one transaction with bulk inserts: missing racks,
    servers and switches (with their ports and lanes), the planes of ports, and every cable with its
    ends; on a re-plan also what changed or left the plan. Refuses (PlanNotApplied, nothing written)
    a bad spec, a plan the database cannot take (unknown hardware, missing or taken ports, no room),
    and, unless `keep_installed`, a plan that drops installed cables or switches in place.
    Applying the same spec twice changes nothing the second time. `planned` skips the planning when the
    caller already holds the (checked) plan of the spec. `progress(step, done, total)` hears of the steps
    "racks", "devices", "ports" and "cables", each first with done = 0."""
    the_plan = planned if planned is not None else plan_of(spec_text=spec_text, spec=spec)
    # One apply per project at a time: the second waits here, then sees the first one's rows.
    Project.objects.select_for_update().filter(pk=project.pk).first()
    diff = plan_diff(project=project, plan=the_plan)
    if diff.errors:
        raise PlanNotApplied(diff.errors, diff)
    if diff.blocked and not keep_installed:
        hint = (
            "Nothing was applied: confirm with keep_installed to keep them (cables flagged removed from plan and "
            "relabelled <label>-out) and apply the rest."
        )
        raise PlanNotApplied([*capped(diff.blocked), hint], diff)
    if diff.is_empty and not diff.cables_blocked:
        return PlanApplyResult(the_plan, diff)
    with history_user(user):
        _Writer(project, diff, user, progress or (lambda step, done, total: None)).write()
    return PlanApplyResult(the_plan, diff)


def kept_label(cable: Cable, taken: set[str]) -> str:
    """The label a kept cable moves to, so the plan may give its old label to another cable."""
    label = f"{cable.label}-out"
    return label if label not in taken else f"{cable.label}-out-{cable.pk}"


class _Writer:
    def __init__(self, project: Project, diff: PlanDiff, user, progress: Progress):
        self.project, self.diff, self.user, self.progress = project, diff, user, progress
        self.state = diff.state
        self.racks = {rack.name: rack for rack in Rack.objects.filter(project=project)}

    def write(self) -> None:
        self.add_racks()
        self.remove_cables()
        self.remove_switches()
        self.move_switches()
        port_ids = self.add_devices()
        self.record_planes()
        self.change_cables()
        self.add_cables(port_ids)

    def add_racks(self) -> None:
        self.progress("racks", 0, len(self.diff.racks_added))
        if not self.diff.racks_added:
            return
        site = Site.objects.filter(project=self.project).order_by("name").first()
        if site is None:
            site = Site(project=self.project, name=(self.project.site or self.project.code)[:100])
            site.full_clean()
            site.save()
        height = self.diff.plan.spec.room.rack_height_u
        racks = [
            Rack(project=self.project, site=site, name=r.name, row=r.row, position=r.position, height_u=height,
                 power_budget_w=0, status=RackStatus.PLANNED)
            for r in self.diff.racks_added
        ]
        for rack in racks:
            rack.clean_fields(exclude=["project", "site"])  # uniqueness was checked by the diff
        for rack in bulk_create_with_history(racks, Rack, batch_size=BATCH, default_user=self.user):
            self.racks[rack.name] = rack
        self.progress("racks", len(racks), len(racks))

    def remove_cables(self) -> None:
        removed = [c.id for c in self.diff.cables_removed]
        for start in range(0, len(removed), BATCH):
            Cable.objects.filter(pk__in=removed[start : start + BATCH]).delete()  # ends go with them
        if self.diff.cables_blocked:  # only reached with keep_installed: kept, and flagged for the floor
            kept = list(Cable.objects.filter(pk__in=[c.id for c in self.diff.cables_blocked]))
            taken = set(Cable.objects.filter(project=self.project).values_list("label", flat=True))
            for cable in kept:
                cable.removed_from_plan = True
                cable.label = kept_label(cable, taken)
            bulk_update_with_history(kept, Cable, ["removed_from_plan", "label"], batch_size=BATCH,
                                     default_user=self.user)

    def remove_switches(self) -> None:
        ids = [d.id for d in self.diff.switches_removed]
        if ids:
            Device.objects.filter(pk__in=ids).delete()  # units, NICs, ports and lanes go with them

    def move_switches(self) -> None:
        moves = {d.id: s for d, s in self.diff.switches_moved}
        roles = {d.id: ROLE_OF_TIER[s.tier] for d, s in self.diff.switches_retiered}
        ids = set(moves) | set(roles)
        if not ids:
            return
        devices = list(Device.objects.filter(pk__in=ids).select_related("hardware_model"))
        for device in devices:
            if device.pk in moves:
                device.rack, device.position_u = self.racks[moves[device.pk].rack], moves[device.pk].position_u
            device.role = roles.get(device.pk, device.role)
        bulk_update_with_history(devices, Device, ["rack", "position_u", "role"], batch_size=BATCH,
                                 default_user=self.user)
        moved = [d for d in devices if d.pk in moves]
        DeviceUnit.objects.filter(device__in=moved).delete()
        rows = [
            DeviceUnit(device=d, rack=d.rack, unit=u, face=face)
            for d in moved
            for u in units_of(d.position_u, d.hardware_model.height_u)
            for face in d.occupied_faces()
        ]
        try:
            with transaction.atomic():
                DeviceUnit.objects.bulk_create(rows, batch_size=BATCH)
        except IntegrityError as exc:
            raise PlanNotApplied(["A rack unit was taken while the switches were moved; nothing was applied."]) from exc

    def add_devices(self) -> dict[tuple[str, str], int]:
        diff = self.diff
        devices = [
            Device(project=self.project, hardware_model=diff.models[s.model], name=s.name, rack=self.racks[s.rack],
                   position_u=s.position_u, role=ROLE_OF_KIND.get(diff.models[s.model].kind, DeviceRole.OTHER))
            for s in diff.servers_added
        ]
        devices += [
            Device(project=self.project, hardware_model=diff.models[s.model], name=s.name, rack=self.racks[s.rack],
                   position_u=s.position_u, role=ROLE_OF_TIER[s.tier])
            for s in diff.switches_added
        ]
        planes = diff.new_port_planes

        def set_planes(device: Device, ports: list[Port]) -> None:
            for port in ports:
                plane = planes.get((device.name, port.name))
                if plane is not None:
                    port.plane = plane

        try:
            return devices_create_bulk(
                project=self.project, devices=devices, user=self.user, prepare_ports=set_planes if planes else None,
                progress=self.progress,
            )
        except ValidationError as exc:
            raise PlanNotApplied(exc.messages, diff) from exc

    def record_planes(self) -> None:
        planes = self.diff.port_planes
        ports = list(Port.objects.filter(pk__in=planes)) if planes else []
        for port in ports:
            port.plane = planes[port.pk]
        bulk_update_with_history(ports, Port, ["plane"], batch_size=BATCH, default_user=self.user)

    def change_cables(self) -> None:
        changed = self.diff.cables_changed
        if not changed:
            return
        cables = {c.pk: c for c in Cable.objects.filter(pk__in=[db.id for db, _, _ in changed])}
        relabelled = [cables[db.id] for db, c, _ in changed if db.label != c.label]
        # Labels may swap between cables: park them on unique temporary labels first, or the unique
        # (project, label) constraint would refuse the second half of a swap.
        for cable in relabelled:
            cable.label = f"~replan~{cable.pk}"
        Cable.objects.bulk_update(relabelled, ["label"], batch_size=BATCH)
        for db, planned, _ in changed:
            cable = cables[db.id]
            for name, value in cable_values(planned).items():
                setattr(cable, name, value)
        bulk_update_with_history(list(cables.values()), Cable, list(COMPARED_FIELDS), batch_size=BATCH,
                                 default_user=self.user)

    def add_cables(self, new_port_ids: dict[tuple[str, str], int]) -> None:
        added = self.diff.cables_added
        existing = self.state.ports
        self.progress("cables", 0, len(added))

        def port_id(device: str, name: str) -> int:
            return new_port_ids.get((device, name)) or existing[device][name].id

        for start in range(0, len(added), CABLE_CHUNK):
            chunk = added[start : start + CABLE_CHUNK]
            cables = [Cable(project=self.project, **cable_values(c)) for c in chunk]
            cables = bulk_create_with_history(cables, Cable, batch_size=BATCH, default_user=self.user)
            ends = [
                CableEnd(cable=cable, side=end.side, position=end.position, optic_count=end.optic_count,
                         port_id=port_id(end.port.device, end.port.name))
                for cable, planned in zip(cables, chunk, strict=True)
                for end in planned.ends
            ]
            try:
                with transaction.atomic():
                    bulk_create_with_history(ends, CableEnd, batch_size=BATCH, default_user=self.user)
            except IntegrityError as exc:
                raise PlanNotApplied(
                    ["A port was taken by another cable while the plan was applied; nothing was applied."]
                ) from exc
            self.progress("cables", start + len(chunk), len(added))


# --- the FabricPlan row: preview, confirm, apply ---------------------------------------------------------


def _store_preview(row: FabricPlan, the_plan: Plan, diff: PlanDiff) -> None:
    row.name = the_plan.spec.name[:200]
    row.summary = the_plan.summary()
    row.diff = diff.as_dict()
    row.errors = diff.errors
    row.status = FabricPlanStatus.FAILED if diff.errors else FabricPlanStatus.PREVIEW
    row.finished_at = timezone.now()


@transaction.atomic
def fabric_plan_preview(
    *, project: Project, user, spec_text: str, source: str = FabricPlanSource.FORM
) -> FabricPlan:
    """Plan the spec and diff it against the project now (planning even 1,024 servers takes seconds),
    and keep both on a new FabricPlan row waiting for confirmation. A spec that cannot be planned raises
    ValidationError naming its fields and stores nothing; a plan the project cannot take (unknown
    hardware, missing ports) is stored as failed, with the reasons."""
    the_plan = plan_of(spec_text=spec_text)
    diff = plan_diff(project=project, plan=the_plan)
    row = FabricPlan(project=project, spec_text=spec_text, source=source, created_by=user)
    _store_preview(row, the_plan, diff)
    row.full_clean()
    row.save()
    return row


@transaction.atomic
def fabric_plan_confirm(*, fabric_plan: FabricPlan, user, keep_installed: bool = False) -> FabricPlan:
    """Queue the apply of a previewed plan (once). A preview that drops installed cables or switches in
    place needs keep_installed."""
    from .tasks import apply_fabric_plan

    blocked = (fabric_plan.diff or {}).get("counts", {})
    if (blocked.get("cables_blocked") or blocked.get("switches_blocked")) and not keep_installed:
        raise ValidationError(
            {"keep_installed": "This plan drops installed cables or switches in place: tick keep installed to "
                               "keep them (flagged) and apply the rest, or change the spec."}
        )
    now = timezone.now()
    waiting = FabricPlan.objects.filter(pk=fabric_plan.pk, status=FabricPlanStatus.PREVIEW, confirmed_at__isnull=True)
    claimed = waiting.update(
        status=FabricPlanStatus.QUEUED, confirmed_at=now, confirmed_by=user, keep_installed=keep_installed,
        progress_done=0, progress_total=0, progress_step="",
    )
    if not claimed:
        raise ValidationError("This plan is not waiting for confirmation.")
    apply_fabric_plan.delay_on_commit(fabric_plan.pk)
    fabric_plan.refresh_from_db()
    return fabric_plan


def fabric_plan_run(*, plan_id: int) -> FabricPlan:
    """Apply a confirmed plan (the task's body), against the project as it is now, in one transaction,
    and record the outcome on the row. Safe to run twice: an applied or failed plan is left alone, and
    two runs of one project's plans are serialized by a lock on the project."""
    row = FabricPlan.objects.select_related("project", "confirmed_by").get(pk=plan_id)
    if row.confirmed_at is None or row.status not in (FabricPlanStatus.QUEUED, FabricPlanStatus.APPLYING):
        return row
    FabricPlan.objects.filter(pk=row.pk).update(status=FabricPlanStatus.APPLYING)
    saver, close = _progress_saver(row.pk)
    try:
        with transaction.atomic():
            Project.objects.select_for_update().filter(pk=row.project_id).first()
            if FabricPlan.objects.filter(pk=row.pk, status=FabricPlanStatus.APPLIED).exists():
                return FabricPlan.objects.get(pk=row.pk)
            result = plan_apply(
                project=row.project, spec_text=row.spec_text, user=row.confirmed_by,
                keep_installed=row.keep_installed, progress=saver,
            )
            row.status, row.errors = FabricPlanStatus.APPLIED, []
            row.summary, row.diff = result.plan.summary(), result.diff.as_dict()
            row.applied_at = row.finished_at = timezone.now()
            row.progress_done = row.progress_total = max(row.progress_total, 1)
            row.progress_step = "done"
            row.save()
    except ValidationError as exc:
        row.status, row.errors, row.finished_at = FabricPlanStatus.FAILED, exc.messages, timezone.now()
        if isinstance(exc, PlanNotApplied) and exc.diff is not None:
            row.diff = exc.diff.as_dict()
        row.save()
    except DatabaseError as exc:  # refused by the database after the checks (a race): nothing was written
        message = f"The database refused the plan ({exc.__class__.__name__}: {exc}); nothing was applied."
        row.status, row.errors, row.finished_at = FabricPlanStatus.FAILED, [message[:500]], timezone.now()
        row.save()
    finally:
        close()
    return row


def _progress_saver(plan_id: int) -> tuple[Progress, Callable[[], None]]:
    """Progress the page's poller can see while the apply's transaction is still open: on PostgreSQL it
    goes through a connection of its own (autocommit). SQLite allows one writer at a time, so there the
    progress is only seen at the end (the embedded default runs the task inside the request anyway)."""
    main = connections[DEFAULT_DB_ALIAS]
    if main.vendor != "postgresql":
        return (lambda step, done, total: None), (lambda: None)
    side = type(main)(dict(main.settings_dict), DEFAULT_DB_ALIAS)
    table = FabricPlan._meta.db_table

    def save(step: str, done: int, total: int) -> None:
        with side.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} SET progress_step = %s, progress_done = %s, progress_total = %s WHERE id = %s",
                [step, done, total, plan_id],
            )

    return save, side.close


def fabric_plan_apply_now(
    *, project: Project, spec_text: str, user=None, source: str = FabricPlanSource.COMMAND,
    keep_installed: bool = False,
) -> tuple[FabricPlan | None, PlanApplyResult]:
    """Plan, diff and apply in this process (the command, the demo), and record an applied FabricPlan
    row when anything changed (so running it again leaves no trace)."""
    with transaction.atomic():
        result = plan_apply(project=project, spec_text=spec_text, user=user, keep_installed=keep_installed)
        if not result.changed and not result.diff.cables_blocked:
            return None, result
        now = timezone.now()
        row = FabricPlan(
            project=project, spec_text=spec_text, source=source, created_by=user, confirmed_by=user,
            confirmed_at=now, applied_at=now, finished_at=now, keep_installed=keep_installed,
            status=FabricPlanStatus.APPLIED, name=result.plan.spec.name[:200], summary=result.plan.summary(),
            diff=result.diff.as_dict(),
        )
        row.full_clean()
        row.save()
        return row, result
