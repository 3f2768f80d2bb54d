"""Bulk import: the reader, the all-or-nothing validation with row/column errors, the command, the
ImportJob flow through the pages and the tasks."""

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from openpyxl import Workbook

from core.choices import JobStatus
from inventory.choices import DeviceStatus, HardwareKind, ImportKind, OpticStatus
from inventory.imports.columns import KINDS
from inventory.imports.reader import ImportFileError, read_inventory_file
from inventory.imports.services import (
    import_job_apply,
    import_job_preview,
    inventory_import,
)
from inventory.imports.validation import build_plan
from inventory.models import Device, DeviceUnit, ImportJob, Nic, Optic, Port, Rack, Site
from inventory.services import device_create
from inventory.tasks import apply_import_job, preview_import_job
from tests.factories import HardwareModelFactory, OpticFactory, gpu_server_model
from tests.support import count_queries

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"
DEVICE_HEADER = "name,hardware_model,rack,position_u,face,role,serial,asset_tag,oob_address,status"
OPTIC_HEADER = "vendor,part_number,serial,form_factor,speed_gbps,device,port,status"


# --- helpers shared with test_export.py ---------------------------------------------------------------------


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def csv_bytes(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def xlsx_bytes(sheets: dict[str, list[list]]) -> bytes:
    workbook = Workbook()
    workbook.remove(workbook.active)
    for title, rows in sheets.items():
        sheet = workbook.create_sheet(title)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def csv_rows(name: str) -> list[list]:
    return [line.split(",") for line in fixture_bytes(name).decode().strip().splitlines()]


def run_import(project, name: str, data: bytes | None = None, **options):
    return inventory_import(
        project=project, filename=name, data=fixture_bytes(name) if data is None else data, **options
    )


def snapshot(project) -> dict:
    """Everything an import can write, counted, plus the history rows (a rolled-back write leaves none)."""
    return {
        "sites": Site.objects.filter(project=project).count(),
        "racks": Rack.objects.filter(project=project).count(),
        "devices": Device.objects.filter(project=project).count(),
        "units": DeviceUnit.objects.filter(device__project=project).count(),
        "nics": Nic.objects.filter(device__project=project).count(),
        "ports": Port.objects.filter(device__project=project).count(),
        "optics": Optic.objects.filter(project=project).count(),
        "history": Device.history.count()
        + Rack.history.count()
        + Optic.history.count()
        + Nic.history.count(),
        "statuses": sorted(Device.objects.filter(project=project).values_list("name", "status")),
    }


@pytest.fixture
def catalogue(db):
    """The hardware models the sample files name."""
    return {
        "gpu": gpu_server_model(),
        "switch": HardwareModelFactory(part_number="TEST-Q3400", kind=HardwareKind.IB_SWITCH, height_u=2),
        "pdu": HardwareModelFactory(
            part_number="TEST-PDU", kind=HardwareKind.PDU, height_u=1, is_full_depth=False
        ),
    }


@pytest.fixture
def racked(project, catalogue):
    """The project after racks.csv and devices.csv."""
    assert run_import(project, "racks.csv").applied
    assert run_import(project, "devices.csv").applied
    return project


def only_issue(result):
    assert not result.applied
    assert len(result.issues) == 1, [str(i) for i in result.issues]
    return result.issues[0]


# --- the reader (pure Python) -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["racks.csv", "devices.csv", "nics.csv", "optics.csv"])
def test_a_csv_kind_is_told_by_its_header(name):
    (sheet,) = read_inventory_file(name, fixture_bytes(name))
    assert sheet.kind == name.removesuffix(".csv")
    assert sheet.rows[0].number == 2


def test_the_kinds_match_the_stored_choices():
    assert tuple(ImportKind.values) == KINDS


def test_an_unclear_header_needs_the_kind():
    data = csv_bytes("name", "x")
    with pytest.raises(ImportFileError) as excinfo:
        read_inventory_file("things.csv", data)
    assert str(excinfo.value.issues[0]).startswith("things.csv row 1: cannot tell what the file holds")
    with pytest.raises(ImportFileError) as excinfo:
        read_inventory_file("things.csv", data, kind="devices")
    assert (
        str(excinfo.value.issues[0]) == "things.csv row 1, column hardware_model: missing required column "
        '"hardware_model"'
    )


def test_a_missing_required_column_is_named():
    data = csv_bytes("name,rack,position_u", "gpu-001,R01,1")
    with pytest.raises(ImportFileError) as excinfo:
        read_inventory_file("devices.csv", data)
    assert [str(i) for i in excinfo.value.issues] == [
        'devices.csv row 1, column hardware_model: missing required column "hardware_model"'
    ]


def test_an_unknown_column_is_refused_rather_than_ignored():
    data = csv_bytes("name,hardware_model,serail", "gpu-001,TEST-B300-8GPU,SN1")
    with pytest.raises(ImportFileError) as excinfo:
        read_inventory_file("devices.csv", data)
    assert 'unknown column "serail" for devices' in str(excinfo.value)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.csv", b"", "empty.csv: the file is empty"),
        ("blank.csv", b"\n\n,,\n", "blank.csv: the file is empty"),
        ("not_inventory.pdf", None, "not_inventory.pdf: not a CSV or XLSX file"),
        (
            "devices.csv",
            b"\x89PNG\r\n\x1a\n\x00\x00binary",
            "devices.csv: not a CSV file: it holds binary data",
        ),
        (
            "devices.csv",
            "name,hardware_model\nnaïve,X\n".encode("latin-1"),
            "devices.csv: not a UTF-8 text CSV",
        ),
        ("inventory.xlsx", b"this is not a zip", "inventory.xlsx: not a readable XLSX workbook"),
        ("inventory.xlsx", xlsx_bytes({"Sheet": []}), "inventory.xlsx: the file is empty"),
    ],
)
def test_files_that_cannot_be_read_say_why(name, data, message):
    with pytest.raises(ImportFileError) as excinfo:
        read_inventory_file(name, fixture_bytes(name) if data is None else data)
    assert str(excinfo.value.issues[0]).startswith(message)


