"""The acceptance report from the database to the files a customer downloads: a version rendered the way the
task renders it, its workbook read back with openpyxl and its PDF's text extracted with poppler, compared
with the database itself (not with the snapshot), and the recorded hashes with the files."""

from __future__ import annotations

import hashlib
import shutil
import subprocess

import pytest
from openpyxl import load_workbook

from cabling.models import Cable
from inventory.models import Device

from ..conftest import REQUIRE_SERVICES
from .test_report_snapshot import report_world
from .test_report_versions import render_now  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db

PDFTOTEXT = shutil.which("pdftotext")
FORMULA_LABEL = "=1+2"


@pytest.fixture
def version(project, manager, technician, customer, render_now):  # noqa: F811
    world = report_world(project)
    Cable.objects.filter(pk=world.c2.pk).update(label=FORMULA_LABEL)  # as an import could have stored it
    for number, device in enumerate(world.devices, start=1):
        Device.objects.filter(pk=device.pk).update(serial=f"SN-{number:04d}-X", asset_tag=f"AT-{number:03d}")
    rendered = render_now(project, manager)
    assert rendered.status == "done", rendered.errors
    return rendered


def sha256_of(field) -> str:
    with field.open("rb") as stored:
        return hashlib.sha256(stored.read()).hexdigest()


def sheet_rows(workbook, *headers: str) -> list[dict]:
    """The rows of the one sheet whose header row holds every one of `headers`, as dicts by header."""
    for sheet in workbook.worksheets:
        rows = list(sheet.iter_rows(values_only=True))
        if rows and all(header in rows[0] for header in headers):
            return [dict(zip(rows[0], row, strict=False)) for row in rows[1:] if any(cell is not None for cell in row)]
    raise AssertionError(f"no sheet with the headers {headers}")


def test_recorded_hashes_are_the_files_hashes(version):
    for field, recorded in ((version.pdf_file, version.pdf_sha256), (version.summary_pdf_file,
                            version.summary_pdf_sha256), (version.xlsx_file, version.xlsx_sha256)):
        assert sha256_of(field) == recorded


def test_the_workbook_holds_the_databases_cables_devices_and_names(version, project):
    workbook = load_workbook(version.xlsx_file.path)
    cables = {row["Label"]: row for row in sheet_rows(workbook, "Label", "A end", "B end", "Length (m)")}
    expected = Cable.objects.filter(project=project).prefetch_related("ends__port__device")
    assert set(cables) == {cable.label for cable in expected}
    for cable in expected:
        a_end = next(e for e in cable.ends.all() if e.side == "A")
        assert cables[cable.label]["A end"] == f"{a_end.port.device.name}:{a_end.port.name}"
        assert float(cables[cable.label]["Length (m)"]) == float(cable.length_m)
    devices = {row["Device"]: row for row in sheet_rows(workbook, "Device", "Serial", "Asset tag")}
    for device in Device.objects.filter(project=project):
        assert (devices[device.name]["Serial"], devices[device.name]["Asset tag"]) == (device.serial, device.asset_tag)
    # The formula-like label is a text cell, never a formula.
    label_cells = [cell for sheet in workbook.worksheets for row in sheet.iter_rows() for cell in row
                   if cell.value == FORMULA_LABEL]
    assert label_cells and all(cell.data_type == "s" for cell in label_cells)
    cover = {str(cell) for row in workbook.worksheets[0].iter_rows(values_only=True) for cell in row if cell}
    assert project.name_zh in cover and project.customer_name_zh in cover


@pytest.mark.skipif(not PDFTOTEXT and not REQUIRE_SERVICES, reason="pdftotext (poppler-utils) is not installed")
def test_the_pdf_text_holds_the_sections_the_figures_and_the_chinese_names(version, project, tmp_path):
    assert PDFTOTEXT, "pdftotext is required when REQUIRE_SERVICES=1"
    text = subprocess.run([PDFTOTEXT, "-layout", version.pdf_file.path, "-"], capture_output=True, text=True,
                          check=True).stdout
    assert project.name_zh in text and project.customer_name_zh in text
    for title in ("Summary", "Inventory", "Topology and cable plan", "Physical link health", "Sign-off"):
        assert title in text
    for cable in Cable.objects.filter(project=project):
        assert cable.label in text  # the formula-like one printed as it is
    serials = list(Device.objects.filter(project=project).values_list("serial", flat=True))
    assert len(serials) == 3 and all(serial in text for serial in serials)
    # The cover's cluster figures are the database's.
    cover = text.split("\f")[0]
    assert f"{Cable.objects.filter(project=project, removed_from_plan=False).count():,}" in cover
    assert project.code in cover and str(version.report_id) in cover
