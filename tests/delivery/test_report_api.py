"""The acceptance report's API (delivery/reports/api.py): versions listed and read by every member (a
constant number of queries), requested by managers (202 with the job status URL; after an acceptance, an
as-built addendum), issued by managers (400 naming what is left), accepted (plainly or with exceptions) or
rejected by the customer only and only once issued, files downloaded as attachments under their names, and
a file or a SHA-256 checked against the versions. Outsiders get 404 from every endpoint, as if the project
did not exist."""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from cabling.models import Swap
from core.choices import JobStatus
from delivery.choices import PunchSeverity, ReportState, StageStatus
from delivery.models import PDF_CONTENT_TYPE, XLSX_CONTENT_TYPE, PunchItem, ReportSignature, ReportVersion, Stage
from delivery.stages.services import gates_recompute, stages_create_from_template
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


def action(version, name: str) -> str:
    return f"{detail(version)}{name}/"


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
    rendered_version(project, number=1, user=manager)
    one = count_queries(lambda: api_for(customer).get(LIST))
    versions = {number: rendered_version(project, number=number, user=manager) for number in range(2, 7)}
    # Every state's fields filled: who issued, what superseded, the decision, the version an addendum adds to.
    now = timezone.now()
    ReportVersion.objects.filter(pk=versions[3].pk).update(state=ReportState.SUPERSEDED, issued_at=now,
                                                           issued_by=manager, superseded_at=now,
                                                           superseded_by=versions[5])
    ReportVersion.objects.filter(pk=versions[5].pk).update(state=ReportState.ACCEPTED, issued_at=now,
                                                           issued_by=manager)
    ReportVersion.objects.filter(pk=versions[6].pk).update(addendum_to=versions[5])
    ReportSignature.objects.create(version=versions[5], signed_by=customer, name="Cara Customer", title="CTO",
                                   statement="Accepted.", signed_at=now)
    response = api_for(customer).get(LIST)
    rows = {row["number"]: row for row in response.json()["results"]}
    assert response.json()["count"] == 6 and rows[5]["signature"]["name"] == "Cara Customer"
    assert (rows[3]["superseded_by"], rows[3]["issued_by"], rows[6]["addendum_to"]) == (5, "mgr", 5)
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
    draft = api_for(customer).post(url, payload, format="json")
    assert draft.status_code == 400  # a version not issued cannot be signed, in words
    assert draft.json()["non_field_errors"] == [
        "Version 1 is a draft, not issued for acceptance: only an issued version can be signed. The managers issue "
        "a version once the stages before acceptance pass their gates or are waived."]
    assert api_for(manager).post(action(version, "issue"), format="json").status_code == 200
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
    assert (signature["decision"], signature["exceptions"]) == ("accepted", {})
    assert signed.json()["state"] == "accepted" and signed.json()["issued_by"] == "mgr"
    assert signature["pdf_sha256"] == version.pdf_sha256
    assert signature["status_url"].endswith(f"/api/jobs/delivery.reportsignature/{version.signature.pk}/")
    again = api_for(customer).post(url, payload, format="json")
    assert again.status_code == 400
    assert "Version 1 was accepted on" in again.json()["non_field_errors"][0]
    assert "the report is final" in again.json()["non_field_errors"][0]


def test_once_accepted_a_new_version_is_an_as_built_addendum_made_only_after_a_change(
        api_for, project, manager, technician, customer, version):
    api_for(manager).post(action(version, "issue"), format="json")
    api_for(customer).post(action(version, "sign"), {"name": "Cara", "title": "CTO"}, format="json")
    refused = api_for(manager).post(LIST, {"project": "ACME-72"}, format="json")
    assert refused.status_code == 400
    assert "the report is final. Nothing changed on the floor since" in refused.json()["non_field_errors"][0]
    from tests.delivery.stages_world import build_world

    world = build_world(project)
    Swap.objects.create(project=project, kind="cable", cable=world.c1, old_serial="OLD-1", new_serial="NEW-1",
                        reason="Crushed.", recorded_by=technician, recorded_at=version.signature.signed_at)
    assert api_for(manager).post(LIST, {"project": "ACME-72"}, format="json").status_code == 400  # not after it
    Swap.objects.create(project=project, kind="cable", cable=world.c2, old_serial="OLD-2", new_serial="NEW-2",
                        reason="Crushed.", recorded_by=technician, recorded_at=timezone.now())
    made = api_for(manager).post(LIST, {"project": "ACME-72"}, format="json")
    assert made.status_code == 202, made.content
    assert (made.json()["number"], made.json()["addendum_to"], made.json()["state"]) == (2, 1, "draft")


# --- issuing -----------------------------------------------------------------------------------------------


