"""The as-built as NetBox bulk-import files (delivery.handover.export), the handover page and its zip,
and the netbox_export command.

The world is the cabling tests' small fabric (tests/cabling/conftest.py: three GPU servers, two leaves and a
spine, a breakout cable C00005, an out-of-band cable) plus what only a handover shows: an optic seated in
gpu-001's ib0 cage, the GUID the fabric reported on a lane, the MAC of a BMC port, and a cable label that
a spreadsheet would run as a formula."""

from __future__ import annotations

import csv
import io
import zipfile
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from cabling.models import Cable, CableEnd
from delivery.handover.export import CSV_FILES, interface_type, write_zip
from inventory.choices import DeviceRole, FormFactor, Network, OpticStatus, PortKind
from inventory.models import Device, Port
from inventory.services import device_create
from tests.cabling.conftest import fabric, ports_of, switch_model  # noqa: F401 - the fixture under `world`
from tests.factories import HardwareModelFactory, OpticFactory, RackFactory

pytestmark = pytest.mark.django_db

# NetBox's CSV fields, written out here rather than read from the code: a change to a header must fail.
# From NetBox's dcim/forms/bulk_import.py (see docs/handover.md for the version checked).
HEADERS = {
    "01-sites.csv": ["name", "slug", "status", "physical_address"],
    "02-racks.csv": ["site", "name", "status", "width", "u_height", "description"],
    "03-manufacturers.csv": ["name", "slug"],
    "04-device_types.csv": ["manufacturer", "model", "slug", "part_number", "u_height", "is_full_depth"],
    "05-device_roles.csv": ["name", "slug", "color"],
    "06-devices.csv": ["name", "role", "manufacturer", "device_type", "status", "site", "rack", "position", "face",
                       "serial", "asset_tag"],
    "07-interfaces.csv": ["device", "name", "parent", "type", "speed", "enabled", "mgmt_only", "wwn", "description"],
    "08-mac_addresses.csv": ["device", "interface", "mac_address"],
    "09-cables.csv": ["side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
                      "type", "status", "label", "length", "length_unit", "description"],
    "10-cables_breakout.csv": ["side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type",
                               "side_b_name", "type", "status", "label", "length", "length_unit", "description"],
    "11-inventory_items.csv": ["device", "name", "status", "manufacturer", "part_id", "serial", "component_type",
                               "component_name", "description"],
}
GUID, MAC = "043f720300aabbcc", "b8:ce:f6:12:34:56"
FORMULA_LABEL = "=HYPERLINK(\"http://x\")"


@pytest.fixture
def world(request):
    return handover_extras(request.getfixturevalue("fabric"))


def handover_extras(ns):
    """tests.cabling.conftest's fabric with what only a handover shows (the module's docstring)."""
    ports = ports_of(ns.gpu1)
    ns.optic = OpticFactory(project=ns.project, vendor="NVIDIA", part_number="980-9I693-00NS00", serial="MT2420FT0001",
                            form_factor=FormFactor.OSFP, speed_gbps=800, port=ports["ib0"],
                            status=OpticStatus.INSTALLED)
    OpticFactory(project=ns.project, vendor="Shelf Co", serial="SPARE-1")  # on the shelf: in no device
    Port.objects.filter(pk=ports["ib0/0"].pk).update(guid_mac=GUID)
    Port.objects.filter(pk=ports["bmc"].pk).update(guid_mac=MAC)
    Device.objects.filter(pk=ns.gpu1.pk).update(serial="SN-0001", asset_tag="AT-0001")
    Cable.objects.filter(pk=ns.oob.pk).update(label=FORMULA_LABEL)
    return ns


def bundle(project) -> dict[str, list[dict]]:
    """The zip's files, each parsed with csv (header row first); README.txt as text under its name."""
    raw = io.BytesIO()
    write_zip(raw, project)
    files = {}
    with zipfile.ZipFile(raw) as archive:
        for name in archive.namelist():
            text = archive.read(name).decode("utf-8")
            short = name.split("/", 1)[1]
            files[short] = text if short == "README.txt" else list(csv.reader(io.StringIO(text)))
    return files


