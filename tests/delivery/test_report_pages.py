"""The acceptance report pages as every kind of person: the versions with their state, progress, figures,
files, sizes and SHA-256; a manager generates a version (rendered at once: tasks are eager here) and issues
it, or reads what holds issuing back; the downloads' names, headers and bytes; the customer's forms, on an
issued version only: accept (with the exceptions listed when there are some) or reject with comments, with
their refusals; after an acceptance, the changes since and the as-built addendum; checking a file by upload
and by hash, as a page and as JSON; outsiders get 404 everywhere, anonymous visitors the login page; the
list's query count does not grow with the versions, whatever their states."""

from __future__ import annotations

import hashlib
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from cabling.models import Swap
from core.choices import JobStatus
from delivery.choices import PunchSeverity, ReportDecision, ReportState, StageStatus
from delivery.models import PunchItem, ReportSignature, ReportVersion, Stage
from delivery.reports.gates import ACCEPTANCE_SIGNED
from delivery.reports.sections import acceptance_statement_default
from delivery.reports.services import report_version_issue, report_version_request, report_version_sign
from delivery.stages.services import gates_recompute, stages_create_from_template

from .access_samples_report_pages import rendered_version, stand_in_bytes

pytestmark = pytest.mark.django_db

SIGNER = {"name": "Claire Dubois", "title": "Head of infrastructure", "has_read": "on"}
REJECTER = {"reject-name": "Claire Dubois", "reject-title": "Head of infrastructure",
            "reject-comments": "The soak ran 48 hours, not 72."}


def url(name, project, *args):
    return reverse(f"reports:{name}", args=[project.code, *args])


def page(client, name, project, *args, status=200, **params) -> str:
    response = client.get(url(name, project, *args), params)
    assert response.status_code == status, response.content[:500]
    return response.content.decode()


@pytest.fixture
def render(django_capture_on_commit_callbacks):
    """`render(project, user)`: a version rendered for real by the service (snapshot, full PDF, summary PDF,
    Excel), as a manager's button press makes it: the task is sent on commit and runs eagerly."""

    def request(project, user) -> ReportVersion:
        with django_capture_on_commit_callbacks(execute=True):
            version = report_version_request(project=project, user=user)
        version.refresh_from_db()
        assert version.status == JobStatus.DONE, version.errors
        return version

    return request


@pytest.fixture
def real_version(project, manager, render):
    return render(project, manager)


@pytest.fixture
def acceptance_ready(project):
    """The project's stages, every one before acceptance settled (skipped), so a signature completes
    acceptance."""
    stages_create_from_template(project=project)
    Stage.objects.filter(project=project).exclude(gate_key=ACCEPTANCE_SIGNED).update(status=StageStatus.SKIPPED)
    return Stage.objects.get(project=project, gate_key=ACCEPTANCE_SIGNED)


# --- reading ----------------------------------------------------------------------------------------------


def test_every_member_reads_the_versions_with_files_sizes_and_hashes(client_for, project, manager, technician,
                                                                      customer):
    version = rendered_version(project, requested_by=manager)
    for user in (manager, technician, customer):
        body = page(client_for(user), "list", project)
        assert 'data-version="1"' in body and "Rendered" in body
        for kind in ("pdf", "summary_pdf", "xlsx"):
            assert version.sha256_of(kind) in body
            assert url("file", project, 1, kind) in body
            assert f"{version.file_name(kind)} · {version.size_of(kind)}" in body  # name and size (bytes)
        assert "40</b> pass" in body and "1</b> fail" in body and "3</b> open punch items" in body
        assert ("Generate a new version" in body) is (user == manager)
        assert 'id="check-file"' in body
    # The project's pages link to the reports page.
    home = client_for(customer).get(reverse("delivery:project-home", args=[project.code])).content.decode()
    assert f'href="{url("list", project)}"' in home


def test_a_version_being_rendered_shows_its_progress_bar_polling_the_job_row(client_for, project, manager):
    version = ReportVersion.objects.create(project=project, number=1, status=JobStatus.RUNNING, requested_by=manager,
                                           progress_total=200, progress_done=50, progress_step="pdf")
    for name, args in (("list", ()), ("version", (1,))):
        body = page(client_for(manager), name, project, *args)
        status_url = reverse("api-job-status", args=[version.job_type, version.pk])
        assert f'data-progress-url="{status_url}"' in body and 'value="50" max="200"' in body
        assert "data-progress-reload" in body and "Sign version" not in body


