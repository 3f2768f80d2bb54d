"""The comparison itself, without a database: a hand-made inventory (two leaves, a spine, three hosts), the
plan's links, and what the fabric showed, mapped from real-format outputs."""

import pytest

from validation.choices import LinkState as LinkStateChoice
from validation.parsers import iblinkinfo
from validation.topology.compare import LinkState, compare
from validation.topology.mapping import Source, map_sources
from validation.topology.model import InvDevice, Inventory, InvPort, Observation, ObservedEnd, ObservedLink, PlannedLink

LEAF_PORTS = 4


def inventory() -> Inventory:
    """leaf-01 and leaf-02 (p1-p4), spine-01 (p1-p4), hosts h1-h3 with one 400G rail each (ib0) and an
    Ethernet switch eth-01 (p1-p2, Cumulus names) with host h1's eth0."""
    devices, next_id = [], iter(range(1, 1000))

    def device(name, kind, ports, fmt=""):
        device = InvDevice(next(next_id), name, kind, fmt)
        for port_name, port_kind, speed in ports:
            device.ports.append(InvPort(next(next_id), device.id, port_name, port_kind, "compute", speed))
        devices.append(device)
        return device

    ib_ports = [(f"p{n}", "infiniband", 400) for n in range(1, LEAF_PORTS + 1)]
    device("leaf-01", "ib_switch", ib_ports)
    device("leaf-02", "ib_switch", ib_ports)
    device("spine-01", "ib_switch", ib_ports)
    for name in ("h1", "h2", "h3"):
        device(name, "gpu_server", [("ib0", "infiniband", 400), ("eth0", "ethernet", 100)])
    device("eth-01", "eth_switch", [("p1", "ethernet", 100), ("p2", "ethernet", 100)], fmt="swp{n}")
    return Inventory(devices)


def port_id(inv: Inventory, text: str) -> int:
    device, _, name = text.partition(":")
    return next(p.id for p in inv.ports.values() if p.name == name and inv.devices[p.device_id].name == device)


@pytest.fixture
def inv():
    return inventory()


def plan(inv, *links, infiniband=True):
    out = []
    for label, a, b in links:
        out.append(PlannedLink(key=label, cable_id=len(out) + 1, cable_label=label, a=port_id(inv, a),
                               b=port_id(inv, b), speed_gbps=400 if infiniband else 100, infiniband=infiniband,
                               width=4 if infiniband else None))
    return out


PLAN = [("C1", "h1:ib0", "leaf-01:p1"), ("C2", "h2:ib0", "leaf-01:p2"), ("C3", "h3:ib0", "leaf-02:p1"),
        ("C4", "leaf-01:p4", "spine-01:p1"), ("C5", "leaf-02:p4", "spine-01:p2")]


def seen(inv, *pairs, width=4, generation="NDR") -> Observation:
    """What an InfiniBand fabric showed: links between our ports, every device in the fabric's scope."""
    observation = Observation(ib_devices=set(inv.devices))
    for a, b in pairs:
        ends = []
        for text in (a, b):
            if ":" in text:
                pid = port_id(inv, text)
                ends.append(ObservedEnd(text=text, device_id=inv.ports[pid].device_id, port_id=pid))
            else:
                ends.append(ObservedEnd(text=text))
        observation.links.append(ObservedLink(ends[0], ends[1], infiniband=True, width=width, generation=generation))
    return observation


def states(result) -> dict[str, str]:
    return {r.key: r.state.value for r in result.results}


def test_the_states_are_the_models_choices():
    assert [s.value for s in LinkState] == list(LinkStateChoice.values)


def test_everything_as_planned_is_ok(inv):
    result = compare(inv, plan(inv, *PLAN), seen(inv, *[(a, b) for _, a, b in PLAN]))
    assert result.counts == {"ok": 5, "missing": 0, "miswired": 0, "unplanned": 0, "degraded": 0, "swaps": 0,
                             "in_scope": 5, "observed": 5}
    assert result.as_json()["links"] == []
    assert result.cable_states() == dict.fromkeys(range(1, 6), "ok")


def test_a_swapped_pair_is_two_miswires_with_one_advice(inv):
    observed = [("h1:ib0", "leaf-01:p2"), ("h2:ib0", "leaf-01:p1"), ("h3:ib0", "leaf-02:p1"),
                ("leaf-01:p4", "spine-01:p1"), ("leaf-02:p4", "spine-01:p2")]
    result = compare(inv, plan(inv, *PLAN), seen(inv, *observed))
    assert states(result) == {"C1": "miswired", "C2": "miswired", "C3": "ok", "C4": "ok", "C5": "ok"}
    assert result.counts["swaps"] == 1
    one, other = result.faults()
    assert one.advice == other.advice == "Swap the cables in leaf-01 ports p1 and p2."
    assert (one.planned_a, one.planned_b, one.observed_a, one.observed_b) == (
        "h1:ib0", "leaf-01:p1", "h1:ib0", "leaf-01:p2")
    assert one.swap_with == "C2" and other.swap_with == "C1"


