"""Validates every row of an inventory file against the project as it is plus the rows above it, without
writing anything, and turns the file into a plan: the ordered list of creates and updates.

The rows are checked in apply order (racks, devices, nics, optics; top to bottom) against an in-memory
picture of the project that each valid row updates, so "U12 already taken by the device two rows up"
and "unknown rack" for a rack defined on the racks sheet of the same workbook both come out right.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from django.db.models import TextChoices

from projects.models import Project

from ..choices import DeviceRole, DeviceStatus, Face, FormFactor, ImportAction, OpticStatus, RackStatus
from ..models import Device, DeviceUnit, HardwareModel, Nic, Optic, Port, Rack, Site
from ..rack_space import rack_placement_errors, units_of
from .columns import KINDS
from .limits import IMPORT_MAX_ERRORS
from .reader import ImportIssue, Row, Sheet

PREVIEW_ROWS = 20
PROGRESS_EVERY = 25

# The counts' keys, in the words of a summary ("3 created").
COUNT_LABELS = {ImportAction.CREATE: "created", ImportAction.UPDATE: "updated", ImportAction.UNCHANGED: "unchanged"}


@dataclass
class RowChange:
    """What one valid row will do. `values` are the cleaned cell values (names, not objects) to write:
    every field for a create, only the differing ones for an update."""

    kind: str
    action: str
    key: str
    sheet: Sheet
    row: int
    values: dict = field(default_factory=dict)
    before: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "kind": self.kind, "action": str(self.action), "key": self.key, "row": self.row,
            "sheet": self.sheet.name, "values": {k: _jsonable(v) for k, v in self.values.items()},
            "before": {k: _jsonable(v) for k, v in self.before.items()},
        }


@dataclass
class ImportPlan:
    project: Project
    sheets: list[Sheet]
    changes: list[RowChange] = field(default_factory=list)
    issues: list[ImportIssue] = field(default_factory=list)  # the first max_errors found
    issue_count: int = 0  # every issue found, kept or not
    new_sites: list[str] = field(default_factory=list)
    max_errors: int = IMPORT_MAX_ERRORS

    @property
    def ok(self) -> bool:
        return not self.issue_count

    def add_issues(self, issues: list[ImportIssue]) -> None:
        """Count every issue; keep only the first max_errors, so a file of a million bad rows costs the
        memory of a few hundred."""
        self.issue_count += len(issues)
        room = self.max_errors - len(self.issues)
        if room > 0:
            self.issues.extend(issues[:room])

    @property
    def kinds(self) -> list[str]:
        return [sheet.kind for sheet in self.sheets]

    def counts(self) -> dict[str, dict[str, int]]:
        counts = {kind: dict.fromkeys(COUNT_LABELS.values(), 0) for kind in self.kinds}
        for change in self.changes:
            counts[change.kind][COUNT_LABELS[change.action]] += 1
        return counts

    def summary(self, preview_rows: int = PREVIEW_ROWS) -> dict:
        """JSON for the job row: counts per kind and the first rows that create or update something."""
        shown: dict[str, list[dict]] = {kind: [] for kind in self.kinds}
        for change in self.changes:
            if change.action != ImportAction.UNCHANGED and len(shown[change.kind]) < preview_rows:
                shown[change.kind].append(change.as_dict())
        return {"counts": self.counts(), "rows": shown, "new_sites": self.new_sites}


ProgressCallback = Callable[[int, int], None]


def build_plan(
    project: Project, sheets: list[Sheet], *, progress: ProgressCallback | None = None,
    max_errors: int = IMPORT_MAX_ERRORS,
) -> ImportPlan:
    """Check every row of every sheet; the plan's issues list the problems found (not just the first),
    the first `max_errors` of them, and its issue_count counts them all."""
    plan = ImportPlan(project=project, sheets=sheets, max_errors=max_errors)
    world = _ProjectPicture(project, sheets)
    total = sum(len(sheet.rows) for sheet in sheets)
    done = 0
    if progress:
        progress(done, total)
    checkers = {"racks": _check_rack, "devices": _check_device, "nics": _check_nic, "optics": _check_optic}
    for sheet in sorted(sheets, key=lambda s: KINDS.index(s.kind)):
        seen: dict[str, int] = {}  # key -> row number, to refuse the same object twice in one sheet
        for row in sheet.rows:
            cells = _Cells(sheet, row)
            change = checkers[sheet.kind](cells, world, seen)
            if cells.issues:
                plan.add_issues(cells.issues)
            elif change is not None:
                plan.changes.append(change)
            done += 1
            if progress and (done % PROGRESS_EVERY == 0 or done == total):
                progress(done, total)
    plan.new_sites = sorted(world.new_sites)
    return plan


def _jsonable(value):
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


class _Cells:
    """Reads one row's cells as typed values, collecting an issue per bad cell. Every getter returns
    None for a blank (or absent) cell, so callers can tell "leave as is" from a value."""

    def __init__(self, sheet: Sheet, row: Row):
        self.sheet, self.row = sheet, row
        self.issues: list[ImportIssue] = []

    def error(self, column: str, message: str) -> None:
        self.issues.append(self.sheet.issue(message, row=self.row.number, column=column))

    def text(self, column: str, *, max_length: int, required: bool = False) -> str | None:
        value = self.row.values.get(column, "").strip()
        if not value:
            if required:
                self.error(column, "required, but the cell is empty")
            return None
        if len(value) > max_length:
            self.error(column, f"too long: {len(value)} characters, at most {max_length}")
            return None
        return value

    def integer(self, column: str, *, minimum: int, maximum: int = 2_147_483_647, required: bool = False):
        value = self.text(column, max_length=20, required=required)
        if value is None:
            return None
        try:
            number = int(value.replace(" ", "").replace("_", ""))
        except ValueError:
            self.error(column, f'not a whole number: "{value}"')
            return None
        if not minimum <= number <= maximum:
            self.error(column, f"{number} is out of range ({minimum} to {maximum})")
            return None
        return number

    def choice(self, column: str, choices: type[TextChoices], *, required: bool = False) -> str | None:
        """The stored value, accepting the value or the label shown in the app, in any case."""
        value = self.text(column, max_length=100, required=required)
        if value is None:
            return None
        wanted = value.lower().replace("-", "_").replace(" ", "_")
        for stored, label in choices.choices:
            if wanted in {stored, label.lower().replace("-", "_").replace(" ", "_")}:
                return stored
        self.error(column, f'"{value}" is not one of {", ".join(choices.values)}')
        return None

    def ip_address(self, column: str) -> str | None:
        value = self.text(column, max_length=45)
        if value is None:
            return None
        try:
            return str(ipaddress.ip_address(value))
        except ValueError:
            self.error(column, f'not an IPv4 or IPv6 address: "{value}"')
            return None


def _max_length(model, name: str) -> int:
    return model._meta.get_field(name).max_length


def _with_row(name: str, rows: dict[str, int]) -> str:
    """A name, with the row of the file that put it there when it came from the file."""
    return f"{name} (row {rows[name]})" if name in rows else name


class ProjectRows:
    """The project's rows by the keys an import file names them with, each kind loaded in one query on
    first use: what the check compares the rows with, and what the apply writes over."""

    def __init__(self, project: Project):
        self.project = project

    @cached_property
    def racks(self) -> dict[str, Rack]:
        return {r.name: r for r in Rack.objects.filter(project=self.project).select_related("site")}

    @cached_property
    def devices(self) -> dict[str, Device]:
        devices = Device.objects.filter(project=self.project).select_related("hardware_model", "rack")
        return {d.name: d for d in devices}

    @cached_property
    def nics(self) -> dict[tuple[str, str], Nic]:
        nics = Nic.objects.filter(device__project=self.project).select_related("device")
        return {(n.device.name, n.slot): n for n in nics}

    @cached_property
    def optics(self) -> dict[str, Optic]:
        optics = Optic.objects.filter(project=self.project).select_related("port__device")
        return {o.serial: o for o in optics}


class _ProjectPicture(ProjectRows):
    """The project's inventory as the rows checked so far would leave it. Loaded with a fixed number
    of queries (each part only when a sheet needs it); never written to the database."""

    def __init__(self, project: Project, sheets: list[Sheet]):
        super().__init__(project)
        self.kinds = {sheet.kind for sheet in sheets}
        self.new_sites: set[str] = set()
        self.rack_rows: dict[str, int] = {}
        self.device_rows: dict[str, int] = {}
        self.optic_rows: dict[str, int] = {}
        device_rows = [row for sheet in sheets if sheet.kind == "devices" for row in sheet.rows]
        part_numbers = {row.values.get("hardware_model", "").strip() for row in device_rows}
        self.models = {
            m.part_number: m
            for m in HardwareModel.objects.filter(part_number__in=part_numbers - {""}).prefetch_related(
                "nic_templates", "port_templates"
            )
        }

    @cached_property
    def site_names(self) -> set[str]:
        return set(Site.objects.filter(project=self.project).values_list("name", flat=True))

    @cached_property
    def rack_at(self) -> dict[tuple[str, str, int], str]:
        return {(r.site.name, r.row, r.position): r.name for r in self.racks.values()}

    @cached_property
    def device_serials(self) -> dict[str, str]:
        return {d.serial: d.name for d in self.devices.values() if d.serial}

    @cached_property
    def taken(self) -> dict[str, dict[tuple[int, str], str]]:
        """rack name -> {(unit, face): device name}."""
        taken: dict[str, dict] = defaultdict(dict)
        claims = DeviceUnit.objects.filter(rack__project=self.project).values_list(
            "rack__name", "unit", "face", "device__name"
        )
        for rack_name, unit, face, device_name in claims:
            taken[rack_name][(unit, face)] = device_name
        return taken

    @cached_property
    def nic_serials(self) -> dict[str, str]:
        return {nic.serial: f"{device} {slot}" for (device, slot), nic in self.nics.items() if nic.serial}

    @cached_property
    def ports(self) -> set[tuple[str, str]]:
        return set(Port.objects.filter(device__project=self.project).values_list("device__name", "name"))

    @cached_property
    def port_optic(self) -> dict[tuple[str, str], str]:
        return {(o.port.device.name, o.port.name): o.serial for o in self.optics.values() if o.port_id}

    def add_device(self, device: Device) -> None:
        """A device the file creates: its template NICs and ports exist from here on."""
        self.devices[device.name] = device
        for template in device.hardware_model.nic_templates.all():
            self.nics[(device.name, template.slot)] = Nic(
                slot=template.slot, model=template.model, part_number=template.part_number
            )
        if "optics" in self.kinds:
            for template in device.hardware_model.port_templates.all():
                self.ports.add((device.name, template.name))
                if template.breakout_lanes > 1:
                    lanes = range(template.breakout_lanes)
                    self.ports.update((device.name, f"{template.name}/{lane}") for lane in lanes)

    @cached_property
    def claims_of(self) -> dict[str, list[tuple[str, tuple[int, str]]]]:
        """device name -> [(rack name, (unit, face))]: what `taken` holds for it, so a device's claims are
        dropped without scanning every rack's (a 1,400-device file would be quadratic)."""
        claims: dict[str, list] = defaultdict(list)
        for rack_name, units in self.taken.items():
            for key, owner in units.items():
                claims[owner].append((rack_name, key))
        return claims

    def claim_units(self, device_name: str, rack_name: str | None, units: list[tuple[int, str]]) -> None:
        for old_rack, key in self.claims_of.pop(device_name, []):
            if self.taken[old_rack].get(key) == device_name:
                del self.taken[old_rack][key]
        if rack_name:
            for key in units:
                self.taken[rack_name][key] = device_name
            self.claims_of[device_name] = [(rack_name, key) for key in units]