def test_the_version_page_lists_downloads_and_contents_and_who_asked(client_for, project, manager, customer):
    manager.first_name, manager.last_name = "Mei", "Lin"
    manager.save()
    rendered_version(project, requested_by=manager)
    body = page(client_for(customer), "version", project, 1)
    assert "Acceptance report v1" in body and "by Mei Lin" in body
    assert body.count('data-download="') == 3
    assert "<li>Summary</li>" in body and "<li>Sign-off</li>" in body  # the sections the snapshot recorded
    assert 'data-state="draft"' in body and ">Draft</span>" in body
    # A draft: no form for the customer, and why.
    assert 'id="sign-form"' not in body and 'id="reject-form"' not in body
    assert "Version 1 is a draft, not issued for acceptance: only an issued version can be signed." in body


def test_outsiders_get_404_everywhere_and_anonymous_visitors_the_login_page(client, client_for, project, outsider,
                                                                            manager):
    rendered_version(project, requested_by=manager)
    gets = [url("list", project), url("version", project, 1), url("file", project, 1, "pdf"),
            url("check", project) + "?sha256=" + "0" * 64]
    posts = [url("generate", project), url("issue", project, 1), url("sign", project, 1), url("reject", project, 1),
             url("check", project)]
    for address in gets + posts:
        response = client.get(address) if address in gets else client.post(address, {})
        assert response.status_code == 302 and response.url.startswith(reverse("login")), address
    them = client_for(outsider)
    for address in gets:
        assert them.get(address).status_code == 404, address
    for address in posts:
        assert them.post(address, {**SIGNER, **REJECTER, "statement": "x"}).status_code == 404, address
    assert not ReportSignature.objects.exists() and ReportVersion.objects.count() == 1
    assert ReportVersion.objects.get().state == ReportState.DRAFT


def test_an_unknown_version_or_file_is_a_404(client_for, project, manager, customer):
    rendered_version(project, requested_by=manager)
    client = client_for(customer)
    assert client.get(url("version", project, 2)).status_code == 404
    assert client.get(url("file", project, 1, "signed_pdf")).status_code == 404  # not rendered: not signed
    assert client.get(url("file", project, 1, "snapshot")).status_code == 404  # not a file people download
    assert client.get(url("file", project, 1, "passwd")).status_code == 404


def test_the_list_costs_the_same_queries_with_2_and_7_versions_whatever_their_states(
        client_for, project, manager, customer, django_assert_num_queries):
    from django.db import connection
    from django.db.models import Max
    from django.test.utils import CaptureQueriesContext

    now = timezone.now()
    accepted = rendered_version(project, number=1, requested_by=manager)
    ReportVersion.objects.filter(pk=accepted.pk).update(state=ReportState.ACCEPTED, issued_at=now, issued_by=manager)
    ReportSignature.objects.create(version=accepted, signed_by=customer, name="Claire", title="CTO", statement="OK",
                                   signed_at=now, status=JobStatus.DONE)
    addendum = rendered_version(project, number=2, requested_by=manager)
    ReportVersion.objects.filter(pk=addendum.pk).update(addendum_to=accepted)

    def five_more() -> None:
        """Rejected and superseded versions: who issued them, the decision, what superseded them."""
        start = ReportVersion.objects.aggregate(n=Max("number"))["n"] + 1
        for number in range(start, start + 5):
            version = rendered_version(project, number=number, requested_by=manager)
            if number % 2:
                ReportVersion.objects.filter(pk=version.pk).update(
                    state=ReportState.SUPERSEDED, issued_at=now, issued_by=manager, superseded_at=now,
                    superseded_by=accepted)
            else:
                ReportVersion.objects.filter(pk=version.pk).update(state=ReportState.REJECTED, issued_at=now,
                                                                   issued_by=manager)
                ReportSignature.objects.create(version=version, signed_by=customer, name="Claire", title="CTO",
                                               statement="No.", signed_at=now, status=JobStatus.DONE,
                                               decision=ReportDecision.REJECTED, comments="Not yet.")

    for client in (client_for(manager), client_for(customer)):
        page(client, "list", project)  # warm: session, content types
        with CaptureQueriesContext(connection) as fewer:
            page(client, "list", project)
        five_more()
        with django_assert_num_queries(len(fewer.captured_queries)):
            body = page(client, "list", project)
        assert body.count('class="report-version ') == ReportVersion.objects.count()
        assert "Superseded by" in body and "Rejected by <b>Claire</b>" in body and "As-built addendum to" in body