def test_a_cable_on_the_wrong_switch_is_one_miswire_naming_both_far_ends(inv):
    observed = [("h1:ib0", "leaf-01:p1"), ("h2:ib0", "leaf-01:p2"), ("h3:ib0", "leaf-01:p3"),
                ("leaf-01:p4", "spine-01:p1"), ("leaf-02:p4", "spine-01:p2")]
    result = compare(inv, plan(inv, *PLAN), seen(inv, *observed))
    assert states(result) == {"C1": "ok", "C2": "ok", "C3": "miswired", "C4": "ok", "C5": "ok"}
    [fault] = result.faults()
    assert (fault.planned_b, fault.observed_b) == ("leaf-02:p1", "leaf-01:p3")
    assert fault.advice == "Move C3 from leaf-01:p3 to leaf-02:p1."
    assert result.counts["missing"] == result.counts["unplanned"] == 0
    assert result.as_json()["links"] == [{
        "state": "miswired", "cable": "C3", "planned": {"a": "h3:ib0", "b": "leaf-02:p1"},
        "observed": {"a": "h3:ib0", "b": "leaf-01:p3"}, "note": "planned to leaf-02:p1, found on leaf-01:p3",
        "advice": "Move C3 from leaf-01:p3 to leaf-02:p1.",
    }]


def test_a_cable_in_another_cables_port_displaces_that_one(inv):
    observed = [("h1:ib0", "leaf-01:p1"), ("h3:ib0", "leaf-01:p2"), ("leaf-01:p4", "spine-01:p1"),
                ("leaf-02:p4", "spine-01:p2")]
    result = compare(inv, plan(inv, *PLAN), seen(inv, *observed))
    assert states(result) == {"C1": "ok", "C2": "missing", "C3": "miswired", "C4": "ok", "C5": "ok"}
    missing = next(r for r in result.results if r.key == "C2")
    assert missing.note == "leaf-01:p2 is linked to h3:ib0"
    miswired = next(r for r in result.results if r.key == "C3")
    assert miswired.note == "planned to leaf-02:p1, found on leaf-01:p2 (where C2 belongs)"


def test_half_width_and_a_lower_generation_are_degraded(inv):
    observation = seen(inv, *[(a, b) for _, a, b in PLAN])
    observation.links[0].width = 2
    observation.links[1].generation = "HDR"
    result = compare(inv, plan(inv, *PLAN), observation)
    degraded = {r.key: r.note for r in result.faults()}
    assert degraded == {"C1": "2X instead of 4X", "C2": "HDR instead of NDR"}
    assert result.cable_states()[1] == "degraded"


def test_missing_unplanned_and_out_of_scope(inv):
    observed = [("h1:ib0", "leaf-01:p1"), ("leaf-01:p4", "spine-01:p1"), ("leaf-02:p3", "spine-01:p3"),
                ("leaf-02:p2", "a-stranger")]
    observation = seen(inv, *observed)
    observation.down[port_id(inv, "leaf-01:p2")] = "Down/Polling"
    eth = plan(inv, ("E1", "h1:eth0", "eth-01:p1"), infiniband=False)  # no LLDP table was read: out of scope
    result = compare(inv, [*plan(inv, *PLAN), *eth], observation)
    assert states(result) == {"C1": "ok", "C2": "missing", "C3": "missing", "C4": "ok", "C5": "missing",
                              "obs:a-stranger~leaf-02:p2": "unplanned", "obs:leaf-02:p3~spine-01:p3": "unplanned"}
    c2 = next(r for r in result.results if r.key == "C2")
    assert c2.note == "leaf-01:p2 is Down/Polling" and c2.advice.startswith("Check C2 at both ends: the link is down")
    assert result.counts["in_scope"] == 5


def test_a_far_end_known_only_by_its_device_counts_as_seen(inv):
    observation = seen(inv, *[(a, b) for _, a, b in PLAN])
    host = observation.links[0].a
    host.port_id = None  # e.g. an LLDP neighbour that sent only a MAC nobody learned yet
    result = compare(inv, plan(inv, *PLAN), observation)
    ok = next(r for r in result.results if r.key == "C1")
    assert ok.state == LinkState.OK and ok.note.endswith("port not reported, device as planned")


IBLINKINFO = """\
Switch: 0x0000000000000a01 leaf-01:
           1    1[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      11    1[  ] "h2 mlx5_0" ( )
           1    2[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      10    1[  ] "h1 mlx5_0" ( )
           1    3[  ] ==(                Down/ Polling)==>             [  ] "" ( )
           1    4[  ] ==( 2X        106.25 Gbps Active/  LinkUp)==>       3    1[  ] "spine-01" ( )
Switch: 0x0000000000000a02 leaf-02:
           2    1[  ] ==( 4X         53.125 Gbps Active/  LinkUp)==>      12    1[  ] "h3 mlx5_0" ( )
           2    4[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>       3    2[  ] "spine-01" ( )
CA: h1 mlx5_0:
      0x00000000000000b1     10    1[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>       1    2[  ] "leaf-01" ( )
"""


def test_iblinkinfo_mapped_by_node_description_and_port_number(inv):
    observation = map_sources(inv, [Source("ib.txt", "iblinkinfo", iblinkinfo.parse(IBLINKINFO))])
    result = compare(inv, plan(inv, *PLAN), observation)
    assert states(result) == {"C1": "miswired", "C2": "miswired", "C3": "degraded", "C4": "degraded", "C5": "ok"}
    assert result.counts["swaps"] == 1
    assert {r.key: r.note for r in result.faults() if r.state == LinkState.DEGRADED} == {
        "C3": "HDR instead of NDR", "C4": "2X instead of 4X"}
    # Learned on the way: h1's port GUID (it has a CA row) and both leaves' node GUIDs.
    assert observation.port_ids == {port_id(inv, "h1:ib0"): "00000000000000b1"}
    leaves = {inv.devices[d].name: guid for d, guid in observation.device_guids.items()}
    assert leaves == {"leaf-01": "0000000000000a01", "leaf-02": "0000000000000a02"}
    assert observation.down == {port_id(inv, "leaf-01:p3"): "Down/Polling"}