def test_row_numbers_are_the_spreadsheets_even_after_blank_rows():
    data = csv_bytes(DEVICE_HEADER, "gpu-001,TEST-B300-8GPU,,,,,,,,", "", "gpu-002,TEST-B300-8GPU,,,,,,,,")
    (sheet,) = read_inventory_file("devices.csv", data)
    assert [row.number for row in sheet.rows] == [2, 4]


def test_semicolon_separated_csv_is_read():
    (sheet,) = read_inventory_file(
        "devices.csv", b"\xef\xbb\xbfname;hardware_model\ngpu-001;TEST-B300-8GPU\n"
    )
    assert sheet.rows[0].values == {"name": "gpu-001", "hardware_model": "TEST-B300-8GPU"}


def test_xlsx_sheets_come_in_apply_order_and_numbers_read_as_typed():
    data = xlsx_bytes(
        {
            "optics": [
                OPTIC_HEADER.split(","),
                ["NVIDIA", "980", "MT1", "osfp", 800.0, None, None, "in_stock"],
            ],
            "Racks": [
                ["site", "name", "row", "position", "power_budget_w"],
                ["Hall 1", "R01", "A", 1, 60000],
            ],
        }
    )
    sheets = read_inventory_file("inventory.xlsx", data)
    assert [s.kind for s in sheets] == ["racks", "optics"]
    assert sheets[1].rows[0].values["speed_gbps"] == "800"
    assert sheets[0].rows[0].values["position"] == "1"


def test_an_xlsx_sheet_with_another_name_is_refused():
    data = xlsx_bytes(
        {"racks": [["site", "name", "row", "position", "power_budget_w"]], "Notes": [["hello"]]}
    )
    with pytest.raises(ImportFileError) as excinfo:
        read_inventory_file("inventory.xlsx", data)
    assert str(excinfo.value.issues[0]).startswith(
        "inventory.xlsx sheet Notes: not a sheet this import knows"
    )


# --- importing ----------------------------------------------------------------------------------------------