# --- generating -------------------------------------------------------------------------------------------


def test_a_manager_generates_a_version_rendered_with_its_three_files(client_for, project, manager,
                                                                     django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(manager).post(url("generate", project))
    assert response.status_code == 302 and response.url == url("version", project, 1)
    version = ReportVersion.objects.get(project=project)
    assert (version.number, version.status, version.requested_by) == (1, JobStatus.DONE, manager)
    body = page(client_for(manager), "version", project, 1)
    for kind in ("pdf", "summary_pdf", "xlsx"):
        assert version.has_file(kind) and version.sha256_of(kind) in body


def test_technicians_and_customers_may_not_generate(client_for, project, technician, customer):
    for user in (technician, customer):
        assert client_for(user).post(url("generate", project)).status_code == 403
    assert not ReportVersion.objects.exists()


def accept(version, customer) -> None:
    """Version accepted as if the customer had signed it (the service's own tests walk it)."""
    ReportVersion.objects.filter(pk=version.pk).update(state=ReportState.ACCEPTED)
    ReportSignature.objects.create(version=version, signed_by=customer, name="Claire", title="CTO", statement="OK",
                                   signed_at=version.finished_at, status=JobStatus.DONE)


def test_after_an_acceptance_with_nothing_changed_no_addendum_is_offered_and_generating_is_refused(
        client_for, project, manager, customer):
    accept(rendered_version(project, requested_by=manager), customer)
    client = client_for(manager)
    body = page(client, "list", project)
    assert "Generate a new version" not in body and "Make the as-built addendum" not in body
    assert "Version 1 is accepted: the report is final." in body and "Changed since acceptance: 0 swaps." in body
    response = client.post(url("generate", project))
    assert response.status_code == 400
    assert re.search(r"Version 1 was accepted on \d{4}-\d\d-\d\d; the report is final\. Nothing changed on the "
                     r"floor since", response.content.decode())
    assert ReportVersion.objects.count() == 1


def test_after_an_acceptance_the_list_counts_the_swaps_since_and_makes_the_as_built_addendum(
        client_for, project, manager, technician, customer, django_capture_on_commit_callbacks):
    from tests.delivery.stages_world import build_world

    world = build_world(project)
    version = rendered_version(project, requested_by=manager)
    accept(version, customer)
    later = timezone.now()  # after the signature (signed when the stand-in finished rendering)
    for cable, serial in ((world.c1, "NEW-1"), (world.c2, "NEW-2")):
        Swap.objects.create(project=project, kind="cable", cable=cable, old_serial="OLD", new_serial=serial,
                            reason="Crushed under a tile.", recorded_by=technician, recorded_at=later)
    client = client_for(manager)
    body = page(client, "list", project)
    assert 'id="changes-since-acceptance" data-swaps="2"' in body and "Changed since acceptance: 2 swaps." in body
    assert "Changed since acceptance" not in page(client_for(customer), "list", project)  # the managers' to act on
    client = client_for(manager)  # one test client: logged in as whoever was asked for last
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url("generate", project))
    assert response.status_code == 302 and response.url == url("version", project, 2)
    addendum = ReportVersion.objects.get(number=2)
    assert (addendum.addendum_to, addendum.status) == (version, JobStatus.DONE)
    body = page(client, "version", project, 2)
    assert "As-built addendum to <a" in body and "version 1</a>" in body and 'data-state="draft"' in body
    assert "<li>As-built changes since version 1</li>" in body  # its first section
    assert 'id="issue-form"' not in body and 'id="issue"' not in body  # never issued
    accepted_page = page(client, "version", project, 1)
    assert 'id="addenda"' in accepted_page and url("version", project, 2) in accepted_page
    listed = page(client, "list", project)
    assert "Since version 2, the latest addendum: 0 swaps." in listed and "Make the as-built addendum" not in listed


