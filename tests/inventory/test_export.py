"""Exports: the import's columns, a round trip that changes nothing, the download page and the command."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from openpyxl import load_workbook

from inventory.imports.columns import COLUMNS, KINDS
from inventory.imports.export import export_csv, export_rows, export_xlsx
from inventory.models import Device, Optic
from inventory.services import device_create
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
