"""Writes of the acceptance report: requesting a version, rendering it (snapshot, full PDF, summary PDF, Excel,
each stored with its size and SHA-256), issuing it for acceptance, the customer's decision on it (accepted,
accepted with exceptions, or rejected with comments), the signed copies, and finding which version a file
or a hash belongs to.

The states (delivery.choices.ReportState): a version is a draft until a manager issues it, which is refused
while a stage before acceptance has a failing gate no waiver covers (the refusal names each); issuing a
later version supersedes an issued one nobody decided on. Only an issued version can be signed. Accepting
passes the acceptance gate and completes the acceptance stage; rejecting leaves acceptance open (the
managers are told) and the next version may be issued.

An accepted version is final: nothing here changes it again (bar filling its signed copies once). A version
requested after it is an as-built addendum (`addendum_to`) whose report opens with the swaps and RMA moves
since the acceptance; it is never issued or signed. Rendering is long work on a job row (core.models.Job)
filled by a task (delivery.tasks), sent by name after commit.
"""

from __future__ import annotations

import hashlib
import logging
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files import File
from django.db import transaction
from django.db.models import Max, Q
from django.urls import reverse
from django.utils import timezone

from core.choices import ACTIVE_JOB_STATUSES, JobStatus
from core.jobs import enqueue_on_commit, progress_reporter
from delivery.choices import (
    ACCEPTED_REPORT_STATES,
    ACCEPTING_DECISIONS,
    DECISION_STATES,
    ISSUED_REPORT_STATES,
    SATISFIED_STAGE_STATUSES,
    NotificationKind,
    ReportDecision,
    ReportState,
)
from delivery.models import FileKind, ReportSignature, ReportVersion, Stage
from delivery.notifications.services import notification_send
from delivery.reports.acceptance import (
    acceptance_exceptions,
    changes_since,
    exception_counts,
    issue_blockers,
)
from delivery.reports.gates import ACCEPTANCE_SIGNED
from delivery.reports.sections import summary_figures
from delivery.reports.snapshot import SectionFailed, snapshot_write
from delivery.sql import report_read_consistent
from delivery.stages.services import gates_recompute, stage_complete_on_behalf, unmet_dependencies
from projects.access import Capability, can, project_role, require
from projects.choices import Role
from projects.models import Project

logger = logging.getLogger(__name__)

# Sent by name (core.jobs.enqueue_on_commit): delivery.tasks imports this module.
RENDER_TASK = "delivery.tasks.report_version_render_task"
SIGNED_COPIES_TASK = "delivery.tasks.report_signed_copies_task"

CHUNK_BYTES = 1024 * 1024  # what a file is hashed and copied by
PROGRESS_EVERY_S = 0.5  # a renderer may report every few rows: the row is updated at most this often
NAME_LENGTH = ReportSignature._meta.get_field("name").max_length
TITLE_LENGTH = ReportSignature._meta.get_field("title").max_length
STATEMENT_LENGTH = 2000
COMMENTS_LENGTH = 4000
SHA256_HEX = re.compile(r"^[0-9a-fA-F]{64}$")

STEP_SNAPSHOT, STEP_PDF, STEP_SUMMARY, STEP_EXCEL = "snapshot", "pdf", "summary pdf", "excel"
# (step, file kind, renderer name, edition) after the snapshot, in order.
RENDERS = (
    (STEP_PDF, FileKind.PDF, "pdf", "full"),
    (STEP_SUMMARY, FileKind.SUMMARY_PDF, "pdf", "summary"),
    (STEP_EXCEL, FileKind.XLSX, "xlsx", "full"),
)
SIGNED_RENDERS = (
    ("signed pdf", FileKind.SIGNED_PDF, "pdf", "full"),
    ("signed excel", FileKind.SIGNED_XLSX, "xlsx", "full"),
)


def _renderer(name: str) -> Callable:
    """The renderer of a kind of file (delivery.reports.pdf / .excel), both `(source, target, *,
    edition, signature, on_progress)`."""
    if name == "pdf":
        from delivery.reports.pdf import render_pdf

        return render_pdf
    from delivery.reports.excel import render_xlsx

    return render_xlsx


def _day(moment) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d}"


def accepted_version(project: Project) -> ReportVersion | None:
    """The project's accepted version (plainly or with exceptions), with its signature; None before one."""
    return (ReportVersion.objects.filter(project=project, state__in=ACCEPTED_REPORT_STATES)
            .select_related("signature").order_by("number").first())


def final_refusal(version: ReportVersion) -> str:
    """What every refused change of an accepted version says."""
    return f"Version {version.number} was accepted on {_day(version.signature.signed_at)}; the report is final."