def test_csv_files_create_racks_devices_with_their_ports_nics_and_optics(project, catalogue):
    assert run_import(project, "racks.csv").counts() == {
        "racks": {"created": 3, "updated": 0, "unchanged": 0}
    }
    assert Site.objects.get(project=project).name == "Hall 1"
    r03 = Rack.objects.get(project=project, name="R03")
    assert (r03.height_u, r03.power_budget_w, r03.status) == (42, 40000, "planned")

    result = run_import(project, "devices.csv")
    assert result.counts() == {"devices": {"created": 6, "updated": 0, "unchanged": 0}}
    gpu = Device.objects.get(project=project, name="gpu-003")
    assert (gpu.rack.name, gpu.position_u, gpu.role, gpu.status) == ("R01", 21, "gpu_node", "racked")
    # Made through device_create: 8 NICs, 8 x (1 port + 4 plane lanes) + BMC, 10U x 2 faces claimed.
    assert gpu.nics.count() == 8
    assert gpu.ports.count() == 8 * 5 + 1
    assert sorted(gpu.ports.filter(name__startswith="ib0/").values_list("plane", flat=True)) == [0, 1, 2, 3]
    assert gpu.units.count() == 20
    pdu = Device.objects.get(project=project, name="pdu-a")
    assert list(pdu.units.values_list("unit", "face")) == [(45, "rear")]

    result = run_import(project, "nics.csv")
    assert result.counts() == {"nics": {"created": 1, "updated": 2, "unchanged": 0}}
    nic0 = Nic.objects.get(device__name="gpu-001", slot="nic0")
    assert (nic0.serial, nic0.firmware, nic0.model) == ("MT-NIC-0001", "40.44.1036", "ConnectX-8 SuperNIC")
    assert Nic.objects.get(device__name="gpu-001", slot="nic1").serial == "MT-NIC-0002"
    assert Nic.objects.get(device__name="gpu-001", slot="ocp0").model == "ConnectX-7"

    result = run_import(project, "optics.csv")
    assert result.counts() == {"optics": {"created": 3, "updated": 0, "unchanged": 0}}
    seated = Optic.objects.get(serial="MT2401-0002")
    assert (seated.port.device.name, seated.port.name, seated.status) == (
        "gpu-001",
        "ib1",
        OpticStatus.INSTALLED,
    )
    assert Optic.objects.get(serial="MT2401-0003").port is None


def test_one_bad_row_at_row_7_imports_nothing(project, catalogue):
    run_import(project, "racks.csv")
    before = snapshot(project)
    issue = only_issue(run_import(project, "devices_bad_row7.csv"))
    assert str(issue) == 'devices_bad_row7.csv row 7, column rack: unknown rack "R99"'
    assert (issue.row, issue.column) == (7, "rack")
    assert snapshot(project) == before


def test_a_workbook_is_one_transaction_across_its_sheets(project, catalogue):
    sheets = {kind: csv_rows(f"{kind}.csv") for kind in ("racks", "devices", "nics", "optics")}
    sheets["optics"].append(
        ["NVIDIA", "980-9I693-00NS00", "MT2401-0009", "osfp", "800", "gpu-009", "ib0", ""]
    )
    before = snapshot(project)
    issue = only_issue(run_import(project, "inventory.xlsx", xlsx_bytes(sheets)))
    assert str(issue) == 'inventory.xlsx sheet optics row 5, column device: unknown device "gpu-009"'
    assert snapshot(project) == before

    sheets["optics"].pop()
    result = run_import(project, "inventory.xlsx", xlsx_bytes(sheets))
    assert result.applied
    assert result.counts()["devices"]["created"] == 6
    assert Optic.objects.get(serial="MT2401-0001").port.device.rack.name == "R01"


def test_every_bad_row_is_reported_not_just_the_first(project, catalogue):
    data = csv_bytes(
        DEVICE_HEADER, "a,NOPE,,,,,,,,", "b,TEST-B300-8GPU,,,sideways,,,,,", "c,TEST-B300-8GPU,,,,,,,,"
    )
    result = run_import(project, "devices.csv", data)
    assert [(i.row, i.column) for i in result.issues] == [(2, "hardware_model"), (3, "face")]


