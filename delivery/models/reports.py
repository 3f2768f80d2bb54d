"""Report versions and the customer's decisions on them (re-exported by delivery.models).

A `ReportVersion` is one numbered acceptance report of a project: a job row (core.models.Job) that a task
fills with the frozen snapshot and the three files rendered from it (full PDF, summary PDF, Excel), each
with its size and SHA-256. Its `state` says where it stands with the customer (delivery.choices.ReportState):
a draft until a manager issues it for acceptance; then the customer accepts it (plainly or with exceptions)
or rejects it with comments (`ReportSignature`, which records the decision, the hashes of the files decided
on and, for an acceptance with exceptions, every open punch item and waiver); an issued version nobody
decided on is superseded when a later one is issued. The signed copies of an accepted version are rendered
afterwards into its signed_* fields by the signature's own job.

An accepted version is final: the services refuse to change it, and a version made after it is an as-built
addendum (`addendum_to`) listing what changed since.
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from core.choices import JobStatus
from core.models import Job
from delivery.choices import ACCEPTED_REPORT_STATES, ACCEPTING_DECISIONS, ReportDecision, ReportState
from projects.models import Project

_PERSON = {"on_delete": models.SET_NULL, "null": True, "blank": True, "related_name": "+"}


class FileKind(models.TextChoices):
    """The files of a version: the originals rendered from the snapshot, and the copies made after signing."""

    PDF = "pdf", "Full PDF"
    SUMMARY_PDF = "summary_pdf", "Summary PDF"
    XLSX = "xlsx", "Excel workbook"
    SIGNED_PDF = "signed_pdf", "Signed PDF"
    SIGNED_XLSX = "signed_xlsx", "Signed Excel workbook"


ORIGINAL_FILE_KINDS = (FileKind.PDF, FileKind.SUMMARY_PDF, FileKind.XLSX)
SIGNED_FILE_KINDS = (FileKind.SIGNED_PDF, FileKind.SIGNED_XLSX)
FILE_KINDS = (*ORIGINAL_FILE_KINDS, *SIGNED_FILE_KINDS)

# What each file is called: <CODE>-acceptance-v<N><suffix>.
FILE_SUFFIXES = {
    FileKind.PDF: ".pdf",
    FileKind.SUMMARY_PDF: "-summary.pdf",
    FileKind.XLSX: ".xlsx",
    FileKind.SIGNED_PDF: "-signed.pdf",
    FileKind.SIGNED_XLSX: "-signed.xlsx",
    "snapshot": "-snapshot.jsonl.gz",
}
PDF_CONTENT_TYPE = "application/pdf"
XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CONTENT_TYPES = {
    FileKind.PDF: PDF_CONTENT_TYPE,
    FileKind.SUMMARY_PDF: PDF_CONTENT_TYPE,
    FileKind.SIGNED_PDF: PDF_CONTENT_TYPE,
    FileKind.XLSX: XLSX_CONTENT_TYPE,
    FileKind.SIGNED_XLSX: XLSX_CONTENT_TYPE,
}


def report_file_path(version: ReportVersion, filename: str) -> str:
    """Every file of a project's reports sits under MEDIA_ROOT/reports/<code>/."""
    return f"reports/{version.project.code}/{filename}"


def _file_field(what: str) -> models.FileField:
    return models.FileField(upload_to=report_file_path, max_length=300, blank=True, help_text=what)


def _sha256_field() -> models.CharField:
    return models.CharField(max_length=64, blank=True, help_text="SHA-256 of the file, hex.")


def _size_field() -> models.PositiveBigIntegerField:
    return models.PositiveBigIntegerField(null=True, blank=True, help_text="In bytes.")


