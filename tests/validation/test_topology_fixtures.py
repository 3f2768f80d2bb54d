"""The shared real outputs read through the whole path (read, map, compare, record): for each, a project
planned the way that site is cabled, with a few deliberate differences, and the figures the comparison
must find. Then GUIDs and MACs learned by one comparison find a renamed host in the next."""

import pytest

from cabling.choices import CableStatus, FabricState
from cabling.models import Cable
from core.choices import JobStatus
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import Device, Port
from inventory.services import device_update
from validation.choices import LinkState, TopologySource
from validation.topology.services import TopologyInput, topology_compare_now

from .conftest import fixture_text
from .topology_support import cable, devices, host_model, port, sb7700_fabric, switch_model

pytestmark = pytest.mark.django_db


def compare_files(project, *files, user=None):
    """files: (fixture name, host) or a fixture name; returns the finished comparison."""
    inputs = []
    for item in files:
        name, host = item if isinstance(item, tuple) else (item, "")
        inputs.append(TopologyInput(name=name, data=fixture_text(name).encode(), host=host))
    return topology_compare_now(project=project, user=user, inputs=inputs, source=TopologySource.COMMAND)


def links(comparison) -> dict:
    return {link.key: link for link in comparison.links.all()}


def counts(comparison) -> tuple:
    c = comparison.counts
    return c["ok"], c["missing"], c["miswired"], c["unplanned"], c["degraded"]


# --- iblinkinfo_02: an EDR SB7700 with n01, n02 and mgt ---------------------------------------------------


def test_iblinkinfo_02_ok_links_a_down_port_and_what_is_learned(project):
    cables = sb7700_fabric(project)
    comparison = compare_files(project, "iblinkinfo_02_edr_sb7700_down_polling.txt")
    assert comparison.status == JobStatus.DONE
    assert counts(comparison) == (3, 1, 0, 0, 0)
    assert comparison.counts["in_scope"] == 4 and comparison.counts["observed"] == 3
    [missing] = comparison.links.all()
    assert (missing.key, missing.state, missing.cable_id) == ("C4", LinkState.MISSING, cables["C4"].pk)
    assert missing.note == "SB7700:p1 is Down/Polling"
    # The node descriptions' hosts and the switch's name, mapped; the GUIDs the output states, kept.
    assert Device.objects.get(project=project, name="SB7700").node_guid == "506b4b0300820910"
    assert port(project, "n02:ib0").guid_mac == "ec0d9a03003d62be"
    assert port(project, "mgt:ib0").guid_mac == "248a070300928186"
    assert port(project, "n01:ib0").guid_mac == ""  # named only by LID on the switch's row: no GUID printed
    # The cables follow: seen ok = verified by the fabric, missing = ports down.
    states = dict(Cable.objects.filter(project=project).values_list("label", "fabric_state"))
    assert states == {"C1": FabricState.OK, "C2": FabricState.OK, "C3": FabricState.OK, "C4": FabricState.MISSING}
    c1 = Cable.objects.get(pk=cables["C1"].pk)
    assert (c1.status, c1.verified_at, c1.status_cause) == (
        CableStatus.VERIFIED, None, f"topology comparison #{comparison.pk}")
    assert comparison.cables_changed == 4
    file = comparison.files.get()
    assert (file.tool, file.error, file.size_bytes, len(file.sha256)) == ("iblinkinfo", "", 1902, 64)


def test_a_renamed_host_is_found_by_the_guid_learned_before(project):
    sb7700_fabric(project)
    renamed = fixture_text("iblinkinfo_02_edr_sb7700_down_polling.txt").replace("n02 HCA-1", "n02-new HCA-1")

    def compare_renamed():
        inputs = [TopologyInput(name="iblinkinfo.txt", data=renamed.encode())]
        return topology_compare_now(project=project, user=None, inputs=inputs)

    # Before anything is learned, n02's new name is unknown: its cable is on a host the project lacks.
    first = compare_renamed()
    assert links(first)["C1"].state == LinkState.MISWIRED
    assert (links(first)["C1"].observed_a, links(first)["C1"].observed_b) == ("n02-new HCA-1 port 1", "SB7700:p17")
    Port.objects.filter(device__project=project).update(guid_mac="")
    compare_files(project, "iblinkinfo_02_edr_sb7700_down_polling.txt")  # learns n02's GUID
    again = compare_renamed()
    assert counts(again) == (3, 1, 0, 0, 0)
    assert "C1" not in links(again) and Cable.objects.get(project=project, label="C1").fabric_state == FabricState.OK
    # And the other way round: renamed in the inventory, the fabric still printing the old name.
    device_update(device=Device.objects.get(project=project, name="n02"), name="gpu-002")
    assert counts(compare_files(project, "iblinkinfo_02_edr_sb7700_down_polling.txt")) == (3, 1, 0, 0, 0)


