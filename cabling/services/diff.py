"""What applying a plan to a project would change (`plan_diff`), and what stops it.

A cable is identified by its ends (side, leg, device, port). A planned cable with the same ends as a cable
of the project is the same cable, `changed` if its label or attributes differ; planned cables without a
match are `added`; cables of the spec's networks that the plan no longer has are `removed`. Networks the
spec does not mention are left alone. Installed cables (installed, verified, faulty) are never removed
silently: the diff lists them as `blocked`. Switches follow the same rule: one that is racked, powered,
ready, holds an optic or keeps a cable is blocked rather than removed, and a switch in place is never
moved or replaced by a re-plan. Servers and racks are never deleted.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

from inventory.choices import Face
from inventory.models import HardwareModel, Optic
from inventory.rack_space import units_of
from projects.models import Project

from ..planner import FabricSpec, Plan
from ..planner.model import Cable as PlannedCable
from ..planner.model import PlannedRack, PlannedServer, PlannedSwitch
from .plan_rules import (
    COMPARED_FIELDS,
    OPTIC_PART_MAX,
    ROLE_OF_TIER,
    SHOWN,
    SWITCH_ROLES,
    cable_values,
    capped,
    planned_key,
)
from .project_state import DbCable, DbDevice, PortState, ProjectState, template_ports


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
            self.book[device] = template_ports(self.model_of[device])
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



class PlanNotApplied(ValidationError):
    """The plan was not applied (nothing was written); `diff` says what it would have changed."""

    def __init__(self, messages: list[str], diff: PlanDiff | None = None):
        super().__init__(messages)
        self.diff = diff