def _save_version(version: ReportVersion, fields: list[str], *, user, why: str) -> None:
    """Save a change of the version's state with a history row naming who and why."""
    version._history_user, version._change_reason = user, why[:100]
    version.full_clean()
    version.save(update_fields=fields)


def _lock_project(project: Project) -> None:
    """The project's row serialises what changes its versions' states and numbers: requests (numbers in
    order), issues, decisions, whatever races."""
    Project.objects.select_for_update().filter(pk=project.pk).first()


def _locked_version(version: ReportVersion) -> ReportVersion:
    return (ReportVersion.objects.select_for_update(of=("self",))
            .select_related("project", "signature", "addendum_to", "superseded_by").get(pk=version.pk))


# --- requesting a version ----------------------------------------------------------------------------------


def _addendum_refusal(project: Project, accepted: ReportVersion) -> str:
    """Why no as-built addendum to `accepted` is to be made now ("" when one is): nothing changed since the
    acceptance, or since the latest addendum was asked for."""
    latest = ReportVersion.objects.filter(addendum_to=accepted).exclude(status=JobStatus.FAILED).order_by(
        "-number").first()
    since = latest.created_at if latest is not None else accepted.signature.signed_at
    if changes_since(project, since):
        return ""
    if latest is not None:
        return (f"{final_refusal(accepted)} Nothing changed on the floor since version {latest.number}, the "
                "latest as-built addendum, was asked for: there is no new change to add.")
    return (f"{final_refusal(accepted)} Nothing changed on the floor since (no swap, no RMA update): there is no "
            "as-built addendum to make.")


@transaction.atomic
def report_version_request(*, project: Project, user, enqueue: bool = True) -> ReportVersion:
    """A new version of the project's acceptance report (the next number), a draft rendered by a task after
    commit (`enqueue=False`: by the caller, as `manage.py build_report` does in its own process). Managers
    only (`user` None: the system); refused while another one waits in the queue.

    After a rejection (or while a version is issued) it is the next version, to issue in its place. After an
    acceptance it is an as-built addendum to the accepted version, listing the swaps and RMA moves since;
    refused when nothing changed since the acceptance (or since the latest addendum)."""
    if user is not None and not can(user, Capability.MANAGE_PROJECT, project):
        raise PermissionDenied("Only the project's managers may request a version of the acceptance report.")
    _lock_project(project)
    queued = ReportVersion.objects.filter(project=project, status=JobStatus.QUEUED).order_by("number").first()
    if queued is not None:
        raise ValidationError(f"Version {queued.number} is queued already; it will be rendered in a moment.")
    accepted = accepted_version(project)
    if accepted is not None:
        refusal = _addendum_refusal(project, accepted)
        if refusal:
            raise ValidationError(refusal)
    number = (ReportVersion.objects.filter(project=project).aggregate(n=Max("number"))["n"] or 0) + 1
    version = ReportVersion(project=project, number=number, requested_by=user, status=JobStatus.QUEUED,
                            addendum_to=accepted)
    version._history_user = user
    version.full_clean()
    version.save()
    if enqueue:
        enqueue_on_commit(RENDER_TASK, version.pk)
    return version


# --- storing a file with its hash --------------------------------------------------------------------------


class _HashingFile(File):
    """A file handed to storage that hashes what storage reads from it, in the same pass."""

    def __init__(self, file, name: str) -> None:
        super().__init__(file, name=name)
        self.sha256 = hashlib.sha256()
        self.hashed = 0

    def chunks(self, chunk_size=None):
        for chunk in super().chunks(chunk_size or CHUNK_BYTES):
            self.sha256.update(chunk)
            self.hashed += len(chunk)
            yield chunk


def sha256_of(source: IO[bytes], *, limit: int | None = None) -> tuple[str, int]:
    """The SHA-256 (hex) and size of a binary file object from its start, read in 1 MiB chunks. ValueError
    once it passes `limit` bytes (read: limit + one chunk at most)."""
    digest, size = hashlib.sha256(), 0
    if hasattr(source, "seek"):
        source.seek(0)
    while chunk := source.read(CHUNK_BYTES):
        size += len(chunk)
        if limit is not None and size > limit:
            raise ValueError(f"larger than {limit:,} bytes")
        digest.update(chunk)
    return digest.hexdigest(), size


@dataclass(frozen=True)
class Stored:
    kind: str
    name: str
    sha256: str
    size: int

    def fields(self) -> dict:
        return {f"{self.kind}_file": self.name, f"{self.kind}_sha256": self.sha256, f"{self.kind}_size": self.size}


