"""The hardware catalogue: the shipped device-type files load with the ports, lanes and NICs they state;
loading again changes nothing; a set of files loads all or nothing; NetBox community files import (with a
kind chosen for them); the planner builds the reference fabrics from catalogue models named by part
number; `manage.py load_catalogue` and `make run`'s use of it."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from cabling.services import plan_apply, plan_diff, plan_of
from inventory.catalogue import shipped_files
from inventory.catalogue.reader import INTERFACE_TYPES, VIRTUAL_TYPES
from inventory.choices import HardwareKind, Network, PortKind
from inventory.models import HardwareModel, NicTemplate, Port, PortTemplate
from inventory.services import CatalogueFile, catalogue_load, catalogue_load_shipped, device_create
from tests.factories import RackFactory

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NETBOX = ROOT / "tests" / "fixtures" / "netbox"


def file_of(path: Path, text: str | None = None) -> CatalogueFile:
    return CatalogueFile(name=path.name, content=(text if text is not None else path.read_text()).encode())


def shipped(name: str) -> Path:
    return next(path for path in shipped_files() if path.name == name)


def stated(path: Path) -> dict:
    """What a file states, counted from the file itself: physical ports, lanes, NICs, the power."""
    data = yaml.safe_load(path.read_text())
    interfaces = [i for i in data["interfaces"] if i["type"] not in VIRTUAL_TYPES]
    lanes = sum(int(i.get("bringup", {}).get("breakout", "1x").split("x")[0]) for i in interfaces
                if i.get("bringup", {}).get("breakout"))
    return {"part": data["part_number"], "ports": len(interfaces), "lanes": lanes,
            "nics": len(data.get("bringup", {}).get("nics", [])), "height": data["u_height"]}


# --- the shipped catalogue -------------------------------------------------------------------------------


def test_every_shipped_file_loads_with_the_ports_lanes_and_nics_it_states():
    result = catalogue_load_shipped()
    files = shipped_files()
    assert len(files) >= 15 and sorted(result.created) == sorted(stated(p)["part"] for p in files)
    for path in files:
        want = stated(path)
        model = HardwareModel.objects.get(part_number=want["part"])
        templates = model.port_templates.all()
        assert templates.count() == want["ports"], path.name
        assert sum(t.breakout_lanes for t in templates if t.breakout_lanes > 1) == want["lanes"], path.name
        assert model.nic_templates.count() == want["nics"], path.name
        assert model.height_u == want["height"], path.name


def test_the_reference_hardware_is_in_the_catalogue_as_its_datasheets_say():
    catalogue_load_shipped()
    kinds = dict(HardwareModel.objects.values_list("part_number", "kind"))
    assert {kinds[p] for p in ("B300-8GPU", "B300-8GPU-ETH", "GB300-NVL72-TRAY", "H100-8GPU", "H200-8GPU")} == {
        HardwareKind.GPU_SERVER}
    assert {kinds[p] for p in ("MQM9700-NS2F", "MQM9790-NS2F", "Q3400-RA")} == {HardwareKind.IB_SWITCH}
    assert {kinds[p] for p in ("SN5600", "SN5610", "SN4600C")} == {HardwareKind.ETH_SWITCH}
    assert kinds["SN2201"] == HardwareKind.MGMT_SWITCH
    assert [kinds[p] for p in ("PDU-3P63A-M", "PDU-3P32A-M")] == [HardwareKind.PDU] * 2

    # Quantum-X800 Q3400-RA: 144 x 800G XDR (72 twin-port cages), each 4 x 200G lanes in planes, and mgmt0.
    q3400 = HardwareModel.objects.get(part_number="Q3400-RA")
    xdr = q3400.port_templates.filter(kind=PortKind.INFINIBAND)
    assert xdr.count() == 144 and set(xdr.values_list("speed_gbps", "breakout_lanes", "lane_speed_gbps",
                                                      "planes_per_lane")) == {(800, 4, 200, True)}
    assert [t.name for t in xdr][:3] == ["p1", "p2", "p3"] and xdr.last().name == "p144"
    assert q3400.port_templates.get(kind=PortKind.BMC).name == "mgmt0"
    assert (q3400.height_u, q3400.max_power_w) == (4, 6000)

    # Quantum-2 QM9700: 64 x 400G NDR in 32 OSFP cages; the power ports' maximum draws add up.
    qm9700 = HardwareModel.objects.get(part_number="MQM9700-NS2F")
    ndr = qm9700.port_templates.filter(kind=PortKind.INFINIBAND)
    assert list(ndr.values_list("speed_gbps", flat=True)) == [400] * 64
    assert (qm9700.height_u, qm9700.max_power_w) == (1, 1720)

    # Spectrum-4 SN5600: 64 x 800G OSFP split 2 x 400G, a 25G port, Cumulus names.
    sn5600 = HardwareModel.objects.get(part_number="SN5600")
    osfp = sn5600.port_templates.filter(speed_gbps=800)
    assert osfp.count() == 64 and set(osfp.values_list("kind", "breakout_lanes", "lane_speed_gbps")) == {
        (PortKind.ETHERNET, 2, 400)}
    assert sn5600.port_templates.get(name="p65").speed_gbps == 25 and sn5600.os_port_format == "swp{n}"

    # The XDR B300: 8 ConnectX-8, each with one 800G port of 4 x 200G plane lanes on the compute network.
    b300 = HardwareModel.objects.get(part_number="B300-8GPU")
    assert set(b300.nic_templates.filter(slot__startswith="nic").values_list("model", flat=True)) == {
        "ConnectX-8 SuperNIC (800G OSFP)"}
    ib = b300.port_templates.filter(network=Network.COMPUTE).select_related("nic_template")
    assert [(t.name, t.nic_template.slot, t.breakout_lanes) for t in ib] == [(f"ib{i}", f"nic{i}", 4) for i in range(8)]
    assert b300.port_templates.get(name="bmc0").kind == PortKind.BMC
    # H100 / H200: ConnectX-7 NDR, one 400G port per GPU.
    h100 = HardwareModel.objects.get(part_number="H100-8GPU")
    assert set(h100.port_templates.filter(network=Network.COMPUTE).values_list("kind", "speed_gbps")) == {
        (PortKind.INFINIBAND, 400)}
    # A PDU hands its power on: 0 W of its own, 0U on one face.
    pdu = HardwareModel.objects.get(part_number="PDU-3P63A-M")
    assert (pdu.max_power_w, pdu.height_u, pdu.is_full_depth) == (0, 0, False)


def test_the_shipped_files_are_netbox_device_types_once_our_keys_are_taken_out():
    """Without the `bringup:` keys every shipped file is a plain NetBox device type: it loads with a kind
    chosen for it, the same ports (without lanes, NICs or networks) and the power its ports draw."""
    plain_files = []
    for path in shipped_files():
        data = yaml.safe_load(path.read_text())
        data.pop("bringup")
        for interface in data["interfaces"]:
            interface.pop("bringup", None)
        plain_files.append(CatalogueFile(path.name, yaml.safe_dump(data).encode()))
    result = catalogue_load(files=plain_files, default_kind=HardwareKind.OTHER)
    assert len(result.created) == len(shipped_files()) and result.warnings == []
    q3400 = HardwareModel.objects.get(part_number="Q3400-RA")
    assert q3400.port_templates.count() == 145 and not q3400.port_templates.filter(breakout_lanes__gt=1).exists()
    assert q3400.max_power_w == 6000 and q3400.kind == HardwareKind.OTHER


def test_a_device_of_a_catalogue_model_gets_its_ports_and_plane_lanes(project):
    catalogue_load_shipped()
    rack = RackFactory(project=project)
    switch = device_create(project=project, hardware_model=HardwareModel.objects.get(part_number="Q3400-RA"),
                           name="ib-leaf-01", rack=rack, position_u=1)
    assert switch.ports.filter(parent__isnull=True).count() == 145
    lanes = switch.ports.filter(parent__isnull=False)
    assert lanes.count() == 576 and set(lanes.values_list("plane", flat=True)) == {0, 1, 2, 3}
    server = device_create(project=project, hardware_model=HardwareModel.objects.get(part_number="B300-8GPU"),
                           name="gpu-001", rack=rack, position_u=10)
    assert server.nics.count() == 10
    assert Port.objects.get(device=server, name="ib3/2").plane == 2
    assert Port.objects.get(device=server, name="ib3").nic.slot == "nic3"


def test_loading_twice_writes_nothing_at_all():
    catalogue_load_shipped()
    before = (HardwareModel.history.count(), PortTemplate.history.count(), NicTemplate.history.count(),
              sorted(PortTemplate.objects.values_list("id", flat=True)))
    again = catalogue_load_shipped()
    assert not again.changed and len(again.unchanged) == len(shipped_files())
    assert (HardwareModel.history.count(), PortTemplate.history.count(), NicTemplate.history.count(),
            sorted(PortTemplate.objects.values_list("id", flat=True))) == before


def test_a_changed_file_updates_its_model_and_replaces_its_templates():
    catalogue_load_shipped()
    path = shipped("quantum2-qm9700.yaml")
    text = path.read_text().replace("maximum_draw: 860", "maximum_draw: 900").replace(
        "  - {name: p64, type: infiniband-ndr}\n", "")
    result = catalogue_load(files=[file_of(path, text)])
    assert result.updated == ["MQM9700-NS2F"]
    model = HardwareModel.objects.get(part_number="MQM9700-NS2F")
    assert model.max_power_w == 1800 and model.port_templates.filter(kind=PortKind.INFINIBAND).count() == 63


def test_templates_that_devices_were_made_from_are_not_rewritten(project):
    catalogue_load_shipped()
    path = shipped("quantum2-qm9700.yaml")
    model = HardwareModel.objects.get(part_number="MQM9700-NS2F")
    device_create(project=project, hardware_model=model, name="leaf-1")
    text = path.read_text().replace("  - {name: p64, type: infiniband-ndr}\n", "")
    with pytest.raises(ValidationError, match=r"quantum2-qm9700\.yaml: interfaces: 1 device\(s\) of MQM9700-NS2F"):
        catalogue_load(files=[file_of(path, text)])
    assert model.port_templates.count() == 65
    # Its power figure is not a template: a correction is taken.
    power = path.read_text().replace("maximum_draw: 860", "maximum_draw: 900")
    assert catalogue_load(files=[file_of(path, power)]).updated == ["MQM9700-NS2F"]


def test_without_allow_update_an_existing_model_is_refused_and_a_new_one_added():
    catalogue_load_shipped()
    path = shipped("quantum2-qm9700.yaml")
    changed = path.read_text().replace("maximum_draw: 860", "maximum_draw: 900")
    with pytest.raises(ValidationError, match=r"MQM9700-NS2F is already in the catalogue with another max_power_w; "
                                              r"only staff change"):
        catalogue_load(files=[file_of(path, changed)], allow_update=False)
    new = NETBOX / "nvidia-sn4700.yaml"
    result = catalogue_load(files=[file_of(path), file_of(new)], default_kind=HardwareKind.ETH_SWITCH,
                            allow_update=False)
    assert result.created == ["MSN4700-WS2FC"] and result.unchanged == ["MQM9700-NS2F"]


def test_a_set_loads_all_or_nothing_and_names_the_file_and_line():
    good = file_of(shipped("quantum2-qm9700.yaml"))
    bad_text = shipped("spectrum4-sn5600.yaml").read_text().replace(
        "{name: p7, type: 800gbase-x-osfp,", "{name: p7, type: 800gbase-x-osfpx,")
    line = next(n for n, text in enumerate(bad_text.splitlines(), 1) if "800gbase-x-osfpx" in text)
    with pytest.raises(ValidationError) as refused:
        catalogue_load(files=[good, CatalogueFile("spectrum4-sn5600.yaml", bad_text.encode())])
    assert refused.value.messages == [
        f"spectrum4-sn5600.yaml, line {line}: interfaces[6].type: unknown interface type '800gbase-x-osfpx': no port "
        "kind and speed is known for it"
    ]
    assert not HardwareModel.objects.exists()


def test_two_files_of_one_set_may_not_share_a_part_number():
    path = shipped("quantum2-qm9700.yaml")
    with pytest.raises(ValidationError, match=r"copy\.yaml: part_number: 'MQM9700-NS2F' is also the part number in "
                                              r"quantum2-qm9700\.yaml"):
        catalogue_load(files=[file_of(path), CatalogueFile("copy.yaml", path.read_bytes())])


# --- NetBox community files --------------------------------------------------------------------------------


def test_a_netbox_device_type_imports_with_the_kind_chosen_for_it():
    path = NETBOX / "nvidia-sn4700.yaml"
    with pytest.raises(ValidationError, match=r"nvidia-sn4700\.yaml: bringup\.kind: the kind of hardware is not in "
                                              r"the file"):
        catalogue_load(files=[file_of(path)])
    result = catalogue_load(files=[file_of(path)], default_kind=HardwareKind.ETH_SWITCH)
    assert result.created == ["MSN4700-WS2FC"] and result.warnings == []
    model = HardwareModel.objects.get(part_number="MSN4700-WS2FC")
    assert (model.vendor, model.model, model.kind, model.height_u, model.is_full_depth, model.max_power_w) == (
        "NVIDIA", "SN4700", HardwareKind.ETH_SWITCH, 1, True, 900)
    ports = list(model.port_templates.values_list("name", "kind", "speed_gbps", "network"))
    assert ports[0] == ("eth0", PortKind.BMC, 1, Network.OOB)
    assert ports[1:] == [(f"swp{n}", PortKind.ETHERNET, 400, "") for n in range(1, 33)]


def test_a_netbox_file_without_a_part_number_uses_its_slug_and_says_what_it_left_out():
    result = catalogue_load(files=[file_of(NETBOX / "generic-head-node-1u.yaml")], default_kind=HardwareKind.OTHER)
    assert result.created == ["generic-head-node-1u"]
    assert any("part_number: none given: the slug 'generic-head-node-1u' is the part number" in w
               for w in result.warnings)
    assert any(re.search(r"line 17: module-bays: module bays are not imported", w) for w in result.warnings)
    assert any("bond0 is a lag interface, not a port: skipped" in w for w in result.warnings)
    model = HardwareModel.objects.get(part_number="generic-head-node-1u")
    assert list(model.port_templates.values_list("name", "speed_gbps")) == [
        ("IPMI", 1), ("eno1", 10), ("eno2", 10), ("ens1f0", 100)]
    assert model.max_power_w == 1600 and model.height_u == 1


@pytest.mark.parametrize(("netbox_type", "kind", "speed"), [
    ("800gbase-x-osfp", PortKind.ETHERNET, 800), ("400gbase-x-osfp", PortKind.ETHERNET, 400),
    ("infiniband-ndr", PortKind.INFINIBAND, 400), ("infiniband-xdr", PortKind.INFINIBAND, 800),
    ("1000base-t", PortKind.ETHERNET, 1), ("100gbase-x-qsfp28", PortKind.ETHERNET, 100),
])
def test_interface_types_map_to_port_kinds_and_speeds(netbox_type, kind, speed):
    assert INTERFACE_TYPES[netbox_type] == (kind, speed)
    text = (f"manufacturer: X\nmodel: Y\npart_number: T-{speed}\nu_height: 1\nis_full_depth: true\n"
            f"interfaces:\n  - {{name: p1, type: {netbox_type}}}\n")
    catalogue_load(files=[CatalogueFile("t.yaml", text.encode())], default_kind=HardwareKind.OTHER)
    assert PortTemplate.objects.filter(hardware_model__part_number=f"T-{speed}").values_list(
        "kind", "speed_gbps").get() == (kind, speed)


# --- the planner with catalogue models ---------------------------------------------------------------------


def test_reference_fabric_1_applies_as_it_is_with_the_shipped_catalogue(project, manager):
    """examples/fabric-72.yaml names B300-8GPU and Q3400-RA: both are in the catalogue, ports and lanes as the
    plan needs them."""
    catalogue_load_shipped()
    result = plan_apply(project=project, spec_text=(EXAMPLES / "fabric-72.yaml").read_text(), user=manager)
    assert result.plan.summary()["switches"]["compute"] == {"leaf": 8, "spine": 4, "super_spine": 0}
    assert project.cables.count() == 1152
    lanes = Port.objects.filter(device__project=project, device__name="ib-leaf-01", parent__isnull=False)
    assert set(lanes.values_list("plane", flat=True)) == {0, 1, 2, 3}


def test_reference_fabric_3_of_1024_servers_plans_against_catalogue_models(project):
    """examples/fabric-1024.yaml with the catalogue's 800GbE B300 and Spectrum-4 SN5600 named by part number
    (the spec's own placeholder switch is 4U, the SN5600 2U): the whole fabric checks out against the
    catalogue, every port and lane the plan uses found on the models."""
    catalogue_load_shipped()
    data = yaml.safe_load((EXAMPLES / "fabric-1024.yaml").read_text())
    switch = dict(data["switch_models"].pop("N9570-64OC"), height_u=2)
    data["switch_models"]["SN5600"] = switch
    data["networks"]["compute"]["switch"] = "SN5600"
    data["servers"][0]["model"] = "B300-8GPU-ETH"
    diff = plan_diff(project=project, plan=plan_of(spec_text=yaml.safe_dump(data)))
    assert diff.errors == []
    counts = diff.counts()
    assert (counts["servers_added"], counts["switches_added"], counts["cables_added"]) == (1024, 384, 24576)
    assert {m.part_number for m in diff.models.values()} == {"B300-8GPU-ETH", "SN5600"}


def test_a_spec_naming_a_part_the_catalogue_lacks_is_refused_by_name(project):
    catalogue_load_shipped()
    data = yaml.safe_load((EXAMPLES / "fabric-1024.yaml").read_text())
    diff = plan_diff(project=project, plan=plan_of(spec_text=yaml.safe_dump(data)))
    assert "switch_models.N9570-64OC: no hardware model with part number 'N9570-64OC' in the catalogue" in diff.errors


# --- the command ---------------------------------------------------------------------------------------------


def test_the_command_loads_the_shipped_catalogue_then_has_nothing_to_do():
    out = StringIO()
    call_command("load_catalogue", stdout=out)
    assert re.search(rf"Hardware catalogue: {len(shipped_files())} created, 0 updated, 0 unchanged", out.getvalue())
    out = StringIO()
    call_command("load_catalogue", stdout=out)
    assert f"0 created, 0 updated, {len(shipped_files())} unchanged" in out.getvalue()


def test_the_command_imports_netbox_files_and_folders_with_a_kind(tmp_path):
    out = StringIO()
    call_command("load_catalogue", "--file", str(NETBOX), "--kind", "eth_switch", stdout=out)
    assert "2 created" in out.getvalue() and "module bays are not imported" in out.getvalue()
    assert HardwareModel.objects.get(part_number="MSN4700-WS2FC").kind == HardwareKind.ETH_SWITCH


def test_the_command_refuses_a_bad_set_whole_naming_file_and_line(tmp_path):
    (tmp_path / "a.yaml").write_text((NETBOX / "nvidia-sn4700.yaml").read_text())
    (tmp_path / "b.yaml").write_text("manufacturer: X\nmodel: Y\npart_number: Z\nu_height: 1.5\nis_full_depth: true\n")
    with pytest.raises(CommandError, match=r"nothing was loaded:\n.*b\.yaml, line 4: u_height: expected a whole "
                                           r"number, got 1\.5"):
        call_command("load_catalogue", "--file", str(tmp_path), "--kind", "other")
    with pytest.raises(CommandError, match=r"missing\.yaml: cannot read"):
        call_command("load_catalogue", "--file", str(tmp_path / "missing.yaml"))
    assert not HardwareModel.objects.exists()


def test_make_demo_loads_the_catalogue_before_the_demo():
    makefile = (ROOT / "Makefile").read_text()
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert demo.index("manage.py load_catalogue") < demo.index("manage.py seed_demo")
