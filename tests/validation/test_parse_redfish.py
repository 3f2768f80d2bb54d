"""Redfish resources: every single-file sample, DMTF's whole public-rackmount1 mockup, and refusals."""

import json
from collections import Counter
from pathlib import Path

import pytest

from validation.parsers import ParseError, redfish

FIXTURES = Path(__file__).parent.parent / "fixtures"
NODE = FIXTURES / "node-outputs"
MOCKUP = FIXTURES / "redfish" / "public-rackmount1"


def read(name):
    return (NODE / name).read_text()


def mockup_documents():
    """Every resource of the mockup, as a crawl of the BMC would return them."""
    return [json.loads(path.read_text()) for path in sorted(MOCKUP.rglob("index.json"))]


def test_service_roots():
    [dmtf] = redfish.parse(read("redfish_01_serviceroot_dmtf-public-rackmount1.json"))
    assert (dmtf.kind, dmtf.redfish_version, dmtf.odata_id) == ("ServiceRoot", "1.15.0", "/redfish/v1/")
    assert dmtf.uuid == "92384634-2938-2342-8820-489239905423"
    [dell] = redfish.parse(read("redfish_13_serviceroot_dell-r630-idrac.json"))
    assert (dell.redfish_version, dell.service_tag) == ("1.4.0", "HB0FJ32")
    assert dell.product == "Integrated Dell Remote Access Controller"


@pytest.mark.parametrize(
    ("name", "serial", "model", "manufacturer", "bios"),
    [
        ("redfish_02_computersystem_dmtf-437XR1138R2.json", "437XR1138R2", "3500", "Contoso", "P79 v1.45 (12/06/2017)"),
        ("redfish_10_computersystem_cisco-ucsc-c240-m5sx.json", "WZP23450C8K", "UCSC-C240-M5SX", "Cisco Systems Inc",
         "C240M5.4.1.3i.0.0713210713"),
    ],
)  # fmt: skip
def test_computer_systems(name, serial, model, manufacturer, bios):
    [system] = redfish.parse(read(name))
    assert (system.kind, system.serial_number, system.model, system.manufacturer) == (
        "ComputerSystem", serial, model, manufacturer,
    )  # fmt: skip
    assert (system.power_state, system.health, system.health_rollup, system.state) == ("On", "OK", "OK", "Enabled")
    assert system.bios_version == bios and system.processor_count == 2


def test_chassis_including_dells_warning():
    [dmtf] = redfish.parse(read("redfish_03_chassis_dmtf-1U.json"))
    assert (dmtf.model, dmtf.serial_number, dmtf.chassis_type) == ("3500RX", "437XR1138R2", "RackMount")
    assert dmtf.health == "OK"
    [cisco] = redfish.parse(read("redfish_09_chassis_cisco-ucsc-c240-m5sx.json"))
    assert (cisco.model, cisco.serial_number, cisco.health, cisco.asset_tag) == (
        "UCS C240 M5SX", "WZP23450C8K", "OK", "02ACA39",
    )  # fmt: skip
    [dell] = redfish.parse(read("redfish_12_chassis_dell-r820_health-WARNING.json"))
    assert (dell.model, dell.serial_number, dell.health, dell.health_rollup) == (
        "PowerEdge R820", "CN747514CF0014", "Warning", "Warning",
    )  # fmt: skip
    assert dell.line_no == 146  # the line of its SerialNumber


def test_legacy_thermal_fans_and_temperatures():
    items = redfish.parse(read("redfish_04_chassis-thermal_dmtf-1U_fans-ok.json"))
    assert [item.kind for item in items] == ["Temperature"] * 3 + ["Fan"] * 2 + ["Redundancy"]
    cpu1, cpu2, intake, fan, backup, _ = items
    assert (cpu1.name, cpu1.reading, cpu1.units, cpu1.health) == ("CPU1 Temp", 41.0, "Cel", "OK")
    assert cpu1.thresholds == {"upper_caution": 42.0, "upper_critical": 45.0, "upper_fatal": 48.0}
    assert (cpu2.state, cpu2.health, cpu2.reading) == ("Disabled", None, None)  # no CPU in socket 2
    assert intake.thresholds["lower_critical"] == 5.0
    assert (fan.name, fan.reading, fan.units, fan.health) == ("BaseBoard System Fan", 2100.0, "RPM", "OK")
    assert backup.reading == 2050.0 and fan.parent == "/redfish/v1/Chassis/1U/Thermal"


def test_legacy_power_with_the_warning_psu():
    items = redfish.parse(read("redfish_05_chassis-power_dmtf-1U_psu1-WARNING.json"))
    by_kind = Counter(item.kind for item in items)
    assert by_kind == {"PowerControl": 1, "Voltage": 2, "PowerSupply": 1}
    [psu] = [item for item in items if item.kind == "PowerSupply"]
    assert (psu.name, psu.health, psu.state) == ("Power Supply Bay", "Warning", "Enabled")
    assert psu.serial_number == "1Z0000001"
    assert (psu.reading, psu.capacity_watts, psu.firmware_version, psu.line_no) == (325.0, 800.0, "1.00", 99)
    [control] = [item for item in items if item.kind == "PowerControl"]
    assert (control.reading, control.units) == (344.0, "W")