def test_a_manager_issues_technicians_and_customers_may_not_and_outsiders_get_404(
        api_for, manager, technician, customer, outsider, version):
    url = action(version, "issue")
    for person, code in ((technician, 403), (customer, 403), (outsider, 404)):
        assert api_for(person).post(url, format="json").status_code == code
    response = api_for(manager).post(url, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["state"], body["state_label"], body["issued_by"]) == ("issued", "Issued for acceptance", "mgr")
    assert body["issued_at"] and body["signature"] is None
    again = api_for(manager).post(url, format="json")
    assert again.status_code == 400 and "is issued already" in again.json()["non_field_errors"][0]
    issued = api_for(customer).get(LIST, {"state": "issued"}).json()
    assert [row["number"] for row in issued["results"]] == [1]


def test_issuing_is_refused_naming_the_stages_whose_gates_fail(api_for, project, manager, version):
    stages_create_from_template(project=project)
    gates_recompute(project=project)
    Stage.objects.filter(project=project, key="site_readiness").update(status=StageStatus.SKIPPED)
    refused = api_for(manager).post(action(version, "issue"), format="json")
    assert refused.status_code == 400
    said = refused.json()["non_field_errors"]
    assert said[0].startswith("Version 1 cannot be issued for acceptance yet:") and "What is left:" in said[0]
    racking = Stage.objects.get(project=project, key="racking")
    assert f"Racking: {racking.gate_summary.rstrip('.')} ({racking.gate_missing_count} missing)." in said
    assert not any(line.startswith("Site readiness") for line in said)
    assert ReportVersion.objects.get(pk=version.pk).state == ReportState.DRAFT


# --- the customer's decision -------------------------------------------------------------------------------


def test_accepting_with_exceptions_lists_them_in_the_signature(api_for, project, manager, customer, version):
    PunchItem.objects.create(project=project, title="Re-seat the optic of C00009", severity=PunchSeverity.MINOR,
                             customer_visible=True, opened_at=version.generated_at)
    api_for(manager).post(action(version, "issue"), format="json")
    payload = {"name": "Cara Customer", "title": "CTO"}
    plain = api_for(customer).post(action(version, "sign"), payload, format="json")
    assert plain.status_code == 400 and "accept version 1 with exceptions" in plain.json()["non_field_errors"][0]
    unknown = api_for(customer).post(action(version, "sign"), {**payload, "decision": "rejected"}, format="json")
    assert unknown.status_code == 400 and "decision" in unknown.json()
    signed = api_for(customer).post(action(version, "sign"), {**payload, "decision": "accepted_with_exceptions",
                                                               "comments": "Minor: fix it next visit."},
                                    format="json")
    assert signed.status_code == 200, signed.content
    body = signed.json()
    assert body["state"] == "accepted_with_exceptions"
    signature = body["signature"]
    assert (signature["decision"], signature["comments"]) == ("accepted_with_exceptions", "Minor: fix it next visit.")
    assert [item["title"] for item in signature["exceptions"]["punch_items"]] == ["Re-seat the optic of C00009"]
    assert signature["exceptions"]["internal_punch_items"] == 0 and signature["exceptions"]["waivers"] == []


def test_the_customer_rejects_with_comments_and_nobody_else_may(api_for, manager, technician, customer, outsider,
                                                                version):
    url = action(version, "reject")
    payload = {"name": "Cara Customer", "title": "CTO", "comments": "Soak results are missing."}
    not_issued = api_for(customer).post(url, payload, format="json")
    assert not_issued.status_code == 400 and "only an issued version" in not_issued.json()["non_field_errors"][0]
    api_for(manager).post(action(version, "issue"), format="json")
    for person, code in ((manager, 403), (technician, 403), (outsider, 404)):
        assert api_for(person).post(url, payload, format="json").status_code == code
    missing = api_for(customer).post(url, {"name": "Cara Customer", "title": "CTO"}, format="json")
    assert missing.status_code == 400 and "comments" in missing.json()
    rejected = api_for(customer).post(url, payload, format="json")
    assert rejected.status_code == 200, rejected.content
    assert rejected.json()["state"] == "rejected"
    assert (rejected.json()["signature"]["decision"], rejected.json()["signature"]["comments"]) == (
        "rejected", "Soak results are missing.")
    assert api_for(customer).get(LIST, {"signed": "true"}).json()["count"] == 0  # a rejection is no signature
    # The next version: numbered on, a draft to issue in place of the rejected one.
    again = api_for(manager).post(LIST, {"project": "ACME-72"}, format="json")
    assert again.status_code == 202 and (again.json()["number"], again.json()["addendum_to"]) == (2, None)


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
