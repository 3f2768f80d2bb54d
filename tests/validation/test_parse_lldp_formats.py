"""LLDP neighbours in every format a site captures: lldpcli text (and NVUE's lldp-detail framing of it),
lldpcli -f json with its object-or-list quirk (and json0), -f keyvalue with keys out of order, and NVUE's
own tables. Each real fixture's figures, then the ways a bad file is refused (the line, never a crash)."""

import json

import pytest

from validation.parsers import ParseError, detect_tool, lldp, nvue_lldp, parse

from .conftest import fixture_text


def by_interface(neighbours):
    return {n.interface: n for n in neighbours}


def test_keyvalue_01_cumulus_with_a_key_of_another_interface():
    text = fixture_text("lldpcli_keyvalue_01_netbox_agent_cumulus.txt")
    assert detect_tool(text) == "lldp"
    found = by_interface(parse(text))
    assert list(found) == ["eno1", "eno2d1"]
    eno1 = found["eno1"]
    assert (eno1.system_name, eno1.chassis_id_type, eno1.chassis_id) == (
        "toto-chassis.dc42", "mac", "e4:f0:04:b6:47:32")
    assert (eno1.port_id_type, eno1.port_id, eno1.port_description) == ("ifname", "swp46", "BXVWNR2:lom2")
    assert eno1.management_ips == ["10.160.20.18", "fe80::e6f0:4ff:feb6:4732"]
    assert eno1.capabilities == {"Bridge": True, "Router": True} and eno1.rid == 4
    assert eno1.mau_type == "10GigBaseLR - R fiber over 1310 nm optics"
    # The capture's own quirk: eno2d1's name line is written under eno1's key, so eno2d1 has no name.
    assert found["eno2d1"].system_name is None and found["eno2d1"].chassis_id == "e4:f0:04:b6:4e:32"


def test_keyvalue_02_qfx_local_port_id_and_description():
    found = by_interface(parse(fixture_text("lldpcli_keyvalue_02_netbox_agent_qfx.txt")))
    assert [(n.system_name, n.port_id_type, n.port_id, n.port_description) for n in found.values()] == [
        ("sw-filer-f06.dc42", "local", "512", "xe-0/0/1"), ("sw-filer-f05.dc42", "local", "512", "xe-0/0/1")]


def test_nvue_lldp_detail_is_lldpcli_text():
    text = fixture_text("lldpcli_nvue_lldp_detail_01_doc.txt")
    assert detect_tool(text) == "lldp"
    eth0, swp1 = parse(text)
    assert (eth0.interface, eth0.via, eth0.system_name, eth0.port_id) == ("eth0", None, "oob-mgmt-switch", "swp10")
    assert eth0.mau_type == "1000BaseTFD - Four-pair Category 5 UTP, full duplex mode"
    assert (swp1.system_name, swp1.port_id_type, swp1.port_id, swp1.port_description) == (
        "server01", "ifname", "48:b0:2d:76:ee:8e", "eth1")


def test_json_01_sonic_list_of_interfaces_and_the_local_chassis():
    text = fixture_text("lldpcli_json_01_sonic_dbsyncd_list_trimmed.json")
    assert detect_tool(text) == "lldp"
    found = by_interface(parse(text))
    assert list(found) == ["eth0", "Ethernet0", "Ethernet100", "Ethernet104"]
    assert {n.local_system_name for n in found.values()} == {"arc-switch1025"}
    eth0 = found["eth0"]
    assert (eth0.system_name, eth0.port_id, eth0.port_description, eth0.ttl) == (
        "switch218ad08", "ge-0/0/17", "TPS report vending machine", 90)
    assert eth0.mau_type is None  # "unknown" is no medium
    assert (found["Ethernet100"].system_name, found["Ethernet100"].port_id) == ("switch13", "Ethernet26")
    assert found["Ethernet0"].management_ips == ["10.3.147.196"]