DEVICE_ERRORS = [
    pytest.param("gpu-009,TEST-B300-8GPU,R99,1,,,,,,", "rack", 'unknown rack "R99"', id="unknown-rack"),
    pytest.param(
        "gpu-009,NO-SUCH-PN,R03,1,,,,,,",
        "hardware_model",
        'unknown hardware model "NO-SUCH-PN"',
        id="unknown-model",
    ),
    pytest.param(
        "gpu-009,TEST-B300-8GPU,R01,5,,,,,,",
        "position_u",
        "U5 of rack R01 is already taken by gpu-001.",
        id="u-taken-in-db",
    ),
    pytest.param(
        "gpu-009,TEST-B300-8GPU,R03,40,,,,,,",
        "position_u",
        "gpu-009 (10U at U40) sticks out of rack R03 (42U): its top would be U49.",
        id="sticks-out",
    ),
    pytest.param(
        "gpu-009,TEST-B300-8GPU,,,,,SN-GPU-002,,,",
        "serial",
        'serial "SN-GPU-002" is already device gpu-002',
        id="serial-in-db",
    ),
    pytest.param(
        "gpu-009,TEST-B300-8GPU,,,,wizard,,,,", "role", '"wizard" is not one of gpu_node', id="bad-choice"
    ),
    pytest.param(
        "gpu-009,TEST-B300-8GPU,R03,ten,,,,,,", "position_u", 'not a whole number: "ten"', id="bad-number"
    ),
    pytest.param("gpu-009,TEST-B300-8GPU,R03,0,,,,,,", "position_u", "0 is out of range", id="number-range"),
    pytest.param(
        "gpu-009,TEST-B300-8GPU,,,,,,,10.0.0.300,", "oob_address", "not an IPv4 or IPv6 address", id="bad-ip"
    ),
    pytest.param(
        "gpu-009,TEST-B300-8GPU,R03,,,,,,,",
        "position_u",
        "needed when the device is in a rack",
        id="rack-without-u",
    ),
    pytest.param(",TEST-B300-8GPU,,,,,,,,", "name", "required, but the cell is empty", id="empty-required"),
    pytest.param(
        "gpu-001,TEST-Q3400,,,,,,,,", "hardware_model", "cannot change the hardware model", id="model-change"
    ),
]


@pytest.mark.parametrize(("line", "column", "message"), DEVICE_ERRORS)
def test_device_row_errors_name_row_and_column(racked, line, column, message):
    before = snapshot(racked)
    issue = only_issue(run_import(racked, "devices.csv", csv_bytes(DEVICE_HEADER, line)))
    assert (issue.row, issue.column) == (2, column)
    assert message in issue.message
    assert str(issue).startswith(f"devices.csv row 2, column {column}: ")
    assert snapshot(racked) == before


def test_a_u_taken_by_an_earlier_row_of_the_same_file_is_refused(project, catalogue):
    run_import(project, "racks.csv")
    data = csv_bytes(
        DEVICE_HEADER, "gpu-001,TEST-B300-8GPU,R01,1,,,,,,", "gpu-002,TEST-B300-8GPU,R01,10,,,,,,"
    )
    issue = only_issue(run_import(project, "devices.csv", data))
    assert (
        str(issue)
        == "devices.csv row 3, column position_u: U10 of rack R01 is already taken by gpu-001. (row 2)"
    )
    assert not Device.objects.filter(project=project).exists()


def test_a_serial_twice_in_the_file_is_refused(project, catalogue):
    run_import(project, "racks.csv")
    data = csv_bytes(
        DEVICE_HEADER, "gpu-001,TEST-B300-8GPU,,,,,SN-1,,,", "gpu-002,TEST-B300-8GPU,,,,,SN-1,,,"
    )
    issue = only_issue(run_import(project, "devices.csv", data))
    assert str(issue) == 'devices.csv row 3, column serial: serial "SN-1" is already device gpu-001 (row 2)'


def test_the_same_device_twice_in_the_file_is_refused(project, catalogue):
    data = csv_bytes(DEVICE_HEADER, "gpu-001,TEST-B300-8GPU,,,,,,,,", "gpu-001,TEST-B300-8GPU,,,,,,,,")
    assert str(only_issue(run_import(project, "devices.csv", data))) == (
        'devices.csv row 3, column name: device "gpu-001" already appears in row 2'
    )