# --- ibnetdiscover_02: an HDR director with QM8700 leaves and hosts with renamed ibdevs ------------------


LEAVES = ["rmd70-0101-0919-01ib0", "rmd70-0101-0919-02ib0", "rmd70-0101-0919-03ib0", "rmd70-0101-0919-11ib0",
          "rmd70-0101-0919-12ib0"]
HOSTS = {  # host: (leaf, port), as the output shows them
    "RMD701091901003": (0, 1), "RMD701091901019": (0, 9), "RMD701091901053": (1, 1), "RMD701091901037": (1, 9),
    "RMD701091902003": (2, 1), "RMD701091902019": (2, 9), "RMD701091906003": (3, 1), "RMD701091906019": (3, 9),
    "RMD701091906053": (4, 1), "RMD701091906037": (4, 9),
}


def hdr_director_fabric(project):
    leaf = switch_model("TEST-QM8700", ports=40, speed=200)
    blade = switch_model("TEST-MCS8500-BLADE", ports=40, speed=200)
    host = host_model("TEST-HDR-HOST", ports=["ib0"], speed=200)
    devices(project, leaf, *LEAVES, role=DeviceRole.LEAF)
    devices(project, blade, *(f"rmd70-0101-0908-01ib1-A/{b}" for b in ("L01", "L02", "S01")), role=DeviceRole.SPINE)
    devices(project, host, *HOSTS, "RMD701091906099", role=DeviceRole.GPU_NODE)
    number = iter(range(1, 100))
    for name, (leaf_index, leaf_port) in HOSTS.items():
        if name == "RMD701091902019":
            leaf_port = 10  # planned on p10; the output has it on p9
        cable(project, f"H{next(number):02d}", f"{name}:ib0", f"{LEAVES[leaf_index]}:p{leaf_port}", speed=200)
    cable(project, "H99", "RMD701091906099:ib0", f"{LEAVES[4]}:p17", speed=200)  # not in the output at all
    director = "rmd70-0101-0908-01ib1-A"
    uplinks = [(LEAVES[0], 25, "L01", 1), (LEAVES[1], 25, "L01", 2), (LEAVES[2], 25, "L01", 3),
               (LEAVES[3], 26, "L02", 11), (LEAVES[4], 26, "L02", 12)]
    for n, (leaf_name, leaf_port, blade_name, blade_port) in enumerate(uplinks, start=1):
        cable(project, f"U{n}", f"{leaf_name}:p{leaf_port}", f"{director}/{blade_name}:p{blade_port}", speed=200)
    cable(project, "S1", f"{director}/L01:p21", f"{director}/S01:p1", speed=200)
    cable(project, "S2", f"{director}/L02:p21", f"{director}/S01:p2", speed=200)


def test_ibnetdiscover_02_a_miswire_a_missing_host_and_the_aggregation_node_left_out(project):
    hdr_director_fabric(project)
    comparison = compare_files(project, "ibnetdiscover_02_hdr_superbench_faked_edited.txt")
    # 18 links printed, one of them to the spine's own SHARP aggregation node: 17 cables seen.
    assert comparison.counts["observed"] == 17 and comparison.counts["in_scope"] == 18
    assert counts(comparison) == (16, 1, 1, 0, 0)
    found = links(comparison)
    assert (found["H06"].state, found["H06"].planned_b, found["H06"].observed_b) == (
        LinkState.MISWIRED, "rmd70-0101-0919-03ib0:p10", "rmd70-0101-0919-03ib0:p9")
    assert found["H06"].advice == "Move H06 from rmd70-0101-0919-03ib0:p9 to rmd70-0101-0919-03ib0:p10."
    assert (found["H99"].state, found["H99"].note) == (LinkState.MISSING, "not seen at either end")
    # ibnetdiscover names CAs by their node GUID (H-...): learned on the host's rail.
    assert port(project, "RMD701091901003:ib0").guid_mac == "0ff08c4321664e96"
    assert Device.objects.get(project=project, name="rmd70-0101-0908-01ib1-A/S01").node_guid == "0ff08c43213b3f30"


