"""The report's tasks redelivered or late (acks_late: a lost worker's message comes back): a stored file the row
names is never replaced, the signed copies are made once, a version queued before the customer accepted
another never renders (a version asked for after it is an as-built addendum), and a check run still running
does not hide the failures of the one before it."""

# ruff: noqa: F811  (the fixtures imported from test_report_versions are parameters here)
from __future__ import annotations

import io

import pytest
from django.utils import timezone

from core.choices import JobStatus
from delivery.models import FileKind, ReportSignature
from delivery.reports.sections import summary_figures
from delivery.reports.services import (
    _store,
    report_match_limit,
    report_signed_copies_render,
    report_version_render,
    report_version_request,
)
from validation.choices import CheckKind
from validation.models import CheckRun

from .test_report_snapshot import satisfy_stages_before_acceptance
from .test_report_versions import hash_of, issue, render_now, sign, world  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


def test_storing_a_file_again_never_replaces_the_one_the_row_names(world, manager, render_now):
    version = render_now(world.project, manager)
    stored = _store(version, FileKind.PDF, io.BytesIO(b"%PDF- a second run's bytes"))
    assert stored.name != version.pdf_file.name
    assert hash_of(version.pdf_file) == (version.pdf_sha256, version.pdf_size)


def test_signed_copies_redelivered_keep_the_recorded_files(world, manager, customer, render_now,
                                                           django_capture_on_commit_callbacks):
    satisfy_stages_before_acceptance(world.project)
    version = issue(render_now(world.project, manager), manager)
    with django_capture_on_commit_callbacks(execute=True):
        sign(version, customer)
    version.refresh_from_db()
    recorded = (version.signed_pdf_file.name, version.signed_pdf_sha256, version.signed_xlsx_sha256)
    assert recorded[1]
    ReportSignature.objects.filter(version=version).update(status=JobStatus.QUEUED)  # the message came back
    report_signed_copies_render(version_id=version.pk)
    version.refresh_from_db()
    assert (version.signed_pdf_file.name, version.signed_pdf_sha256, version.signed_xlsx_sha256) == recorded
    assert hash_of(version.signed_pdf_file) == (version.signed_pdf_sha256, version.signed_pdf_size)
    assert ReportSignature.objects.get(version=version).status == JobStatus.DONE


def test_a_version_queued_before_another_was_accepted_fails_saying_the_report_is_final(world, manager, customer,
                                                                                       render_now):
    satisfy_stages_before_acceptance(world.project)
    first = issue(render_now(world.project, manager), manager)
    second = report_version_request(project=world.project, user=manager, enqueue=False)  # queued, not yet run
    sign(first, customer)
    report_version_render(version_id=second.pk)
    second.refresh_from_db()
    assert second.status == JobStatus.FAILED and not second.pdf_file
    assert "Version 1 was accepted on" in second.errors[0] and "the report is final" in second.errors[0]
    assert "as-built addendum" in second.errors[0]


def test_a_rerun_still_running_does_not_hide_the_failures_of_the_last_finished_run(world):
    assert summary_figures(world.project).failed == 1
    CheckRun.objects.create(project=world.project, kind=CheckKind.LINK_HEALTH, status=JobStatus.RUNNING,
                            created_at=timezone.now())
    assert summary_figures(world.project).failed == 1


def test_a_file_to_check_needs_reading_no_further_than_the_largest_recorded_file(world, manager,
                                                                                render_now):
    assert report_match_limit(world.project) == 0
    version = render_now(world.project, manager)
    largest = max(version.pdf_size, version.summary_pdf_size, version.xlsx_size)
    assert report_match_limit(world.project) == largest
