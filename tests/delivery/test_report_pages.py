"""The acceptance report pages as every kind of person: the versions with their progress, figures, files,
sizes and SHA-256; a manager generates a version (rendered at once: tasks are eager here); the downloads'
names, headers and bytes; the customer's sign form with its refusals; checking a file by upload and by
hash, as a page and as JSON; outsiders get 404 everywhere, anonymous visitors the login page; the list's
query count does not grow with the versions."""

from __future__ import annotations

import hashlib
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core.choices import JobStatus
from delivery.choices import StageStatus
from delivery.models import ReportSignature, ReportVersion, Stage
from delivery.reports.gates import ACCEPTANCE_SIGNED
from delivery.reports.sections import acceptance_statement_default
from delivery.reports.services import report_version_request, report_version_sign
from delivery.stages.services import stages_create_from_template

from .access_samples_report_pages import rendered_version, stand_in_bytes

pytestmark = pytest.mark.django_db

SIGNER = {"name": "Claire Dubois", "title": "Head of infrastructure", "has_read": "on"}


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
    assert 'id="sign-form"' in body


def test_outsiders_get_404_everywhere_and_anonymous_visitors_the_login_page(client, client_for, project, outsider,
                                                                            manager):
    rendered_version(project, requested_by=manager)
    gets = [url("list", project), url("version", project, 1), url("file", project, 1, "pdf"),
            url("check", project) + "?sha256=" + "0" * 64]
    posts = [url("generate", project), url("sign", project, 1), url("check", project)]
    for address in gets + posts:
        response = client.get(address) if address in gets else client.post(address, {})
        assert response.status_code == 302 and response.url.startswith(reverse("login")), address
    them = client_for(outsider)
    for address in gets:
        assert them.get(address).status_code == 404, address
    for address in posts:
        assert them.post(address, {**SIGNER, "statement": "x"}).status_code == 404, address
    assert not ReportSignature.objects.exists() and ReportVersion.objects.count() == 1


def test_an_unknown_version_or_file_is_a_404(client_for, project, manager, customer):
    rendered_version(project, requested_by=manager)
    client = client_for(customer)
    assert client.get(url("version", project, 2)).status_code == 404
    assert client.get(url("file", project, 1, "signed_pdf")).status_code == 404  # not rendered: not signed
    assert client.get(url("file", project, 1, "snapshot")).status_code == 404  # not a file people download
    assert client.get(url("file", project, 1, "passwd")).status_code == 404


def test_the_list_costs_the_same_queries_with_1_and_5_versions(client_for, project, manager,
                                                               django_assert_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(manager)
    rendered_version(project, number=1, requested_by=manager)
    page(client, "list", project)  # warm: session, content types
    with CaptureQueriesContext(connection) as one:
        page(client, "list", project)
    for number in range(2, 6):
        rendered_version(project, number=number, requested_by=manager)
    with django_assert_num_queries(len(one.captured_queries)):
        body = page(client, "list", project)
    assert body.count('class="report-version ') == 5


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


def test_generating_after_a_signature_is_refused_in_the_services_words(client_for, project, manager, customer):
    version = rendered_version(project, requested_by=manager)
    ReportSignature.objects.create(version=version, signed_by=customer, name="Claire", title="CTO", statement="OK",
                                   signed_at=version.finished_at, status=JobStatus.DONE)
    client = client_for(manager)
    body = page(client, "list", project)
    assert "Generate a new version" not in body and "the report is final" in body
    response = client.post(url("generate", project))
    assert response.status_code == 400
    assert re.search(r"Version 1 was signed on \d{4}-\d\d-\d\d; the report is final\.", response.content.decode())
    assert ReportVersion.objects.count() == 1


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


def test_the_customer_signs_and_acceptance_completes(client_for, project, manager, customer, real_version,
                                                     acceptance_ready, django_capture_on_commit_callbacks):
    customer.first_name, customer.last_name = "Claire", "Dubois"
    customer.save()
    client = client_for(customer)
    form = page(client, "version", project, 1)
    assert 'value="Claire Dubois"' in form  # the signer's name, prefilled
    assert acceptance_statement_default(project).split("\n")[0] in form  # the standard statement, prefilled
    assert "I have read version 1 of the acceptance report" in form
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
    rendered_version(project, requested_by=manager)
    data = {**SIGNER, "statement": "I accept."}
    del data[missing]
    response = client_for(customer).post(url("sign", project, 1), data)
    assert response.status_code == 400
    assert error in response.content.decode() and 'id="sign-form"' in response.content.decode()
    assert not ReportSignature.objects.exists()


def test_overlong_answers_are_refused_on_their_fields(client_for, project, manager, customer):
    rendered_version(project, requested_by=manager)
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
    assert "Version 1 is failed: only a rendered version can be signed." in response.content.decode()
    assert not ReportSignature.objects.exists()


def test_only_the_customer_gets_the_sign_form_and_a_manager_may_not_sign(client_for, project, manager, technician,
                                                                         customer):
    rendered_version(project, requested_by=manager)
    for user in (manager, technician):
        body = page(client_for(user), "version", project, 1)
        assert 'id="sign-form"' not in body and "the customer signs it on this page" in body
    response = client_for(manager).post(url("sign", project, 1), {**SIGNER, "statement": "I accept."})
    assert response.status_code == 403
    assert not ReportSignature.objects.exists()


def test_once_a_version_is_signed_the_others_cannot_be(client_for, project, manager, customer, acceptance_ready,
                                                       render):
    first, second = render(project, manager), render(project, manager)
    report_version_sign(version=second, user=customer, name="Claire", title="CTO", statement="I accept.")
    body = page(client_for(customer), "version", project, first.number)
    assert 'id="sign-form"' not in body and "Another version is signed" in body
    response = client_for(customer).post(url("sign", project, first.number), {**SIGNER, "statement": "I accept."})
    assert response.status_code == 400 and "the report is final" in response.content.decode()


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