# --- downloading ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "name", "content_type"), [
    ("pdf", "ACME-72-acceptance-v1.pdf", "application/pdf"),
    ("summary_pdf", "ACME-72-acceptance-v1-summary.pdf", "application/pdf"),
    ("xlsx", "ACME-72-acceptance-v1.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
])
def test_downloads_are_attachments_named_after_the_version_with_the_recorded_bytes(client_for, project, manager,
                                                                                  customer, kind, name, content_type):
    version = rendered_version(project, requested_by=manager)
    response = client_for(customer).get(url("file", project, 1, kind))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{name}"'
    assert response["Content-Type"] == content_type
    data = b"".join(response.streaming_content)
    assert data == stand_in_bytes(version, kind)
    assert hashlib.sha256(data).hexdigest() == version.sha256_of(kind)
    assert int(response["Content-Length"]) == version.size_of(kind)


def test_a_real_versions_files_download_with_their_recorded_hashes(client_for, project, customer, real_version):
    client = client_for(customer)
    pdf = b"".join(client.get(url("file", project, 1, "pdf")).streaming_content)
    xlsx = b"".join(client.get(url("file", project, 1, "xlsx")).streaming_content)
    assert pdf.startswith(b"%PDF") and xlsx.startswith(b"PK")
    assert hashlib.sha256(pdf).hexdigest() == real_version.pdf_sha256
    assert hashlib.sha256(xlsx).hexdigest() == real_version.xlsx_sha256


# --- signing ----------------------------------------------------------------------------------------------


def issued_version(project, manager, **kwargs) -> ReportVersion:
    return report_version_issue(version=rendered_version(project, requested_by=manager, **kwargs), user=manager)


def test_the_customer_signs_and_acceptance_completes(client_for, project, manager, customer, real_version,
                                                     acceptance_ready, django_capture_on_commit_callbacks):
    customer.first_name, customer.last_name = "Claire", "Dubois"
    customer.save()
    report_version_issue(version=real_version, user=manager)
    client = client_for(customer)
    form = page(client, "version", project, 1)
    assert 'value="Claire Dubois"' in form  # the signer's name, prefilled
    assert acceptance_statement_default(project).split("\n")[0] in form  # the standard statement, prefilled
    assert "I have read version 1 of the acceptance report" in form
    assert "No punch item is open and no waiver is recorded." in form and ">Accept version 1</button>" in form
    assert 'id="reject-form"' in form
    with django_capture_on_commit_callbacks(execute=True):  # the signed copies' task
        response = client.post(url("sign", project, 1), {**SIGNER, "statement": acceptance_statement_default(project)})
    assert response.status_code == 302 and response.url == url("version", project, 1)
    signature = ReportSignature.objects.get(version=real_version)
    assert (signature.name, signature.title, signature.signed_by) == ("Claire Dubois", "Head of infrastructure",
                                                                      customer)
    assert signature.pdf_sha256 == real_version.pdf_sha256
    acceptance_ready.refresh_from_db()
    assert acceptance_ready.status == StageStatus.DONE
    body = page(client, "version", project, 1)
    assert "Signed by <b>Claire Dubois</b>, Head of infrastructure" in body and 'id="sign-form"' not in body
    assert "Accepted by <b>Claire Dubois</b>, Head of infrastructure, on" in body and 'data-state="accepted"' in body
    assert "Acceptance is complete" in body
    assert "(account cust)" not in body  # the account is the managers' to see
    assert "(account cust)" in page(client_for(manager), "version", project, 1)
    # The signed copies were rendered (eagerly) and are offered for download.
    assert 'data-download="signed_pdf"' in body and 'data-download="signed_xlsx"' in body
    assert client.get(url("file", project, 1, "signed_pdf"))["Content-Disposition"] == (
        'attachment; filename="ACME-72-acceptance-v1-signed.pdf"')


