"""A sign-off that means something (delivery/reports/services.py, acceptance.py), through the services:

- a manager issues a rendered draft for acceptance; issuing is refused while a stage before acceptance has a
  failing gate no waiver covers, the refusal naming each stage and what is left, and for a version whose own
  report says stages were not done; issuing a later version supersedes an issued one nobody decided on;
- only an issued version can be signed (a draft, a superseded or a rejected one cannot);
- the customer accepts (refused while punch items are open or waivers recorded), accepts with exceptions
  (every open punch item the customer sees, a count of the internal ones and every waiver, in the signature
  and on the signed copies, read with pdftotext and openpyxl), or rejects with comments, which leaves
  acceptance open, tells the managers, and lets the next version be issued;
- after an acceptance a new version is an as-built addendum listing the swaps and RMA moves since; the
  accepted version's files and snapshot stay byte for byte what was signed.
"""

# ruff: noqa: F811  (the fixtures imported from test_report_versions are parameters here)
from __future__ import annotations

import hashlib
import io
import shutil
import subprocess

import pytest
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from openpyxl import load_workbook

from cabling.choices import CableStatus, RmaState
from cabling.models import Cable
from cabling.swaps.services import cable_swap, swap_rma_update
from core.choices import JobStatus
from delivery.choices import PunchStatus, ReportDecision, ReportState, StageStatus
from delivery.models import FILE_KINDS, PunchItem, ReportSignature, ReportVersion, Stage, Waiver
from delivery.reports.acceptance import changes_since_acceptance, issue_blockers
from delivery.reports.services import (
    report_version_issue,
    report_version_reject,
    report_version_request,
)
from delivery.stages.services import gates_recompute, waiver_record
from projects.reports import TableRecord, read_snapshot

from .test_report_snapshot import satisfy_stages_before_acceptance
from .test_report_versions import STATEMENT, issue, render_now, sign, world  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db

PDFTOTEXT = shutil.which("pdftotext")
WAIVER_REASON = "The customer's own soak replaces ours."


def pdf_text(field) -> str:
    if not PDFTOTEXT:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    with field.open("rb") as stored:
        data = stored.read()
    return subprocess.run([PDFTOTEXT, "-layout", "-", "-"], input=data, capture_output=True, check=True).stdout.decode()


def workbook_cells(field) -> set[str]:
    return {str(cell) for sheet in load_workbook(field.path, read_only=True).worksheets
            for row in sheet.iter_rows(values_only=True) for cell in row if cell is not None}


def stored_hashes(version: ReportVersion) -> dict[str, str]:
    """The SHA-256 of every file the version holds, read from storage."""
    hashes = {}
    for kind in ("snapshot", *FILE_KINDS):
        field = version.file_of(kind)
        if field:
            with field.open("rb") as stored:
                hashes[kind] = hashlib.sha256(stored.read()).hexdigest()
    return hashes


def reject(version, user, comments="The link checks of rack A01 are missing; re-run them."):
    return report_version_reject(version=version, user=user, name="Cara Customer", title="CTO", comments=comments)


def nothing_open(project) -> None:
    """Every punch item verified and no waiver: nothing an acceptance would list as an exception."""
    PunchItem.objects.filter(project=project).update(status=PunchStatus.VERIFIED)
    Waiver.objects.filter(stage__project=project).delete()


def a_waiver(project, manager) -> Waiver:
    soak = Stage.objects.get(project=project, key="soak")
    return Waiver.objects.create(stage=soak, all_items=True, missing_count=1, reason=WAIVER_REASON,
                                 recorded_by=manager, recorded_at=timezone.now())


@pytest.fixture
def ready(world):
    """The report world with every stage before acceptance settled (skipped): a version may be issued."""
    satisfy_stages_before_acceptance(world.project)
    return world


# --- issuing ------------------------------------------------------------------------------------------------


def test_issuing_is_refused_naming_each_stage_whose_gate_fails_with_no_waiver_covering_it(world, manager,
                                                                                       render_now):
    gates_recompute(project=world.project)
    version = render_now(world.project, manager)
    failing = list(Stage.objects.filter(project=world.project, gate_passed=False).exclude(key="acceptance")
                   .order_by("order"))
    assert failing
    with pytest.raises(ValidationError) as refused:
        issue(version, manager)
    said = refused.value.messages
    assert said[0].startswith(f"Version 1 cannot be issued for acceptance yet: {len(failing)} stage")
    assert "What is left:" in said[0]
    for stage in failing:
        line = next(text for text in said if text.startswith(f"{stage.title}: "))
        assert stage.gate_summary.rstrip(".") in line and f"({stage.gate_missing_count:,} missing" in line
    # The version itself says the stages were not done: issuing it would ask for a signature on "not ready".
    assert "was generated while" in said[-1] and "generate a new version to issue" in said[-1]
    version.refresh_from_db()
    assert version.state == ReportState.DRAFT and version.issued_at is None

    # A waiver that covers a stage's items takes it off the list.
    racking = Stage.objects.get(project=world.project, key="racking")
    assert racking in failing
    waiver_record(stage=racking, user=manager, all_items=True, reason="Racked by the customer's own team.")
    assert not any(text.startswith("Racking: ") for text in issue_blockers(world.project))
    assert any(text.startswith("Cabling: ") for text in issue_blockers(world.project))


