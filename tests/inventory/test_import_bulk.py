"""The import writes a sheet at a time in bulk: its queries do not grow with the file's rows, every created or
changed row keeps its history (who, when, "Imported from <file>", shown on the object's page), and a bad row
deep in a large file still writes nothing and names its row; so does a row the database or a rack unit's claim
refuses after the check (another writer in between), one issue per row."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.history import history_rows
from inventory.choices import DeviceStatus
from inventory.imports.services import inventory_import
from inventory.models import Device, DeviceUnit, Nic, Optic, Port, Rack, Site
from inventory.services import device_create
from tests.factories import ProjectFactory, gpu_server_model
from tests.inventory.test_import import snapshot, xlsx_bytes
from tests.support import count_queries

pytestmark = pytest.mark.django_db

RACK_COLUMNS = ["site", "name", "row", "position", "height_u", "power_budget_w", "status"]
DEVICE_COLUMNS = ["name", "hardware_model", "rack", "position_u", "face", "role", "serial", "asset_tag",
                  "oob_address", "status"]
NIC_COLUMNS = ["device", "slot", "model", "part_number", "serial", "firmware", "guid_mac"]
OPTIC_COLUMNS = ["vendor", "part_number", "serial", "form_factor", "speed_gbps", "device", "port", "status"]
SERVERS_PER_RACK = 4  # 10U servers in a 48U rack


@pytest.fixture
def gpu(db):
    return gpu_server_model()


def workbook(servers: int, *, bad_row: int | None = None, status: str = "racked", moves: dict | None = None
             ) -> bytes:
    """Every kind for `servers` GPU servers: their racks, the servers, a serial for each one's first NIC and a
    new NIC in another slot, an optic in each one's ib0. `bad_row` (a devices row number) names an unknown rack;
    `moves` gives some servers another U ({name: position_u})."""
    racks = -(-servers // SERVERS_PER_RACK)
    devices = []
    for i in range(servers):
        rack = f"R{i // SERVERS_PER_RACK + 1:02d}"
        if bad_row is not None and i + 2 == bad_row:
            rack = "R99"
        name = f"gpu-{i:03d}"
        position = (moves or {}).get(name, 1 + 10 * (i % SERVERS_PER_RACK))
        devices.append([name, "TEST-B300-8GPU", rack, position, "", "gpu_node",
                        f"SN{i:05d}", "", f"10.0.{i // 200}.{i % 200 + 1}", status])
    return xlsx_bytes({
        "racks": [RACK_COLUMNS, *[["Hall 1", f"R{r + 1:02d}", "A", r + 1, 48, 40000, ""] for r in range(racks)]],
        "devices": [DEVICE_COLUMNS, *devices],
        "nics": [NIC_COLUMNS,
                 *[[f"gpu-{i:03d}", "nic0", "", "", f"MT-{i:05d}", "40.44.1036", ""] for i in range(servers)],
                 *[[f"gpu-{i:03d}", "ocp0", "ConnectX-7", "", "", "", ""] for i in range(servers)]],
        "optics": [OPTIC_COLUMNS, *[["NVIDIA", "980-9I693-00NS00", f"OP{i:05d}", "osfp", 800, f"gpu-{i:03d}", "ib0",
                                     ""] for i in range(servers)]],
    })


def imported(project, data: bytes, **options):
    result = inventory_import(project=project, filename="inventory.xlsx", data=data, **options)
    assert result.applied, [str(issue) for issue in result.issues]
    return result


def test_the_queries_of_an_import_do_not_grow_with_its_rows(gpu):
    small, large = ProjectFactory(code="SMALL"), ProjectFactory(code="LARGE")
    small_data, large_data = workbook(4), workbook(24)
    queries = {
        "small": count_queries(lambda: imported(small, small_data)),
        "large": count_queries(lambda: imported(large, large_data)),
    }
    assert queries["small"] == queries["large"], queries
    assert queries["large"] < 80  # a fixed cost per sheet and kind; one device_create per row made 700 here
    # Everything was written: 24 servers with their template NICs and ports, the NIC serials, the new NICs, optics.
    assert Device.objects.filter(project=large).count() == 24
    assert Rack.objects.filter(project=large).count() == 6
    assert DeviceUnit.objects.filter(device__project=large).count() == 24 * 10 * 2
    assert Port.objects.filter(device__project=large).count() == 24 * (8 * 5 + 1)
    assert Nic.objects.filter(device__project=large).count() == 24 * 9
    assert Nic.objects.get(device__project=large, device__name="gpu-017", slot="nic0").serial == "MT-00017"
    optic = Optic.objects.select_related("port__device").get(project=large, serial="OP00023")
    assert (optic.port.device.name, optic.port.name, optic.status) == ("gpu-023", "ib0", "installed")
    lanes = Port.objects.filter(device__project=large, device__name="gpu-005", parent__name="ib3")
    assert sorted(lanes.values_list("plane", flat=True)) == [0, 1, 2, 3]


def test_updates_of_many_rows_cost_the_same_queries_too(gpu):
    """A second import of a changed file updates rows (statuses, serials, places): in bulk as well."""
    counts = {}
    for size in (4, 24):
        project = ProjectFactory(code=f"UPD-{size}")
        imported(project, workbook(size))
        changed = workbook(size, status="powered")
        counts[size] = count_queries(lambda project=project, changed=changed: imported(project, changed))
        assert set(Device.objects.filter(project=project).values_list("status", flat=True)) == {DeviceStatus.POWERED}
    assert counts[4] == counts[24], counts


def test_every_created_row_has_its_history_and_the_page_shows_the_file(gpu, project, technician, client_for):
    imported(project, workbook(5), user=technician)
    device = Device.objects.get(project=project, name="gpu-003")
    (created,) = device.history.all()
    assert (created.history_type, created.history_user, created.history_change_reason) == (
        "+", technician, "Imported from inventory.xlsx")
    # Its components too, each with one "created" row by the same person for the same reason.
    for model, rows in ((Port, Port.objects.filter(device=device)), (Nic, Nic.objects.filter(device=device))):
        history = model.history.filter(id__in=rows.values("pk"), history_type="+")
        assert history.count() == rows.count() > 0
        assert set(history.values_list("history_type", "history_user", "history_change_reason")) == {
            ("+", technician.pk, "Imported from inventory.xlsx")}
    optic = Optic.objects.get(project=project, serial="OP00003")
    assert optic.history.get().history_change_reason == "Imported from inventory.xlsx"
    # nic0 existed (made with the device) and the NIC sheet gave it a serial: created, then changed.
    nic0 = Nic.objects.get(device=device, slot="nic0")
    shown = history_rows(nic0.history.all())
    assert [(row.kind, row.user, row.reason) for row in shown] == [
        ("Changed", technician.username, "Imported from inventory.xlsx"),
        ("Created", technician.username, "Imported from inventory.xlsx"),
    ]
    assert {(c.field, c.old, c.new) for c in shown[0].changes} >= {("serial", "—", "MT-00003")}
    body = client_for(technician).get(reverse("inventory:device-detail", args=[project.code, device.pk]))
    section = body.content.decode().split('id="history"', 1)[1]
    assert "Created" in section and "Imported from inventory.xlsx" in section and technician.username in section


def test_an_outsider_does_not_see_the_imported_device_page(gpu, project, outsider, client_for):
    imported(project, workbook(1))
    device = Device.objects.get(project=project)
    address = reverse("inventory:device-detail", args=[project.code, device.pk])
    assert client_for(outsider).get(address).status_code == 404


def test_a_bad_row_deep_in_a_large_file_writes_nothing_and_is_named(gpu, project):
    before = snapshot(project)
    result = inventory_import(project=project, filename="inventory.xlsx", data=workbook(60, bad_row=53))
    assert not result.applied
    issues = [str(issue) for issue in result.issues]
    assert issues[0] == 'inventory.xlsx sheet devices row 53, column rack: unknown rack "R99"'
    # The rows that name that device are refused too, each with its own row: nothing else is wrong.
    assert all("gpu-051" in issue for issue in issues[1:]) and len(issues) == 4, issues
    assert snapshot(project) == before
    assert not Site.objects.filter(project=project).exists()


def after_the_check(action):
    """A progress callback that runs `action` once the whole file was checked: another writer since the check,
    inside the import's own transaction (so the refusal's rollback takes it away too)."""

    def progress(done, total):
        if done == total:
            action()

    return progress


def refused(project, data: bytes, race) -> list[str]:
    """The issues of an import refused because of `race`: of its own rows nothing is left, only the race's (the
    other writer's, committed with the check's transaction as another connection's would be)."""
    result = inventory_import(project=project, filename="inventory.xlsx", data=data, progress=after_the_check(race))
    assert not result.applied
    return [str(issue) for issue in result.issues]


