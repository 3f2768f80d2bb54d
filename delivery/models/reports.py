"""Report versions and their signatures (re-exported by delivery.models).

A `ReportVersion` is one numbered acceptance report of a project: a job row (core.models.Job) that a task
fills with the frozen snapshot and the three files rendered from it (full PDF, summary PDF, Excel), each
with its size and SHA-256. The customer signs one version (`ReportSignature`, which records the hashes
of the files signed); the signed copies are rendered afterwards into the version's signed_* fields by the
signature's own job. Once a version is signed it is final: the services refuse to change it, and no new
version of the project may be requested.
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models

from core.choices import JobStatus
from core.models import Job
from projects.models import Project


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

    STATUS_LABELS: ClassVar[dict[str, str]] = {JobStatus.DONE: "Rendered"}

    class Meta:
        ordering = ["project", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="report_version_number_unique_in_project"),
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
        return self.signature_or_none is not None


class ReportSignature(Job):
    """The customer's signature on one version: who, as whom, the statement signed, when, and the SHA-256 of
    each original file signed. A job row too: its task renders the signed copies into the version's
    signed_* fields, and the page polls it."""

    version = models.OneToOneField(ReportVersion, on_delete=models.CASCADE, related_name="signature")
    signed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                                  help_text="The account that signed.")
    name = models.CharField(max_length=200, help_text="The signer's name as printed on the report.")
    title = models.CharField(max_length=200, help_text="The signer's position at the customer.")
    statement = models.TextField(help_text="What the signer declared.")
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
    def original_sha256(self) -> dict[str, str]:
        return {"pdf": self.pdf_sha256, "summary_pdf": self.summary_pdf_sha256, "xlsx": self.xlsx_sha256}
