"""Exports: the import's columns, a round trip that changes nothing (formula-looking text included), the
download page and the command."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from openpyxl import load_workbook

from core.spreadsheets import FORMULA_LEADS
from inventory.imports.columns import COLUMNS, KINDS
from inventory.imports.export import export_csv, export_rows, export_xlsx
from inventory.models import Device, Nic, Optic, Port
from inventory.services import device_create, optic_install
from tests.factories import ProjectFactory

from .test_import import catalogue, run_import  # noqa: F401 - the fixture is used by name

pytestmark = pytest.mark.django_db

@pytest.fixture
def stocked(project, catalogue):  # noqa: F811 - catalogue is the imported fixture
    """A project holding every kind, with the awkward values an export must carry unchanged."""
    for name in ("racks.csv", "devices.csv", "nics.csv", "optics.csv"):
        assert run_import(project, name).applied, name
    device = Device.objects.get(project=project, name="pdu-a")
    device.asset_tag, device.serial = "=1+1", "000123"  # a formula-looking text and leading zeros
    device.save()
    device_create(project=project, hardware_model=catalogue["switch"], name="spare-switch")  # not racked
    Optic.objects.filter(serial="MT2401-0001").update(status="faulty", port=None)  # taken out, found faulty
    return project


def counts_without_unchanged(result) -> dict:
    return {kind: (c["created"], c["updated"]) for kind, c in result.counts().items()}


def test_csv_exports_have_the_import_columns(stocked):
    for kind in KINDS:
        header, *rows = export_csv(stocked, kind).decode().splitlines()
        assert header == ",".join(COLUMNS[kind])
        assert rows
    first_device = export_csv(stocked, "devices").decode().splitlines()[1]
    assert first_device.startswith("gpu-001,TEST-B300-8GPU,R01,1,front")


def test_an_xlsx_export_reimports_into_the_same_project_without_changes(stocked):
    data = export_xlsx(stocked)
    assert load_workbook(io.BytesIO(data)).sheetnames == list(KINDS)
    result = run_import(stocked, "export.xlsx", data)
    assert result.applied, [str(i) for i in result.issues]
    assert counts_without_unchanged(result) == {kind: (0, 0) for kind in KINDS}
    assert result.counts()["devices"]["unchanged"] == 7


@pytest.mark.parametrize("kind", KINDS)
def test_each_csv_export_reimports_without_changes(stocked, kind):
    result = run_import(stocked, f"{kind}.csv", export_csv(stocked, kind))
    assert result.applied, [str(i) for i in result.issues]
    assert counts_without_unchanged(result) == {kind: (0, 0)}


def test_an_export_imported_into_an_empty_project_gives_the_same_rows(stocked):
    empty = ProjectFactory(code="EMPTY-1")
    result = run_import(empty, "export.xlsx", export_xlsx(stocked))
    assert result.applied, [str(i) for i in result.issues]
    assert result.counts()["devices"]["created"] == 7
    for kind in KINDS:
        assert export_rows(empty, kind) == export_rows(stocked, kind), kind
    pdu = Device.objects.get(project=empty, name="pdu-a")
    assert (pdu.asset_tag, pdu.serial) == ("=1+1", "000123")


# Text a spreadsheet program would run as a formula, written into names, serials and tags.
FORMULA_TEXTS = ['=HYPERLINK("x")', "+cmd", "@SUM(1)", "-2+3"]


@pytest.fixture
def formulas(stocked, catalogue):  # noqa: F811 - catalogue is the imported fixture
    """A device named like a formula, its serial, tag, a NIC's firmware and an optic's serial too: the
    device's name is also a cell of the NIC and optic rows that point at it."""
    name, serial, tag, other = FORMULA_TEXTS
    device = device_create(project=stocked, hardware_model=catalogue["gpu"], name=name, serial=serial, asset_tag=tag)
    Nic.objects.filter(device=device, slot="nic0").update(firmware=other)
    optic_install(optic=Optic.objects.get(project=stocked, serial="MT2401-0003"),
                  port=Port.objects.get(device=device, name="ib0"))
    Optic.objects.filter(project=stocked, serial="MT2401-0003").update(serial=other)
    return stocked


def test_csv_exports_escape_formula_leads_and_read_back_unchanged(formulas):
    empty = ProjectFactory(code="EMPTY-2")
    for kind in KINDS:
        data = export_csv(formulas, kind)
        cells = [cell for record in csv.reader(io.StringIO(data.decode())) for cell in record]
        assert not [cell for cell in cells if cell.startswith(FORMULA_LEADS)], kind
        result = run_import(formulas, f"{kind}.csv", data)
        assert result.applied and counts_without_unchanged(result) == {kind: (0, 0)}, [str(i) for i in result.issues]
        assert run_import(empty, f"{kind}.csv", data).applied, kind
    assert {f"'{text}" for text in FORMULA_TEXTS} <= {
        cell for kind in KINDS for record in csv.reader(io.StringIO(export_csv(formulas, kind).decode()))
        for cell in record
    }
    for kind in KINDS:
        assert export_rows(empty, kind) == export_rows(formulas, kind), kind
    device = Device.objects.get(project=empty, name='=HYPERLINK("x")')
    assert (device.serial, device.asset_tag) == ("+cmd", "@SUM(1)")
    assert Optic.objects.get(project=empty, serial="-2+3").port.device == device