def test_json_02_one_neighbour_is_an_object():
    [neighbour] = parse(fixture_text("lldpcli_json_02_lldpd_test_single_object.json"))
    assert (neighbour.interface, neighbour.system_name, neighbour.port_id_type, neighbour.port_id) == (
        "eth0", "ns-2.example.com", "mac", "00:00:00:00:00:02")
    assert neighbour.port_description == "eth1" and neighbour.capabilities == {"Bridge": False, "Wlan": False}


def test_json0_every_level_a_list():
    text = json.dumps({"lldp": [{"interface": [{"name": "eth0", "via": "LLDP", "rid": "1", "chassis": [{
        "id": [{"type": "mac", "value": "00:00:00:00:00:02"}], "name": [{"value": "ns-2.example.com"}],
        "mgmt-ip": [{"value": "10.0.0.2"}, {"value": "fe80::2"}]}], "port": [{
            "id": [{"type": "ifname", "value": "swp7"}], "descr": [{"value": "uplink"}],
            "ttl": [{"value": "120"}]}]}]}]})
    [neighbour] = parse(text)
    assert (neighbour.system_name, neighbour.port_id, neighbour.management_ips, neighbour.ttl) == (
        "ns-2.example.com", "swp7", ["10.0.0.2", "fe80::2"], 120)


def test_nvue_interface_table_cut_at_the_ruler():
    text = fixture_text("nvue_show_interface_lldp_01_doc.txt")
    assert detect_tool(text) == "nvue_lldp"
    found = by_interface(parse(text))
    assert len(found) == 10 and {n.tool for n in found.values()} == {"nvue_lldp"}
    assert (found["swp1"].system_name, found["swp1"].port_id_type, found["swp1"].port_id) == (
        "server01", "mac", "48:b0:2d:76:ee:8e")
    assert (found["swp54"].system_name, found["swp54"].port_id, found["swp54"].speed) == ("spine04", "swp1", "1G")


def test_nvue_neighbour_table_takes_the_interface_from_its_command_line():
    [neighbour] = parse(fixture_text("nvue_show_interface_lldp_neighbor_01_doc.txt"))
    assert (neighbour.interface, neighbour.system_name, neighbour.port_id, neighbour.management_ips) == (
        "swp51", "spine01", "swp1", ["10.10.10.101"])
    without_command = "\n".join(fixture_text("nvue_show_interface_lldp_neighbor_01_doc.txt").splitlines()[1:])
    with pytest.raises(ParseError, match=r"^line 1: a neighbour table without its interface"):
        nvue_lldp.parse(without_command)


def test_a_blank_speed_cell_stays_blank():
    text = ("Interface  Speed  Type  Remote Host  Remote Port      \n"
            "---------  -----  ----  -----------  -----------------\n"
            "swp1              swp   cumulus      swp1             \n")
    [neighbour] = nvue_lldp.parse(text)
    assert (neighbour.speed, neighbour.system_name, neighbour.port_id) == (None, "cumulus", "swp1")


@pytest.mark.parametrize("text, message", [
    ('{"lldp": {"interface": [1, 2]}}', r"^line 1: an interface entry is not what lldpcli prints"),
    ('{"lldp": {"interface": {"eth0": "x"}}}', r"^line 1: interface 'eth0' is not what lldpcli prints"),
    ('{"lldp": ', r"^line 1: not valid JSON"),
    ('{\n"other": 1}', r'^line 1: no "lldp" object'),
    ("[" * 5000 + "]" * 5000, r"^line 1: "),
])
def test_bad_json_names_the_line(text, message):
    with pytest.raises(ParseError, match=message):
        lldp.parse(text)


def test_bad_keyvalue_names_the_line():
    text = fixture_text("lldpcli_keyvalue_02_netbox_agent_qfx.txt").replace("lldp.eth0.rid=1", "lldp.eth0.rid=one")
    with pytest.raises(ParseError, match=r"^line 2: rid is 'one', not a whole number"):
        parse(text)
    with pytest.raises(ParseError, match=r"^line 3: key 'lldp.eth0.wat' not readable"):
        parse("lldp.eth0.via=LLDP\nlldp.eth0.rid=1\nlldp.eth0.wat=1\n")