def _diff(current: dict, wanted: dict) -> tuple[dict, dict]:
    """The fields whose wanted value differs from the current one, as (new values, old values). A blank
    cell (None) leaves its field as it is."""
    after, before = {}, {}
    for name, value in wanted.items():
        if value is not None and current.get(name) != value:
            after[name], before[name] = value, current.get(name)
    return after, before


def _change(kind, key, cells, *, exists, wanted, current=None) -> RowChange:
    sheet, number = cells.sheet, cells.row.number
    if not exists:
        values = {name: value for name, value in wanted.items() if value is not None}
        return RowChange(kind=kind, action=ImportAction.CREATE, key=key, sheet=sheet, row=number, values=values)
    after, before = _diff(current, wanted)
    action = ImportAction.UPDATE if after else ImportAction.UNCHANGED
    return RowChange(kind=kind, action=action, key=key, sheet=sheet, row=number, values=after, before=before)


def _refuse_repeat(cells: _Cells, seen: dict, key: str, column: str, what: str) -> bool:
    if key in seen:
        cells.error(column, f"{what} already appears in row {seen[key]}")
        return True
    seen[key] = cells.row.number
    return False


# --- racks ------------------------------------------------------------------------------------------------

def _check_rack(cells: _Cells, world: _ProjectPicture, seen: dict) -> RowChange | None:
    name = cells.text("name", max_length=_max_length(Rack, "name"), required=True)
    wanted = {
        "site": cells.text("site", max_length=_max_length(Site, "name"), required=True),
        "row": cells.text("row", max_length=_max_length(Rack, "row"), required=True),
        "position": cells.integer("position", minimum=1, maximum=32767, required=True),
        "height_u": cells.integer("height_u", minimum=1, maximum=60),
        "power_budget_w": cells.integer("power_budget_w", minimum=0, required=True),
        "status": cells.choice("status", RackStatus),
    }
    if name is None or _refuse_repeat(cells, seen, name, "name", f'rack "{name}"'):
        return None
    existing = world.racks.get(name)
    current = _rack_values(existing) if existing else None
    height = wanted["height_u"] or (existing.height_u if existing else 48)
    if existing and wanted["height_u"]:
        top = max((unit for unit, _face in world.taken.get(name, {})), default=0)
        if height < top:
            cells.error("height_u", f"rack {name} holds devices up to U{top}; {height}U is too low")
    if None not in (wanted["site"], wanted["row"], wanted["position"]):
        place = (wanted["site"], wanted["row"], wanted["position"])
        holder = world.rack_at.get(place)
        if holder and holder != name:
            cells.error("position", f"site {place[0]} row {place[1]} position {place[2]} is already rack "
                                    f"{_with_row(holder, world.rack_rows)}")
    if cells.issues:
        return None
    change = _change("racks", name, cells, exists=existing is not None, wanted=wanted, current=current)
    _remember_rack(world, name, cells.row.number, wanted, height, current)
    return change


