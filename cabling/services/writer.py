"""Applying a plan to a project (`plan_apply`): the diff written in one transaction with bulk inserts.

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
- Re-planning (cabling.services.diff says what changes): removed cables are deleted; blocked ones
  (installed) refuse the apply unless told `keep_installed`, which keeps them (nothing is deleted)
  flagged `removed_from_plan` and relabelled `<label>-out` (so the plan may give the label to another
  cable) for the floor to take out; their ports stay taken, so a plan that needs those ports is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, transaction
from django.utils import timezone

from core.bulk_history import bulk_create_recorded, bulk_update_recorded, insert_recorded
from core.history import history_user
from inventory.choices import DeviceRole, RackStatus
from inventory.models import Device, DeviceUnit, Port, Rack, Site
from inventory.rack_space import units_of
from inventory.services import devices_create_bulk
from projects.models import Project

from ..models import Cable, CableEnd
from ..planner import FabricSpec, Plan
from .diff import PlanDiff, PlanNotApplied, plan_diff
from .plan_rules import (
    BATCH,
    COMPARED_FIELDS,
    ROLE_OF_KIND,
    ROLE_OF_TIER,
    Progress,
    cable_values,
    capped,
    plan_of,
)

CABLE_CHUNK = 2000  # cables (and their ends) built in memory at a time


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
        PlanWriter(project, diff, user, progress or (lambda step, done, total: None)).write()
    return PlanApplyResult(the_plan, diff)


def kept_label(cable: Cable, taken: set[str]) -> str:
    """The label a kept cable moves to, so the plan may give its old label to another cable."""
    label = f"{cable.label}-out"
    return label if label not in taken else f"{cable.label}-out-{cable.pk}"


def plan_reason(diff: PlanDiff) -> str:
    """What the history rows of an apply say they came from (the history pages show it)."""
    return f"Fabric plan {diff.plan.spec.name} applied"


class PlanWriter:
    """Writes a checked diff: racks, then what leaves, then new devices with their ports, planes, changed
    and new cables, with bulk inserts. History: a row per created or changed row, copied by the database
    (core.bulk_history), all with the apply's date, its user and the reason naming the plan."""

    def __init__(self, project: Project, diff: PlanDiff, user, progress: Progress):
        self.project, self.diff, self.user, self.progress = project, diff, user, progress
        self.state = diff.state
        self.racks = {rack.name: rack for rack in Rack.objects.filter(project=project)}
        self.inserted = {"user": user, "reason": plan_reason(diff), "at": timezone.now()}
        self.recorded = {**self.inserted, "batch_size": BATCH}

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
        for rack in bulk_create_recorded(Rack, racks, **self.recorded):
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
            bulk_update_recorded(Cable, kept, ["removed_from_plan", "label"], **self.recorded)

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
        bulk_update_recorded(Device, devices, ["rack", "position_u", "role"], **self.recorded)
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

        def set_planes(device: Device, ports: list[dict]) -> None:
            for port in ports:
                plane = planes.get((device.name, port["name"]))
                if plane is not None:
                    port["plane"] = plane

        try:
            return devices_create_bulk(
                project=self.project, devices=devices, user=self.user, prepare_ports=set_planes if planes else None,
                progress=self.progress, reason=self.recorded["reason"], at=self.recorded["at"],
            )
        except ValidationError as exc:
            raise PlanNotApplied(exc.messages, diff) from exc

    def record_planes(self) -> None:
        planes = self.diff.port_planes
        ports = list(Port.objects.filter(pk__in=planes)) if planes else []
        for port in ports:
            port.plane = planes[port.pk]
        bulk_update_recorded(Port, ports, ["plane"], **self.recorded)

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
        bulk_update_recorded(Cable, list(cables.values()), list(COMPARED_FIELDS), **self.recorded)

    def add_cables(self, new_port_ids: dict[tuple[str, str], int]) -> None:
        added = self.diff.cables_added
        existing = self.state.ports
        self.progress("cables", 0, len(added))

        def port_id(device: str, name: str) -> int:
            return new_port_ids.get((device, name)) or existing[device][name].id

        for start in range(0, len(added), CABLE_CHUNK):
            chunk = added[start : start + CABLE_CHUNK]
            try:
                with transaction.atomic():
                    self.insert_cables(chunk, port_id)
            except IntegrityError as exc:
                raise PlanNotApplied(
                    ["A port was taken by another cable while the plan was applied; nothing was applied."]
                ) from exc
            except DataError as exc:  # a value the column cannot hold (too long, a NUL): the spec's, not a 500
                raise PlanNotApplied([f"The database refused a value of the plan's cables ({_first_line(exc)}); "
                                      "nothing was applied."]) from exc
            self.progress("cables", start + len(chunk), len(added))

    def insert_cables(self, chunk: list, port_id) -> None:
        """A chunk of planned cables and their ends as rows: 24,576 cables and their ends go in two COPYs a
        chunk (core.bulk_history)."""
        cable_ids = insert_recorded(Cable, [{"project_id": self.project.pk, **cable_values(c)} for c in chunk],
                                    **self.inserted)
        ends = [
            {"cable_id": cable_id, "side": end.side, "position": end.position, "optic_count": end.optic_count,
             "port_id": port_id(end.port.device, end.port.name)}
            for cable_id, planned in zip(cable_ids, chunk, strict=True)
            for end in planned.ends
        ]
        insert_recorded(CableEnd, ends, **self.inserted)


def _first_line(exc: Exception, limit: int = 200) -> str:
    """The database's own words for a refusal, on one line and not too long for a page."""
    text = (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"
