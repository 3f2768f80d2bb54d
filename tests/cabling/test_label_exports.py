"""Label sheet exports: the page starts one (inventory editors), shows its progress from the one job
status endpoint, then a download link; the PDF, read back with pdftotext, holds the labels of the
scope (whole fabric, a rack, a network) with no cap; a task run twice renders once; a failure is
recorded on the row; every member downloads, customers cannot start one, outsiders get 404; the page's
query count does not grow with the exports. The direct download's 400 points at the exports."""

from __future__ import annotations

import pytest
from django.urls import reverse

from cabling.choices import LabelScope, LabelStockName
from cabling.exports import labels_pdf as labels_module
from cabling.models import LabelSheetExport
from cabling.services import label_sheet_export_run, label_sheet_export_start
from cabling.tasks import render_label_sheet
from core.choices import JobStatus
from tests.factories import UserFactory
from tests.support import count_queries

from .test_label_pdf import printed_labels

pytestmark = pytest.mark.django_db


def exports_url(project) -> str:
    return reverse("cabling:label-exports", args=[project.code])


def download_url(export) -> str:
    return reverse("cabling:label-export-download", args=[export.project.code, export.pk])


def job_url(export) -> str:
    return reverse("api-job-status", args=[export.job_type, export.pk])


def pdf_of(export) -> bytes:
    export.refresh_from_db()
    with export.output.open("rb") as pdf:
        return pdf.read()


def started(project, user=None, **scope) -> LabelSheetExport:
    """An export started through the service, not yet rendered (its task waits for the commit)."""
    return label_sheet_export_start(project=project, user=user or UserFactory(), **scope)


# --- the page: start, progress, download ----------------------------------------------------------


def test_start_follow_the_progress_then_download(client_for, technician, fabric,
                                                 django_capture_on_commit_callbacks):
    client = client_for(technician)
    body = client.get(exports_url(fabric.project)).content.decode()
    assert 'id="label-export-start"' in body and "No label sheet yet." in body
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(exports_url(fabric.project), {"scope": "all", "stock": "L7651"})
    assert response.status_code == 302 and response["Location"] == exports_url(fabric.project)
    export = LabelSheetExport.objects.get(project=fabric.project)
    assert (export.status, export.scope, export.requested_by) == (JobStatus.QUEUED, LabelScope.ALL, technician)
    # Queued: the row polls the one job status endpoint and offers no download yet.
    body = client.get(exports_url(fabric.project)).content.decode()
    assert f'data-progress-url="{job_url(export)}"' in body and "data-download" not in body
    assert client.get(job_url(export)).json()["status"] == JobStatus.QUEUED
    assert client.get(download_url(export)).status_code == 404
    for callback in queued:  # the commit: the task renders the sheet
        callback()
    status = client.get(job_url(export)).json()
    assert (status["status"], status["done"], status["total"], status["settled"]) == (JobStatus.DONE, 17, 17, True)
    body = client.get(exports_url(fabric.project)).content.decode()
    assert f'href="{download_url(export)}"' in body and "data-progress-url" not in body
    download = client.get(download_url(export))
    assert download.status_code == 200 and download["Content-Type"] == "application/pdf"
    assert download["Content-Disposition"] == f'attachment; filename="ACME-72-labels-all-l7651-{export.pk}.pdf"'
    labels = printed_labels(b"".join(download.streaming_content))
    assert len(labels) == 17 and labels[0] == "C00001 A01-U10-gpu-001-ib0/0 (A) to N01-U01-leaf-01-p1"
    assert labels[-1] == "O00001 N01-U01-leaf-01-mgmt (B1) to A01-U10-gpu-001-bmc"
    assert not any("FOREIGN" in label for label in labels)