def _store(version: ReportVersion, kind: str, rendered: IO[bytes]) -> Stored:
    """Copy a rendered temporary file into storage as `kind` of the version, hashing it on the way."""
    field = version.file_of(kind)
    # Never replace a stored file: a redelivered task's run may be racing this one, and the row may already
    # name that file with its hash. Storage picks a free name (a suffix) when this one is taken; the loser
    # of the race deletes only its own names.
    name = field.field.generate_filename(version, version.file_name(kind))
    upload = _HashingFile(rendered, name=version.file_name(kind))
    stored = field.storage.save(name, upload)
    rendered.seek(0, 2)
    size = rendered.tell()
    if upload.hashed != size:  # a storage that did not read through chunks(): hash the file itself
        digest, size = sha256_of(rendered)
    else:
        digest = upload.sha256.hexdigest()
    return Stored(kind=kind, name=stored, sha256=digest, size=size)


def _delete(version: ReportVersion, stored: list[Stored]) -> None:
    for item in stored:
        version.file_of(item.kind).storage.delete(item.name)


# --- rendering ---------------------------------------------------------------------------------------------


ProgressCallback = Callable[[str, int, int], None]  # (step, done, total), after the row was told


class _Progress:
    """Progress on the job row: rows done out of four passes over the tables (the snapshot, then each file),
    written at most every PROGRESS_EVERY_S so a renderer reporting every few rows costs few UPDATEs."""

    def __init__(self, report: Callable[..., None], on_progress: ProgressCallback | None = None) -> None:
        self._report = report
        self.on_progress = on_progress
        self.step_name = ""
        self.total = 0
        self.rows = 0  # table rows in the snapshot, known once it is written
        self.base = 0
        self.last = 0.0

    def report(self, done: int, total: int | None = None, step: str | None = None) -> None:
        self._report(done, total=total, step=step)
        self.step_name, self.total = step or self.step_name, self.total if total is None else total
        if self.on_progress:
            self.on_progress(self.step_name, done, self.total)

    def step(self, step: str, *, base: int, total: int | None = None) -> None:
        self.base = base
        self.report(base, total=total, step=step)
        self.last = time.monotonic()

    def rows_done(self, done: int) -> None:
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            self.report(self.base + (min(done, self.rows) if self.rows else done))


def _write_snapshot(version: ReportVersion, target: IO[bytes], progress_of: Callable) -> tuple[int, dict]:
    """The snapshot into `target`, and the figures the list shows, read in the same transaction."""
    with report_read_consistent(), progress_reporter(version) as report:
        progress = progress_of(report)
        progress.step(STEP_SNAPSHOT, base=0, total=0)
        written = snapshot_write(project=version.project, version=version, target=target,
                                 on_progress=progress.rows_done)
        figures = summary_figures(version.project).as_json()
    figures |= {"rows": written.rows, "sections": list(written.sections)}
    return written.rows, figures


def _render_all(version: ReportVersion, stored: list[Stored], on_progress: ProgressCallback | None) -> dict:
    """Snapshot, full PDF, summary PDF and Excel, each stored as soon as it is made; the job's fields."""

    def progress_of(report):
        return _Progress(report, on_progress)

    version.generated_at = timezone.now()
    with tempfile.TemporaryFile() as snapshot:
        rows, figures = _write_snapshot(version, snapshot, progress_of)
        stored.append(_store(version, "snapshot", snapshot))
        progress = progress_of(version.advance)
        progress.rows = rows
        passes = max(rows, 1)
        for index, (step, kind, renderer, edition) in enumerate(RENDERS, start=1):
            progress.step(step, base=index * passes, total=(len(RENDERS) + 1) * passes)
            with tempfile.TemporaryFile() as rendered:
                snapshot.seek(0)
                _renderer(renderer)(snapshot, rendered, edition=edition, signature=None,
                                    on_progress=progress.rows_done)
                stored.append(_store(version, kind, rendered))
    fields = {"generated_at": version.generated_at, "figures": figures}
    for item in stored:
        fields |= item.fields()
    return fields


def _failure(exc: Exception, what: str) -> str:
    if isinstance(exc, SectionFailed):
        return str(exc)
    return f"{what} could not be rendered ({exc.__class__.__name__}: {exc})."