RACK_HEADER = "site,name,row,position,height_u,power_budget_w,status"


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ("Hall 1,R09,A,1,48,60000,", "position", "site Hall 1 row A position 1 is already rack R01"),
        ("Hall 1,R09,B,1,48,lots,", "power_budget_w", 'not a whole number: "lots"'),
        ("Hall 1,R09,B,1,99,1000,", "height_u", "99 is out of range (1 to 60)"),
        ("Hall 1,R09,B,1,48,1000,burning", "status", '"burning" is not one of planned, installed'),
        ("Hall 1,R01,A,1,20,60000,", "height_u", "rack R01 holds devices up to U30; 20U is too low"),
    ],
)
def test_rack_row_errors(racked, line, column, message):
    issue = only_issue(run_import(racked, "racks.csv", csv_bytes(RACK_HEADER, line)))
    assert (issue.row, issue.column) == (2, column)
    assert issue.message.startswith(message)


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ("NVIDIA,980,MT9,osfp,800,gpu-404,ib0,", "device", 'unknown device "gpu-404"'),
        ("NVIDIA,980,MT9,osfp,800,gpu-001,ib99,", "port", 'unknown port "ib99" on device gpu-001'),
        ("NVIDIA,980,MT9,osfp,800,gpu-001,,", "port", "device and port go together"),
        ("NVIDIA,980,MT9,osfp,800,,,installed", "status", "an installed optic needs its device and port"),
        ("NVIDIA,980,MT9,cfp2,800,,,", "form_factor", '"cfp2" is not one of osfp'),
        ("NVIDIA,980,MT9,osfp,fast,,,", "speed_gbps", 'not a whole number: "fast"'),
        ("NVIDIA,980,MT9,osfp,800,gpu-001,ib2,", "port", "port ib2 of gpu-001 already holds optic MT-IN-DB"),
    ],
)
def test_optic_row_errors(racked, line, column, message):
    optic = OpticFactory(project=racked, serial="MT-IN-DB")
    from inventory.services import optic_install

    optic_install(optic=optic, port=Port.objects.get(device__name="gpu-001", name="ib2"))
    issue = only_issue(run_import(racked, "optics.csv", csv_bytes(OPTIC_HEADER, line)))
    assert (issue.row, issue.column) == (2, column)
    assert message in issue.message


def test_optics_cannot_share_a_port_within_the_file(racked):
    data = csv_bytes(
        OPTIC_HEADER, "NVIDIA,980,MT1,osfp,800,gpu-001,ib0,", "NVIDIA,980,MT2,osfp,800,gpu-001,ib0,"
    )
    assert str(only_issue(run_import(racked, "optics.csv", data))) == (
        "optics.csv row 3, column port: port ib0 of gpu-001 already holds optic MT1 (row 2)"
    )


def test_nic_row_errors(racked):
    data = csv_bytes(
        "device,slot,model,serial", "gpu-404,nic0,,", "gpu-001,ocp9,,", "gpu-001,nic0,,X", "gpu-002,nic0,,X"
    )
    result = run_import(racked, "nics.csv", data)
    assert [str(i) for i in result.issues] == [
        'nics.csv row 2, column device: unknown device "gpu-404"',
        "nics.csv row 3, column model: required for a new NIC "
        "(the hardware model of gpu-001 has no slot ocp9)",
        'nics.csv row 5, column serial: serial "X" is already NIC gpu-001 nic0',
    ]


def test_rows_that_match_existing_objects_update_them(racked):
    assert run_import(racked, "devices.csv").counts() == {
        "devices": {"created": 0, "updated": 0, "unchanged": 6}
    }
    lines = (
        fixture_bytes("devices.csv")
        .decode()
        .replace("SN-GPU-002,AT-002,10.0.0.12,received", "SN-GPU-002,AT-002,10.0.0.12,ready")
    )
    result = run_import(racked, "devices.csv", lines.encode())
    assert result.counts() == {"devices": {"created": 0, "updated": 1, "unchanged": 5}}
    (change,) = [c for c in result.plan.changes if c.action == "update"]
    assert (change.key, change.values, change.before) == (
        "gpu-002",
        {"status": "ready"},
        {"status": "received"},
    )
    assert Device.objects.get(project=racked, name="gpu-002").status == DeviceStatus.READY


def test_blank_cells_leave_an_existing_device_as_it_is(racked):
    result = run_import(
        racked, "devices.csv", csv_bytes("name,hardware_model,status", "gpu-001,TEST-B300-8GPU,")
    )
    assert result.counts() == {"devices": {"created": 0, "updated": 0, "unchanged": 1}}
    assert Device.objects.get(project=racked, name="gpu-001").rack.name == "R01"


def test_a_device_moved_away_frees_its_units_for_a_later_row(racked):
    data = csv_bytes(
        DEVICE_HEADER, "gpu-004,TEST-B300-8GPU,R02,11,,,,,,", "gpu-009,TEST-B300-8GPU,R02,1,,,,,,"
    )
    result = run_import(racked, "devices.csv", data)
    assert result.applied, [str(i) for i in result.issues]
    assert Device.objects.get(project=racked, name="gpu-004").position_u == 11
    assert set(DeviceUnit.objects.filter(device__name="gpu-009").values_list("unit", flat=True)) == set(
        range(1, 11)
    )


