"""Writes of the bulk import: applying a checked file all-or-nothing, and the life of an ImportJob
(upload -> preview by a task -> confirm -> apply by a task)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property

from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.utils import timezone

from core.history import history_user
from delivery.models import Project

from ..choices import ImportAction, ImportJobStatus
from ..models import Device, HardwareModel, ImportJob, Nic, Optic, Port, Rack, Site
from ..services import device_create, device_update
from .reader import ImportFileError, ImportIssue, read_inventory_file
from .validation import ImportPlan, ProgressCallback, RowChange, build_plan

logger = logging.getLogger(__name__)

PROJECT_CHANGED = "the project changed since the preview; upload again"
UNEXPECTED_ERROR = (
    "the file could not be processed because of an unexpected error (logged for the administrators); "
    "nothing was imported"
)


@dataclass
class ImportResult:
    """What an import did (or, for a dry run or a bad file, would do / why it did nothing)."""

    plan: ImportPlan | None = None
    issues: list[ImportIssue] = field(default_factory=list)
    applied: bool = False

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
    data: bytes,
    kind: str | None = None,
    dry_run: bool = False,
    user=None,
    progress: ProgressCallback | None = None,
    expected_counts: dict | None = None,
) -> ImportResult:
    """Read, check every row, and unless it is a dry run or anything is wrong, apply the whole file in one
    transaction. One bad row anywhere means nothing is written. With `expected_counts` (the counts a
    preview showed), a plan that would now do something else is refused instead of applied."""
    try:
        sheets = read_inventory_file(filename, data, kind)
    except ImportFileError as exc:
        return ImportResult(issues=exc.issues)
    if dry_run:
        # Outside any transaction, so the progress the callback saves is visible while it runs.
        plan = build_plan(project, sheets, progress=progress)
        return ImportResult(plan=plan, issues=list(plan.issues))
    with transaction.atomic():
        plan = build_plan(project, sheets, progress=progress)
        result = ImportResult(plan=plan, issues=list(plan.issues))
        if plan.issues:
            return result
        if expected_counts is not None and plan.counts() != expected_counts:
            result.issues = [ImportIssue(filename, PROJECT_CHANGED)]
            return result
        try:
            with transaction.atomic(), history_user(user):
                _Applier(project).apply(plan.changes)
        except _ApplyFailed as exc:
            result.issues = [exc.issue]
            return result
        result.applied = True
        return result


class _ApplyFailed(Exception):
    def __init__(self, issue: ImportIssue):
        super().__init__(str(issue))
        self.issue = issue


class _Applier:
    """Writes a checked plan row by row, in order, through the inventory services. The database still
    has the last word: anything it refuses (a race since the check) stops the import with the row."""

    def __init__(self, project: Project):
        self.project = project
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
    def racks(self) -> dict[str, Rack]:
        return {rack.name: rack for rack in Rack.objects.filter(project=self.project).select_related("site")}

    @cached_property
    def devices(self) -> dict[str, Device]:
        devices = Device.objects.filter(project=self.project).select_related("hardware_model", "rack")
        return {device.name: device for device in devices}

    @cached_property
    def nics(self) -> dict[tuple[str, str], Nic]:
        nics = Nic.objects.filter(device__project=self.project).select_related("device")
        return {(nic.device.name, nic.slot): nic for nic in nics}

    @cached_property
    def ports(self) -> dict[tuple[str, str], Port]:
        ports = Port.objects.filter(device__project=self.project).select_related("device")
        return {(port.device.name, port.name): port for port in ports}

    @cached_property
    def optics(self) -> dict[str, Optic]:
        return {optic.serial: optic for optic in Optic.objects.filter(project=self.project)}

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


# --- the ImportJob ------------------------------------------------------------------------------------------

@transaction.atomic
def import_job_create(*, project: Project, user, upload, kind: str = "") -> ImportJob:
    """Keep the uploaded file (whatever it holds) on a new job and queue its preview."""
    from ..tasks import preview_import_job

    job = ImportJob(project=project, created_by=user, original_name=upload.name[:255], kind=kind or "")
    job.file.save(upload.name, upload, save=False)
    job.full_clean()
    job.save()
    preview_import_job.delay_on_commit(job.pk)
    return job


def import_job_preview(*, job_id: int) -> ImportJob:
    """Check the job's file as a dry run and store the preview (or the errors). Safe to run twice: a job
    that already has its preview, or has been confirmed, is left alone."""
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.status not in (ImportJobStatus.QUEUED, ImportJobStatus.RUNNING) or job.confirmed_at:
        return job
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJobStatus.RUNNING, updated_at=timezone.now())
    try:
        result = _run_job(job, dry_run=True, progress=_progress_saver(job.pk))
    except Exception:  # noqa: BLE001 - whatever went wrong, the job must end rather than stay "running"
        result = _unexpected_failure(job, "preview")
    job.status = ImportJobStatus.PREVIEW if result.ok else ImportJobStatus.FAILED
    _store_result(job, result)
    return job


@transaction.atomic
def import_job_confirm(*, job: ImportJob, user) -> ImportJob:
    """Queue the apply of a previewed job; only a job waiting for confirmation can be confirmed (once)."""
    from ..tasks import apply_import_job

    now = timezone.now()
    waiting = ImportJob.objects.filter(pk=job.pk, status=ImportJobStatus.PREVIEW, confirmed_at__isnull=True)
    claimed = waiting.update(
        status=ImportJobStatus.QUEUED, confirmed_at=now, confirmed_by=user, progress_done=0, updated_at=now
    )
    if not claimed:
        raise ValidationError("This import is not waiting for confirmation.")
    apply_import_job.delay_on_commit(job.pk)
    job.refresh_from_db()
    return job


def import_job_apply(*, job_id: int) -> ImportJob:
    """Check the file again against the project as it is now and apply it, in one transaction with the
    job's final status. Safe to run twice: the job row is locked and an applied job is left alone."""
    job = ImportJob.objects.get(pk=job_id)
    if job.confirmed_at is None or job.status in (ImportJobStatus.APPLIED, ImportJobStatus.FAILED):
        return job
    ImportJob.objects.filter(pk=job.pk, status=ImportJobStatus.QUEUED).update(
        status=ImportJobStatus.RUNNING, updated_at=timezone.now()
    )
    with transaction.atomic():
        job = ImportJob.objects.select_for_update(of=("self",)).select_related("project").get(pk=job_id)
        if job.status in (ImportJobStatus.APPLIED, ImportJobStatus.FAILED):
            return job
        expected = (job.summary or {}).get("counts")
        try:
            with transaction.atomic():  # a savepoint: an error inside leaves this transaction usable
                result = _run_job(job, dry_run=False, user=job.confirmed_by, expected_counts=expected)
        except Exception:  # noqa: BLE001 - whatever went wrong, the job must end rather than stay "running"
            result = _unexpected_failure(job, "apply")
        job.status = ImportJobStatus.APPLIED if result.applied else ImportJobStatus.FAILED
        _store_result(job, result)
    return job


