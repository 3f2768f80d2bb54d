"""The access matrix's samples for the acceptance report's API (tests/access_world.py): one rendered version
of the project, with its three files. The files' bytes are stand-ins (what the renderers make is
tests/delivery/test_report_versions.py's business); the matrix only needs the rows and files to exist.

Signing, rejecting and checking a file are customers' acts too, which the matrix's "a customer writes nothing" cannot
say: they are in its EXEMPT list, and tests/delivery/test_report_api.py holds every role to them."""

from __future__ import annotations

import hashlib

from django.core.files.base import ContentFile
from django.utils import timezone

from core.choices import JobStatus
from delivery.models import ORIGINAL_FILE_KINDS, ReportVersion


def rendered_version(project, *, number: int = 1, user=None) -> ReportVersion:
    """A version marked rendered, its files holding a few distinct bytes each, hashes and sizes recorded."""
    version = ReportVersion.objects.create(project=project, number=number, requested_by=user,
                                           status=JobStatus.DONE, generated_at=timezone.now(),
                                           finished_at=timezone.now(), figures={"pass": 1, "verdict": "ready"})
    for kind in ("snapshot", *ORIGINAL_FILE_KINDS):
        content = f"{project.code} v{number} {kind}".encode()
        version.file_of(kind).save(version.file_name(kind), ContentFile(content), save=False)
        setattr(version, f"{kind}_sha256", hashlib.sha256(content).hexdigest())
        setattr(version, f"{kind}_size", len(content))
    version.save()
    return version


def samples(project) -> dict[str, dict]:
    version = rendered_version(project)
    one = {"pk": version.pk}
    return {
        "api:report-version-detail": one,
        "api:report-version-sign": one,
        "api:report-version-issue": one,
        "api:report-version-reject": one,
        "api:report-version-file": {"pk": version.pk, "kind": "pdf"},
    }