def test_the_other_order_is_refused(racked):
    data = csv_bytes(
        DEVICE_HEADER, "gpu-009,TEST-B300-8GPU,R02,1,,,,,,", "gpu-004,TEST-B300-8GPU,R02,11,,,,,,"
    )
    assert only_issue(run_import(racked, "devices.csv", data)).row == 2


def test_a_dry_run_writes_nothing(project, catalogue):
    run_import(project, "racks.csv")
    before = snapshot(project)
    result = run_import(project, "devices.csv", dry_run=True)
    assert result.ok and not result.applied
    assert result.counts() == {"devices": {"created": 6, "updated": 0, "unchanged": 0}}
    assert snapshot(project) == before


def test_validation_reports_progress_and_needs_few_queries(project, catalogue, django_assert_max_num_queries):
    run_import(project, "racks.csv")
    lines = [f"gpu-{i:03d},TEST-B300-8GPU,,,,,SN{i},,,," for i in range(60)]
    sheets = read_inventory_file("devices.csv", csv_bytes(DEVICE_HEADER, *[line[:-1] for line in lines]))
    seen = []
    with django_assert_max_num_queries(6):
        plan = build_plan(project, sheets, progress=lambda done, total: seen.append((done, total)))
    assert plan.ok
    assert seen == [(0, 60), (25, 60), (50, 60), (60, 60)]


def test_the_command_prints_counts(project, catalogue, capsys):
    call_command("import_inventory", str(FIXTURES / "racks.csv"), "--project", project.code)
    assert "racks: 3 created, 0 updated, 0 unchanged" in capsys.readouterr().out
    call_command("import_inventory", str(FIXTURES / "devices.csv"), "--project", project.code, "--dry-run")
    out = capsys.readouterr().out
    assert "devices: 6 would be created" in out and "Dry run: nothing was written." in out
    assert not Device.objects.filter(project=project).exists()


def test_the_command_prints_errors_and_fails(project, catalogue, capsys):
    run_import(project, "racks.csv")
    with pytest.raises(CommandError, match="1 error"):
        call_command("import_inventory", str(FIXTURES / "devices_bad_row7.csv"), "--project", project.code)
    assert 'devices_bad_row7.csv row 7, column rack: unknown rack "R99"' in capsys.readouterr().err
    with pytest.raises(CommandError, match="No project"):
        call_command("import_inventory", str(FIXTURES / "racks.csv"), "--project", "NOPE")


def test_the_command_takes_the_kind(project, catalogue, tmp_path):
    path = tmp_path / "things.csv"
    path.write_bytes(csv_bytes("name,hardware_model", "gpu-001,TEST-B300-8GPU"))
    call_command("import_inventory", str(path), "--project", project.code, "--kind", "devices")
    assert Device.objects.filter(project=project, name="gpu-001").exists()


# --- the upload flow ----------------------------------------------------------------------------------------


def upload(client, project, name, data, kind=""):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return client.post(
        reverse("imports:page", args=[project.code]), {"file": SimpleUploadedFile(name, data), "kind": kind}
    )


def test_technician_uploads_previews_and_confirms(
    client_for, technician, project, catalogue, django_capture_on_commit_callbacks
):
    run_import(project, "racks.csv")
    client = client_for(technician)
    assert client.get(reverse("imports:page", args=[project.code])).status_code == 200
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = upload(client, project, "devices.csv", fixture_bytes("devices.csv"))
    assert len(callbacks) == 1  # the preview is queued only once the job row is committed
    job = ImportJob.objects.get(project=project)
    assert response.status_code == 302 and response.url == reverse("imports:job", args=[project.code, job.pk])
    assert (job.status, job.kinds, job.requested_by, job.progress_done, job.progress_total) == (
        JobStatus.WAITING,
        ["devices"],
        technician,
        6,
        6,
    )
    assert job.summary["counts"] == {"devices": {"created": 6, "updated": 0, "unchanged": 0}}
    assert not Device.objects.filter(project=project).exists()

    page = client.get(response.url).content.decode()
    assert "Confirm and apply" in page and "gpu-003" in page and "data-progress-url" not in page

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("imports:job-confirm", args=[project.code, job.pk]))
    assert response.status_code == 302
    job.refresh_from_db()
    assert (job.status, job.confirmed_by) == (JobStatus.DONE, technician)
    assert Device.objects.filter(project=project).count() == 6
    assert Device.history.filter(name="gpu-001").first().history_user == technician
    assert "Confirm and apply" not in client.get(response.url).content.decode()