@pytest.mark.parametrize(("missing", "error"), [
    ("name", "This field is required."),
    ("title", "This field is required."),
    ("statement", "This field is required."),
    ("has_read", "Confirm that you have read this version."),
])
def test_the_sign_form_says_what_is_missing(client_for, project, manager, customer, missing, error):
    issued_version(project, manager)
    data = {**SIGNER, "statement": "I accept."}
    del data[missing]
    response = client_for(customer).post(url("sign", project, 1), data)
    assert response.status_code == 400
    assert error in response.content.decode() and 'id="sign-form"' in response.content.decode()
    assert not ReportSignature.objects.exists()


def test_overlong_answers_are_refused_on_their_fields(client_for, project, manager, customer):
    issued_version(project, manager)
    response = client_for(customer).post(url("sign", project, 1), {
        **SIGNER, "name": "N" * 201, "statement": "S" * 2001})
    body = response.content.decode()
    assert response.status_code == 400
    assert "at most 200 characters (it has 201)" in body and "at most 2000 characters (it has 2001)" in body
    assert not ReportSignature.objects.exists()


def test_the_sign_form_shows_the_services_refusal(client_for, project, manager, customer):
    """A version that failed cannot be signed: the service says so on the form."""
    version = rendered_version(project, requested_by=manager)
    ReportVersion.objects.filter(pk=version.pk).update(status=JobStatus.FAILED)
    response = client_for(customer).post(url("sign", project, 1), {**SIGNER, "statement": "I accept."})
    assert response.status_code == 400
    assert "Version 1 failed to render: only an issued version can be signed." in response.content.decode()
    assert not ReportSignature.objects.exists()


def test_a_draft_cannot_be_signed_on_its_page(client_for, project, manager, customer):
    rendered_version(project, requested_by=manager)
    response = client_for(customer).post(url("sign", project, 1), {**SIGNER, "statement": "I accept."})
    assert response.status_code == 400
    assert "Version 1 is a draft, not issued for acceptance" in response.content.decode()
    response = client_for(customer).post(url("reject", project, 1), REJECTER)
    assert response.status_code == 400 and "only an issued version can be signed" in response.content.decode()
    assert not ReportSignature.objects.exists()


def test_only_the_customer_gets_the_decision_forms_and_a_manager_may_not_sign(client_for, project, manager,
                                                                              technician, customer):
    issued_version(project, manager)
    for user in (manager, technician):
        body = page(client_for(user), "version", project, 1)
        assert 'id="sign-form"' not in body and 'id="reject-form"' not in body
        assert "the customer accepts or rejects it on this page" in body
    response = client_for(manager).post(url("sign", project, 1), {**SIGNER, "statement": "I accept."})
    assert response.status_code == 403
    assert not ReportSignature.objects.exists()


def test_once_a_version_is_signed_the_others_cannot_be(client_for, project, manager, customer, acceptance_ready,
                                                       render):
    first, second = render(project, manager), render(project, manager)
    report_version_issue(version=second, user=manager)
    report_version_sign(version=second, user=customer, name="Claire", title="CTO", statement="I accept.")
    body = page(client_for(customer), "version", project, first.number)
    assert 'id="sign-form"' not in body
    assert re.search(r"Version 2 was accepted on \d{4}-\d\d-\d\d; the report is final, so version 1 cannot be "
                     "signed.", body)
    response = client_for(customer).post(url("sign", project, first.number), {**SIGNER, "statement": "I accept."})
    assert response.status_code == 400 and "the report is final" in response.content.decode()


# --- issuing ----------------------------------------------------------------------------------------------