def report_version_render(*, version_id: int, on_progress: ProgressCallback | None = None) -> ReportVersion | None:
    """The render task's body: claim the version, write its snapshot, render the full PDF, the summary PDF
    and the Excel workbook from it, store each with its size and SHA-256, and finish with the figures; any
    error fails the version with the reason and removes what this run stored (temporary files go with
    their context). Not one transaction: a render of the 1,024-server project takes minutes, and each file
    is stored when made.

    Safe twice: a version that is done, failed or signed is left alone; one still running (its worker was
    lost) is rendered again from the start. `on_progress(step, done, total)` hears the progress the row is told."""
    version = (ReportVersion.objects.select_related("project", "requested_by", "signature", "addendum_to__signature")
               .filter(pk=version_id).first())
    if version is None or version.status not in ACTIVE_JOB_STATUSES or version.state != ReportState.DRAFT:
        return version  # an issued or decided version is final, whatever its row says
    accepted = accepted_version(version.project)
    if accepted is not None and not version.is_addendum:
        # Queued before the customer accepted another version: the report is final now.
        version.fail(f"{final_refusal(accepted)} A version asked for now is an as-built addendum to it.")
        return version
    if not (version.start(step=STEP_SNAPSHOT) or version.status == JobStatus.RUNNING):
        return version  # another worker took it between the read and the start
    stored: list[Stored] = []
    try:
        fields = _render_all(version, stored, on_progress)
    except Exception as exc:  # whatever went wrong, the row says so rather than stay "running"
        logger.exception("report version %s failed", version.pk)
        _delete(version, stored)
        version.fail(_failure(exc, f"Version {version.number}"))
        return version
    if not version.finish(**fields):  # a second run finished first: keep the files its row names
        kept = ReportVersion.objects.filter(pk=version.pk).values(*(f"{i.kind}_file" for i in stored)).first() or {}
        _delete(version, [item for item in stored if kept.get(f"{item.kind}_file") != item.name])
        return version
    version.append_log(f"Rendered: {figures_line(fields['figures'])}.")
    what = (f"Version {version.number} of the acceptance report, the as-built addendum to version "
            f"{version.addendum_to.number}," if version.is_addendum else
            f"Version {version.number} of the acceptance report")
    _notify_report(version, NotificationKind.REPORT_READY, f"Acceptance report version {version.number} ready",
                   f"{what} is ready to read: {figures_line(fields['figures'])}.")
    return version


def _notify_report(version: ReportVersion, kind: str, subject: str, body: str) -> None:
    project = version.project
    notification_send(project=project, kind=kind, subject=subject, body=f"{project.code} ({project.name}): {body}",
                      link=reverse("reports:version", args=[project.code, version.number]))


def figures_line(figures: dict) -> str:
    return (f"{figures.get('pass', 0):,} pass, {figures.get('warn', 0):,} warn, {figures.get('fail', 0):,} fail, "
            f"{figures.get('open_punch_items', 0):,} open punch items, {figures.get('rows', 0):,} table rows")


# --- issuing for acceptance --------------------------------------------------------------------------------


def _issue_refusal(version: ReportVersion) -> list[str]:
    """Why the version may not be issued, whatever the gates say (empty: it may)."""
    number = version.number
    if version.is_addendum:
        return [f"Version {number} is an as-built addendum to version {version.addendum_to.number}: it records "
                "the changes after the acceptance, and is not issued or signed."]
    accepted = accepted_version(version.project)
    if accepted is not None:
        return [f"{final_refusal(accepted)} A version made now is an as-built addendum to it."]
    if version.state == ReportState.ISSUED:
        return [f"Version {number} is issued already (on {_day(version.issued_at)}): it waits for the customer."]
    if version.state != ReportState.DRAFT:
        return [f"Version {number} is {ReportState(version.state).label.lower()}: only a draft can be issued; "
                "generate a new version to issue."]
    if version.status != JobStatus.DONE:
        state = "failed to render" if version.status == JobStatus.FAILED else "not rendered yet"
        return [f"Version {number} is {state}: only a rendered version can be issued."]
    later = (ReportVersion.objects.filter(project=version.project, number__gt=number,
                                          state__in=ISSUED_REPORT_STATES).order_by("-number").first())
    if later is not None:
        return [f"Version {later.number}, a later one, was issued already: version {number} can no longer be "
                "issued. Generate a new version to issue."]
    return []


def _stale_refusal(version: ReportVersion) -> list[str]:
    """The version itself says stages before acceptance were not done: issuing it would ask the customer to
    sign a report that says it is not ready."""
    undone = (version.figures or {}).get("stages_unsatisfied") or []
    if not undone:
        return []
    return [f"Version {version.number} was generated while {len(undone):,} stage{'s' if len(undone) != 1 else ''} "
            f"before acceptance {'were' if len(undone) != 1 else 'was'} not done or skipped ({', '.join(undone)}): "
            "its report says the project is not ready. Complete them, then generate a new version to issue."]