def test_a_bad_upload_is_kept_and_its_errors_shown(
    client_for, technician, project, catalogue, django_capture_on_commit_callbacks, settings
):
    run_import(project, "racks.csv")
    client = client_for(technician)
    data = fixture_bytes("devices_bad_row7.csv")
    with django_capture_on_commit_callbacks(execute=True):
        upload(client, project, "devices_bad_row7.csv", data)
    job = ImportJob.objects.get(project=project)
    assert job.status == JobStatus.FAILED
    assert [e["text"] for e in job.errors] == ['devices_bad_row7.csv row 7, column rack: unknown rack "R99"']
    assert job.summary == {}  # no "what this import will do" beside the errors
    stored = Path(settings.MEDIA_ROOT) / job.file.name
    assert stored.read_bytes() == data
    page = client.get(reverse("imports:job", args=[project.code, job.pk])).content.decode()
    assert "unknown rack &quot;R99&quot;" in page and "Confirm and apply" not in page
    assert client.post(reverse("imports:job-confirm", args=[project.code, job.pk])).status_code == 302
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.confirmed_at is None


def test_a_file_that_is_not_inventory_is_kept_and_fails(
    client_for, technician, project, django_capture_on_commit_callbacks, settings
):
    with django_capture_on_commit_callbacks(execute=True):
        upload(client_for(technician), project, "not_inventory.pdf", fixture_bytes("not_inventory.pdf"))
    job = ImportJob.objects.get(project=project)
    assert job.status == JobStatus.FAILED
    assert job.errors[0]["text"].startswith("not_inventory.pdf: not a CSV or XLSX file")
    assert (Path(settings.MEDIA_ROOT) / job.file.name).read_bytes() == fixture_bytes("not_inventory.pdf")


def job_status_url(job) -> str:
    return reverse("api-job-status", args=[job.job_type, job.pk])


def test_the_job_page_polls_the_job_status_endpoint_while_the_preview_is_queued(
    client_for, technician, project, catalogue
):
    upload(client_for(technician), project, "racks.csv", fixture_bytes("racks.csv"))  # on_commit not run
    job = ImportJob.objects.get(project=project)
    assert job.status == JobStatus.QUEUED
    page = client_for(technician).get(reverse("imports:job", args=[project.code, job.pk])).content.decode()
    assert job_status_url(job) == f"/api/jobs/inventory.importjob/{job.pk}/"
    assert f'data-progress-url="{job_status_url(job)}"' in page and "data-progress-reload" in page
    assert "js/progress.js" in page
    status = client_for(technician).get(job_status_url(job)).json()
    assert (status["type"], status["status"], status["status_label"]) == ("inventory.importjob", "queued", "Queued")
    assert (status["done"], status["total"], status["settled"]) == (0, 0, False)


def test_the_job_status_speaks_the_imports_words(
    project, technician, catalogue, client_for, django_capture_on_commit_callbacks
):
    run_import(project, "racks.csv")
    job = make_job(project, technician, "devices.csv")
    import_job_preview(job_id=job.pk)
    status = client_for(technician).get(job_status_url(job)).json()
    assert (status["status"], status["status_label"], status["settled"]) == ("waiting", "Ready to confirm", True)
    assert (status["done"], status["total"], status["percent"]) == (6, 6, 100)
    from inventory.imports.services import import_job_confirm

    with django_capture_on_commit_callbacks(execute=True):
        import_job_confirm(job=job, user=technician)
    status = client_for(technician).get(job_status_url(job)).json()
    assert (status["status"], status["status_label"], status["settled"]) == ("done", "Applied", True)


