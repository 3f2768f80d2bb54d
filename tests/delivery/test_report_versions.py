"""Report versions (delivery/reports/services.py) rendered for real: numbered per project, three files
whose recorded SHA-256 and sizes are the files', a snapshot frozen at render time (the database changes,
a re-render from the stored snapshot gives the same bytes), a failure that leaves no file behind, and
the customer's signature on an issued version: customer only, once, final, the acceptance gate passing and
its stage completing, signed copies that quote the originals' hashes. A file is matched to its version, a
file one byte changed to none. `manage.py build_report` renders in its own process. (Issuing, the decisions
and the as-built addendum: test_report_signoff.py.)"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from openpyxl import load_workbook

from core.choices import JobStatus
from delivery.choices import ReportDecision, ReportState, StageStatus
from delivery.models import FileKind, PunchItem, ReportSignature, ReportVersion, Stage
from delivery.reports import snapshot as snapshot_module
from delivery.reports.excel import render_xlsx
from delivery.reports.pdf import render_pdf
from delivery.reports.services import (
    report_file_match,
    report_hash_match,
    report_version_issue,
    report_version_render,
    report_version_request,
    report_version_sign,
)
from delivery.stages.services import gates_recompute
from projects.choices import Role
from projects.reports import read_snapshot
from tests.factories import MembershipFactory, UserFactory

from .test_report_snapshot import report_world, satisfy_stages_before_acceptance

pytestmark = pytest.mark.django_db

STATEMENT = "We accept the cluster as delivered."


@pytest.fixture
def world(project, manager, technician, customer):
    return report_world(project)


@pytest.fixture
def render_now(django_capture_on_commit_callbacks):
    """Request a version and run its task as the commit would (eager Celery, in this process)."""

    def request(project, user) -> ReportVersion:
        with django_capture_on_commit_callbacks(execute=True):
            version = report_version_request(project=project, user=user)
        version.refresh_from_db()
        return version

    return request


def hash_of(field) -> tuple[str, int]:
    with field.open("rb") as stored:
        content = stored.read()
    return hashlib.sha256(content).hexdigest(), len(content)


def issue(version, manager) -> ReportVersion:
    """A manager issues the version for acceptance (its stages before acceptance satisfied, or none computed)."""
    return report_version_issue(version=version, user=manager)


def sign(version, user, **overrides):
    """The customer accepts: with exceptions by default, the report world having open punch items."""
    values = {"name": "Cara Customer", "title": "CTO", "statement": STATEMENT,
              "decision": ReportDecision.ACCEPTED_WITH_EXCEPTIONS} | overrides
    return report_version_sign(version=version, user=user, **values)


# --- rendering ---------------------------------------------------------------------------------------------


def test_versions_are_numbered_per_project_and_render_three_files_whose_hashes_are_recorded(
        world, manager, render_now, settings, other_project):
    first = render_now(world.project, manager)
    assert first.status == JobStatus.DONE, first.errors
    second = render_now(world.project, manager)
    assert (first.number, second.number) == (1, 2)
    other_manager = UserFactory(username="other-mgr")
    MembershipFactory(user=other_manager, project=other_project, role=Role.MANAGER)
    assert render_now(other_project, other_manager).number == 1

    names = {"snapshot": "-snapshot.jsonl.gz", FileKind.PDF: ".pdf", FileKind.SUMMARY_PDF: "-summary.pdf",
             FileKind.XLSX: ".xlsx"}
    for kind, suffix in names.items():
        field = first.file_of(kind)
        assert field.name == f"reports/ACME-72/ACME-72-acceptance-v1{suffix}"
        assert (Path(settings.MEDIA_ROOT) / field.name).is_file()
        assert hash_of(field) == (first.sha256_of(kind), first.size_of(kind)), kind
    assert first.has_file(FileKind.PDF) and not first.has_file(FileKind.SIGNED_PDF)
    with first.pdf_file.open("rb") as pdf:
        assert pdf.read(5) == b"%PDF-"
    assert load_workbook(first.xlsx_file.path, read_only=True).sheetnames
    assert first.summary_pdf_sha256 != first.pdf_sha256
    assert first.figures["fail"] == 1 and first.figures["open_punch_items"] == 1
    assert first.figures["verdict"] == "not_ready" and "summary" in first.figures["sections"]
    assert (first.progress_done, first.progress_step) == (first.progress_total, "")
    assert first.generated_at is not None


def test_the_snapshot_is_frozen_a_rerender_gives_the_same_bytes_whatever_the_database_says(world, manager,
                                                                                         render_now):
    version = render_now(world.project, manager)
    world.project.name = "Renamed after rendering"
    world.project.save()
    PunchItem.objects.create(project=world.project, title="Found later", customer_visible=True,
                             opened_at=version.generated_at)
    with version.snapshot_file.open("rb") as stored:
        snapshot = io.BytesIO(stored.read())
    assert read_snapshot(snapshot).meta["project"]["name"] == "ACME 72-node cluster"
    for kind, render, edition in ((FileKind.PDF, render_pdf, "full"), (FileKind.SUMMARY_PDF, render_pdf, "summary"),
                                  (FileKind.XLSX, render_xlsx, "full")):
        again = io.BytesIO()
        snapshot.seek(0)
        render(snapshot, again, edition=edition)
        assert hashlib.sha256(again.getvalue()).hexdigest() == version.sha256_of(kind), kind


def test_a_section_that_breaks_fails_the_version_with_its_name_and_leaves_no_file(world, manager, render_now,
                                                                                  monkeypatch, settings):
    from projects.reports import ReportRegistry

    registry = ReportRegistry()

    def broken(project):
        raise ZeroDivisionError("division by zero")

    registry.register_section("bandwidth", broken, order=60, title="Bandwidth")
    monkeypatch.setattr(snapshot_module, "report_registry", registry)
    version = render_now(world.project, manager)
    assert version.status == JobStatus.FAILED
    assert version.errors == ["The Bandwidth section (bandwidth) could not be written: ZeroDivisionError: "
                              "division by zero"]
    assert not version.snapshot_file and not version.pdf_file
    assert not list((Path(settings.MEDIA_ROOT) / "reports").rglob("*.*"))


def test_a_renderer_that_breaks_removes_the_files_already_stored(world, manager, render_now, monkeypatch, settings):
    from delivery.reports import services

    def renderer(name):
        if name == "xlsx":
            def broken(*args, **kwargs):
                raise OSError("disk full")
            return broken
        return render_pdf

    monkeypatch.setattr(services, "_renderer", renderer)
    version = render_now(world.project, manager)
    assert version.status == JobStatus.FAILED and "OSError: disk full" in version.errors[0]
    assert not list((Path(settings.MEDIA_ROOT) / "reports").rglob("*.*"))


def test_rendering_twice_changes_nothing(world, manager, render_now):
    version = render_now(world.project, manager)
    report_version_render(version_id=version.pk)
    again = ReportVersion.objects.get(pk=version.pk)
    assert (again.status, again.pdf_sha256, again.pdf_file.name, again.finished_at) == (
        JobStatus.DONE, version.pdf_sha256, version.pdf_file.name, version.finished_at)
    assert report_version_render(version_id=10**9) is None  # a version deleted meanwhile


def test_only_managers_request_versions(world, technician, customer):
    for member in (technician, customer):
        with pytest.raises(PermissionDenied):
            report_version_request(project=world.project, user=member)


def test_numbers_are_unique_per_project_in_the_database(world, manager):
    ReportVersion.objects.create(project=world.project, number=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        ReportVersion.objects.create(project=world.project, number=1)


# --- signing -----------------------------------------------------------------------------------------------


def test_only_a_member_with_the_customer_role_signs(world, manager, technician, render_now):
    satisfy_stages_before_acceptance(world.project)
    version = issue(render_now(world.project, manager), manager)
    staff = UserFactory(username="staffer", is_staff=True)
    outsider = UserFactory(username="nobody")
    for person, says in ((manager, "Managers and staff may not sign"), (staff, "Managers and staff may not sign"),
                         (technician, "customer role"), (outsider, "not a member")):
        with pytest.raises(PermissionDenied, match=says):
            sign(version, person)
    assert not ReportSignature.objects.exists()


def test_a_version_not_rendered_cannot_be_signed_and_a_signature_needs_its_fields(world, manager, customer):
    queued = report_version_request(project=world.project, user=manager)
    with pytest.raises(ValidationError, match="Version 1 is not rendered yet: only an issued version can be signed"):
        sign(queued, customer)
    ReportVersion.objects.filter(pk=queued.pk).update(status=JobStatus.DONE, state=ReportState.ISSUED)
    queued.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        sign(queued, customer, name="  ", title="x" * 201)
    assert set(refused.value.message_dict) == {"name", "title"}


def test_signing_records_the_originals_passes_the_gate_completes_acceptance_and_renders_signed_copies(
        world, manager, customer, render_now, django_capture_on_commit_callbacks):
    satisfy_stages_before_acceptance(world.project)
    version = issue(render_now(world.project, manager), manager)
    with django_capture_on_commit_callbacks(execute=True):
        signature = sign(version, customer)
    assert (signature.pdf_sha256, signature.summary_pdf_sha256, signature.xlsx_sha256, signature.snapshot_sha256) == (
        version.pdf_sha256, version.summary_pdf_sha256, version.xlsx_sha256, version.snapshot_sha256)
    acceptance = Stage.objects.get(project=world.project, key="acceptance")
    assert acceptance.gate_passed and "Version 1 signed with exceptions by Cara Customer" in acceptance.gate_summary
    assert (acceptance.status, acceptance.completed_by) == (StageStatus.DONE, customer)

    version.refresh_from_db()
    signature.refresh_from_db()
    assert signature.status == JobStatus.DONE, signature.errors
    for kind in (FileKind.SIGNED_PDF, FileKind.SIGNED_XLSX):
        assert hash_of(version.file_of(kind)) == (version.sha256_of(kind), version.size_of(kind))
    assert version.signed_pdf_file.name.endswith("ACME-72-acceptance-v1-signed.pdf")
    assert version.signed_pdf_sha256 != version.pdf_sha256  # the signed copy is another file
    # The signed workbook quotes the originals' SHA-256 and the signer.
    cells = {str(cell) for sheet in load_workbook(version.signed_xlsx_file.path, read_only=True).worksheets
             for row in sheet.iter_rows(values_only=True) for cell in row if cell}
    for original in (version.pdf_sha256, version.xlsx_sha256):
        assert any(original in cell for cell in cells), original
    assert any("Cara Customer" in cell for cell in cells)
    # The originals are untouched.
    assert hash_of(version.pdf_file) == (signature.pdf_sha256, version.pdf_size)


def test_a_signature_with_a_stage_reopened_since_the_issue_is_recorded_and_acceptance_waits(world, manager, customer,
                                                                                           render_now):
    satisfy_stages_before_acceptance(world.project)
    version = issue(render_now(world.project, manager), manager)
    # Between the issue and the signature a stage before acceptance goes back to work (a regression).
    Stage.objects.filter(project=world.project, key="soak").update(status=StageStatus.IN_PROGRESS)
    sign(version, customer)
    acceptance = Stage.objects.get(project=world.project, key="acceptance")
    assert acceptance.gate_passed and acceptance.status == StageStatus.NOT_STARTED
    # Once the stages before it are done, a manager completes it: its gate passes.
    from delivery.stages.services import stage_complete

    satisfy_stages_before_acceptance(world.project)
    gates_recompute(project=world.project)
    assert stage_complete(stage=acceptance, user=manager).status == StageStatus.DONE


def test_a_signed_version_is_final(world, manager, customer, render_now):
    satisfy_stages_before_acceptance(world.project)
    first = issue(render_now(world.project, manager), manager)
    second = render_now(world.project, manager)
    sign(first, customer)
    with pytest.raises(ValidationError, match=r"Version 1 was accepted on \d{4}-\d\d-\d\d; the report is final\."):
        sign(first, customer)
    with pytest.raises(ValidationError, match="the report is final, so version 2 cannot be signed"):
        sign(second, customer)
    with pytest.raises(ValidationError, match="the report is final. Nothing changed on the floor since"):
        report_version_request(project=world.project, user=manager)
    ReportVersion.objects.filter(pk=first.pk).update(status=JobStatus.QUEUED)  # as if a task came back for it
    report_version_render(version_id=first.pk)
    first.refresh_from_db()
    assert first.status == JobStatus.QUEUED and first.pdf_sha256 == first.signature.pdf_sha256


# --- matching a file to its version ------------------------------------------------------------------------


def test_a_file_matches_its_version_and_a_file_one_byte_changed_matches_none(world, manager, customer, render_now,
                                                                             django_capture_on_commit_callbacks):
    satisfy_stages_before_acceptance(world.project)
    version = render_now(world.project, manager)
    with version.pdf_file.open("rb") as stored:
        content = stored.read()
    [match] = report_file_match(project=world.project, source=io.BytesIO(content))
    assert (match.number, match.kind, match.is_signed_copy, match.signed_at) == (1, FileKind.PDF, False, None)
    changed = bytearray(content)
    changed[len(changed) // 2] ^= 1
    assert report_file_match(project=world.project, source=io.BytesIO(bytes(changed))) == []

    with django_capture_on_commit_callbacks(execute=True):
        signature = sign(issue(version, manager), customer)
    version.refresh_from_db()
    [signed] = report_hash_match(project=world.project, sha256=version.signed_xlsx_sha256.upper())
    assert (signed.kind, signed.is_signed_copy, signed.signed_at) == (FileKind.SIGNED_XLSX, True, signature.signed_at)
    [original] = report_hash_match(project=world.project, sha256=version.pdf_sha256)
    assert original.signature.name == "Cara Customer" and not original.is_signed_copy


def test_only_the_projects_own_versions_match(world, manager, render_now, other_project):
    version = render_now(world.project, manager)
    assert report_hash_match(project=other_project, sha256=version.pdf_sha256) == []
    with pytest.raises(ValidationError) as refused:
        report_hash_match(project=world.project, sha256="abc")
    assert "sha256" in refused.value.message_dict


def test_a_file_past_the_limit_is_refused_before_it_is_read_whole(world, settings):
    settings.REPORT_MATCH_MAX_BYTES = 3 * 1024 * 1024

    class Endless(io.RawIOBase):
        read_bytes = 0

        def readable(self):
            return True

        def read(self, size=-1):
            self.read_bytes += size
            return b"\0" * size

    source = Endless()
    with pytest.raises(ValidationError) as refused:
        report_file_match(project=world.project, source=source)
    assert "file" in refused.value.message_dict
    assert source.read_bytes <= settings.REPORT_MATCH_MAX_BYTES + 1024 * 1024


# --- the command -------------------------------------------------------------------------------------------


def test_build_report_renders_in_process_and_copies_the_chosen_edition(world, tmp_path, capsys):
    out = tmp_path / "out"
    call_command("build_report", "--project", "acme-72", "--out", str(out), "--edition", "summary")
    printed = capsys.readouterr().out
    version = ReportVersion.objects.get(project=world.project)
    assert version.status == JobStatus.DONE and version.requested_by is None
    assert "ACME-72-acceptance-v1-summary.pdf" in printed and version.summary_pdf_sha256 in printed
    assert f"{version.pdf_size:,} bytes" in printed and "excel" in printed
    copied = sorted(path.name for path in out.iterdir())
    assert copied == ["ACME-72-acceptance-v1-summary.pdf", "ACME-72-acceptance-v1.xlsx"]
    assert hashlib.sha256((out / copied[0]).read_bytes()).hexdigest() == version.summary_pdf_sha256
    with pytest.raises(CommandError, match="No project NOPE"):
        call_command("build_report", "--project", "NOPE")