def test_a_manager_reads_what_holds_issuing_back_and_issues_once_nothing_does(client_for, project, manager,
                                                                             customer):
    stages_create_from_template(project=project)
    gates_recompute(project=project)
    rendered_version(project, requested_by=manager)
    client = client_for(manager)
    body = page(client, "version", project, 1)
    racking = Stage.objects.get(project=project, key="racking")
    refusal = f"Racking: {racking.gate_summary.rstrip('.')} ({racking.gate_missing_count} missing)."
    assert 'id="issue-refused"' in body and refusal in body and 'id="issue-form"' not in body
    response = client.post(url("issue", project, 1))  # posted anyway (a stale page): refused in the same words
    assert response.status_code == 400 and refusal in response.content.decode()
    assert 'id="issue-errors"' in response.content.decode()
    assert ReportVersion.objects.get().state == ReportState.DRAFT

    Stage.objects.filter(project=project).exclude(gate_key=ACCEPTANCE_SIGNED).update(status=StageStatus.SKIPPED)
    body = page(client, "version", project, 1)
    assert 'id="issue-form"' in body and ">Issue version 1 for acceptance</button>" in body
    response = client.post(url("issue", project, 1))
    assert response.status_code == 302 and response.url == url("version", project, 1)
    body = page(client, "version", project, 1)
    assert 'data-state="issued"' in body and "Issued for acceptance on" in body and "by mgr" in body
    assert 'id="issue"' not in body
    assert 'id="sign-form"' in page(client_for(customer), "version", project, 1)
    listed = page(client_for(customer), "list", project)
    assert "Waiting for the customer" in listed and "Read it and decide" in listed


def test_technicians_and_customers_may_not_issue(client_for, project, manager, technician, customer):
    rendered_version(project, requested_by=manager)
    for user in (technician, customer):
        assert client_for(user).post(url("issue", project, 1)).status_code == 403
        assert 'id="issue"' not in page(client_for(user), "version", project, 1)
    assert ReportVersion.objects.get().state == ReportState.DRAFT


# --- accepting with exceptions, rejecting -------------------------------------------------------------------


def test_the_customer_accepts_with_the_exceptions_the_page_lists(client_for, project, manager, customer):
    PunchItem.objects.create(project=project, title="Label the PDU feeds of rack A01", customer_visible=True,
                             severity=PunchSeverity.MINOR, opened_at=timezone.now(), object_label="A01")
    PunchItem.objects.create(project=project, title="Internal: order spare rails", opened_at=timezone.now())
    issued_version(project, manager)
    client = client_for(customer)
    body = page(client, "version", project, 1)
    assert "Open now: 2 open punch items (1 internal)." in body
    assert "Label the PDU feeds of rack A01" in body and "order spare rails" not in body
    assert ">Accept version 1 with exceptions</button>" in body
    assert 'name="decision" value="accepted_with_exceptions"' in body
    # A plain acceptance (a page loaded before the item was opened) is refused in words.
    response = client.post(url("sign", project, 1), {**SIGNER, "statement": "I accept.", "decision": "accepted"})
    assert response.status_code == 400 and "accept version 1 with exceptions" in response.content.decode()
    response = client.post(url("sign", project, 1), {**SIGNER, "statement": "I accept.",
                                                     "decision": "accepted_with_exceptions",
                                                     "comments": "Labels by Friday."})
    assert response.status_code == 302
    body = page(client, "version", project, 1)
    assert "Accepted with exceptions by <b>Claire Dubois</b>" in body and "Labels by Friday." in body
    assert 'id="exceptions-recorded"' in body and "Label the PDU feeds of rack A01" in body
    assert "And 1 internal punch item open" in body and "order spare rails" not in body


def test_the_customer_rejects_with_comments_and_a_manager_may_not(client_for, project, manager, customer):
    issued_version(project, manager)
    client = client_for(customer)
    response = client.post(url("reject", project, 1), {**REJECTER, "reject-comments": ""})
    assert response.status_code == 400 and "Say why you reject this version." in response.content.decode()
    assert client_for(manager).post(url("reject", project, 1), REJECTER).status_code == 403
    client = client_for(customer)
    response = client.post(url("reject", project, 1), REJECTER)
    assert response.status_code == 302 and response.url == url("version", project, 1)
    body = page(client, "version", project, 1)
    assert 'data-state="rejected"' in body and "Rejected by <b>Claire Dubois</b>" in body
    assert "The soak ran 48 hours, not 72." in body and 'id="sign-form"' not in body
    assert "Acceptance stays open" in body
    # The managers generate the next version, which they may issue in its place.
    managers = client_for(manager)
    assert "Generate a new version" in page(managers, "list", project)
    version = issued_version(project, manager, number=2)
    assert version.state == ReportState.ISSUED


