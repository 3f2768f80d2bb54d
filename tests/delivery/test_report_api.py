"""The acceptance report's API (delivery/reports/api.py): versions listed and read by every member (a
constant number of queries), requested by managers (202 with the job status URL), signed by the customer
only, files downloaded as attachments under their names, and a file or a SHA-256 checked against the
versions. Outsiders get 404 from every endpoint, as if the project did not exist."""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from core.choices import JobStatus
from delivery.models import PDF_CONTENT_TYPE, XLSX_CONTENT_TYPE, ReportSignature, ReportVersion
from tests.factories import UserFactory
from tests.support import count_queries

from .access_samples_report_api import rendered_version

pytestmark = pytest.mark.django_db

LIST = "/api/report-versions/"
VERIFY = "/api/report-versions/verify/"


def detail(version) -> str:
    return f"{LIST}{version.pk}/"


def file_url(version, kind: str) -> str:
    return f"{LIST}{version.pk}/files/{kind}/"


def stored_bytes(version, kind: str) -> bytes:
    with version.file_of(kind).open("rb") as stored:
        return stored.read()


@pytest.fixture
def version(project, manager):
    return rendered_version(project, user=manager)


@pytest.fixture
def staff(db):
    return UserFactory(username="staffer", is_staff=True)


# --- listing and reading -----------------------------------------------------------------------------------


def test_members_list_their_projects_versions_and_filter_by_project(api_for, project, other_project, customer,
                                                                    outsider, version):
    theirs = rendered_version(other_project)
    rows = api_for(customer).get(LIST).json()["results"]
    assert [(row["project"], row["number"]) for row in rows] == [("ACME-72", 1)]
    assert {f["kind"] for f in rows[0]["files"]} == {"pdf", "summary_pdf", "xlsx"}
    assert rows[0]["files"][0]["url"].endswith(file_url(version, "pdf"))
    assert rows[0]["status_url"].endswith(f"/api/jobs/delivery.reportversion/{version.pk}/")
    assert api_for(customer).get(LIST, {"project": "OTHER-8"}).json()["count"] == 0
    assert [row["id"] for row in api_for(outsider).get(LIST).json()["results"]] == [theirs.pk]


def test_the_list_costs_the_same_queries_for_one_version_as_for_six(api_for, project, manager, customer):
    from django.utils import timezone

    rendered_version(project, number=1, user=manager)
    one = count_queries(lambda: api_for(customer).get(LIST))
    for number in range(2, 7):
        signed = rendered_version(project, number=number, user=manager)
    ReportSignature.objects.create(version=signed, signed_by=customer, name="Cara Customer", title="CTO",
                                   statement="Accepted.", signed_at=timezone.now())
    response = api_for(customer).get(LIST)
    assert response.json()["count"] == 6 and response.json()["results"][0]["signature"]["name"] == "Cara Customer"
    assert count_queries(lambda: api_for(customer).get(LIST)) == one


def test_an_outsider_gets_404_for_a_version_its_files_and_its_job(api_for, outsider, version):
    client = api_for(outsider)
    assert client.get(detail(version)).status_code == 404
    assert client.get(file_url(version, "pdf")).status_code == 404
    assert client.get(f"/api/jobs/delivery.reportversion/{version.pk}/").status_code == 404


# --- requesting a version ----------------------------------------------------------------------------------


def test_a_manager_requests_a_version_and_gets_202_with_its_job_status_url(api_for, project, manager, version):
    client = api_for(manager)
    response = client.post(LIST, {"project": "ACME-72"}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["number"], body["status"], body["files"]) == (2, JobStatus.QUEUED, [])
    assert body["status_url"].endswith(f"/api/jobs/delivery.reportversion/{body['id']}/")
    assert client.get(body["status_url"]).json()["status"] == JobStatus.QUEUED
    # A double click does not queue a second one.
    again = client.post(LIST, {"project": "ACME-72"}, format="json")
    assert again.status_code == 400 and "Version 2 is queued already" in again.json()["non_field_errors"][0]


def test_only_managers_request_and_an_outsider_learns_nothing(api_for, project, technician, customer, outsider):
    for member in (technician, customer):
        assert api_for(member).post(LIST, {"project": "ACME-72"}, format="json").status_code == 403
    real = api_for(outsider).post(LIST, {"project": "ACME-72"}, format="json")
    made_up = api_for(outsider).post(LIST, {"project": "NO-SUCH"}, format="json")
    assert real.status_code == made_up.status_code == 404 and real.json() == made_up.json()
    assert not ReportVersion.objects.exists()


def test_a_request_without_a_project_names_the_field(api_for, manager):
    response = api_for(manager).post(LIST, {}, format="json")
    assert response.status_code == 400 and "project" in response.json()


# --- files -------------------------------------------------------------------------------------------------


def test_a_file_downloads_as_an_attachment_under_its_name_and_type(api_for, customer, version):
    response = api_for(customer).get(file_url(version, "pdf"))
    assert response.status_code == 200
    assert response["Content-Type"] == PDF_CONTENT_TYPE
    assert response["Content-Disposition"] == 'attachment; filename="ACME-72-acceptance-v1.pdf"'
    assert b"".join(response.streaming_content) == stored_bytes(version, "pdf")
    workbook = api_for(customer).get(file_url(version, "xlsx"))
    assert workbook["Content-Type"] == XLSX_CONTENT_TYPE
    assert workbook["Content-Disposition"] == 'attachment; filename="ACME-72-acceptance-v1.xlsx"'
    summary = api_for(customer).get(file_url(version, "summary_pdf"))
    assert summary["Content-Disposition"] == 'attachment; filename="ACME-72-acceptance-v1-summary.pdf"'