def test_the_kind_from_the_form_is_used(
    client_for, technician, project, catalogue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        upload(client_for(technician), project, "things.csv", csv_bytes("name", "R01"), kind="devices")
    job = ImportJob.objects.get(project=project)
    assert job.kind == "devices"
    assert (
        job.errors[0]["text"] == "things.csv row 1, column hardware_model: missing required column "
        '"hardware_model"'
    )


def test_tasks_are_safe_to_run_twice(project, technician, catalogue, django_capture_on_commit_callbacks):
    run_import(project, "racks.csv")
    job = make_job(project, technician, "devices.csv")
    preview_import_job.delay(job.pk)
    preview_import_job.delay(job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.WAITING
    apply_import_job.delay(job.pk)  # not confirmed: nothing happens
    assert not Device.objects.filter(project=project).exists()
    from inventory.imports.services import import_job_confirm

    import_job_confirm(job=job, user=technician)
    import_job_apply(job_id=job.pk)
    import_job_apply(job_id=job.pk)
    import_job_preview(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.DONE
    assert Device.objects.filter(project=project).count() == 6
    assert Device.history.filter(name="gpu-001").count() == 1


def test_an_apply_that_meets_a_changed_project_fails_cleanly(project, technician, catalogue):
    run_import(project, "racks.csv")
    job = make_job(project, technician, "devices.csv")
    import_job_preview(job_id=job.pk)
    from inventory.imports.services import import_job_confirm

    import_job_confirm(job=job, user=technician)
    device_create(
        project=project,
        hardware_model=catalogue["gpu"],
        name="intruder",
        rack=Rack.objects.get(project=project, name="R01"),
        position_u=1,
    )
    job = import_job_apply(job_id=job.pk)
    assert job.status == JobStatus.FAILED
    assert job.errors[0]["text"] == (
        "devices.csv row 2, column position_u: U1 of rack R01 is already taken by intruder."
    )
    assert Device.objects.filter(project=project).count() == 1


def make_job(project, user, name: str) -> ImportJob:
    from django.core.files.base import ContentFile

    job = ImportJob(project=project, requested_by=user, original_name=name)
    job.file.save(name, ContentFile(fixture_bytes(name)), save=False)
    job.save()
    return job


# --- access -------------------------------------------------------------------------------------------------


def job_urls(project, job):
    return [
        ("get", reverse("imports:page", args=[project.code])),
        ("post", reverse("imports:page", args=[project.code])),
        ("get", reverse("imports:job", args=[project.code, job.pk])),
        ("post", reverse("imports:job-confirm", args=[project.code, job.pk])),
    ]


def test_customers_get_403(client_for, customer, project, technician):
    job = make_job(project, technician, "racks.csv")
    client = client_for(customer)
    for method, url in job_urls(project, job):
        assert getattr(client, method)(url).status_code == 403, url
    assert not ImportJob.objects.exclude(pk=job.pk).exists()


def test_outsiders_get_404(client_for, outsider, project, technician):
    job = make_job(project, technician, "racks.csv")
    client = client_for(outsider)
    for method, url in job_urls(project, job):
        assert getattr(client, method)(url).status_code == 404, url
    assert client.get(job_status_url(job)).status_code == 404


def test_members_read_the_status_of_their_projects_jobs(client_for, customer, project, technician):
    job = make_job(project, technician, "racks.csv")
    assert client_for(customer).get(job_status_url(job)).json()["id"] == job.pk


def test_a_job_of_another_project_is_404(client_for, technician, project, other_project):
    from tests.factories import MembershipFactory

    MembershipFactory(user=technician, project=other_project)
    foreign = make_job(other_project, technician, "racks.csv")
    client = client_for(technician)
    assert client.get(reverse("imports:job", args=[project.code, foreign.pk])).status_code == 404
    assert client.post(reverse("imports:job-confirm", args=[project.code, foreign.pk])).status_code == 404


def test_anonymous_is_sent_to_login(client, project):
    response = client.get(reverse("imports:page", args=[project.code]))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


# --- query counts -------------------------------------------------------------------------------------------


def test_the_status_endpoint_query_count_is_constant(
    client_for, technician, project, django_assert_num_queries
):
    small = make_job(project, technician, "racks.csv")
    big = make_job(project, technician, "devices.csv")
    big.errors = [{"text": f"row {i}"} for i in range(2000)]
    big.summary = {"rows": {"devices": [{"row": i} for i in range(2000)]}}
    big.save()
    client = client_for(technician)
    client.get(job_status_url(small))
    few = count_queries(lambda: client.get(job_status_url(small)))
    with django_assert_num_queries(few):  # however many errors or preview rows the job holds
        assert client.get(job_status_url(big)).json()["status"] == "queued"


def test_the_import_page_query_count_does_not_grow_with_jobs(
    client_for, technician, project, django_assert_num_queries
):
    client = client_for(technician)
    url = reverse("imports:page", args=[project.code])
    for _ in range(2):
        make_job(project, technician, "racks.csv")
    client.get(url)
    with django_assert_num_queries(5) as few:
        client.get(url)
    for _ in range(15):
        make_job(project, technician, "racks.csv")
    with django_assert_num_queries(len(few.captured_queries)):
        body = client.get(url).content.decode()
    assert body.count("racks") >= 17