# --- lldpcli text: a Cumulus leaf's view, with a swapped pair on its far side ---------------------------------


def cumulus_fabric(project):
    model = switch_model("TEST-CUMULUS-52", ports=52, speed=100, kind=HardwareKind.ETH_SWITCH,
                         port_kind=PortKind.ETHERNET, os_port_format="swp{n}", lanes={49: 4}, mgmt="eth0")
    devices(project, model, "TORC-1-1", "TORC-1-2", "MSP-1", "MSP-2", role=DeviceRole.LEAF)
    cable(project, "T1", "TORC-1-1:p1", "MSP-1:p1")
    cable(project, "T2", "TORC-1-1:p2", "MSP-1:p2")
    cable(project, "T3", "TORC-1-1:p3", "MSP-2:p2")  # the output has p3 on MSP-2 swp1 ...
    cable(project, "T4", "TORC-1-1:p4", "MSP-2:p1")  # ... and p4 on swp2: swapped
    cable(project, "T5", "TORC-1-1:p49/0", "TORC-1-2:p5")
    cable(project, "T6", "TORC-1-1:p49/1", "TORC-1-2:p6")
    cable(project, "T7", "TORC-1-1:p5", "MSP-1:p5")  # not in the output


def test_lldpcli_text_01_swapped_pair_breakout_lanes_and_an_unknown_neighbour(project):
    cumulus_fabric(project)
    comparison = compare_files(project, ("lldpcli_show_neighbors_01_cumulus41_doc.txt", "TORC-1-1"))
    assert counts(comparison) == (4, 1, 2, 1, 0)
    assert comparison.counts["swaps"] == 1
    found = links(comparison)
    assert found["T3"].advice == found["T4"].advice == "Swap the cables in MSP-2 ports p1 and p2."
    assert (found["T4"].planned_b, found["T4"].observed_b) == ("MSP-2:p1", "MSP-2:p2")
    unplanned = next(link for link in found.values() if link.state == LinkState.UNPLANNED)
    assert (unplanned.observed_a, unplanned.observed_b) == ("TORC-1-1:eth0", "PIONEERMS22 swp47")
    assert "PIONEERMS22" in " ".join(comparison.notes)


def test_an_lldp_table_without_its_device_says_the_line_and_how_to_name_it(project):
    cumulus_fabric(project)
    inputs = [TopologyInput(name="neighbours.txt", data=fixture_text("lldpcli_show_neighbors_01_cumulus41_doc.txt")
                            .replace("cumulus@switch", "cumulus@nobody").encode())]
    comparison = topology_compare_now(project=project, user=None, inputs=inputs)
    assert comparison.status == JobStatus.FAILED
    assert comparison.errors[0] == "None of the outputs shows a device of the project."
    broken = fixture_text("lldpcli_show_neighbors_01_cumulus41_doc.txt").replace("RID: 10,", "RID: ten,", 1)
    comparison = topology_compare_now(project=project, user=None, inputs=[
        TopologyInput(name="TORC-1-1.txt", data=broken.encode()),
        TopologyInput(name="ib.txt", data=fixture_text("iblinkinfo_02_edr_sb7700_down_polling.txt").encode()),
    ])
    bad = comparison.files.get(original_name="TORC-1-1.txt")
    assert (bad.error_line, bad.error) == (17, "line 17: RID is 'ten', not a whole number; expected an integer for RID")


# --- NVUE, keyvalue and JSON -----------------------------------------------------------------------------


