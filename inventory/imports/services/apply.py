"""Importing a file: read it, check every row against the project, and apply the whole file in one
transaction, a sheet at a time in bulk, or nothing at all."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import BinaryIO

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.utils import timezone

from core.bulk_history import bulk_create_recorded, bulk_update_recorded
from core.history import history_user
from projects.models import Project

from ...choices import ImportAction
from ...models import Device, DeviceUnit, HardwareModel, Nic, Optic, Port, Rack, Site
from ...services import devices_create_bulk
from ...services.rack_units import BULK_BATCH, DevicesRefused, device_message, units_claim_bulk
from ..columns import KINDS
from ..limits import ImportLimits
from ..reader import ImportFileError, ImportIssue, bounded_issues, read_inventory_file
from ..validation import ImportPlan, ProgressCallback, ProjectRows, RowChange, build_plan

PROJECT_CHANGED = "the project changed since the preview; upload again"


@dataclass
class ImportResult:
    """What an import did (or, for a dry run or a bad file, would do / why it did nothing). Its issues are
    bounded (IMPORT_MAX_ERRORS): past the limit, the last one says how many more there were, and
    error_count counts them all."""

    plan: ImportPlan | None = None
    issues: list[ImportIssue] = field(default_factory=list)
    applied: bool = False
    error_count: int = 0

    def __post_init__(self):
        self.error_count = max(self.error_count, len(self.issues))

    @property
    def ok(self) -> bool:
        return not self.issues

    @property
    def kinds(self) -> list[str]:
        return self.plan.kinds if self.plan else []

    def counts(self) -> dict[str, dict[str, int]]:
        return self.plan.counts() if self.plan else {}


def inventory_import(
    *,
    project: Project,
    filename: str,
    data: bytes | BinaryIO,
    kind: str | None = None,
    dry_run: bool = False,
    user=None,
    progress: ProgressCallback | None = None,
    expected_counts: dict | None = None,
    limits: ImportLimits | None = None,
) -> ImportResult:
    """Read, check every row, and unless it is a dry run or anything is wrong, apply the whole file in one
    transaction. One bad row anywhere means nothing is written. With `expected_counts` (the counts a
    preview showed), a plan that would now do something else is refused instead of applied.

    `data` is the file's bytes or a binary file open at its start; what it may unpack and read, and how
    many errors are kept, are `limits` (by default the settings' IMPORT_MAX_*, inventory.imports.limits)."""
    limits = limits or ImportLimits.from_settings(settings)
    try:
        sheets = read_inventory_file(filename, data, kind, limits=limits)
    except ImportFileError as exc:
        issues = bounded_issues(filename, exc.issues, len(exc.issues), limits.max_errors)
        return ImportResult(issues=issues, error_count=len(exc.issues))
    if dry_run:
        # Outside any transaction, so the progress the callback saves is visible while it runs.
        plan = build_plan(project, sheets, progress=progress, max_errors=limits.max_errors)
        return _planned(filename, plan, limits)
    with transaction.atomic():
        plan = build_plan(project, sheets, progress=progress, max_errors=limits.max_errors)
        result = _planned(filename, plan, limits)
        if not plan.ok:
            return result
        if expected_counts is not None and plan.counts() != expected_counts:
            result.issues, result.error_count = [ImportIssue(filename, PROJECT_CHANGED)], 1
            return result
        try:
            with transaction.atomic(), history_user(user):
                _Applier(project, user=user, reason=import_reason(filename)).apply(plan.changes)
        except _ApplyFailed as exc:
            result.issues = bounded_issues(filename, exc.issues, len(exc.issues), limits.max_errors)
            result.error_count = len(exc.issues)
            return result
        result.applied = True
        return result


def _planned(filename: str, plan: ImportPlan, limits: ImportLimits) -> ImportResult:
    issues = bounded_issues(filename, plan.issues, plan.issue_count, limits.max_errors)
    return ImportResult(plan=plan, issues=issues, error_count=plan.issue_count)


class _ApplyFailed(Exception):
    def __init__(self, issues: list[ImportIssue]):
        super().__init__("\n".join(str(issue) for issue in issues))
        self.issues = issues


class _RowRefused(Exception):
    """A row the model's own field checks refuse (what full_clean would say), with the row that said it."""

    def __init__(self, change: RowChange, error: ValidationError):
        super().__init__(str(error))
        self.change, self.error = change, error


class _RowsRefused(Exception):
    """Devices refused together (inventory.services.DevicesRefused), each message with the row of its device."""

    def __init__(self, issues: list[ImportIssue]):
        super().__init__("\n".join(str(issue) for issue in issues))
        self.issues = issues


def import_reason(filename: str) -> str:
    """What the history rows of an import say they came from (an object's history page shows it)."""
    return f"Imported from {filename}"


class _Applier(ProjectRows):
    """Writes a checked plan a sheet at a time, in bulk: the racks, the devices (updates first, so the units
    they leave are free for the new ones; then the new ones with their NICs, ports, lanes and rack units through
    inventory.services.devices_create_bulk), the NICs, the optics. Each kind costs a fixed number of queries,
    whatever its number of rows. History: a row per created or changed row, copied by the database
    (core.bulk_history), with the import's date, its user and a reason naming the file.

    The plan was checked against the project and the rows above (build_plan); here each row's fields go
    through the model's field checks again (row-numbered if refused) and the database has the last word:
    anything it refuses (a race since the check) stops the import, named on its row (_refused_row), and the
    transaction writes nothing."""

    def __init__(self, project: Project, *, user=None, reason: str = "Imported"):
        super().__init__(project)
        self.user = user
        self.recorded = {"user": user, "reason": reason, "at": timezone.now(), "batch_size": BULK_BATCH}

    def apply(self, changes: list[RowChange]) -> None:
        by_kind: dict[str, list[RowChange]] = {kind: [] for kind in KINDS}
        for change in changes:
            if change.action != ImportAction.UNCHANGED:
                by_kind[change.kind].append(change)
        for kind in KINDS:
            if not by_kind[kind]:
                continue
            try:
                with transaction.atomic():  # a savepoint: after a refusal the rows are written again one by one
                    self._write(kind, by_kind[kind])
            except _RowRefused as exc:
                raise _ApplyFailed([_issue_from_validation(exc.change, exc.error)]) from exc
            except _RowsRefused as exc:
                raise _ApplyFailed(exc.issues) from exc
            except DatabaseError as exc:
                raise _ApplyFailed([self._refused_row(kind, by_kind[kind], exc)]) from exc

    def _write(self, kind: str, changes: list[RowChange]) -> None:
        getattr(self, f"_{kind}")(changes)

    def _refused_row(self, kind: str, changes: list[RowChange], error: DatabaseError) -> ImportIssue:
        """The row the database refused when the kind's rows went in together: on this error path only, the
        rows are written again one at a time, each in a savepoint, until one is refused. The import stays all or
        nothing: the caller rolls everything back. The sheet is named when no row alone is refused."""
        self._forget_rows()  # what the refused write cached (new racks, devices) was rolled back with it
        for change in changes:
            try:
                with transaction.atomic():
                    self._write(kind, [change])
            except DatabaseError as exc:
                return change.sheet.issue(f"the database refused this row ({_database_said(exc)}; a change since "
                                          "the check?); nothing was imported", row=change.row)
            except _RowRefused as exc:
                return _issue_from_validation(exc.change, exc.error)
            except _RowsRefused as exc:
                return exc.issues[0]
        return changes[0].sheet.issue(f"the database refused the {kind} ({_database_said(error)}; a change since "
                                      "the check?); nothing was imported")

    def _forget_rows(self) -> None:
        for name in ("sites", "racks", "devices", "nics", "ports", "optics"):
            self.__dict__.pop(name, None)

    @cached_property
    def sites(self) -> dict[str, Site]:
        return {site.name: site for site in Site.objects.filter(project=self.project)}

    def _checked(self, change: RowChange, row, exclude: list[str]):
        try:
            row.clean_fields(exclude=exclude)
        except ValidationError as exc:
            raise _RowRefused(change, exc) from exc
        return row

    def _new_sites(self, changes: list[RowChange]) -> None:
        names = sorted({c.values["site"] for c in changes if "site" in c.values} - set(self.sites))
        sites = [Site(project=self.project, name=name) for name in names]
        for site, name in zip(sites, names, strict=True):
            change = next(c for c in changes if c.values.get("site") == name)
            self._checked(change, site, ["project"])
        for site in bulk_create_recorded(Site, sites, **self.recorded):
            self.sites[site.name] = site

    def _racks(self, changes: list[RowChange]) -> None:
        self._new_sites(changes)
        created, updated, fields = [], [], set()
        for change in changes:
            values = dict(change.values)
            if "site" in values:
                values["site"] = self.sites[values["site"]]
            rack = self.racks.get(change.key) if change.action == ImportAction.UPDATE else None
            if rack is None:
                rack = Rack(project=self.project, name=change.key)
                created.append(rack)
            else:
                updated.append(rack)
                fields.update(values)
            for name, value in values.items():
                setattr(rack, name, value)
            self._checked(change, rack, ["project", "site"])
        bulk_update_recorded(Rack, updated, sorted(fields), **self.recorded)
        for rack in bulk_create_recorded(Rack, created, **self.recorded):
            self.racks[rack.name] = rack

    def _devices(self, changes: list[RowChange]) -> None:
        updates = [c for c in changes if c.action == ImportAction.UPDATE]
        creates = [c for c in changes if c.action == ImportAction.CREATE]
        self._update_devices(updates)  # first: a device moved away frees its units for a new one
        self._create_devices(creates)
        for name in ("nics", "ports"):
            self.__dict__.pop(name, None)  # the new devices' NICs and ports: read again when needed

    def _device_values(self, change: RowChange) -> dict:
        values = dict(change.values)
        if values.get("rack"):
            values["rack"] = self.racks[values["rack"]]
        return values

    def _update_devices(self, changes: list[RowChange]) -> None:
        devices, fields, moved = [], set(), []
        for change in changes:
            device, values = self.devices[change.key], self._device_values(change)
            for name, value in values.items():
                setattr(device, name, value)
            self._checked(change, device, ["project", "rack", "hardware_model"])
            devices.append(device)
            fields.update(values)
            if {"rack", "position_u", "face"} & set(values):
                moved.append(device)
        bulk_update_recorded(Device, devices, sorted(fields), **self.recorded)
        if moved:
            DeviceUnit.objects.filter(device__in=[d.pk for d in moved]).delete()
            try:
                with transaction.atomic():
                    units_claim_bulk(devices=moved, at=self.recorded["at"])
            except DevicesRefused as exc:
                raise _RowsRefused(_issues_of_devices(changes, exc, column="position_u")) from exc

    def _create_devices(self, changes: list[RowChange]) -> None:
        if not changes:
            return
        models = {m.part_number: m for m in HardwareModel.objects.filter(
            part_number__in={c.values["hardware_model"] for c in changes})}
        devices = []
        for change in changes:
            values = self._device_values(change)
            values["hardware_model"] = models[values["hardware_model"]]
            devices.append(Device(project=self.project, name=change.key, **values))
        try:
            devices_create_bulk(project=self.project, devices=devices, user=self.user,
                                reason=self.recorded["reason"], at=self.recorded["at"])
        except DevicesRefused as exc:
            raise _RowsRefused(_issues_of_devices(changes, exc)) from exc
        for device in devices:
            self.devices[device.name] = device

    def _nics(self, changes: list[RowChange]) -> None:
        created, updated, fields = [], [], set()
        for change in changes:
            values = dict(change.values)
            device_name, slot = values.pop("device"), values.pop("slot")
            nic = self.nics.get((device_name, slot)) if change.action == ImportAction.UPDATE else None
            if nic is None:
                nic = Nic(device=self.devices[device_name], slot=slot)
                created.append(nic)
            else:
                updated.append(nic)
                fields.update(values)
            for name, value in values.items():
                setattr(nic, name, value)
            self._checked(change, nic, ["device"])
        bulk_update_recorded(Nic, updated, sorted(fields), **self.recorded)
        bulk_create_recorded(Nic, created, **self.recorded)

    def _optics(self, changes: list[RowChange]) -> None:
        ports = self._ports_named(changes)
        created, updated, fields = [], [], set()
        for change in changes:
            values = dict(change.values)
            device_name, port_name = values.pop("device", None), values.pop("port", None)
            optic = self.optics.get(change.key) if change.action == ImportAction.UPDATE else None
            if optic is None:
                optic = Optic(project=self.project, serial=change.key)
                created.append(optic)
            else:
                updated.append(optic)
                fields.update(values)
            if device_name:
                optic.port_id = ports[(device_name, port_name)]
                fields.add("port")
            for name, value in values.items():
                setattr(optic, name, value)
            self._checked(change, optic, ["project", "port"])
        bulk_update_recorded(Optic, updated, sorted(fields), **self.recorded)
        bulk_create_recorded(Optic, created, **self.recorded)

    def _ports_named(self, changes: list[RowChange]) -> dict[tuple[str, str], int]:
        """The ids of the ports the optics rows name, in one query (not every port of the project)."""
        devices = {c.values["device"] for c in changes if c.values.get("device")}
        if not devices:
            return {}
        ports = Port.objects.filter(device__project=self.project, device__name__in=devices)
        return {(device, name): pk for device, name, pk in ports.values_list("device__name", "name", "pk")}


def _issues_of_devices(changes: list[RowChange], refused: DevicesRefused, *, column: str = "") -> list[ImportIssue]:
    """One issue per device a bulk refusal names, on that device's row (on the sheet when it names none)."""
    rows = {change.key: change for change in changes}
    issues = []
    for name, message in refused.refusals:
        change = rows.get(name)
        if change is None:
            issues.append(changes[0].sheet.issue(device_message(name, message)))
        else:
            issues.append(change.sheet.issue(message, row=change.row, column=column))
    return issues


def _database_said(exc: DatabaseError, limit: int = 160) -> str:
    """What the database said, on one line and short enough for a page."""
    said = (str(exc).strip().splitlines() or [""])[0]
    said = said if len(said) <= limit else said[: limit - 1] + "…"
    return f"{exc.__class__.__name__}: {said}"


def _issue_from_validation(change: RowChange, exc: ValidationError) -> ImportIssue:
    if hasattr(exc, "message_dict"):
        name, messages = next(iter(exc.message_dict.items()))
        column = "" if name == "__all__" else name  # the columns are named after the model fields
        return change.sheet.issue(" ".join(messages), row=change.row, column=column)
    return change.sheet.issue(" ".join(exc.messages), row=change.row)