def report_issue_refusal(version: ReportVersion) -> list[str]:
    """What `report_version_issue` would refuse the version with now: the version's own state, then each
    stage before acceptance whose stored gate fails with no waiver covering it, then the version's own
    report. Empty: it may be issued. For the pages, which show it beside the button."""
    refusal = _issue_refusal(version)
    if refusal:
        return refusal
    blockers = issue_blockers(version.project)
    if blockers:
        count = len(blockers)
        refusal = [f"Version {version.number} cannot be issued for acceptance yet: {count:,} stage"
                   f"{'s' if count != 1 else ''} before acceptance {'have gates' if count != 1 else 'has a gate'} "
                   "that fail with no waiver covering them. What is left:", *blockers]
    return refusal + _stale_refusal(version)


@transaction.atomic
def report_version_issue(*, version: ReportVersion, user) -> ReportVersion:
    """A manager issues a rendered draft for acceptance: the customer may then accept or reject it. Refused,
    naming what is left, while a stage before acceptance has a failing gate that no waiver covers (the gates
    as last stored), and for a version whose own report says stages were not done. An issued version that
    the customer has not decided on is superseded by this one. The customer (and the managers) are told."""
    project = version.project
    require(user, Capability.MANAGE_PROJECT, project, "Only the project's managers issue a version for acceptance.")
    _lock_project(project)
    version = _locked_version(version)
    refusal = report_issue_refusal(version)
    if refusal:
        raise ValidationError(refusal)
    now = timezone.now()
    superseded = list(ReportVersion.objects.select_for_update().filter(project=project, state=ReportState.ISSUED)
                      .exclude(pk=version.pk).order_by("number"))
    for older in superseded:  # before this one is issued: one issued version per project (a constraint)
        older.state, older.superseded_at, older.superseded_by = ReportState.SUPERSEDED, now, version
        _save_version(older, ["state", "superseded_at", "superseded_by"], user=user,
                      why=f"superseded by version {version.number}")
    version.state, version.issued_at, version.issued_by = ReportState.ISSUED, now, user
    _save_version(version, ["state", "issued_at", "issued_by"], user=user, why="issued for acceptance")
    instead = (f" It replaces version{'s' if len(superseded) > 1 else ''} "
               f"{', '.join(str(older.number) for older in superseded)}, which can no longer be signed."
               if superseded else "")
    _notify_report(version, NotificationKind.REPORT_ISSUED,
                   f"Acceptance report version {version.number} issued for acceptance",
                   f"Version {version.number} of the acceptance report is issued for acceptance by "
                   f"{_person(user)}: read it, then accept it, accept it with exceptions or reject it on its "
                   f"page.{instead}")
    return version


# --- the customer's decision -------------------------------------------------------------------------------


def _person(user) -> str:
    return (user.get_full_name() or user.get_username()) if user is not None else "the system"


def _clean_signature(*, name: str, title: str, statement: str) -> dict[str, str]:
    values = {"name": " ".join(str(name or "").split()), "title": " ".join(str(title or "").split()),
              "statement": str(statement or "").strip()}
    errors = {}
    for field, limit, say in (("name", NAME_LENGTH, "Your name as it should appear on the report."),
                              ("title", TITLE_LENGTH, "Your position at the customer."),
                              ("statement", STATEMENT_LENGTH, "The statement you sign.")):
        if not values[field]:
            errors[field] = say
        elif len(values[field]) > limit:
            errors[field] = f"At most {limit:,} characters."
    if errors:
        raise ValidationError(errors)
    return values


def _clean_comments(comments: str, *, required: str = "") -> str:
    text = str(comments or "").strip()
    if required and not text:
        raise ValidationError({"comments": required})
    if len(text) > COMMENTS_LENGTH:
        raise ValidationError({"comments": f"At most {COMMENTS_LENGTH:,} characters."})
    return text


def _refuse_signer(user, project: Project) -> None:
    role = project_role(user, project)
    if role is None:
        raise PermissionDenied("You are not a member of this project.")
    if role != Role.CUSTOMER:
        raise PermissionDenied(
            "Only the customer signs the acceptance report: a member with the customer role must sign it. "
            "Managers and staff may not sign for the customer."
        )