def _rack_values(rack: Rack) -> dict:
    return {
        "site": rack.site.name, "row": rack.row, "position": rack.position, "height_u": rack.height_u,
        "power_budget_w": rack.power_budget_w, "status": rack.status,
    }


def _remember_rack(world, name, number, wanted, height, current) -> None:
    if current:
        world.rack_at.pop((current["site"], current["row"], current["position"]), None)
    world.rack_at[(wanted["site"], wanted["row"], wanted["position"])] = name
    if wanted["site"] not in world.site_names:
        world.new_sites.add(wanted["site"])
    rack = world.racks.get(name) or Rack(name=name)
    rack.height_u = height
    world.racks[name] = rack
    world.rack_rows[name] = number


# --- devices ----------------------------------------------------------------------------------------------

def _check_device(cells: _Cells, world: _ProjectPicture, seen: dict) -> RowChange | None:
    name = cells.text("name", max_length=_max_length(Device, "name"), required=True)
    part_number = cells.text(
        "hardware_model", max_length=_max_length(HardwareModel, "part_number"), required=True
    )
    wanted = {
        "rack": cells.text("rack", max_length=_max_length(Rack, "name")),
        "position_u": cells.integer("position_u", minimum=1, maximum=60),
        "face": cells.choice("face", Face),
        "role": cells.choice("role", DeviceRole),
        "serial": cells.text("serial", max_length=_max_length(Device, "serial")),
        "asset_tag": cells.text("asset_tag", max_length=_max_length(Device, "asset_tag")),
        "oob_address": cells.ip_address("oob_address"),
        "status": cells.choice("status", DeviceStatus),
    }
    model = world.models.get(part_number) if part_number else None
    if part_number and model is None:
        cells.error("hardware_model", f'unknown hardware model "{part_number}" (give its part number)')
    if name is None or _refuse_repeat(cells, seen, name, "name", f'device "{name}"'):
        return None
    existing = world.devices.get(name)
    if existing and model and existing.hardware_model.part_number != model.part_number:
        cells.error("hardware_model", f"device {name} is a {existing.hardware_model.part_number}; an import "
                                      "cannot change the hardware model of an existing device")
    if wanted["rack"] and wanted["rack"] not in world.racks:
        cells.error("rack", f'unknown rack "{wanted["rack"]}"')
    _check_device_serial(cells, world, name, wanted["serial"])
    if cells.issues:
        return None
    current = _device_values(existing) if existing else None
    placed = _check_placement(cells, world, name, model, wanted, current)
    if cells.issues:
        return None
    change = _change("devices", name, cells, exists=existing is not None, wanted=wanted, current=current)
    if not existing:
        change.values["hardware_model"] = model.part_number
        world.add_device(Device(name=name, hardware_model=model))
    _remember_device(world, name, cells.row.number, wanted["serial"], current, placed)
    return change


