"""How a site's fabric names what the inventory names: node descriptions, switch port numbers of split
ports, each OS's port names, speeds as the tools print them (pure Python)."""

import pytest

from validation.topology import naming


@pytest.mark.parametrize("description, expected", [
    ("gpu-001 mlx5_3", ("gpu-001", "mlx5_3")),
    ("n01 HCA-1", ("n01", "HCA-1")),
    ("RMD701091901003 ibp11s0f0", ("RMD701091901003", "ibp11s0f0")),
    ("lonely", ("lonely", None)),
])
def test_hca_descriptions(description, expected):
    assert naming.split_hca_description(description) == expected


def test_rails_from_ibdevs():
    assert [naming.rail_of_ibdev(d) for d in ("mlx5_0", "mlx5_7", "HCA-1", "HCA-2", "ibp11s0f0", None)] == [
        0, 7, 0, 1, None, None]


def test_switch_descriptions_stand_for_their_names():
    assert naming.switch_name_candidates("ib-leaf-03") == ["ib-leaf-03"]
    assert naming.switch_name_candidates("MF0;SB7700:MSB7700/U1") == ["MF0;SB7700:MSB7700/U1", "SB7700"]
    assert naming.switch_name_candidates("MF0;rmd70-ib1-A:MCS8500/L01/U1") == [
        "MF0;rmd70-ib1-A:MCS8500/L01/U1", "rmd70-ib1-A/L01", "rmd70-ib1-A"]


def test_ib_switch_port_numbers_with_and_without_split_ports():
    assert naming.ib_switch_port(17, None, 1, split=False) == 17
    assert naming.ib_switch_port(17, 1, 2, split=True) == 34  # (17 - 1) x 2 + 1 + 1
    assert naming.ib_switch_port_of(34, 2, split=True) == (17, 1)
    assert all(naming.ib_switch_port_of(naming.ib_switch_port(n, k, 4, split=True), 4, split=True) == (n, k)
               for n in range(1, 65) for k in range(4))


@pytest.mark.parametrize("fmt, number, lane, lanes, expected", [
    ("swp{n}", 17, None, 1, "swp17"),
    ("swp{n}", 17, 1, 2, "swp17s1"),
    ("Ethernet{n}", 136, None, 1, "Ethernet136"),
    ("eth1/{n}", 17, None, 1, "eth1/17"),
    ("eth1/{n}", 17, 0, 4, "eth1/17/1"),
    ("Ethernet{8*(n-1)}", 18, None, 1, "Ethernet136"),
    ("Ethernet{8*(n-1)+lane*8//lanes}", 18, 1, 2, "Ethernet140"),
])
def test_os_port_names(fmt, number, lane, lanes, expected):
    assert naming.os_port_name(fmt, number=number, lane=lane, lanes=lanes) == expected


@pytest.mark.parametrize("fmt", ["swp", "{__import__('os')}", "{n**9}", "{x}", "{}", "p{n}{", "{n//0}", "x" * 61])
def test_bad_formats_are_refused_not_evaluated(fmt):
    with pytest.raises(naming.FormatError):
        naming.check_format(fmt)


def test_port_names_compare_in_one_spelling():
    assert {naming.normalize_port_name(n) for n in ("Ethernet1/17", "Eth1/17", "Et1/17", "eth1/17")} == {"eth1/17"}
    assert naming.normalize_port_name("SWP17S0") == "swp17s0"
    assert naming.normalize_port_name("Ethernet0") == "ethernet0" != naming.normalize_port_name("eth0")  # SONiC
    assert naming.port_number("p17") == naming.port_number("swp17") == naming.port_number("Ethernet1/17") == 17


def test_speeds_as_printed():
    assert [naming.ib_generation(s) for s in ("212.5 Gbps", "106.25 Gbps", "53.125 Gbps", "25.78125 Gbps",
                                              "25.78 Gbps", "14.0625 Gbps", "10.0 Gbps (FDR10)", "XDR", "7 Gbps")] == [
        "XDR", "NDR", "HDR", "EDR", "EDR", "FDR", "FDR10", "XDR", None]
    assert naming.ib_width("4X") == 4 and naming.ib_width("2x") == 2 and naming.ib_width("wide") is None
    assert [naming.ethernet_gbps(s) for s in ("400G", "1G", "100Gb/s", "10GigBaseLR - R fiber", "unknown")] == [
        400, 1, 100, 10, None]


def test_prompts_name_the_host():
    assert naming.prompt_host("cumulus@stor-leaf-01:~$ nv show interface lldp\n") == "stor-leaf-01"
    assert naming.prompt_host("[root@n01 HPL]# iblinkinfo\nCA: x:\n") == "n01"
    assert naming.prompt_host("Interface:    swp1, via: LLDP\n") is None