def rows(files, name) -> list[dict]:
    header, *body = files[name]
    return [dict(zip(header, row, strict=True)) for row in body]


def test_every_file_parses_with_netbox_s_headers_and_the_readme_gives_the_import_order(world):
    files = bundle(world.project)
    assert [name for name in files if name != "README.txt"] == list(HEADERS)
    for name, header in HEADERS.items():
        assert files[name][0] == header, name
        assert all(len(row) == len(header) for row in files[name]), name
    readme = files["README.txt"]
    positions = [readme.index(name) for name in HEADERS]
    assert positions == sorted(positions)
    assert "Devices > Interfaces > Import" in readme and "NetBox 4.7" in readme


def test_sites_racks_types_roles_and_devices_equal_the_database(world):
    files = bundle(world.project)
    assert rows(files, "01-sites.csv") == [{"name": "Hall 1", "slug": "hall-1", "status": "active",
                                            "physical_address": ""}]
    racks = {r["name"]: r for r in rows(files, "02-racks.csv")}
    assert racks["A01"] == {"site": "Hall 1", "name": "A01", "status": "planned", "width": "19", "u_height": "48",
                            "description": "Row A, position 1"}
    types = {t["model"]: t for t in rows(files, "04-device_types.csv")}
    assert types[world.gpu_model.model] == {
        "manufacturer": "Example", "model": "B300 8-GPU", "slug": "b300-8-gpu", "part_number": "TEST-B300-8GPU",
        "u_height": "10", "is_full_depth": "true",
    }
    assert {r["slug"]: r["name"] for r in rows(files, "05-device_roles.csv")} == {
        "gpu-node": "GPU node", "leaf": "Leaf switch", "spine": "Spine switch"}
    assert {m["name"] for m in rows(files, "03-manufacturers.csv")} == {"Example", "NVIDIA"}  # not the shelf's
    devices = {d["name"]: d for d in rows(files, "06-devices.csv")}
    assert set(devices) == {"gpu-001", "gpu-002", "gpu-003", "leaf-01", "leaf-02", "spine-01"}  # not foreign-sw
    assert devices["gpu-001"] == {
        "name": "gpu-001", "role": "GPU node", "manufacturer": "Example", "device_type": "B300 8-GPU",
        "status": "planned", "site": "Hall 1", "rack": "A01", "position": "1", "face": "front",
        "serial": "SN-0001", "asset_tag": "AT-0001",
    }
    assert devices["spine-01"]["rack"] == "N01" and devices["spine-01"]["position"] == "10"


def test_ports_lanes_guids_and_macs_equal_the_database(world):
    files = bundle(world.project)
    interfaces = rows(files, "07-interfaces.csv")
    by_name = {(i["device"], i["name"]): i for i in interfaces}
    expected_count = Port.objects.filter(device__project=world.project,
                                         kind__in=[PortKind.ETHERNET, PortKind.INFINIBAND, PortKind.BMC]).count()
    assert len(interfaces) == expected_count
    assert by_name[("gpu-001", "ib0")] == {
        "device": "gpu-001", "name": "ib0", "parent": "", "type": "infiniband-xdr", "speed": "800000000",
        "enabled": "true", "mgmt_only": "false", "wwn": "", "description": "Compute (training fabric)",
    }
    lane = by_name[("gpu-001", "ib0/0")]
    assert (lane["parent"], lane["type"], lane["speed"], lane["wwn"]) == (
        "ib0", "infiniband-hdr", "200000000", "04:3F:72:03:00:AA:BB:CC")
    assert by_name[("gpu-001", "bmc")]["mgmt_only"] == "true"
    assert by_name[("gpu-001", "bmc")]["type"] == "1000base-t"
    assert by_name[("leaf-01", "p1")]["description"] == "Compute (training fabric), plane 0"
    # Every lane comes after every physical port: its parent must exist when NetBox reads it.
    first_lane = next(i for i, row in enumerate(interfaces) if row["parent"])
    assert all(row["parent"] for row in interfaces[first_lane:])
    assert rows(files, "08-mac_addresses.csv") == [{"device": "gpu-001", "interface": "bmc",
                                                    "mac_address": "B8:CE:F6:12:34:56"}]