def _device_values(device: Device) -> dict:
    return {
        "rack": device.rack.name if device.rack_id else None, "position_u": device.position_u,
        "face": device.face, "role": device.role, "serial": device.serial, "asset_tag": device.asset_tag,
        "oob_address": device.oob_address, "status": device.status,
    }


def _check_device_serial(cells: _Cells, world: _ProjectPicture, name: str, serial: str | None) -> None:
    holder = world.device_serials.get(serial) if serial else None
    if holder and holder != name:
        cells.error("serial", f'serial "{serial}" is already device {_with_row(holder, world.device_rows)}')


def _check_placement(cells, world, name, model, wanted, current) -> tuple[str | None, list] | None:
    """Where the device will sit, as (rack name, [(unit, face)]), after checking it fits and is free."""
    current = current or {}
    rack_name = wanted["rack"] or current.get("rack")
    position = wanted["position_u"] or current.get("position_u")
    face = wanted["face"] or current.get("face") or Face.FRONT
    if rack_name and not position:
        cells.error("position_u", f"needed when the device is in a rack ({rack_name})")
        return None
    if position and not rack_name:
        cells.error("rack", "needed when the device has a position_u")
        return None
    if not rack_name:
        return None, []
    if model is None:  # an existing device keeps its model
        model = world.devices[name].hardware_model
    rack = world.racks[rack_name]
    device = Device(name=name, rack=rack, position_u=position, face=face, hardware_model=model)
    taken = world.taken.get(rack_name, {})
    units = [(u, f) for u in units_of(position, model.height_u) for f in device.occupied_faces()]
    problems = rack_placement_errors(device, taken=taken)
    if problems:
        owner = next((taken[key] for key in units if taken.get(key) not in (None, name)), None)
        where = f" (row {world.device_rows[owner]})" if owner in world.device_rows else ""
        cells.error("position_u", problems[0] + where)
        return None
    return rack_name, units