def test_a_gate_never_computed_holds_issuing_back_and_a_skipped_stage_does_not(world, manager):
    Stage.objects.filter(project=world.project, key="site_readiness").update(status=StageStatus.SKIPPED)
    blockers = issue_blockers(world.project)
    assert "Racking: its gate has not been computed yet." in blockers
    assert not any(text.startswith("Site readiness") for text in blockers)
    assert not any(text.startswith("Acceptance") for text in blockers)  # acceptance is what is being issued


def test_only_managers_issue(ready, technician, customer, manager, render_now):
    version = render_now(ready.project, manager)
    for person in (technician, customer):
        with pytest.raises(PermissionDenied, match="Only the project's managers issue"):
            report_version_issue(version=version, user=person)
    issued = issue(version, manager)
    assert (issued.state, issued.issued_by) == (ReportState.ISSUED, manager) and issued.issued_at
    assert ReportVersion.history.filter(id=version.pk, state=ReportState.ISSUED).get().history_user == manager


def test_issuing_a_later_version_supersedes_the_issued_one_and_an_older_draft_cannot_be_issued(
        ready, manager, customer, render_now):
    first, second, third = (render_now(ready.project, manager) for _ in range(3))
    issue(second, manager)
    with pytest.raises(ValidationError, match="Version 2, a later one, was issued already: version 1 can no longer"):
        issue(first, manager)
    with pytest.raises(ValidationError, match=r"Version 2 is issued already \(on \d{4}-\d\d-\d\d\)"):
        issue(second, manager)
    issue(third, manager)
    second.refresh_from_db()
    assert (second.state, second.superseded_by, second.superseded_at is not None) == (ReportState.SUPERSEDED, third,
                                                                                      True)
    with pytest.raises(ValidationError, match=r"Version 2 was superseded by version 3 on .*only an issued version "
                                              "can be signed; read version 3"):
        sign(second, customer)
    with pytest.raises(ValidationError, match="Version 2 is superseded: only a draft can be issued"):
        issue(second, manager)
    assert ReportVersion.objects.get(pk=first.pk).state == ReportState.DRAFT


def test_one_issued_and_one_accepted_version_per_project_whatever_races(ready, manager):
    ReportVersion.objects.create(project=ready.project, number=1, state=ReportState.ISSUED)
    with pytest.raises(IntegrityError), transaction.atomic():
        ReportVersion.objects.create(project=ready.project, number=2, state=ReportState.ISSUED)
    ReportVersion.objects.create(project=ready.project, number=3, state=ReportState.ACCEPTED)
    with pytest.raises(IntegrityError), transaction.atomic():
        ReportVersion.objects.create(project=ready.project, number=4, state=ReportState.ACCEPTED_WITH_EXCEPTIONS)


# --- only an issued version can be signed ------------------------------------------------------------------


def test_a_draft_cannot_be_signed_or_rejected(ready, manager, customer, render_now):
    version = render_now(ready.project, manager)
    for decide in (lambda: sign(version, customer), lambda: reject(version, customer)):
        with pytest.raises(ValidationError, match="Version 1 is a draft, not issued for acceptance: only an issued "
                                                  "version can be signed"):
            decide()
    assert not ReportSignature.objects.exists()


def test_the_customer_accepts_plainly_when_nothing_is_open_and_acceptance_completes(
        ready, manager, customer, render_now, django_capture_on_commit_callbacks):
    nothing_open(ready.project)
    version = issue(render_now(ready.project, manager), manager)
    with pytest.raises(ValidationError, match="There is no open punch item and no waiver: accept version 1 "
                                              "without exceptions"):
        sign(version, customer)  # the helper asks for "with exceptions"
    with django_capture_on_commit_callbacks(execute=True):
        signature = sign(version, customer, decision=ReportDecision.ACCEPTED)
    version.refresh_from_db()
    assert (version.state, signature.decision, signature.exceptions) == (ReportState.ACCEPTED,
                                                                         ReportDecision.ACCEPTED, {})
    acceptance = Stage.objects.get(project=ready.project, key="acceptance")
    assert (acceptance.status, acceptance.completed_by) == (StageStatus.DONE, customer)
    assert "Decision: Accepted" in " ".join(pdf_text(version.signed_pdf_file).split())
    assert "No punch item was open and no waiver recorded when it was signed." in " ".join(
        pdf_text(version.signed_pdf_file).split())


