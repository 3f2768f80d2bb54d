"""The acceptance report's inventory section (inventory.report_sections), written through the real snapshot
writer and read back: racks, devices, NICs and optics as the database holds them (a formula-like asset tag
kept as it is), the devices not confirmed in their rack and the faulty optics first, another project's rows
nowhere, and a query count that does not grow with the inventory."""

import gzip
import io
from datetime import UTC, datetime

import pytest

from inventory.choices import DeviceRole, OpticStatus
from inventory.models import Device, Nic, Optic, Port
from inventory.report_sections import inventory_section
from inventory.services import device_create, optic_install
from projects.reports import Facts, SnapshotWriter
from tests.factories import HardwareModelFactory, OpticFactory, RackFactory, SiteFactory, gpu_server_model
from tests.report_support import section_titles, sections_snapshot, sections_written
from tests.support import count_queries

pytestmark = pytest.mark.django_db
FORMULA = "=cmd|' /C calc'!A0"
RACKED_AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
DOM_AT = datetime(2026, 11, 25, 7, 45, tzinfo=UTC)


def snapshot_of(project) -> bytes:
    return sections_snapshot(project, ["inventory"])


def blocks_of(project) -> dict:
    """Tables by key (record and rows as dicts) with their order, and the facts, read back from the snapshot."""
    assert section_titles(project, ["inventory"]) == [("inventory", "Inventory", 30)]
    blocks = sections_written(project, ["inventory"])["inventory"]
    tables = [b for b in blocks if isinstance(b, tuple)]
    found: dict = {"tables": {table.key: (table, rows) for table, rows in tables},
                   "order": [table.key for table, _ in tables]}
    for block in blocks:
        if isinstance(block, Facts):
            found["facts"] = dict(block.items)
    return found


def rows_of(project, key: str) -> list[dict]:
    return blocks_of(project)["tables"][key][1]


def build(project, *, servers: int, optics: int, prefix: str = "gpu"):
    """A hall with a server rack and a switch rack: `servers` GPU servers (the first confirmed in its rack by a
    scan), a switch, NIC firmware and serials, and `optics` optics seated in the servers' lanes plus one in
    stock and one faulty."""
    site = SiteFactory(project=project, name=f"{prefix} hall")
    rack = RackFactory(project=project, site=site, name=f"{prefix[:1].upper()}01", row=prefix[:1].upper(), position=1,
                       power_budget_w=60000)
    network = RackFactory(project=project, site=site, name=f"{prefix[:1].upper()}N1", row="N", position=1)
    model = gpu_server_model(nics=2, lanes=2)
    switch = HardwareModelFactory(vendor="Example", model="SW-64", kind="ib_switch", max_power_w=1500)
    devices = [device_create(project=project, hardware_model=model, name=f"{prefix}-{i + 1:03d}", rack=rack,
                             position_u=1 + i * 10, role=DeviceRole.GPU_NODE, serial=f"{prefix}SN{i:04d}",
                             asset_tag=FORMULA if i == 0 else f"AT-{i}")
               for i in range(servers)]
    device_create(project=project, hardware_model=switch, name=f"{prefix}-leaf-01", rack=network, position_u=1,
                  role=DeviceRole.LEAF)
    Device.objects.filter(pk=devices[0].pk).update(racked_at=RACKED_AT, status="racked")
    for nic in Nic.objects.filter(device__in=devices):
        Nic.objects.filter(pk=nic.pk).update(firmware="40.44.1036", serial=f"NIC-{nic.device.name}-{nic.slot}",
                                             guid_mac="b8:3f:d2:00:00:01")
    lanes = Port.objects.filter(device__in=devices, parent__isnull=False).order_by("device__name", "pk")[:optics]
    for number, lane in enumerate(lanes):
        optic = OpticFactory(project=project, serial=f"{prefix}-OPT-{number:04d}", speed_gbps=400)
        optic_install(optic=optic, port=lane)
    first = Optic.objects.filter(project=project, serial=f"{prefix}-OPT-0000")
    first.update(dom_temperature_c=48.5, dom_read_at=DOM_AT)
    OpticFactory(project=project, serial=f"{prefix}-SPARE", speed_gbps=400)
    OpticFactory(project=project, serial=f"{prefix}-BAD", speed_gbps=400, status=OpticStatus.FAULTY)
    return devices


@pytest.fixture
def stocked(project, other_project):
    build(project, servers=2, optics=3)
    build(other_project, servers=1, optics=1, prefix="alien")
    return project


def test_rack_rows(stocked):
    assert rows_of(stocked, "racks") == [
        {"name": "G01", "site": "gpu hall", "row": "G", "position": 1, "height": 48, "status": "Planned",
         "budget": 60000, "load": 2 * 14300, "devices": 2},
        {"name": "GN1", "site": "gpu hall", "row": "N", "position": 1, "height": 48, "status": "Planned",
         "budget": 40000, "load": 1500, "devices": 1},
    ]


