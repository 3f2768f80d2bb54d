"""Download names in any script (issue 12): a rack named "机柜-01" is in the name of its label sheet and cut
sheet (RFC 6266 `filename*`, with an ASCII fallback, through core.http), the label export's file (Django's
FileResponse writes `filename*` too), and the rack's labels print it. Every member may download, an outsider
gets 404, a customer may not start an export (403)."""

from __future__ import annotations

import io
import re
from urllib.parse import unquote

import pytest
from django.urls import reverse
from openpyxl import load_workbook

from cabling.models import LabelSheetExport
from core.choices import JobStatus
from core.http import content_disposition
from inventory.models import Rack

from .test_label_pdf import printed_labels

pytestmark = pytest.mark.django_db

RACK = "机柜-01"
FILENAME_STAR = re.compile(r"filename\*=utf-8''(?P<encoded>[^\s;\"]+)", re.IGNORECASE)


def download_name(response) -> str:
    """The name a browser saves the file as: `filename*` when given (RFC 6266), else `filename`."""
    value = response["Content-Disposition"]
    value.encode("latin-1")  # what a header may carry
    star = FILENAME_STAR.search(value)
    if star:
        return unquote(star["encoded"], encoding="utf-8", errors="strict")
    return re.search(r'filename="([^"]*)"', value)[1]


@pytest.fixture
def chinese_rack(fabric):
    Rack.objects.filter(pk=fabric.servers_rack.pk).update(name=RACK)
    return fabric


def url(name, project) -> str:
    return reverse(f"cabling:{name}", args=[project.code])


def test_the_label_sheet_of_a_chinese_rack_keeps_its_name(client_for, customer, chinese_rack):
    response = client_for(customer).get(url("labels", chinese_rack.project), {"rack": RACK})
    assert response.status_code == 200
    assert response["Content-Disposition"] == content_disposition(f"ACME-72-labels-{RACK}.pdf")
    assert download_name(response) == f"ACME-72-labels-{RACK}.pdf"
    assert 'filename="ACME-72-labels-_-01.pdf"' in response["Content-Disposition"]  # the ASCII fallback
    labels = printed_labels(response.content)
    assert labels[0] == f"C00001 {RACK}-U10-gpu-001-ib0/0 (A) to N01-U01-leaf-01-p1" and len(labels) == 6


def test_the_cut_sheet_of_a_chinese_rack_keeps_its_name(client_for, technician, chinese_rack):
    response = client_for(technician).get(url("cutsheet", chinese_rack.project), {"rack": RACK, "network": "oob"})
    assert response.status_code == 200
    assert download_name(response) == f"ACME-72-cutsheet-oob-{RACK}.xlsx"
    rows = list(load_workbook(io.BytesIO(response.content))["Cables"].iter_rows(min_row=2, values_only=True))
    assert [row[0] for row in rows] == ["O00001"]


def test_the_label_export_of_a_chinese_rack_keeps_its_name(client_for, manager, customer, chinese_rack,
                                                           django_capture_on_commit_callbacks):
    project = chinese_rack.project
    with django_capture_on_commit_callbacks(execute=True):  # the commit: the task renders the sheet
        started = client_for(manager).post(url("label-exports", project),
                                           {"scope": "rack", "rack": RACK, "stock": "L7651"})
    assert started.status_code == 302
    export = LabelSheetExport.objects.get(project=project)
    assert export.status == JobStatus.DONE
    download_url = reverse("cabling:label-export-download", args=[project.code, export.pk])
    response = client_for(customer).get(download_url)
    assert response.status_code == 200
    assert download_name(response) == f"ACME-72-labels-rack-{RACK}-l7651-{export.pk}.pdf"
    labels = printed_labels(b"".join(response.streaming_content))
    assert len(labels) == 6 and all(label.split()[1].startswith(f"{RACK}-U") for label in labels)


def test_a_customer_cannot_start_an_export_and_an_outsider_sees_nothing(client_for, customer, outsider,
                                                                        chinese_rack):
    project = chinese_rack.project
    forbidden = client_for(customer).post(url("label-exports", project), {"scope": "rack", "rack": RACK})
    assert forbidden.status_code == 403 and not LabelSheetExport.objects.exists()
    client = client_for(outsider)
    assert client.get(url("labels", project), {"rack": RACK}).status_code == 404
    assert client.get(url("cutsheet", project), {"rack": RACK}).status_code == 404


def test_ascii_names_keep_the_plain_parameter(client_for, manager, fabric):
    client = client_for(manager)
    svg = client.get(url("fabric-svg", fabric.project), {"network": "compute", "plane": "0"})
    assert svg["Content-Disposition"] == 'attachment; filename="ACME-72-fabric-compute-0.svg"'
    example = client.get(reverse("plans:example", args=[fabric.project.code, "fabric-72"]))
    assert example["Content-Disposition"] == 'attachment; filename="fabric-72.yaml"'