# --- accepting with exceptions ------------------------------------------------------------------------------


def test_a_plain_acceptance_is_refused_while_items_are_open_and_one_with_exceptions_records_and_prints_them(
        ready, manager, customer, render_now, django_capture_on_commit_callbacks):
    waiver = a_waiver(ready.project, manager)
    version = issue(render_now(ready.project, manager), manager)
    with pytest.raises(ValidationError) as refused:
        sign(version, customer, decision=ReportDecision.ACCEPTED)
    assert refused.value.messages == [
        "There are 2 open punch items (1 internal) and 1 waiver: accept version 1 with exceptions, which lists "
        "them in your signature and on the signed copy, or reject it."]
    with django_capture_on_commit_callbacks(execute=True):
        signature = sign(version, customer, comments="The optic of C00001 is replaced next week.")
    version.refresh_from_db()
    assert version.state == ReportState.ACCEPTED_WITH_EXCEPTIONS
    exceptions = signature.exceptions
    assert [item["title"] for item in exceptions["punch_items"]] == ["Replace the optic of C00001"]
    assert exceptions["punch_items"][0]["severity_label"] == "Critical"
    assert exceptions["internal_punch_items"] == 1  # counted, never named to the customer
    assert [(w["id"], w["reason"]) for w in exceptions["waivers"]] == [(waiver.pk, WAIVER_REASON)]
    assert signature.comments == "The optic of C00001 is replaced next week."

    # The signed copies list them; the internal item's title appears nowhere.
    text = " ".join(pdf_text(version.signed_pdf_file).split())
    assert "Decision: Accepted with exceptions" in text and "Comments: The optic of C00001 is replaced" in text
    assert "Replace the optic of C00001" in text and WAIVER_REASON in text
    assert "1 internal open punch item(s)" in text and "Internal: re-label rack N01" not in text
    cells = workbook_cells(version.signed_xlsx_file)
    assert "Accepted with exceptions" in cells
    assert any("Replace the optic of C00001" in cell for cell in cells)
    assert any(WAIVER_REASON in cell for cell in cells)
    assert any("1 internal open punch item(s)" in cell for cell in cells)
    assert not any("re-label rack N01" in cell for cell in cells)
    assert signature.pdf_sha256 == version.pdf_sha256  # the originals are what was signed


# --- rejecting ----------------------------------------------------------------------------------------------


def test_a_rejection_needs_comments_leaves_acceptance_open_tells_the_managers_and_the_next_version_is_issued(
        ready, manager, customer, render_now, django_capture_on_commit_callbacks, settings):
    manager.email, customer.email = "mgr@example.com", "cust@example.com"
    manager.save(), customer.save()
    first = issue(render_now(ready.project, manager), manager)
    with pytest.raises(ValidationError) as refused:
        reject(first, customer, comments="  ")
    assert refused.value.message_dict == {"comments": ["Say why you reject this version: the managers act on it."]}
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        signature = reject(first, customer)
    first.refresh_from_db()
    assert (first.state, signature.decision, signature.status) == (ReportState.REJECTED, ReportDecision.REJECTED,
                                                                    JobStatus.DONE)
    assert not first.signed_pdf_file  # nothing is signed: no signed copies
    acceptance = Stage.objects.get(project=ready.project, key="acceptance")
    assert acceptance.status != StageStatus.DONE
    gates_recompute(project=ready.project)
    assert Stage.objects.get(pk=acceptance.pk).gate_passed is False  # a rejection is no signature
    [rejected] = [message for message in mail.outbox if "rejected" in message.subject]
    assert rejected.bcc == ["mgr@example.com"] and "re-run them" in rejected.body

    with pytest.raises(ValidationError, match="Version 1 was rejected on .*the managers issue the next version"):
        sign(first, customer)
    second = render_now(ready.project, manager)
    assert (second.number, second.addendum_to) == (2, None)  # the next version, not an addendum
    issue(second, manager)
    assert ReportVersion.objects.get(pk=first.pk).state == ReportState.REJECTED  # rejected stays rejected
    sign(second, customer)
    assert ReportVersion.objects.get(pk=second.pk).state == ReportState.ACCEPTED_WITH_EXCEPTIONS


def test_issuing_tells_the_customer_and_the_managers(ready, manager, customer, technician, render_now,
                                                     django_capture_on_commit_callbacks):
    for person, address in ((manager, "mgr@example.com"), (customer, "cust@example.com"),
                            (technician, "tech@example.com")):
        person.email = address
        person.save()
    version = render_now(ready.project, manager)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        issue(version, manager)
    [issued] = mail.outbox
    assert "issued for acceptance" in issued.subject
    assert sorted(issued.bcc) == ["cust@example.com", "mgr@example.com"]