def test_ethernet_interface_mac():
    [nic] = redfish.parse(read("redfish_06_ethernetinterface_dmtf-12446A3B0411.json"))
    assert (nic.mac_address, nic.permanent_mac_address) == ("12:44:6A:3B:04:11", "12:44:6A:3B:04:11")
    assert (nic.link_status, nic.speed_mbps, nic.health) == ("LinkUp", 1000.0, "OK")


def test_the_whole_dmtf_mockup():
    results = redfish.read_resources(mockup_documents())
    kinds = Counter(result.kind for result in results)
    assert kinds["ServiceRoot"] == kinds["ComputerSystem"] == kinds["Chassis"] == kinds["Manager"] == 1
    assert kinds["Sensor"] == 42 and kinds["EthernetInterface"] == 7 and kinds["SoftwareInventory"] == 4
    assert kinds["PowerSubsystem"] == kinds["ThermalSubsystem"] == 1
    [manager] = [r for r in results if r.kind == "Manager"]
    assert (manager.firmware_version, manager.manager_type) == ("1.45.455b66-rev4", "BMC")
    [system] = [r for r in results if r.kind == "ComputerSystem"]
    assert system.serial_number == "437XR1138R2"
    # Newer resources: the Bay 1 supply is in Warning, Bay 2 is absent (no health), fans are OK.
    supplies = {r.name: r for r in results if r.kind == "PowerSupply" and r.source == "PowerSupply"}
    bay1 = supplies["Power Supply Bay 1"]
    assert (bay1.health, bay1.serial_number) == ("Warning", "3488247")
    assert supplies["Power Supply Bay 2"].state == "Absent" and supplies["Power Supply Bay 2"].health is None
    fans = [r for r in results if r.kind == "Fan" and r.source == "Fan"]
    assert len(fans) == 4 and ("Chassis Fan Bay 1", 45.0, "%") in {(f.service_label, f.reading, f.units) for f in fans}
    not_ok = sorted((r.kind, r.name) for r in results if getattr(r, "health", None) not in (None, "OK"))
    assert not_ok == [
        ("PowerSupply", "Power Supply Bay"), ("PowerSupply", "Power Supply Bay 1"), ("StorageDevice", "SATA Bay 2"),
    ]  # fmt: skip
    macs = {r.mac_address for r in results if r.kind == "EthernetInterface"}
    assert "12:44:6A:3B:04:11" in macs and "23:11:8A:33:CF:EA" in macs  # host NIC and the BMC's own eth0
    [cpu_fan] = [r for r in results if r.kind == "Sensor" and r.name == "CPU #1 Fan Speed"]
    assert (cpu_fan.reading, cpu_fan.units) == (80.0, "%")
    assert cpu_fan.thresholds == {"lower_caution": 5.0, "lower_critical": 0.0}


def test_a_bundle_of_resources_keyed_by_odata_id_parses_with_lines():
    bundle = {doc.get("@odata.id", str(i)): doc for i, doc in enumerate(mockup_documents())}
    results = redfish.parse(json.dumps(bundle, indent=2))
    assert len(results) == len(redfish.read_resources(bundle.values()))
    assert all(result.line_no >= 1 for result in results) and max(result.line_no for result in results) > 1000


def test_a_list_of_resources_and_a_collection_alone():
    documents = [json.loads(read("redfish_02_computersystem_dmtf-437XR1138R2.json")),
                 json.loads(read("redfish_05_chassis-power_dmtf-1U_psu1-WARNING.json"))]  # fmt: skip
    assert [r.kind for r in redfish.parse(json.dumps(documents))][:2] == ["ComputerSystem", "PowerControl"]
    collection = (MOCKUP / "Chassis" / "index.json").read_text()
    with pytest.raises(ParseError, match=r"no Redfish resource this parser reads \(ChassisCollection\)"):
        redfish.parse(collection)


def test_wrongly_typed_values_are_none_not_errors():
    document = {"@odata.type": "#Thermal.v1_7_1.Thermal", "Fans": [
        {"Name": "Fan 1", "Reading": "fast", "Status": {"Health": ["OK"]}}, "not an object"]}  # fmt: skip
    [fan] = redfish.read_resource(document)
    assert (fan.name, fan.reading, fan.health) == ("Fan 1", None, None)


def test_refused():
    with pytest.raises(ParseError, match="not valid JSON"):
        redfish.parse("<html>login</html>")
    with pytest.raises(ParseError, match="nested"):
        redfish.parse('{"@odata.type": "#Chassis.v1.Chassis", "Oem": ' + "{\"a\": " * 200 + "1" + "}" * 201)
    with pytest.raises(ParseError) as caught:
        redfish.parse('{\n"@odata.type": "#Power.v1.Power",\n"PowerControl": [{"PowerConsumedWatts": 1e999}]}')
    assert caught.value.line_no == 3 and "finite" in caught.value.message
    with pytest.raises(ParseError, match="not valid JSON"):
        redfish.parse('{"@odata.type": "#Chassis.v1.Chassis"}\n' + "x" * 10_000_000)
    with pytest.raises(ParseError, match="characters of Redfish JSON"):
        redfish.parse(" " * (redfish.MAX_JSON_CHARS + 1))