def test_a_file_not_rendered_is_a_404(api_for, project, manager, customer, version):
    client = api_for(customer)
    assert client.get(file_url(version, "signed_pdf")).status_code == 404  # not signed
    assert client.get(file_url(version, "exe")).status_code == 404
    queued = ReportVersion.objects.create(project=project, number=2, requested_by=manager)
    assert client.get(file_url(queued, "pdf")).status_code == 404


# --- signing -----------------------------------------------------------------------------------------------


def test_only_a_customer_signs_and_outsiders_get_404(api_for, manager, technician, customer, staff, outsider,
                                                     version):
    url = f"{detail(version)}sign/"
    payload = {"name": "Cara Customer", "title": "CTO"}
    for person in (manager, staff):
        refused = api_for(person).post(url, payload, format="json")
        assert refused.status_code == 403
        assert "Managers and staff may not sign for the customer" in refused.json()["detail"]
    assert api_for(technician).post(url, payload, format="json").status_code == 403
    assert api_for(outsider).post(url, payload, format="json").status_code == 404
    missing = api_for(customer).post(url, {"name": "Cara Customer"}, format="json")
    assert missing.status_code == 400 and "title" in missing.json()
    assert not ReportSignature.objects.exists()

    signed = api_for(customer).post(url, payload, format="json")
    assert signed.status_code == 200, signed.content
    signature = signed.json()["signature"]
    assert (signature["name"], signature["title"], signature["signed_by"]) == ("Cara Customer", "CTO", "cust")
    assert signature["statement"].startswith("On behalf of Example AI Lab, I accept")  # the default statement
    assert signature["pdf_sha256"] == version.pdf_sha256
    assert signature["status_url"].endswith(f"/api/jobs/delivery.reportsignature/{version.signature.pk}/")
    again = api_for(customer).post(url, payload, format="json")
    assert again.status_code == 400
    assert "Version 1 was signed on" in again.json()["non_field_errors"][0]
    assert "the report is final" in again.json()["non_field_errors"][0]


def test_once_signed_no_new_version_may_be_requested(api_for, manager, customer, version):
    api_for(customer).post(f"{detail(version)}sign/", {"name": "Cara", "title": "CTO"}, format="json")
    refused = api_for(manager).post(LIST, {"project": "ACME-72"}, format="json")
    assert refused.status_code == 400 and "the report is final" in refused.json()["non_field_errors"][0]


# --- checking a file ---------------------------------------------------------------------------------------


def test_verify_is_open_to_every_member_and_404_to_outsiders(api_for, manager, technician, customer, outsider,
                                                             version):
    by_hash = {"project": "ACME-72", "sha256": version.pdf_sha256.upper()}
    for member in (manager, technician, customer):
        response = api_for(member).post(VERIFY, by_hash, format="json")
        assert response.status_code == 200, response.content
        [match] = response.json()["matches"]
        assert (match["number"], match["kind"], match["is_signed_copy"], match["signed"]) == (1, "pdf", False, False)
    real = api_for(outsider).post(VERIFY, by_hash, format="json")
    made_up = api_for(outsider).post(VERIFY, {**by_hash, "project": "NO-SUCH"}, format="json")
    assert real.status_code == made_up.status_code == 404 and real.json() == made_up.json()


def test_verify_a_file_and_a_file_one_byte_changed(api_for, customer, version):
    content = stored_bytes(version, "xlsx")
    same = api_for(customer).post(VERIFY, {"project": "ACME-72", "file": SimpleUploadedFile("a.xlsx", content)},
                                  format="multipart")
    assert same.status_code == 200 and same.json()["matched"]
    assert same.json()["sha256"] == hashlib.sha256(content).hexdigest()
    assert [m["kind"] for m in same.json()["matches"]] == ["xlsx"]
    changed = content[:-1] + bytes([content[-1] ^ 1])
    other = api_for(customer).post(VERIFY, {"project": "ACME-72", "file": SimpleUploadedFile("a.xlsx", changed)},
                                   format="multipart")
    assert other.status_code == 200 and other.json() == {"sha256": hashlib.sha256(changed).hexdigest(),
                                                         "matched": False, "matches": []}


def test_verify_names_what_is_wrong_with_its_input(api_for, customer, version):
    client = api_for(customer)
    bad = client.post(VERIFY, {"project": "ACME-72", "sha256": "not-a-hash"}, format="json")
    assert bad.status_code == 400 and "sha256" in bad.json()
    neither = client.post(VERIFY, {"project": "ACME-72"}, format="json")
    assert neither.status_code == 400 and "non_field_errors" in neither.json()
    assert client.post(VERIFY, {"sha256": version.pdf_sha256}, format="json").json().keys() == {"project"}


def test_a_file_larger_than_the_limit_is_refused_on_its_field(api_for, customer, version, settings):
    settings.REPORT_MATCH_MAX_BYTES = 10
    response = api_for(customer).post(
        VERIFY, {"project": "ACME-72", "file": SimpleUploadedFile("big.pdf", b"x" * 11)}, format="multipart")
    assert response.status_code == 400 and "file" in response.json()