def _unexpected_failure(job: ImportJob, step: str) -> ImportResult:
    """A bug or a file nobody foresaw: log it with its traceback, and tell the user without details."""
    logger.exception("import job %s (%s): the %s failed unexpectedly", job.pk, job.original_name, step)
    return ImportResult(issues=[ImportIssue(job.original_name, UNEXPECTED_ERROR)])


def _run_job(
    job: ImportJob, *, dry_run: bool, user=None, progress=None, expected_counts: dict | None = None
) -> ImportResult:
    try:
        with job.file.open("rb") as handle:
            data = handle.read()
    except OSError:
        return ImportResult(issues=[ImportIssue(job.original_name, "the uploaded file is no longer stored")])
    return inventory_import(
        project=job.project, filename=job.original_name, data=data, kind=job.kind or None, dry_run=dry_run,
        user=user, progress=progress, expected_counts=expected_counts,
    )


def _progress_saver(job_id: int) -> ProgressCallback:
    """Progress goes straight to the row (outside any transaction) so the page's poller sees it move."""

    def save(done: int, total: int) -> None:
        ImportJob.objects.filter(pk=job_id).update(progress_done=done, progress_total=total)

    return save


def _store_result(job: ImportJob, result: ImportResult) -> None:
    total = sum(len(sheet.rows) for sheet in result.plan.sheets) if result.plan else 0
    job.kinds = result.kinds
    job.errors = [issue.as_dict() for issue in result.issues]
    job.summary = result.plan.summary() if result.plan and result.ok else {}  # counts of a failed file mislead
    job.progress_done = job.progress_total = total
    job.finished_at = timezone.now()
    job.save()