def test_cables_equal_the_database_and_a_breakout_lists_its_legs(world):
    files = bundle(world.project)
    plain = {c["label"]: c for c in rows(files, "09-cables.csv")}
    assert set(plain) == {"C00001", "C00002", "C00003", "C00004", "C00006", "C00007", "'" + FORMULA_LABEL}
    assert plain["C00001"] == {
        "side_a_device": "gpu-001", "side_a_type": "dcim.interface", "side_a_name": "ib0/0",
        "side_b_device": "leaf-01", "side_b_type": "dcim.interface", "side_b_name": "p1", "type": "",
        "status": "planned", "label": "C00001", "length": "5.0", "length_unit": "m",
        "description": "Compute (training fabric), plane 0; fiber with transceivers; planned",
    }
    assert plain["C00006"]["type"] == "aoc"
    assert plain["'" + FORMULA_LABEL]["type"] == "cat6"
    [breakout] = rows(files, "10-cables_breakout.csv")
    assert breakout["label"] == "C00005"
    assert (breakout["side_a_device"], breakout["side_a_name"]) == ("gpu-003", "ib0")
    # Two legs on two devices: one device per name, in leg order (NetBox 4.7's multi-termination CSV).
    assert (breakout["side_b_device"], breakout["side_b_name"]) == ("leaf-01,leaf-02", "p3,p3")
    assert breakout["length"] == "7.0"


def test_a_breakout_with_every_leg_on_one_device_names_it_once(world):
    Cable.objects.filter(pk=world.breakout.pk).update(label="C00005")
    CableEnd.objects.filter(cable=world.breakout, side="B", position=1).update(port=ports_of(world.leaf1)["p4"])
    [breakout] = rows(bundle(world.project), "10-cables_breakout.csv")
    assert (breakout["side_b_device"], breakout["side_b_name"]) == ("leaf-01", "p3,p4")


def test_a_seated_optic_is_an_inventory_item_bound_to_its_interface(world):
    assert rows(bundle(world.project), "11-inventory_items.csv") == [{
        "device": "gpu-001", "name": "Optic ib0", "status": "active", "manufacturer": "NVIDIA",
        "part_id": "980-9I693-00NS00", "serial": "MT2420FT0001", "component_type": "dcim.interface",
        "component_name": "ib0", "description": "OSFP 800G transceiver",
    }]


def test_formula_text_is_guarded_in_every_file(world):
    Device.objects.filter(pk=world.gpu2.pk).update(serial="+SUM(A1)", asset_tag="@cmd")
    files = bundle(world.project)
    devices = {d["name"]: d for d in rows(files, "06-devices.csv")}
    assert (devices["gpu-002"]["serial"], devices["gpu-002"]["asset_tag"]) == ("'+SUM(A1)", "'@cmd")
    cells = [cell for name in HEADERS for row in files[name][1:] for cell in row]
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "-", "@")]


def test_an_unracked_device_goes_to_the_first_site_and_a_zero_u_one_keeps_no_position(world):
    pdu_model = HardwareModelFactory(vendor="Example", model="Rear PDU", height_u=0, is_full_depth=False)
    device_create(project=world.project, hardware_model=pdu_model, name="pdu-a01", rack=world.servers_rack,
                  position_u=40, role=DeviceRole.PDU, face="rear")
    device_create(project=world.project, hardware_model=switch_model(), name="spare-sw", role=DeviceRole.LEAF)
    devices = {d["name"]: d for d in rows(bundle(world.project), "06-devices.csv")}
    assert (devices["pdu-a01"]["rack"], devices["pdu-a01"]["position"], devices["pdu-a01"]["face"]) == ("A01", "", "")
    assert (devices["spare-sw"]["site"], devices["spare-sw"]["rack"], devices["spare-sw"]["position"]) == (
        "Hall 1", "", "")