# --- checking a file --------------------------------------------------------------------------------------


def test_checking_an_uploaded_file_finds_its_version_or_says_no_match(client_for, project, customer, real_version):
    client = client_for(customer)
    pdf = b"".join(client.get(url("file", project, 1, "pdf")).streaming_content)
    response = client.post(url("check", project), {"file": SimpleUploadedFile("report.pdf", pdf)})
    body = response.content.decode()
    assert response.status_code == 200 and 'data-matched="yes"' in body
    assert "Matches version 1 (full PDF), not signed." in body and real_version.pdf_sha256 in body
    changed = pdf[:100] + bytes([pdf[100] ^ 1]) + pdf[101:]
    response = client.post(url("check", project), {"file": SimpleUploadedFile("report.pdf", changed)})
    body = response.content.decode()
    assert 'data-matched="no"' in body and "No match" in body
    assert hashlib.sha256(changed).hexdigest() in body


def test_checking_by_hash_answers_json_with_the_signature(client_for, project, manager, customer):
    version = rendered_version(project, requested_by=manager)
    ReportSignature.objects.create(version=version, signed_by=customer, name="Claire Dubois", title="CTO",
                                   statement="OK", signed_at=version.finished_at, status=JobStatus.DONE)
    client = client_for(customer)
    answer = client.get(url("check", project), {"sha256": version.xlsx_sha256.upper(), "name": "book.xlsx"},
                        HTTP_ACCEPT="application/json").json()
    day = f"{version.finished_at:%Y-%m-%d}"
    assert answer["matched"] is True and answer["sha256"] == version.xlsx_sha256 and answer["file_name"] == "book.xlsx"
    assert answer["matches"] == [{
        "version": 1, "kind": "xlsx", "kind_label": "Excel workbook", "signed": True,
        "signed_at": version.finished_at.isoformat(), "signed_by": "Claire Dubois",
        "text": f"Matches version 1 (Excel workbook), signed {day} by Claire Dubois.",
        "url": url("version", project, 1),
    }]
    none = client.get(url("check", project), {"sha256": "ab" * 32}, HTTP_ACCEPT="application/json").json()
    assert none["matched"] is False and none["matches"] == [] and none["message"].startswith("No match")


def test_a_hash_of_another_project_is_no_match(client_for, project, other_project, manager, customer):
    theirs = rendered_version(other_project)
    answer = client_for(customer).get(url("check", project), {"sha256": theirs.pdf_sha256},
                                      HTTP_ACCEPT="application/json").json()
    assert answer["matched"] is False


def test_a_malformed_hash_is_refused_on_its_field(client_for, project, customer):
    client = client_for(customer)
    response = client.get(url("check", project), {"sha256": "not-a-hash"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400
    assert response.json() == {"errors": {"sha256": ["A SHA-256 is 64 hexadecimal characters."]}}
    response = client.get(url("check", project), {"sha256": "x" * 5000})
    assert response.status_code == 400 and "at most 100 characters" in response.content.decode()
    assert client.get(url("check", project)).url == url("list", project)  # nothing to check: back to the page


def test_an_upload_without_a_file_or_too_large_is_refused_before_it_is_read(client_for, project, customer, settings):
    client = client_for(customer)
    response = client.post(url("check", project), {}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and response.json() == {"errors": {"file": ["Choose the file to check."]}}
    settings.REPORT_MATCH_MAX_BYTES = 1000
    response = client.post(url("check", project), {"file": SimpleUploadedFile("big.pdf", b"x" * 1500)})
    assert response.status_code == 400 and "larger than 1,000 bytes" in response.content.decode()  # the service
    response = client.post(url("check", project), {"file": SimpleUploadedFile("huge.pdf", b"x" * 200_000)})
    # The view: this project has no rendered version, so no upload past the form's own overhead is read.
    assert response.status_code == 413 and "No version of the report is rendered yet" in response.content.decode()


def test_the_check_upload_needs_the_csrf_token(project, customer):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(customer)
    response = client.post(url("check", project), {"file": SimpleUploadedFile("a.pdf", b"%PDF")})
    assert response.status_code == 403