def report_decision_refusal(version: ReportVersion) -> str:
    """Why the customer may not decide on this version now ("" when they may: it is issued). Reads the
    project's accepted version when this one is not."""
    number = version.number
    if version.is_accepted:
        return final_refusal(version)
    accepted = accepted_version(version.project)
    if accepted is not None:
        return (f"Version {accepted.number} was accepted on {_day(accepted.signature.signed_at)}; the report is "
                f"final, so version {number} cannot be signed.")
    if version.is_addendum:
        return (f"Version {number} is an as-built addendum to version {version.addendum_to.number}: it records "
                "the changes after the acceptance, and is not signed.")
    if version.state == ReportState.ISSUED:
        return ""
    if version.state == ReportState.REJECTED:
        signature = version.signature_or_none
        when = f" on {_day(signature.signed_at)}" if signature else ""
        return (f"Version {number} was rejected{when}: only an issued version can be signed; the managers issue "
                "the next version.")
    if version.state == ReportState.SUPERSEDED:
        later = version.superseded_by
        by = f" by version {later.number}" if later is not None else ""
        return (f"Version {number} was superseded{by} on {_day(version.superseded_at)}: only an issued version "
                f"can be signed{f'; read version {later.number}' if later is not None else ''}.")
    if version.status == JobStatus.FAILED:
        return f"Version {number} failed to render: only an issued version can be signed."
    if version.status != JobStatus.DONE:
        return f"Version {number} is not rendered yet: only an issued version can be signed."
    return (f"Version {number} is a draft, not issued for acceptance: only an issued version can be signed. "
            "The managers issue a version once the stages before acceptance pass their gates or are waived.")


def _decision_open(version: ReportVersion, user) -> ReportVersion:
    """The version locked for the customer's decision (who may, then whether it waits for one), or a refusal."""
    project = version.project
    _refuse_signer(user, project)
    _lock_project(project)  # one decision per version, one acceptance per project, whatever races
    version = _locked_version(version)
    refusal = report_decision_refusal(version)
    if refusal:
        raise ValidationError(refusal)
    return version


def _signature_for(version: ReportVersion, user, values: dict, **fields) -> ReportSignature:
    signature = ReportSignature(
        version=version, signed_by=user, requested_by=user, signed_at=timezone.now(), status=JobStatus.QUEUED,
        snapshot_sha256=version.snapshot_sha256, pdf_sha256=version.pdf_sha256,
        summary_pdf_sha256=version.summary_pdf_sha256, xlsx_sha256=version.xlsx_sha256, **values, **fields,
    )
    signature.full_clean()
    signature.save()
    version.signature = signature
    return signature


@transaction.atomic
def report_version_sign(*, version: ReportVersion, user, name: str, title: str, statement: str,
                        decision: str = ReportDecision.ACCEPTED, comments: str = "") -> ReportSignature:
    """The customer accepts an issued version: who, as whom, what statement, when, and the SHA-256 of each
    original file. `decision` accepted: refused while a punch item is open or a waiver recorded (they are
    exceptions: accept with them, or reject); accepted with exceptions: the signature records every open punch
    item the customer sees, the number of internal ones and every waiver, as they stand now, and the signed
    copies list them (refused when there is none). Only a member with the customer role, on an issued
    version. The version and the report are then final; the acceptance gate passes and the acceptance stage
    completes on the signer's behalf; the signed copies are rendered by a task after commit."""
    if decision not in ACCEPTING_DECISIONS:
        raise ValidationError({"decision": "Accept, or accept with exceptions; a rejection comes with comments."})
    version = _decision_open(version, user)
    project = version.project
    values = _clean_signature(name=name, title=title, statement=statement)
    remarks = _clean_comments(comments)
    exceptions = acceptance_exceptions(project)
    counts = exception_counts(exceptions)
    if decision == ReportDecision.ACCEPTED and counts:
        raise ValidationError(f"There are {counts.text}: accept version {version.number} with exceptions, which "
                              "lists them in your signature and on the signed copy, or reject it.")
    if decision == ReportDecision.ACCEPTED_WITH_EXCEPTIONS and not counts:
        raise ValidationError(f"There is {counts.text}: accept version {version.number} without exceptions.")
    signature = _signature_for(version, user, values, decision=decision, comments=remarks,
                               exceptions=exceptions if decision == ReportDecision.ACCEPTED_WITH_EXCEPTIONS else {})
    version.state = DECISION_STATES[decision]
    _save_version(version, ["state"], user=user, why=ReportDecision(decision).label.lower())
    _acceptance_complete(project, user)
    enqueue_on_commit(SIGNED_COPIES_TASK, version.pk)
    how = "accepted" if decision == ReportDecision.ACCEPTED else f"accepted, with {counts.text} as exceptions,"
    _notify_report(version, NotificationKind.REPORT_SIGNED, f"Acceptance report version {version.number} signed",
                   f"{values['name']} ({values['title']}) signed version {version.number} of the acceptance "
                   f"report on {timezone.localtime(signature.signed_at):%Y-%m-%d %H:%M}: {how} for the customer.")
    return signature