def _remember_device(world, name, number, serial, current, placed) -> None:
    if serial:
        if current and current["serial"]:
            world.device_serials.pop(current["serial"], None)
        world.device_serials[serial] = name
    rack_name, units = placed
    world.claim_units(name, rack_name, units)
    world.device_rows[name] = number


# --- NICs -------------------------------------------------------------------------------------------------

NIC_FIELDS = ("model", "part_number", "serial", "firmware", "guid_mac")


def _check_nic(cells: _Cells, world: _ProjectPicture, seen: dict) -> RowChange | None:
    device = cells.text("device", max_length=_max_length(Device, "name"), required=True)
    slot = cells.text("slot", max_length=_max_length(Nic, "slot"), required=True)
    wanted = {name: cells.text(name, max_length=_max_length(Nic, name)) for name in NIC_FIELDS}
    if device is None or slot is None:
        return None
    if device not in world.devices:
        cells.error("device", f'unknown device "{device}"')
        return None
    key = f"{device} {slot}"
    if _refuse_repeat(cells, seen, key, "slot", f"NIC {key}"):
        return None
    existing = world.nics.get((device, slot))
    if existing is None and not wanted["model"]:
        cells.error("model", f"required for a new NIC (the hardware model of {device} has no slot {slot})")
    serial = wanted["serial"]
    holder = world.nic_serials.get(serial) if serial else None
    if holder and holder != key:
        cells.error("serial", f'serial "{serial}" is already NIC {holder}')
    if cells.issues:
        return None
    current = {name: getattr(existing, name) for name in NIC_FIELDS} if existing else None
    change = _change("nics", key, cells, exists=existing is not None, wanted=wanted, current=current)
    change.values.update(device=device, slot=slot)
    if serial:
        if existing is not None and existing.serial:
            world.nic_serials.pop(existing.serial, None)
        world.nic_serials[serial] = key
    if existing is None:
        world.nics[(device, slot)] = Nic(slot=slot, **{k: v or "" for k, v in wanted.items()})
    return change