def test_xlsx_exports_keep_formula_leads_as_text_and_read_back_unchanged(formulas):
    data = export_xlsx(formulas)
    workbook = load_workbook(io.BytesIO(data))
    cells = [cell for sheet in workbook for row in sheet.iter_rows() for cell in row]
    leading = [cell for cell in cells if isinstance(cell.value, str) and cell.value.startswith(FORMULA_LEADS)]
    assert set(FORMULA_TEXTS) <= {cell.value for cell in leading}  # as they are, no apostrophe
    assert {cell.data_type for cell in leading} == {"s"}  # text, never a formula
    result = run_import(formulas, "export.xlsx", data)
    assert result.applied, [str(i) for i in result.issues]
    assert counts_without_unchanged(result) == {kind: (0, 0) for kind in KINDS}
    empty = ProjectFactory(code="EMPTY-3")
    assert run_import(empty, "export.xlsx", data).applied
    for kind in KINDS:
        assert export_rows(empty, kind) == export_rows(formulas, kind), kind


def test_only_the_apostrophe_of_the_guard_is_taken_off(project, catalogue):  # noqa: F811
    """An apostrophe that does not guard a formula lead is part of the value."""
    data = b"name,hardware_model,serial,asset_tag\ngpu-1,TEST-B300-8GPU,'=1,'AT'\n"
    assert run_import(project, "devices.csv", data).applied
    device = Device.objects.get(project=project, name="gpu-1")
    assert (device.serial, device.asset_tag) == ("=1", "'AT'")


def test_the_export_command_writes_csv_and_xlsx(stocked, tmp_path):
    target = tmp_path / "devices.csv"
    call_command("export_inventory", "--project", stocked.code, "--kind", "devices", "--format", "csv",
                 "-o", str(target))
    assert target.read_bytes() == export_csv(stocked, "devices")
    workbook = tmp_path / "all.xlsx"
    call_command("export_inventory", "--project", stocked.code, "--format", "xlsx", "-o", str(workbook))
    assert load_workbook(workbook).sheetnames == list(KINDS)
    with pytest.raises(CommandError, match="give --kind"):
        call_command("export_inventory", "--project", stocked.code, "--format", "csv", "-o", str(target))


def test_the_export_download(client_for, technician, customer, stocked):
    url = reverse("imports:export", args=[stocked.code])
    response = client_for(technician).get(url, {"kind": "racks", "format": "csv"})
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="ACME-72-racks.csv"'
    assert response.content == export_csv(stocked, "racks")
    # Exporting only reads, so a customer may download too.
    response = client_for(customer).get(url, {"format": "xlsx"})
    assert response.status_code == 200
    assert load_workbook(io.BytesIO(response.content)).sheetnames == list(KINDS)


def test_a_bare_export_link_downloads_the_whole_workbook(client_for, customer, stocked):
    response = client_for(customer).get(reverse("imports:export", args=[stocked.code]))
    assert response["Content-Disposition"] == 'attachment; filename="ACME-72-inventory.xlsx"'
    assert load_workbook(io.BytesIO(response.content)).sheetnames == list(KINDS)
    response = client_for(customer).get(reverse("imports:export", args=[stocked.code]), {"kind": "racks"})
    assert response.content == export_csv(stocked, "racks")


BAD_PARAMS = [{"kind": "cables"}, {"kind": "racks", "format": "pdf"}, {"format": "csv"}]


@pytest.mark.parametrize("params", BAD_PARAMS)
def test_bad_export_parameters_get_400(client_for, technician, project, params):
    response = client_for(technician).get(reverse("imports:export", args=[project.code]), params)
    assert response.status_code == 400


def test_outsiders_get_404_on_export(client_for, outsider, stocked):
    response = client_for(outsider).get(reverse("imports:export", args=[stocked.code]), {"format": "xlsx"})
    assert response.status_code == 404


def test_the_import_page_links_the_exports(client_for, technician, project):
    body = client_for(technician).get(reverse("imports:page", args=[project.code])).content.decode()
    assert f"{reverse('imports:export', args=[project.code])}?kind=devices&amp;format=csv" in body


def test_export_query_count_does_not_grow_with_rows(client_for, technician, project, catalogue,  # noqa: F811
                                                    django_assert_num_queries):
    from tests.factories import RackFactory

    rack = RackFactory(project=project, name="R01")
    client = client_for(technician)
    url = reverse("imports:export", args=[project.code])

    def add_devices(start, count):
        for i in range(start, start + count):
            device_create(project=project, hardware_model=catalogue["pdu"], name=f"d{i:03d}", rack=rack,
                          position_u=i + 1)

    add_devices(0, 5)
    client.get(url, {"format": "xlsx"})
    with django_assert_num_queries(8) as few:
        client.get(url, {"format": "xlsx"})
    add_devices(5, 40)
    with django_assert_num_queries(len(few.captured_queries)):
        response = client.get(url, {"format": "xlsx"})
    assert len(load_workbook(io.BytesIO(response.content))["devices"]["A"]) == 46