@transaction.atomic
def report_version_reject(*, version: ReportVersion, user, name: str, title: str, comments: str) -> ReportSignature:
    """The customer rejects an issued version, saying why (`comments`, required). Acceptance stays open: the
    acceptance stage is not completed, the managers are told, and they may issue the next version. The
    rejection is recorded like a signature (who, as whom, when, the hashes of the files rejected), without
    signed copies."""
    version = _decision_open(version, user)
    values = _clean_signature(name=name, title=title, statement=rejection_statement(version))
    remarks = _clean_comments(comments, required="Say why you reject this version: the managers act on it.")
    signature = _signature_for(version, user, values, decision=ReportDecision.REJECTED, comments=remarks)
    signature.finish()  # nothing to render for a rejection
    signature.append_log("Rejected: no signed copies are made of a rejected version.")
    version.state = ReportState.REJECTED
    _save_version(version, ["state"], user=user, why="rejected")
    _notify_report(version, NotificationKind.REPORT_REJECTED,
                   f"Acceptance report version {version.number} rejected",
                   f"{values['name']} ({values['title']}) rejected version {version.number} of the acceptance "
                   f"report on {timezone.localtime(signature.signed_at):%Y-%m-%d %H:%M}. Their comments:\n\n"
                   f"{remarks}\n\nAcceptance stays open: fix what they name, then generate and issue the next "
                   "version.")
    return signature


def rejection_statement(version: ReportVersion) -> str:
    project = version.project
    return (f"On behalf of {project.customer_name}, I do not accept version {version.number} of the acceptance "
            f"report of {project.name} ({project.code}), for the reasons in my comments.")


def _acceptance_complete(project: Project, user) -> None:
    """Store the gates as they now stand (the acceptance gate passes with the signature, seen by this
    transaction), then complete the acceptance stage on the signer's behalf.

    When an earlier stage is not done or skipped, the acceptance stage cannot complete: the signature stays
    recorded and the stage waits, its stored gate passing, until a manager completes it once the stages
    before it are (stage_complete allows it then). A refusal of the completion never undoes the signature."""
    gates_recompute(project=project)
    for stage in Stage.objects.filter(project=project, gate_key=ACCEPTANCE_SIGNED).order_by("order"):
        if stage.status in SATISFIED_STAGE_STATUSES or unmet_dependencies(stage):
            continue
        try:
            with transaction.atomic():
                stage_complete_on_behalf(stage=stage, user=user)
        except ValidationError as refusal:
            logger.warning("acceptance stage of %s not completed on signing: %s", project.code, refusal.messages)


def _signature_payload(signature: ReportSignature) -> dict:
    """What the renderers fill the sign-off page with (the contract in the common brief), with the customer's
    decision, comments and the exceptions an acceptance with exceptions recorded."""
    return {"name": signature.name, "title": signature.title, "statement": signature.statement,
            "signed_at": signature.signed_at.isoformat(), "version": signature.version.number,
            "original_sha256": {"pdf": signature.pdf_sha256, "xlsx": signature.xlsx_sha256},
            "decision": signature.decision, "decision_label": ReportDecision(signature.decision).label,
            "comments": signature.comments, "exceptions": signature.exceptions or {}}


def _snapshot_copy(version: ReportVersion, target: IO[bytes]) -> None:
    """The stored snapshot copied into a temporary file, checked against the hash recorded when rendered."""
    digest = hashlib.sha256()
    with version.snapshot_file.open("rb") as stored:
        while chunk := stored.read(CHUNK_BYTES):
            digest.update(chunk)
            target.write(chunk)
    if digest.hexdigest() != version.snapshot_sha256:
        raise ValueError(f"the stored snapshot of version {version.number} does not match the SHA-256 recorded "
                         "when it was rendered")
    target.seek(0)


