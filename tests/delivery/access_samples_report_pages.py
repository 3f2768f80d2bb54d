"""The access matrix's samples for the acceptance report pages (tests/access_world.py): one rendered version
with its files, so every member's read of the version, its sign form and its downloads is the 200 the matrix
expects (issuing it is the managers' write). Signing or rejecting it, checking files and each role's view are
tests/delivery/test_report_pages.py's."""

from __future__ import annotations

import hashlib

from django.core.files.base import ContentFile
from django.utils import timezone

from core.choices import JobStatus
from delivery.models import ORIGINAL_FILE_KINDS, ReportVersion
from delivery.reports.sections import NOT_READY


def stand_in_bytes(version: ReportVersion, kind: str) -> bytes:
    """What a stand-in file of the version holds: distinct per project, version and kind."""
    return f"stand-in {kind} of {version.project.code} acceptance report v{version.number}\n".encode()


def rendered_version(project, *, number: int = 1, requested_by=None, figures: dict | None = None) -> ReportVersion:
    """A version as a finished render leaves it: done, its three original files stored with their sizes and
    SHA-256. The files are small stand-ins (the pages serve and hash bytes; rendering is the renderers' tests'),
    so a list of many versions costs no rendering."""
    now = timezone.now()
    version = ReportVersion.objects.create(
        project=project, number=number, status=JobStatus.DONE, requested_by=requested_by, generated_at=now,
        started_at=now, finished_at=now, progress_total=4, progress_done=4,
        figures=figures if figures is not None else {
            "pass": 40, "warn": 2, "fail": 1, "error": 0, "open_punch_items": 3, "waivers": 0,
            "verdict": NOT_READY, "rows": 120, "sections": ["summary", "inventory", "punch", "signoff"],
        },
    )
    for kind in ORIGINAL_FILE_KINDS:
        data = stand_in_bytes(version, kind)
        version.file_of(kind).save(version.file_name(kind), ContentFile(data), save=False)
        setattr(version, f"{kind}_sha256", hashlib.sha256(data).hexdigest())
        setattr(version, f"{kind}_size", len(data))
    version.save()
    return version


def samples(project) -> dict[str, dict]:
    # The API's samples (access_samples_report_api.py) may have rendered the project's version 1 already.
    version = ReportVersion.objects.filter(project=project).order_by("number").first() or rendered_version(project)
    one = {"number": version.number}
    return {"reports:version": one, "reports:sign": one, "reports:reject": one, "reports:issue": one,
            "reports:file": {**one, "kind": "pdf"}}
