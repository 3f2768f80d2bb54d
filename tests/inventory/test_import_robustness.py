"""Imports that go wrong in ways nobody planned for still end: a damaged workbook is a clear error naming
its sheet and row, an unexpected failure marks the job failed (and is logged) instead of leaving it
"running", and a confirmed import whose plan no longer matches its preview is refused. Also: an import
keeps an optic in a port exactly when it is installed."""

import io
import logging
import re
import zipfile

import pytest

from core.choices import JobStatus
from inventory.choices import ImportAction, OpticStatus
from inventory.imports.reader import ImportFileError, read_inventory_file
from inventory.imports.services import (
    PROJECT_CHANGED,
    UNEXPECTED_ERROR,
    import_job_apply,
    import_job_confirm,
    import_job_preview,
)
from inventory.imports.services import apply as import_apply
from inventory.models import Device, ImportJob, Optic, Port, Rack
from inventory.services import device_create, optic_install
from tests.factories import OpticFactory

from . import test_import
from .test_import import OPTIC_HEADER, csv_bytes, make_job, run_import, upload, xlsx_bytes

# The import tests' fixtures, shared by name: the hardware models the sample files name, and a project
# after racks.csv and devices.csv.
catalogue = test_import.catalogue
racked = test_import.racked

pytestmark = pytest.mark.django_db

RACK_ROWS = [
    ["site", "name", "row", "position", "power_budget_w"],
    ["Hall 1", "R01", "A", 1, 60000],
    ["Hall 1", "R02", "A", 2, 60000],
]


def damaged_workbook(cell: str, replacement: bytes) -> bytes:
    """A racks workbook whose cell `cell` is rewritten in the sheet's XML, as a broken tool or a hand edit
    would leave it."""
    source = zipfile.ZipFile(io.BytesIO(xlsx_bytes({"racks": RACK_ROWS})))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename.startswith("xl/worksheets/sheet"):
                pattern = rb'<c r="' + cell.encode() + rb'"[^>]*>.*?</c>'
                body, replaced = re.subn(pattern, replacement, body, count=1, flags=re.S)
                assert replaced == 1
            target.writestr(item, body)
    return out.getvalue()


DAMAGED = {
    "shared string out of range": ("A3", b'<c r="A3" t="s"><v>9999</v></c>'),
    "text in a number cell": ("D3", b'<c r="D3" t="n"><v>abc</v></c>'),
}


@pytest.mark.parametrize("damage", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_cell_is_a_file_error_naming_sheet_and_row(damage):
    with pytest.raises(ImportFileError) as refused:
        read_inventory_file("racks.xlsx", damaged_workbook(*damage))
    (issue,) = refused.value.issues
    assert (issue.sheet, issue.row) == ("racks", 3)
    assert "cannot be read" in issue.message


@pytest.mark.parametrize("damage", DAMAGED.values(), ids=DAMAGED.keys())
def test_uploading_a_damaged_workbook_fails_the_job_with_that_error(
    client_for, technician, project, django_capture_on_commit_callbacks, damage
):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client_for(technician), project, "racks.xlsx", damaged_workbook(*damage))
    assert response.status_code == 302
    job = ImportJob.objects.get(project=project)
    assert job.status == JobStatus.FAILED
    assert job.errors[0]["text"].startswith("racks.xlsx sheet racks row 3: a cell of this row cannot be read")
    assert not Rack.objects.filter(project=project).exists()


def _explode(*args, **kwargs):
    raise RuntimeError("a bug nobody foresaw")