# --- after acceptance: the as-built addendum ----------------------------------------------------------------


def test_after_acceptance_a_change_makes_an_addendum_and_the_accepted_version_never_changes(
        ready, manager, technician, customer, render_now, django_capture_on_commit_callbacks):
    accepted = issue(render_now(ready.project, manager), manager)
    with django_capture_on_commit_callbacks(execute=True):
        sign(accepted, customer)
    accepted.refresh_from_db()
    before = stored_hashes(accepted)
    assert set(before) == {"snapshot", "pdf", "summary_pdf", "xlsx", "signed_pdf", "signed_xlsx"}
    assert all(before[kind] == accepted.sha256_of(kind) for kind in before)
    row_before = ReportVersion.objects.filter(pk=accepted.pk).values().get()

    # Nothing changed on the floor: there is no addendum to make.
    with pytest.raises(ValidationError, match="Nothing changed on the floor since"):
        report_version_request(project=ready.project, user=manager)

    # A cable is swapped and its RMA moves on: the reports page counts them; an addendum lists them.
    Cable.objects.filter(project=ready.project).update(status=CableStatus.INSTALLED)
    swap = cable_swap(cable=ready.c2, old_serial="MT2301-OLD", new_serial="MT2399-NEW", user=technician,
                      reason="Bent past its radius behind the leaf.", rma_case="RMA-4411", rma_state=RmaState.OPEN)
    swap_rma_update(swap=swap, rma_case="RMA-4411", rma_state=RmaState.SHIPPED, user=technician)
    changes = changes_since_acceptance(ready.project, accepted)
    assert (changes.swaps, changes.rma_updates, changes.text) == (1, 1, "1 swap and 1 RMA update")

    addendum = render_now(ready.project, manager)
    assert addendum.status == JobStatus.DONE, addendum.errors
    assert (addendum.number, addendum.addendum_to, addendum.state) == (2, accepted, ReportState.DRAFT)
    assert addendum.figures["sections"][0] == "addendum"
    with addendum.snapshot_file.open("rb") as stored:
        first = next(iter(read_snapshot(io.BytesIO(stored.read())).sections))
        assert first.title == "As-built changes since version 1"
        tables = {block.key: list(block.rows) for block in first.blocks if isinstance(block, TableRecord)}
    [swapped] = tables["swaps_since_acceptance"]
    assert swapped[2:5] == ["Cable C00002", "MT2301-OLD", "MT2399-NEW"]
    [moved] = tables["rma_since_acceptance"]
    assert "Shipped" in moved[3] and moved[4] == "RMA-4411 · Shipped to the vendor"
    text = " ".join(pdf_text(addendum.pdf_file).split())
    assert "As-built addendum to version 1" in text and "MT2399-NEW" in text and accepted.pdf_sha256 in text

    # An addendum is not issued or signed.
    with pytest.raises(ValidationError, match="Version 2 is an as-built addendum to version 1"):
        issue(addendum, manager)
    with pytest.raises(ValidationError, match="Version 1 was accepted on .*so version 2 cannot be signed"):
        sign(addendum, customer)
    # Nothing new since this addendum was asked for: no second one yet; a further swap makes one possible.
    with pytest.raises(ValidationError, match="since version 2, the latest as-built addendum, was asked for"):
        report_version_request(project=ready.project, user=manager)
    cable_swap(cable=ready.c1, new_serial="MT2400-NEW", user=technician, reason="Dirty connector, cleaned twice.")
    assert report_version_request(project=ready.project, user=manager, enqueue=False).addendum_to == accepted

    # The accepted version: its files and snapshot byte for byte, its row as it was.
    accepted.refresh_from_db()
    assert stored_hashes(accepted) == before
    assert ReportVersion.objects.filter(pk=accepted.pk).values().get() == row_before


def test_the_signed_version_never_renders_again(ready, manager, customer, render_now,
                                                django_capture_on_commit_callbacks):
    from delivery.reports.services import report_version_render

    accepted = issue(render_now(ready.project, manager), manager)
    with django_capture_on_commit_callbacks(execute=True):
        sign(accepted, customer)
    accepted.refresh_from_db()
    before = stored_hashes(accepted)
    ReportVersion.objects.filter(pk=accepted.pk).update(status=JobStatus.QUEUED)  # a task's message came back
    report_version_render(version_id=accepted.pk)
    assert stored_hashes(ReportVersion.objects.get(pk=accepted.pk)) == before


def test_the_statement_names_the_project_once(ready, manager):
    from delivery.reports.sections import acceptance_statement

    ready.project.name = "72-node B300 post-training cluster"
    assert "cluster cluster" not in acceptance_statement(ready.project)
    assert "I accept “72-node B300 post-training cluster” (ACME-72) as delivered by" in acceptance_statement(
        ready.project)
    assert STATEMENT  # the tests' own statement, signed as typed