def report_signed_copies_render(*, version_id: int) -> ReportSignature | None:
    """The signed copies task's body: the full PDF and the workbook rendered again from the version's own
    snapshot with the signature filled in, stored in the version's signed_* fields (once: a version whose
    copies exist keeps them). Progress and failure are the signature's job row. Safe twice, like a render."""
    signature = ReportSignature.objects.select_related("version__project").filter(version_id=version_id).first()
    if signature is None or signature.status not in ACTIVE_JOB_STATUSES:
        return signature
    if signature.version.signed_pdf_sha256:  # a redelivered task: the copies were made and are recorded
        signature.finish()
        return signature
    if not (signature.start(step=SIGNED_RENDERS[0][0], total=len(SIGNED_RENDERS))
            or signature.status == JobStatus.RUNNING):
        return signature
    version = signature.version
    stored: list[Stored] = []
    try:
        with tempfile.TemporaryFile() as snapshot:
            _snapshot_copy(version, snapshot)
            for index, (step, kind, renderer, edition) in enumerate(SIGNED_RENDERS):
                signature.advance(index, step=step)
                with tempfile.TemporaryFile() as rendered:
                    snapshot.seek(0)
                    _renderer(renderer)(snapshot, rendered, edition=edition, signature=_signature_payload(signature))
                    stored.append(_store(version, kind, rendered))
    except Exception as exc:
        logger.exception("signed copies of report version %s failed", version.pk)
        _delete(version, stored)
        signature.fail(_failure(exc, f"The signed copies of version {version.number}"))
        return signature
    fields = {}
    for item in stored:
        fields |= item.fields()
    # Filled once: the signed version's only change after signing, and only while its copies are missing.
    if not ReportVersion.objects.filter(pk=version.pk, signed_pdf_sha256="").update(**fields):
        _delete(version, stored)
    signature.finish()
    return signature


# --- which version is this file? ---------------------------------------------------------------------------


def report_match_limit(project: Project) -> int:
    """The most bytes a file checked against the project's versions needs reading: the largest file they
    recorded (a larger one matches none of them), within REPORT_MATCH_MAX_BYTES. 0 before any is rendered."""
    sizes = ReportVersion.objects.filter(project=project).aggregate(
        **{kind: Max(f"{kind}_size") for kind, _ in MATCHED_KINDS})
    return min(max((size or 0 for size in sizes.values()), default=0), settings.REPORT_MATCH_MAX_BYTES)


# The stored hashes a file is matched against, and whether each is a signed copy.
MATCHED_KINDS = (
    (FileKind.PDF, False), (FileKind.SUMMARY_PDF, False), (FileKind.XLSX, False),
    (FileKind.SIGNED_PDF, True), (FileKind.SIGNED_XLSX, True),
)


@dataclass(frozen=True)
class Match:
    version: ReportVersion
    kind: str  # a FileKind
    sha256: str

    @property
    def number(self) -> int:
        return self.version.number

    @property
    def kind_label(self) -> str:
        return FileKind(self.kind).label

    @property
    def is_signed_copy(self) -> bool:
        return self.kind in (FileKind.SIGNED_PDF, FileKind.SIGNED_XLSX)

    @property
    def signature(self) -> ReportSignature | None:
        return self.version.signature_or_none

    @property
    def signed_at(self):
        return self.signature.signed_at if self.signature else None


def sha256_normalised(sha256: str) -> str:
    """A SHA-256 as given by a person (hex, any case, spaces around), or a ValidationError on `sha256`."""
    value = str(sha256 or "").strip()
    if not SHA256_HEX.match(value):
        raise ValidationError({"sha256": "A SHA-256 is 64 hexadecimal characters."})
    return value.lower()


def report_hash_match(*, project: Project, sha256: str) -> list[Match]:
    """Which of the project's versions has a file with this SHA-256, and which file (an original or a
    signed copy), with the signature where the version is signed. One query; only the project's own."""
    digest = sha256_normalised(sha256)
    condition = Q()
    for kind, _ in MATCHED_KINDS:
        condition |= Q(**{f"{kind}_sha256": digest})
    versions = (ReportVersion.objects.filter(project=project).filter(condition)
                .select_related("project", "signature").order_by("-number"))
    return [Match(version=version, kind=kind, sha256=digest)
            for version in versions for kind, _ in MATCHED_KINDS if version.sha256_of(kind) == digest]


def file_sha256(source: IO[bytes]) -> str:
    """The SHA-256 of an uploaded file, read in 1 MiB chunks; refused on `file` past REPORT_MATCH_MAX_BYTES."""
    limit = settings.REPORT_MATCH_MAX_BYTES
    try:
        digest, _ = sha256_of(source, limit=limit)
    except ValueError:
        raise ValidationError({"file": f"The file is larger than {limit:,} bytes, more than any report file: "
                                       "it is none of them."}) from None
    return digest


def report_file_match(*, project: Project, source: IO[bytes]) -> list[Match]:
    """Which of the project's versions the file is (original or signed copy): report_hash_match on its hash."""
    return report_hash_match(project=project, sha256=file_sha256(source))