class ReportVersion(Job):
    """One numbered acceptance report of a project, rendered by a task from a snapshot frozen at render time."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="report_versions")
    number = models.PositiveIntegerField(validators=[MinValueValidator(1)], help_text="1, 2, 3... per project.")
    report_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False,
                                 help_text="Printed on every page: which report a sheet of paper belongs to.")
    generated_at = models.DateTimeField(null=True, blank=True, help_text="When the snapshot was taken.")
    snapshot_file = _file_field("The frozen snapshot (gzip JSON lines) the files are rendered from.")
    snapshot_sha256 = _sha256_field()
    snapshot_size = _size_field()
    figures = models.JSONField(
        default=dict, blank=True,
        help_text='What the list shows: {"pass", "warn", "fail", "error", "open_punch_items", "verdict", ...}.',
    )
    pdf_file = _file_field("The full PDF.")
    pdf_sha256 = _sha256_field()
    pdf_size = _size_field()
    summary_pdf_file = _file_field("The summary PDF (each table's first rows).")
    summary_pdf_sha256 = _sha256_field()
    summary_pdf_size = _size_field()
    xlsx_file = _file_field("The Excel workbook.")
    xlsx_sha256 = _sha256_field()
    xlsx_size = _size_field()
    signed_pdf_file = _file_field("The full PDF with the signature filled in.")
    signed_pdf_sha256 = _sha256_field()
    signed_pdf_size = _size_field()
    signed_xlsx_file = _file_field("The Excel workbook with the signature filled in.")
    signed_xlsx_sha256 = _sha256_field()
    signed_xlsx_size = _size_field()
    state = models.CharField(max_length=30, choices=ReportState.choices, default=ReportState.DRAFT,
                             help_text="Where it stands with the customer (the job's status says how it rendered).")
    issued_at = models.DateTimeField(null=True, blank=True, help_text="When a manager issued it for acceptance.")
    issued_by = models.ForeignKey(settings.AUTH_USER_MODEL, **_PERSON)
    superseded_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey("self", **_PERSON, help_text="The later version issued in its place.")
    addendum_to = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="addenda",
        help_text="An as-built addendum: the accepted version it adds the changes since acceptance to.",
    )

    # The state's changes (issued, superseded, decided) are saved rows; the job's progress is not recorded.
    history = HistoricalRecords(excluded_fields=["log", "progress_done", "progress_total", "progress_step"])

    STATUS_LABELS: ClassVar[dict[str, str]] = {JobStatus.DONE: "Rendered"}

    class Meta:
        ordering = ["project", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="report_version_number_unique_in_project"),
            # Whatever races: one version waits for the customer's decision, one is the accepted report.
            models.UniqueConstraint(fields=["project"], condition=Q(state=ReportState.ISSUED),
                                    name="report_version_one_issued_per_project",
                                    violation_error_message="Another version of this report is issued already."),
            models.UniqueConstraint(fields=["project"], condition=Q(state__in=sorted(ACCEPTED_REPORT_STATES)),
                                    name="report_version_one_accepted_per_project",
                                    violation_error_message="Another version of this report is accepted already."),
            models.CheckConstraint(condition=Q(addendum_to__isnull=True) | Q(state=ReportState.DRAFT),
                                   name="report_addendum_is_never_issued",
                                   violation_error_message="An as-built addendum is not issued or signed."),
        ]

    def __str__(self) -> str:
        return f"{self.project.code} acceptance report v{self.number}"

    @property
    def base_name(self) -> str:
        return f"{self.project.code}-acceptance-v{self.number}"

    def file_name(self, kind: str) -> str:
        """The name a file of this version is stored and downloaded under."""
        return self.base_name + FILE_SUFFIXES[kind]

    def file_of(self, kind: str):
        return getattr(self, f"{kind}_file")

    def sha256_of(self, kind: str) -> str:
        return getattr(self, f"{kind}_sha256")

    def size_of(self, kind: str) -> int | None:
        return getattr(self, f"{kind}_size")

    def has_file(self, kind: str) -> bool:
        return bool(self.file_of(kind)) and bool(self.sha256_of(kind))

    @property
    def signature_or_none(self) -> ReportSignature | None:
        """The signature, or None (without a query when it was fetched with select_related)."""
        try:
            return self.signature
        except ReportSignature.DoesNotExist:
            return None

    @property
    def is_signed(self) -> bool:
        """Accepted by the customer (plainly or with exceptions): the signature that makes the report final."""
        return self.state in ACCEPTED_REPORT_STATES

    @property
    def is_accepted(self) -> bool:
        return self.state in ACCEPTED_REPORT_STATES

    @property
    def is_addendum(self) -> bool:
        return self.addendum_to_id is not None

    @property
    def state_label(self) -> str:
        if self.is_addendum:
            return "As-built addendum"
        return ReportState(self.state).label

    def clean(self):
        addendum = self.addendum_to
        if addendum is not None and (addendum.project_id != self.project_id or not addendum.is_accepted):
            raise ValidationError({"addendum_to": "An as-built addendum adds to the project's accepted version."})


class ReportSignature(Job):
    """The customer's decision on one issued version, signed: accepted, accepted with exceptions (`exceptions`:
    every open punch item the customer sees, a count of the internal ones, and every waiver, as they stood
    when signed) or rejected (`comments` say why); who, as whom, the statement signed, when, and the SHA-256
    of each original file. A job row too: for an acceptance its task renders the signed copies into the
    version's signed_* fields, and the page polls it; a rejection has no copies and is done at once."""

    version = models.OneToOneField(ReportVersion, on_delete=models.CASCADE, related_name="signature")
    signed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                                  help_text="The account that signed.")
    name = models.CharField(max_length=200, help_text="The signer's name as printed on the report.")
    title = models.CharField(max_length=200, help_text="The signer's position at the customer.")
    statement = models.TextField(help_text="What the signer declared.")
    decision = models.CharField(max_length=30, choices=ReportDecision.choices, default=ReportDecision.ACCEPTED)
    comments = models.TextField(blank=True, help_text="The customer's comments: why they reject, or on the exceptions.")
    exceptions = models.JSONField(default=dict, blank=True, help_text=(
        'An acceptance with exceptions: {"punch_items": [{"id", "title", "severity", "status", "object", ...}], '
        '"internal_punch_items": <count>, "waivers": [{"stage", "items", "reason", "recorded_by", ...}]}.'
    ))
    signed_at = models.DateTimeField()
    snapshot_sha256 = _sha256_field()
    pdf_sha256 = _sha256_field()
    summary_pdf_sha256 = _sha256_field()
    xlsx_sha256 = _sha256_field()

    project_path: ClassVar[str] = "version__project"
    STATUS_LABELS: ClassVar[dict[str, str]] = {JobStatus.DONE: "Signed copies ready"}

    class Meta:
        ordering = ["-signed_at", "-id"]

    def __str__(self) -> str:
        return f"Signature of {self.version} by {self.name}"

    @property
    def is_acceptance(self) -> bool:
        return self.decision in ACCEPTING_DECISIONS

    @property
    def has_exceptions(self) -> bool:
        return self.decision == ReportDecision.ACCEPTED_WITH_EXCEPTIONS

    @property
    def is_rejection(self) -> bool:
        return self.decision == ReportDecision.REJECTED

    @property
    def original_sha256(self) -> dict[str, str]:
        return {"pdf": self.pdf_sha256, "summary_pdf": self.summary_pdf_sha256, "xlsx": self.xlsx_sha256}
