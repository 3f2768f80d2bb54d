"""Topology-shaped outputs: nvidia-smi topo -m, iblinkinfo and ibnetdiscover (one fabric graph
shape, shared with the observed-topology comparison) and lldpcli neighbours."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, iblinkinfo, ibnetdiscover, lldp, nvsmi_topo

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"


def read(name):
    return (FIXTURES / name).read_text()


def test_nvidia_smi_topo_01_matrix_affinity_and_nic_legend():
    [topo] = nvsmi_topo.parse(read("nvidia_smi_topo_01_b200_16nic.txt"))
    assert topo.gpus == [f"GPU{i}" for i in range(8)]
    assert topo.nics == [f"NIC{i}" for i in range(16)]
    assert topo.nic_names["NIC10"] == "mlx5_10"
    assert topo.matrix["GPU0"]["GPU1"] == "NV18" and topo.matrix["GPU0"]["NIC0"] == "PIX"
    assert topo.matrix["GPU0"]["NIC6"] == "SYS" and topo.matrix["NIC7"]["NIC8"] == "PIX"
    # The double tab before N/A is an empty cell, not a shifted column.
    assert topo.affinity["GPU4"] == {"cpu_affinity": "128-255", "numa_affinity": "1", "gpu_numa_id": None}
    assert "NIC0" not in topo.affinity
    assert topo.closest_nics["GPU0"] == ["mlx5_0"] and topo.closest_nics["GPU5"] == ["mlx5_11"]


def test_nvidia_smi_topo_copied_with_spaces_and_bad_cells():
    text = (
        "        GPU0    GPU1    mlx5_0  CPU Affinity    NUMA Affinity\n"
        "GPU0     X      NV12    PXB     0-23    0\n"
        "GPU1    NV12     X      SYS     24-47   1\n"
        "mlx5_0  PXB     SYS      X\n"
    )
    [topo] = nvsmi_topo.parse(text)
    assert topo.nics == ["mlx5_0"] and topo.closest_nics == {"GPU0": ["mlx5_0"], "GPU1": ["mlx5_0"]}
    assert topo.affinity["GPU1"] == {"cpu_affinity": "24-47", "numa_affinity": "1"}
    with pytest.raises(ParseError, match=r"^line 2: GPU0/GPU1 is 'NVX'; expected X, NV#"):
        nvsmi_topo.parse(text.replace("NV12    PXB", "NVX    PXB"))
    with pytest.raises(ParseError, match="no matrix row for GPU1"):
        nvsmi_topo.parse("\n".join(text.splitlines()[:2]))


def test_iblinkinfo_02_links_down_ports_and_a_remote_outside_the_output():
    [fabric] = iblinkinfo.parse(read("iblinkinfo_02_edr_sb7700_down_polling.txt"))
    switch = fabric.node("0x506b4b0300820910")
    assert (switch.kind, switch.description, switch.lid) == ("switch", "MF0;SB7700:MSB7700/U1", 2)
    assert [n.kind for n in fabric.nodes].count("ca") == 2
    assert fabric.node("0xec0d9a03003d62be").description == "n02 HCA-1"
    assert len(fabric.links) == 3  # n02<->17 is printed from both ends: one link
    n02 = next(link for link in fabric.links if link.a.guid == "0xec0d9a03003d62be")
    assert (n02.a.port, n02.b.guid, n02.b.port) == (1, "0x506b4b0300820910", 17)
    assert (n02.width, n02.speed, n02.state, n02.physical_state) == (
        "4X",
        "25.78125 Gbps",
        "Active",
        "LinkUp",
    )
    n01 = next(link for link in fabric.links if link.b.description == "n01 HCA-1")
    assert (n01.a.port, n01.b.guid, n01.b.lid) == (18, None, 1)  # truncated output: no GUID for LID 1
    switch_ports = [p for p in fabric.ports if p.guid == switch.guid]
    assert len(switch_ports) == 18
    assert sum(p.physical_state == "Polling" and not p.connected for p in switch_ports) == 16


def test_iblinkinfo_bad_row_names_the_line():
    text = read("iblinkinfo_02_edr_sb7700_down_polling.txt").replace(
        "Down/ Polling)==>", "Down Polling)==>", 1
    )
    with pytest.raises(ParseError, match=r"^line 7: port row not readable"):
        iblinkinfo.parse(text)


def test_ibnetdiscover_02_switches_cas_and_deduplicated_links():
    [fabric] = ibnetdiscover.parse(read("ibnetdiscover_02_hdr_superbench_faked_edited.txt"))
    kinds = [node.kind for node in fabric.nodes]
    assert (kinds.count("switch"), kinds.count("ca")) == (8, 11)
    spine = fabric.node("0x0ff08c43213b3f30")  # written 0xff08c43213b3f30 and S-0ff08c43213b3f30
    assert (spine.description, spine.lid, spine.ports) == (
        "MF0;rmd70-0101-0908-01ib1-A:MCS8500/S01/U1",
        387,
        41,
    )
    host = fabric.node("0x0ff08c4321664e96")
    assert (host.kind, host.description, host.lid) == ("ca", "RMD701091901003 ibp11s0f0", 1181)
    aggregation = fabric.node("0x0ff08c43213b3f38")  # only seen from the spine's port 41
    assert (aggregation.description, aggregation.lid) == ("Mellanox Technologies Aggregation Node", 2152)
    assert len(fabric.links) == 18
    ends = {frozenset({(link.a.guid, link.a.port), (link.b.guid, link.b.port)}) for link in fabric.links}
    assert len(ends) == 18
    assert frozenset({("0x0ff08c43215bae48", 25), ("0x0ff08c432172aa1a", 1)}) in ends
    assert {(link.width, link.speed) for link in fabric.links} == {("4X", "HDR")}


def test_ibnetdiscover_bad_lines_name_the_line():
    text = read("ibnetdiscover_02_hdr_superbench_faked_edited.txt")
    with pytest.raises(ParseError, match=r"^line 7: node name 'S-nothex' has no GUID"):
        ibnetdiscover.parse(text.replace('"S-0ff08c43213b3f30"         #', '"S-nothex"         #', 1))
    with pytest.raises(ParseError, match=r"^line 8: port line not readable"):
        ibnetdiscover.parse(
            text.replace('[1]     "S-0ff08c432172aa1a"[21]', "[1]     S-0ff08c432172aa1a[21]", 1)
        )


def test_lldpcli_show_neighbors_01():
    neighbors = lldp.parse(read("lldpcli_show_neighbors_01_cumulus41_doc.txt"))
    assert [n.interface for n in neighbors] == ["eth0", "swp1", "swp2", "swp3", "swp4", "swp49s1", "swp49s0"]
    eth0 = neighbors[0]
    assert (eth0.chassis_id_type, eth0.chassis_id, eth0.system_name) == (
        "mac",
        "08:9e:01:e9:66:5a",
        "PIONEERMS22",
    )
    assert (eth0.port_id_type, eth0.port_id, eth0.port_description) == ("ifname", "swp47", "swp47")
    assert (eth0.via, eth0.rid, eth0.age) == ("LLDP", 1, "0 day, 17:38:08")
    assert neighbors[1].management_ips == ["192.0.2.9", "fe80::201:ff:fe00:900"]
    assert neighbors[1].capabilities == {"Bridge": False, "Router": True}
    breakout = neighbors[5]
    assert (breakout.interface, breakout.system_name, breakout.port_id) == ("swp49s1", "TORC-1-2", "swp6")


def test_lldp_empty_neighbour_list_and_bad_header():
    assert lldp.parse("LLDP neighbors:\n-------\n") == []
    with pytest.raises(ParseError, match=r"^line 5: neighbour header not readable"):
        lldp.parse(
            read("lldpcli_show_neighbors_01_cumulus41_doc.txt").replace(
                "Interface:    eth0,", "Interface: eth0;"
            )
        )
    with pytest.raises(ParseError, match=r"^line 5: RID is 'one'"):
        lldp.parse(read("lldpcli_show_neighbors_01_cumulus41_doc.txt").replace("RID: 1,", "RID: one,"))