@pytest.mark.parametrize(("kind", "speed", "form_factor", "expected"), [
    (PortKind.INFINIBAND, 800, "", "infiniband-xdr"),
    (PortKind.INFINIBAND, 400, FormFactor.OSFP, "infiniband-ndr"),
    (PortKind.ETHERNET, 400, "", "400gbase-x-osfp"),
    (PortKind.ETHERNET, 400, FormFactor.QSFP112, "400gbase-x-qsfp112"),
    (PortKind.ETHERNET, 100, FormFactor.QSFP28, "100gbase-x-qsfp28"),
    (PortKind.BMC, 1, "", "1000base-t"),
    (PortKind.ETHERNET, 3, "", "other"),
])
def test_interface_types_are_netbox_s(kind, speed, form_factor, expected):
    assert interface_type(kind, speed, form_factor) == expected


def grow(project, start: int, count: int) -> None:
    """`count` more racked switches, each with its ports and a cable to the previous one."""
    rack = RackFactory(project=project, site=project.sites.first(), name=f"G{start:03d}", row="G", position=start + 1)
    model = switch_model()
    previous = None
    for i in range(count):
        device = device_create(project=project, hardware_model=model, name=f"grow-{start}-{i}", rack=rack,
                               position_u=i + 1, role=DeviceRole.LEAF)
        OpticFactory(project=project, port=ports_of(device)["p2"], status=OpticStatus.INSTALLED)
        if previous is not None:
            cable = Cable.objects.create(project=project, label=f"G{start}-{i}", network=Network.COMPUTE,
                                         cable_type="dac", length_m=Decimal("1.0"), speed_gbps=800)
            CableEnd.objects.create(cable=cable, side="A", port=ports_of(previous)["p3"])
            CableEnd.objects.create(cable=cable, side="B", port=ports_of(device)["p1"])
        previous = device


def test_the_export_s_query_count_does_not_grow_with_the_as_built(world, django_assert_num_queries):
    with CaptureQueriesContext(connection) as small:
        write_zip(io.BytesIO(), world.project)
    grow(world.project, 1, 6)
    with django_assert_num_queries(len(small.captured_queries)):
        write_zip(io.BytesIO(), world.project)


# --- the page ---------------------------------------------------------------------------------------------


def test_every_member_downloads_the_zip(world, client_for, manager, technician, customer):
    url = reverse("delivery:handover:download", args=[world.project.code])
    for user in (manager, technician, customer):
        response = client_for(user).get(url)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/zip"
        assert "ACME-72-netbox-import.zip" in response["Content-Disposition"]
        archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
        assert "ACME-72-netbox/07-interfaces.csv" in archive.namelist()


def test_the_page_shows_a_customer_the_download_and_a_manager_the_push_form(world, client_for, manager, customer):
    url = reverse("delivery:handover:home", args=[world.project.code])
    page = client_for(customer).get(url).content.decode()
    assert "netbox-import.zip" in page and 'id="handover-push"' not in page
    page = client_for(manager).get(url).content.decode()
    assert 'id="handover-push"' in page and 'name="token"' in page
    assert [f.filename for f in CSV_FILES] == list(HEADERS)


def test_an_outsider_gets_404_for_the_page_and_the_zip(world, client_for, outsider):
    for name in ("delivery:handover:home", "delivery:handover:download"):
        assert client_for(outsider).get(reverse(name, args=[world.project.code])).status_code == 404


def test_a_customer_or_technician_may_not_push(world, client_for, customer, technician):
    url = reverse("delivery:handover:home", args=[world.project.code])
    data = {"netbox_url": "http://127.0.0.1:9", "token": "x" * 40, "action": "dry_run"}
    for user in (customer, technician):
        assert client_for(user).post(url, data).status_code == 403


def test_the_netbox_export_command_writes_the_files(world, tmp_path):
    out = io.StringIO()
    call_command("netbox_export", project=world.project.code, out=str(tmp_path / "nb"), stdout=out)
    written = sorted(p.name for p in (tmp_path / "nb").iterdir())
    assert written == sorted([*HEADERS, "README.txt"])
    with open(tmp_path / "nb" / "09-cables.csv", encoding="utf-8", newline="") as f:
        assert next(csv.reader(f)) == HEADERS["09-cables.csv"]
    assert "07-interfaces.csv" in out.getvalue()


def test_the_netbox_export_command_names_an_unknown_project(db, tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="NOPE"):
        call_command("netbox_export", project="NOPE", out=str(tmp_path))