# --- optics -----------------------------------------------------------------------------------------------

def _check_optic(cells: _Cells, world: _ProjectPicture, seen: dict) -> RowChange | None:
    serial = cells.text("serial", max_length=_max_length(Optic, "serial"), required=True)
    wanted = {
        "vendor": cells.text("vendor", max_length=_max_length(Optic, "vendor"), required=True),
        "part_number": cells.text("part_number", max_length=_max_length(Optic, "part_number"), required=True),
        "form_factor": cells.choice("form_factor", FormFactor, required=True),
        "speed_gbps": cells.integer("speed_gbps", minimum=1, required=True),
        "status": cells.choice("status", OpticStatus),
    }
    device = cells.text("device", max_length=_max_length(Device, "name"))
    port = cells.text("port", max_length=_max_length(Port, "name"))
    if serial is None or _refuse_repeat(cells, seen, serial, "serial", f'serial "{serial}"'):
        return None
    place = _check_optic_port(cells, world, serial, device, port)
    if cells.issues:
        return None
    existing = world.optics.get(serial)
    current = _optic_values(existing) if existing else None
    if place:
        wanted["device"], wanted["port"] = place
    wanted["status"] = _optic_status(wanted["status"], place, current)
    if not _optic_status_fits_port(cells, wanted["status"], place, current):
        return None
    change = _change("optics", serial, cells, exists=existing is not None, wanted=wanted, current=current)
    if place:
        if current and current["port"]:
            world.port_optic.pop((current["device"], current["port"]), None)
        world.port_optic[place] = serial
    world.optic_rows[serial] = cells.row.number
    return change


def _optic_status(given: str | None, place: tuple | None, current: dict | None) -> str:
    """A blank status means: installed when the row puts the optic in a port, otherwise an existing
    optic's own status, and in stock for a new one."""
    if given:
        return given
    if place:
        return OpticStatus.INSTALLED
    return current["status"] if current else OpticStatus.IN_STOCK


def _optic_status_fits_port(cells: _Cells, status: str, place: tuple | None, current: dict | None) -> bool:
    """An optic is in a port exactly when it is installed. A blank device and port leave an optic where it
    is, so an import cannot take one out of its port (the API does that)."""
    in_port = place or ((current["device"], current["port"]) if current and current["port"] else None)
    if status == OpticStatus.INSTALLED and not in_port:
        cells.error("status", "an installed optic needs its device and port")
        return False
    if status != OpticStatus.INSTALLED and in_port:
        label = OpticStatus(status).label.lower()
        if place:
            message = f"an optic put in a port is installed, not {label}; leave status blank or give installed"
        else:
            message = (
                f"the optic sits in port {in_port[1]} of {in_port[0]}, so it cannot be {label}; an import "
                "cannot take it out (set its port to null through the API)"
            )
        cells.error("status", message)
        return False
    return True


def _optic_values(optic: Optic) -> dict:
    return {
        "vendor": optic.vendor, "part_number": optic.part_number, "form_factor": optic.form_factor,
        "speed_gbps": optic.speed_gbps, "status": optic.status,
        "device": optic.port.device.name if optic.port_id else None,
        "port": optic.port.name if optic.port_id else None,
    }


def _check_optic_port(cells, world, serial, device, port) -> tuple[str, str] | None:
    if not device and not port:
        return None
    if not device or not port:
        cells.error("device" if port else "port", "device and port go together: give both or neither")
        return None
    if device not in world.devices:
        cells.error("device", f'unknown device "{device}"')
        return None
    if (device, port) not in world.ports:
        cells.error("port", f'unknown port "{port}" on device {device}')
        return None
    holder = world.port_optic.get((device, port))
    if holder and holder != serial:
        holder = _with_row(holder, world.optic_rows)
        cells.error("port", f"port {port} of {device} already holds optic {holder}")
        return None
    return device, port