def test_device_rows_are_the_database_in_name_order(stocked):
    rows = rows_of(stocked, "devices")
    expected = [
        {"name": d.name, "role": d.get_role_display(), "manufacturer": d.hardware_model.vendor,
         "model": d.hardware_model.model, "rack": d.rack.name, "position": d.position_u, "serial": d.serial,
         "asset_tag": d.asset_tag, "status": d.get_status_display(),
         "racked_at": d.racked_at.isoformat() if d.racked_at else None}
        for d in Device.objects.filter(project=stocked).order_by("name")
    ]
    assert rows == expected
    assert rows[0] == {"name": "gpu-001", "role": "GPU node", "manufacturer": "Example", "model": "B300 8-GPU",
                       "rack": "G01", "position": 1, "serial": "gpuSN0000", "asset_tag": FORMULA, "status": "Racked",
                       "racked_at": RACKED_AT.isoformat()}
    assert [r["name"] for r in rows] == ["gpu-001", "gpu-002", "gpu-leaf-01"]


def test_nic_rows_count_physical_ports_only(stocked):
    rows = rows_of(stocked, "nics")
    assert [(r["device"], r["slot"]) for r in rows] == [("gpu-001", "nic0"), ("gpu-001", "nic1"),
                                                        ("gpu-002", "nic0"), ("gpu-002", "nic1")]
    assert rows[0] == {"device": "gpu-001", "slot": "nic0", "model": "ConnectX-8 SuperNIC",
                       "part_number": "900-9X81Q-00CN-ST0", "firmware": "40.44.1036", "serial": "NIC-gpu-001-nic0",
                       "guid_mac": "b8:3f:d2:00:00:01", "ports": 1}  # ib0, not its two lanes


def test_optic_rows_installed_in_port_order_then_the_others(stocked):
    rows = rows_of(stocked, "optics")
    assert [(r["port"], r["serial"], r["status"]) for r in rows] == [
        ("gpu-001:ib0/0", "gpu-OPT-0000", "Installed"), ("gpu-001:ib0/1", "gpu-OPT-0001", "Installed"),
        ("gpu-001:ib1/0", "gpu-OPT-0002", "Installed"), ("", "gpu-BAD", "Faulty"), ("", "gpu-SPARE", "In stock"),
    ]
    assert rows[0] == {"port": "gpu-001:ib0/0", "serial": "gpu-OPT-0000", "part_number": "980-9I693-00NS00",
                       "vendor": "NVIDIA", "form_factor": "OSFP", "speed": 400, "status": "Installed",
                       "temperature": 48.5, "dom_read_at": DOM_AT.isoformat()}
    assert rows[1]["temperature"] is None and rows[1]["dom_read_at"] is None


def test_what_needs_attention_comes_first(stocked):
    found = blocks_of(stocked)
    assert found["order"] == ["devices_unconfirmed", "optics_faulty", "racks", "devices", "nics", "optics"]
    assert [r["name"] for r in rows_of(stocked, "devices_unconfirmed")] == ["gpu-002", "gpu-leaf-01"]
    assert [r["serial"] for r in rows_of(stocked, "optics_faulty")] == ["gpu-BAD"]
    Device.objects.filter(project=stocked).update(racked_at=RACKED_AT)
    Optic.objects.filter(project=stocked, status=OpticStatus.FAULTY).update(status=OpticStatus.RMA)
    found = blocks_of(stocked)
    assert found["order"] == ["optics_faulty", "racks", "devices", "nics", "optics"]


def test_facts(stocked):
    assert blocks_of(stocked)["facts"] == {
        "Racks": 2, "Devices": 3, "GPU node": 2, "Leaf switch": 1, "Devices confirmed in their rack": 1, "NICs": 4,
        "Optics": 5, "Optics in stock": 1, "Optics installed": 3, "Optics faulty": 1, "Optics in RMA": 0,
    }


def test_another_projects_inventory_is_nowhere_and_an_empty_project_has_no_section(stocked, other_project):
    text = gzip.decompress(snapshot_of(stocked)).decode()
    assert "alien" not in text and "A01" not in text
    Optic.objects.filter(project=other_project).delete()
    Device.objects.filter(project=other_project).delete()
    other_project.racks.all().delete()
    assert inventory_section(other_project) is None


def consume(project) -> int:
    def write():
        writer = SnapshotWriter(io.BytesIO())
        writer.meta({})
        writer.section("inventory", "Inventory", 30, inventory_section(project))
        writer.close()

    return count_queries(write)


def test_query_count_does_not_grow_with_the_inventory(stocked):
    small = consume(stocked)
    build(stocked, servers=4, optics=14, prefix="more")
    assert Device.objects.filter(project=stocked).count() == 8
    assert consume(stocked) == small