def test_a_rack_prints_the_ends_in_it_and_a_network_both_ends_of_its_cables(fabric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        rack = started(fabric.project, scope=LabelScope.RACK, rack="A01")
        oob = started(fabric.project, scope=LabelScope.NETWORK, network="oob",
                      stock=LabelStockName.THERMAL_2X1)
    servers = printed_labels(pdf_of(rack))
    assert [label.split()[0] for label in servers] == ["C00001", "C00002", "C00003", "C00004", "C00005", "O00001"]
    assert all("(A)" in label and label.split()[1].startswith("A01-") for label in servers)
    assert printed_labels(pdf_of(oob), labels_module.STOCKS["thermal-2x1"]) == [
        "O00001 A01-U10-gpu-001-bmc (A) to N01-U01-leaf-01-mgmt",
        "O00001 N01-U01-leaf-01-mgmt (B1) to A01-U10-gpu-001-bmc",
    ]
    assert oob.download_name == f"ACME-72-labels-oob-thermal-2x1-{oob.pk}.pdf"


def test_an_export_has_no_cap_and_reports_progress_as_it_goes(project, add_cables, monkeypatch,
                                                            django_capture_on_commit_callbacks):
    monkeypatch.setattr(labels_module, "PROGRESS_EVERY", 25)
    add_cables(project, 60, 0)  # 120 labels, more than a (patched) direct download allows
    monkeypatch.setattr("cabling.views.MAX_LABELS", 100)
    monkeypatch.setattr(labels_module, "MAX_LABELS", 100)
    seen = []
    real_write = labels_module.write_labels

    def write_labels(target, cables, *, progress, **kwargs):
        return real_write(target, cables, progress=lambda done: (seen.append(done), progress(done)), **kwargs)

    monkeypatch.setattr("cabling.services.label_exports.write_labels", write_labels)
    with django_capture_on_commit_callbacks(execute=True):
        export = started(project)
    assert seen == [25, 50, 75, 100]
    export.refresh_from_db()
    assert (export.status, export.progress_done, export.progress_total) == (JobStatus.DONE, 120, 120)
    assert len(printed_labels(pdf_of(export))) == 120


def test_the_form_refuses_a_rack_the_project_does_not_have(client_for, manager, fabric):
    client = client_for(manager)
    response = client.post(exports_url(fabric.project), {"scope": "rack", "rack": "X01", "stock": "L7651"})
    assert response.status_code == 200 and "This project has no rack X01." in response.content.decode()
    missing = client.post(exports_url(fabric.project), {"scope": "network", "network": "", "stock": "L7651"})
    assert "Choose the network to print." in missing.content.decode()
    assert not LabelSheetExport.objects.exists()


def test_the_form_keeps_only_what_the_scope_uses_and_comes_set_from_the_cable_list(client_for, manager, fabric,
                                                                                  django_capture_on_commit_callbacks):
    client = client_for(manager)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(exports_url(fabric.project), {"scope": "all", "rack": "A01", "network": "oob", "stock": "L7651"})
    export = LabelSheetExport.objects.get()
    assert (export.scope, export.rack, export.network, export.status) == ("all", "", "", JobStatus.DONE)
    body = client.get(exports_url(fabric.project), {"rack": "N01"}).content.decode()
    assert 'value="rack" required id="id_scope_1" checked>' in body and 'name="rack" value="N01"' in body
    cables = client.get(reverse("cabling:cable-list", args=[fabric.project.code]), {"network": "oob"})
    assert f'href="{exports_url(fabric.project)}?network=oob" data-label-exports' in cables.content.decode()


def test_the_direct_download_over_its_cap_points_at_the_exports(client_for, manager, fabric, monkeypatch):
    monkeypatch.setattr("cabling.views.MAX_LABELS", 10)
    response = client_for(manager).get(reverse("cabling:labels", args=[fabric.project.code]), {"rack": "N01"})
    assert response.status_code == 400
    assert f"http://testserver{exports_url(fabric.project)}?rack=N01" in response.content.decode()


# --- the task -------------------------------------------------------------------------------------


def test_running_the_task_twice_renders_once(fabric, monkeypatch):
    export = started(fabric.project)  # its task never ran: no commit in this test
    assert render_label_sheet.delay(export.pk).get() == JobStatus.DONE
    first = pdf_of(export)
    calls = []
    monkeypatch.setattr("cabling.services.label_exports.write_labels", lambda *a, **k: calls.append(a))
    assert render_label_sheet.delay(export.pk).get() == JobStatus.DONE
    assert calls == [] and pdf_of(export) == first


def test_a_failure_is_recorded_on_the_row(client_for, manager, fabric, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("cabling.services.label_exports.write_labels", broken)
    export = label_sheet_export_run(export_id=started(fabric.project).pk)
    assert export.status == JobStatus.FAILED and not export.output
    assert export.errors == ["The label sheet could not be rendered (OSError: disk full)."]
    body = client_for(manager).get(exports_url(fabric.project)).content.decode()
    assert "disk full" in body and "data-download" not in body
    assert client_for(manager).get(download_url(export)).status_code == 404


# --- who may --------------------------------------------------------------------------------------


@pytest.fixture
def rendered(fabric):
    return label_sheet_export_run(export_id=started(fabric.project).pk)


@pytest.mark.parametrize("role", ["manager", "technician", "customer"])
def test_every_member_sees_the_exports_and_downloads(request, client_for, rendered, role):
    client = client_for(request.getfixturevalue(role))
    assert client.get(exports_url(rendered.project)).status_code == 200
    assert client.get(download_url(rendered)).status_code == 200


def test_customers_cannot_start_an_export(client_for, customer, fabric):
    client = client_for(customer)
    assert 'id="label-export-start"' not in client.get(exports_url(fabric.project)).content.decode()
    assert client.post(exports_url(fabric.project), {"scope": "all", "stock": "L7651"}).status_code == 403
    assert not LabelSheetExport.objects.exists()


def test_outsiders_get_404_and_anonymous_visitors_log_in(client, client_for, outsider, rendered):
    for address in (exports_url(rendered.project), download_url(rendered)):
        response = client.get(address)
        assert response.status_code == 302 and "/login/" in response["Location"], address
    outside = client_for(outsider)
    for address in (exports_url(rendered.project), download_url(rendered), job_url(rendered)):
        assert outside.get(address).status_code == 404, address
    assert outside.post(exports_url(rendered.project), {"scope": "all", "stock": "L7651"}).status_code == 404
    assert LabelSheetExport.objects.count() == 1


def test_another_projects_export_is_404_under_this_project(client_for, manager, project, other_project, fabric):
    theirs = label_sheet_export_run(export_id=started(other_project).pk)
    address = reverse("cabling:label-export-download", args=[project.code, theirs.pk])
    assert client_for(manager).get(address).status_code == 404


def test_the_exports_page_query_count_does_not_grow(client_for, manager, fabric, django_assert_num_queries):
    client = client_for(manager)
    label_sheet_export_run(export_id=started(fabric.project, user=manager).pk)
    started(fabric.project)

    def get():
        assert client.get(exports_url(fabric.project)).status_code == 200

    few = count_queries(get)
    for _ in range(4):
        label_sheet_export_run(export_id=started(fabric.project, user=UserFactory()).pk)
        started(fabric.project, scope=LabelScope.NETWORK, network="compute")
    with django_assert_num_queries(few):
        body = client.get(exports_url(fabric.project)).content.decode()
    assert body.count("<tr data-export=") == 10 and body.count("data-download=") == 5