def test_nvue_table_degraded_uplinks_and_servers_known_by_their_mac_later(project):
    leaf = switch_model("TEST-NVUE-LEAF", ports=54, speed=1, kind=HardwareKind.ETH_SWITCH, port_kind=PortKind.ETHERNET,
                        os_port_format="swp{n}", speeds={n: 100 for n in range(49, 55)}, mgmt="eth0")
    spine = switch_model("TEST-NVUE-SPINE", ports=4, speed=100, kind=HardwareKind.ETH_SWITCH,
                         port_kind=PortKind.ETHERNET, os_port_format="swp{n}", mgmt="eth0")
    oob = switch_model("TEST-NVUE-OOB", ports=48, speed=1, kind=HardwareKind.MGMT_SWITCH, port_kind=PortKind.ETHERNET,
                       os_port_format="swp{n}", network=Network.OOB, mgmt="")
    server = host_model("TEST-NVUE-SERVER", ports=["eth1"], speed=1, port_kind=PortKind.ETHERNET)
    devices(project, leaf, "leaf01", "leaf02")
    devices(project, spine, "spine01", "spine02", "spine03", "spine04")
    devices(project, oob, "oob-mgmt-switch")
    devices(project, server, "server01", "server02", "server03")
    cable(project, "M1", "leaf01:eth0", "oob-mgmt-switch:p10", network=Network.OOB, speed=1)
    for n in (1, 2, 3):
        cable(project, f"S{n}", f"leaf01:p{n}", f"server0{n}:eth1", speed=1)
    cable(project, "P49", "leaf01:p49", "leaf02:p49")
    cable(project, "P50", "leaf01:p50", "leaf02:p50")
    for n in (1, 2, 3, 4):
        cable(project, f"U{n}", f"leaf01:p{50 + n}", f"spine0{n}:p1")
    comparison = compare_files(project, ("nvue_show_interface_lldp_01_doc.txt", "leaf01"))
    # A 1G lab: the six 100G inter-switch links run at 1G; servers are known by name, their ports by MAC only.
    assert counts(comparison) == (4, 0, 0, 0, 6)
    assert {link.note for link in comparison.links.all()} == {"1G instead of 100G"}


def test_keyvalue_a_hosts_view_of_its_switches(project):
    switch = switch_model("TEST-S4100", ports=48, speed=10, kind=HardwareKind.ETH_SWITCH, port_kind=PortKind.ETHERNET,
                          os_port_format="swp{n}")
    host = host_model("TEST-R640", ports=["eno1", "eno2d1"], speed=10, port_kind=PortKind.ETHERNET)
    devices(project, switch, "toto-chassis", "titi-chassis")
    devices(project, host, "BXVWNR2")
    cable(project, "K1", "BXVWNR2:eno1", "toto-chassis:p46", speed=10)
    cable(project, "K2", "BXVWNR2:eno2d1", "titi-chassis:p46", speed=10)
    comparison = compare_files(project, ("lldpcli_keyvalue_01_netbox_agent_cumulus.txt", "BXVWNR2"))
    # eno1's neighbour is toto-chassis.dc42 (the domain dropped); eno2d1's sent no name the capture kept.
    assert counts(comparison) == (1, 0, 1, 0, 0)
    assert links(comparison)["K2"].observed_b == "e4:f0:04:b6:4e:32 swp46"


def test_json_sonic_ports_by_lane_index_and_the_local_chassis_from_the_json(project):
    sonic = switch_model("TEST-SONIC-32", ports=32, speed=100, kind=HardwareKind.ETH_SWITCH,
                         port_kind=PortKind.ETHERNET, os_port_format="Ethernet{4*(n-1)}", mgmt="eth0")
    peer = switch_model("TEST-PEER-32", ports=32, speed=100, kind=HardwareKind.ETH_SWITCH, port_kind=PortKind.ETHERNET,
                        os_port_format="Ethernet{n}")
    devices(project, sonic, "arc-switch1025")
    devices(project, peer, "switch13")
    cable(project, "J1", "arc-switch1025:p1", "switch13:p1")
    cable(project, "J26", "arc-switch1025:p26", "switch13:p26")
    cable(project, "J27", "arc-switch1025:p27", "switch13:p27")
    comparison = compare_files(project, "lldpcli_json_01_sonic_dbsyncd_list_trimmed.json")
    assert comparison.files.get().host == "arc-switch1025"
    assert counts(comparison) == (3, 0, 0, 1, 0)


def test_a_mac_learned_over_lldp_finds_the_host_after_a_rename(project):
    model = host_model("TEST-NS", ports=["eth0", "eth1"], speed=10, port_kind=PortKind.ETHERNET)
    devices(project, model, "ns-1", "ns-2")
    cable(project, "L1", "ns-1:eth0", "ns-2:eth1", speed=10)
    first = compare_files(project, ("lldpcli_json_02_lldpd_test_single_object.json", "ns-1"))
    assert counts(first) == (1, 0, 0, 0, 0)
    assert port(project, "ns-2:eth1").guid_mac == "00:00:00:00:00:02"
    # Renamed: the system name it sends no longer fits; the MAC learned does.
    device_update(device=Device.objects.get(project=project, name="ns-2"), name="ns-2b")
    again = compare_files(project, ("lldpcli_json_02_lldpd_test_single_object.json", "ns-1"))
    assert counts(again) == (1, 0, 0, 0, 0)
