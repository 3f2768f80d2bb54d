"""An acceptance report version rendered through Redis by a real Celery worker, then issued, signed and its signed
copies rendered the same way: the request's transaction commits, the task travels the broker, the worker
writes the files and the row, and the row is all a page polls.

Runs when CELERY_BROKER_URL is set (skipped otherwise; a failure under REQUIRE_SERVICES=1). The worker is
celery.contrib.testing's embedded worker in a thread of this process, sharing the test database; it
consumes a queue named for this test only.
"""

import hashlib

import pytest

from bringup.celery import app
from core.choices import JobStatus
from delivery.choices import ReportDecision
from delivery.models import FileKind, ReportSignature, ReportVersion
from delivery.reports.services import report_version_issue, report_version_request, report_version_sign
from tests.support import wait_for_job

from .delivery.test_report_snapshot import report_world, satisfy_stages_before_acceptance

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 120


def _hash(field) -> str:
    with field.open("rb") as stored:
        return hashlib.sha256(stored.read()).hexdigest()


@pytest.fixture
def world(project, manager, customer):
    """Built before the worker starts (its stages' first gate recompute runs in place), so the test's writes
    and the worker's never meet on SQLite."""
    world = report_world(project)
    satisfy_stages_before_acceptance(project)  # so the version may be issued
    return world


def test_a_version_is_rendered_and_its_signed_copies_made_by_a_real_worker(world, real_celery_worker, project,
                                                                           manager, customer):
    assert not app.conf.task_always_eager
    version = report_version_request(project=project, user=manager)  # enqueued on commit
    version = wait_for_job(ReportVersion, version.pk, seconds=WAIT_SECONDS)
    assert version.status == JobStatus.DONE, version.errors
    for kind in ("snapshot", FileKind.PDF, FileKind.SUMMARY_PDF, FileKind.XLSX):
        assert _hash(version.file_of(kind)) == version.sha256_of(kind), kind
    assert version.figures["fail"] == 1 and version.progress_done == version.progress_total > 0

    report_version_issue(version=version, user=manager)
    signature = report_version_sign(version=version, user=customer, name="Cara Customer", title="CTO",
                                    statement="Accepted.", decision=ReportDecision.ACCEPTED_WITH_EXCEPTIONS)
    signature = wait_for_job(ReportSignature, signature.pk, seconds=WAIT_SECONDS)
    assert signature.status == JobStatus.DONE, signature.errors
    version.refresh_from_db()
    assert _hash(version.signed_pdf_file) == version.signed_pdf_sha256
    assert _hash(version.signed_xlsx_file) == version.signed_xlsx_sha256