def test_a_row_the_database_refuses_is_named_and_nothing_is_written(gpu, project):
    """The optics go in together; the database refuses one (a serial taken since the check): the rows are written
    again one at a time, in savepoints, to name it; the file stays all or nothing."""

    def same_serial():
        Optic.objects.create(project=project, vendor="NVIDIA", part_number="X", serial="OP00003", form_factor="osfp",
                             speed_gbps=800)

    (issue,) = refused(project, workbook(6), same_serial)
    assert list(Optic.objects.filter(project=project).values_list("part_number", flat=True)) == ["X"]
    assert not Device.objects.filter(project=project).exists() and not Rack.objects.filter(project=project).exists()
    assert issue.startswith("inventory.xlsx sheet optics row 5: the database refused this row (IntegrityError: ")
    assert issue.endswith("a change since the check?); nothing was imported")


def test_units_taken_since_the_check_name_each_new_devices_row(gpu, project):
    """devices_create_bulk checks the units again and finds two new devices' units taken: one issue per device, on
    its own row (not the first row of the sheet)."""
    site = Site.objects.create(project=project, name="Hall 1")
    rack = Rack.objects.create(project=project, site=site, name="R01", row="A", position=1, height_u=48,
                               power_budget_w=40000)

    def squat():
        device_create(project=project, hardware_model=gpu, name="squatter-1", rack=rack, position_u=11)
        device_create(project=project, hardware_model=gpu, name="squatter-2", rack=rack, position_u=35)

    issues = refused(project, workbook(4), squat)
    assert sorted(Device.objects.filter(project=project).values_list("name", flat=True)) == ["squatter-1",
                                                                                            "squatter-2"]
    assert issues == [
        "inventory.xlsx sheet devices row 3: U11 of rack R01 is already taken by squatter-1.",
        "inventory.xlsx sheet devices row 5: U35 of rack R01 is already taken by squatter-2.",
    ]


def test_a_unit_taken_under_a_moved_device_names_its_row(gpu, project):
    """A second import changes every device and moves one: the database refuses the moved device's units (taken
    since the check), and the issue is on that device's row, not on the first changed one."""
    imported(project, workbook(3))
    rack = Rack.objects.get(project=project, name="R01")

    def squat():
        device_create(project=project, hardware_model=gpu, name="squatter", rack=rack, position_u=38)

    before = snapshot(project)
    issues = refused(project, workbook(3, status="powered", moves={"gpu-002": 31}), squat)
    Device.objects.get(name="squatter").delete()
    after = snapshot(project)
    assert after.pop("history") > before.pop("history")  # the squatter's own, kept with it
    assert after == before
    assert not Device.history.filter(name__startswith="gpu-", history_type="~").exists()  # no change recorded
    assert Device.objects.get(project=project, name="gpu-002").position_u == 21
    assert issues == ["inventory.xlsx sheet devices row 4, column position_u: U38 of rack R01 is already taken by "
                      "squatter."]
