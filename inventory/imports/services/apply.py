"""Importing a file: read it, check every row against the project, and apply the whole file in one
transaction through the inventory services, or nothing at all."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import BinaryIO

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction

from core.history import history_user
from delivery.models import Project

from ...choices import ImportAction
from ...models import HardwareModel, Nic, Optic, Port, Rack, Site
from ...services import device_create, device_update
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
                _Applier(project).apply(plan.changes)
        except _ApplyFailed as exc:
            result.issues, result.error_count = [exc.issue], 1
            return result
        result.applied = True
        return result


def _planned(filename: str, plan: ImportPlan, limits: ImportLimits) -> ImportResult:
    issues = bounded_issues(filename, plan.issues, plan.issue_count, limits.max_errors)
    return ImportResult(plan=plan, issues=issues, error_count=plan.issue_count)


class _ApplyFailed(Exception):
    def __init__(self, issue: ImportIssue):
        super().__init__(str(issue))
        self.issue = issue


class _Applier(ProjectRows):
    """Writes a checked plan row by row, in order, through the inventory services. The database still
    has the last word: anything it refuses (a race since the check) stops the import with the row."""

    def __init__(self, project: Project):
        super().__init__(project)
        self.hardware_models: dict[str, HardwareModel] = {}

    def apply(self, changes: list[RowChange]) -> None:
        for change in changes:
            if change.action == ImportAction.UNCHANGED:
                continue
            try:
                getattr(self, f"_{change.kind}")(change)
            except ValidationError as exc:
                raise _ApplyFailed(_issue_from_validation(change, exc)) from exc
            except DatabaseError as exc:
                message = f"the database refused the row ({exc.__class__.__name__}); nothing was imported"
                raise _ApplyFailed(change.sheet.issue(message, row=change.row)) from exc

    @cached_property
    def sites(self) -> dict[str, Site]:
        return {site.name: site for site in Site.objects.filter(project=self.project)}

    @cached_property
    def ports(self) -> dict[tuple[str, str], Port]:
        ports = Port.objects.filter(device__project=self.project).select_related("device")
        return {(port.device.name, port.name): port for port in ports}

    def hardware_model(self, part_number: str) -> HardwareModel:
        """Loaded once per model with its templates, so creating many devices of it costs no extra reads."""
        if part_number not in self.hardware_models:
            self.hardware_models[part_number] = HardwareModel.objects.prefetch_related(
                "nic_templates", "port_templates__nic_template"
            ).get(part_number=part_number)
        return self.hardware_models[part_number]

    def site(self, name: str) -> Site:
        if name not in self.sites:
            site = Site(project=self.project, name=name)
            site.full_clean()
            site.save()
            self.sites[name] = site
        return self.sites[name]

    def _racks(self, change: RowChange) -> None:
        values = dict(change.values)
        if "site" in values:
            values["site"] = self.site(values["site"])
        rack = self.racks.get(change.key) or Rack(project=self.project, name=change.key)
        for name, value in values.items():
            setattr(rack, name, value)
        rack.full_clean()
        rack.save()
        self.racks[rack.name] = rack

    def _devices(self, change: RowChange) -> None:
        values = dict(change.values)
        if values.get("rack"):
            values["rack"] = self.racks[values["rack"]]
        if change.key in self.devices:
            device_update(device=self.devices[change.key], **values)
            return
        values["hardware_model"] = self.hardware_model(values["hardware_model"])
        self.devices[change.key] = device_create(project=self.project, name=change.key, **values)
        if "nics" in self.__dict__:
            del self.nics  # the new device's template NICs must be seen by the NIC rows
        if "ports" in self.__dict__:
            del self.ports

    def _nics(self, change: RowChange) -> None:
        values = dict(change.values)
        device_name, slot = values.pop("device"), values.pop("slot")
        nic = self.nics.get((device_name, slot)) or Nic(device=self.devices[device_name], slot=slot)
        for name, value in values.items():
            setattr(nic, name, value)
        nic.full_clean()
        nic.save()
        self.nics[(device_name, slot)] = nic

    def _optics(self, change: RowChange) -> None:
        values = dict(change.values)
        device_name, port_name = values.pop("device", None), values.pop("port", None)
        optic = self.optics.get(change.key) or Optic(project=self.project, serial=change.key)
        if device_name:
            optic.port = self.ports[(device_name, port_name)]
        for name, value in values.items():
            setattr(optic, name, value)
        optic.full_clean()
        optic.save()
        self.optics[optic.serial] = optic


def _issue_from_validation(change: RowChange, exc: ValidationError) -> ImportIssue:
    if hasattr(exc, "message_dict"):
        name, messages = next(iter(exc.message_dict.items()))
        column = "" if name == "__all__" else name  # the columns are named after the model fields
        return change.sheet.issue(" ".join(messages), row=change.row, column=column)
    return change.sheet.issue(" ".join(exc.messages), row=change.row)