def test_an_unexpected_error_in_the_preview_fails_the_job_and_is_logged(
    project, technician, catalogue, monkeypatch, caplog
):
    job = make_job(project, technician, "racks.csv")
    monkeypatch.setattr(import_apply, "build_plan", _explode)
    with caplog.at_level(logging.ERROR, logger="inventory.imports.services"):
        job = import_job_preview(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.finished_at is not None
    assert job.errors[0]["text"] == f"racks.csv: {UNEXPECTED_ERROR}"
    assert "a bug nobody foresaw" not in job.errors[0]["text"]  # details go to the log, not the page
    assert "RuntimeError: a bug nobody foresaw" in caplog.text


def test_an_unexpected_error_in_the_apply_fails_the_job_and_writes_nothing(
    project, technician, catalogue, monkeypatch, caplog
):
    job = make_job(project, technician, "racks.csv")
    import_job_preview(job_id=job.pk)
    import_job_confirm(job=ImportJob.objects.get(pk=job.pk), user=technician)
    monkeypatch.setattr(import_apply._Applier, "_racks", _explode)
    with caplog.at_level(logging.ERROR, logger="inventory.imports.services"):
        import_job_apply(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert job.errors[0]["text"] == f"racks.csv: {UNEXPECTED_ERROR}"
    assert "RuntimeError" in caplog.text
    assert not Rack.objects.filter(project=project).exists()


def test_an_apply_whose_plan_differs_from_the_preview_is_refused(project, technician, catalogue):
    run_import(project, "racks.csv")
    job = make_job(project, technician, "devices.csv")
    import_job_preview(job_id=job.pk)
    assert ImportJob.objects.get(pk=job.pk).summary["counts"]["devices"]["created"] == 6
    import_job_confirm(job=ImportJob.objects.get(pk=job.pk), user=technician)
    # Someone adds one of the file's devices (unracked) in between: the file would now update it instead.
    device_create(project=project, hardware_model=catalogue["gpu"], name="gpu-001")
    job = import_job_apply(job_id=job.pk)
    assert job.status == JobStatus.FAILED
    assert [e["text"] for e in job.errors] == [f"devices.csv: {PROJECT_CHANGED}"]
    assert list(Device.objects.filter(project=project).values_list("name", flat=True)) == ["gpu-001"]
    assert Device.objects.get(name="gpu-001").rack is None


def test_an_apply_that_matches_the_preview_goes_through(project, technician, catalogue):
    run_import(project, "racks.csv")
    job = make_job(project, technician, "devices.csv")
    import_job_preview(job_id=job.pk)
    import_job_confirm(job=ImportJob.objects.get(pk=job.pk), user=technician)
    assert import_job_apply(job_id=job.pk).status == JobStatus.DONE


def test_an_outsider_cannot_upload(client_for, outsider, project):
    response = upload(client_for(outsider), project, "racks.xlsx", xlsx_bytes({"racks": RACK_ROWS}))
    assert response.status_code == 404
    assert not ImportJob.objects.exists()


# --- optics: in a port exactly when installed -------------------------------------------------------------


@pytest.mark.parametrize("status", ["in_stock", "faulty", "rma"])
def test_an_optic_row_with_a_port_and_another_status_is_refused(racked, status):
    result = run_import(racked, "optics.csv", csv_bytes(OPTIC_HEADER, f"NVIDIA,980,MT9,osfp,800,gpu-001,ib0,{status}"))
    (issue,) = result.issues
    assert (issue.row, issue.column) == (2, "status")
    assert "an optic put in a port is installed" in issue.message
    assert not Optic.objects.filter(serial="MT9").exists()


def test_an_import_cannot_mark_an_optic_in_a_port_as_in_stock(racked):
    optic = optic_install(
        optic=OpticFactory(project=racked, serial="S1"), port=Port.objects.get(device__name="gpu-001", name="ib0")
    )
    result = run_import(racked, "optics.csv", csv_bytes(OPTIC_HEADER, "NVIDIA,980,S1,osfp,800,,,in_stock"))
    (issue,) = result.issues
    assert (issue.row, issue.column) == (2, "status")
    assert "sits in port ib0 of gpu-001" in issue.message
    optic.refresh_from_db()
    assert (optic.status, optic.port.name) == (OpticStatus.INSTALLED, "ib0")


def test_a_faulty_optic_given_a_port_and_no_status_is_installed(racked):
    OpticFactory(project=racked, serial="S2", status=OpticStatus.FAULTY)
    result = run_import(racked, "optics.csv", csv_bytes(OPTIC_HEADER, "NVIDIA,980,S2,osfp,800,gpu-001,ib1,"))
    assert result.applied, [str(i) for i in result.issues]
    optic = Optic.objects.get(serial="S2")
    assert (optic.status, optic.port.name) == (OpticStatus.INSTALLED, "ib1")


def test_an_installed_optic_left_as_it_is_stays_installed(racked):
    optic_install(
        optic=OpticFactory(project=racked, serial="S3"), port=Port.objects.get(device__name="gpu-001", name="ib2")
    )
    result = run_import(racked, "optics.csv", csv_bytes(OPTIC_HEADER, "NVIDIA,980,S3,osfp,800,,,"))
    assert result.applied, [str(i) for i in result.issues]
    assert Optic.objects.get(serial="S3").status == OpticStatus.INSTALLED


def test_row_actions_are_stored_choices(project, catalogue):
    run_import(project, "racks.csv")
    result = run_import(project, "racks.csv", csv_bytes(
        "site,name,row,position,height_u,power_budget_w,status",
        "Hall 1,R01,A,1,48,60000,planned",
        "Hall 1,R02,A,2,48,50000,installed",
        "Hall 1,R09,A,9,48,40000,",
    ), dry_run=True)
    assert [change.action for change in result.plan.changes] == [
        ImportAction.UNCHANGED, ImportAction.UPDATE, ImportAction.CREATE,
    ]
    assert result.counts() == {"racks": {"created": 1, "updated": 1, "unchanged": 1}}
    assert result.plan.summary()["rows"]["racks"][0]["action"] == "update"
