"""The fabric planner reproduces the three reference fabrics of issue 3 and the demo, exactly; its
labels are deterministic; cable types and lengths follow the rules; bad specs name their field; the
checks catch broken plans. Pure Python: no database."""

from __future__ import annotations

import copy
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from cabling.planner import (
    CableType,
    LinkTier,
    PlanError,
    SpecError,
    SwitchTier,
    label_lines,
    load_spec,
    load_spec_text,
    parse_spec,
    plan,
)
from cabling.planner.cables import choose_medium
from cabling.planner.checks import check_plan
from cabling.planner.model import PortRef
from cabling.planner.spec import MediaSpec
from cabling.planner.topology import divisors

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def spec_data(name: str) -> dict:
    return yaml.safe_load((EXAMPLES / name).read_text())


@pytest.fixture(scope="module")
def fabric1():
    return plan(parse_spec(spec_data("fabric-72.yaml")))


@pytest.fixture(scope="module")
def fabric2():
    return plan(parse_spec(spec_data("fabric-256.yaml")))


@pytest.fixture(scope="module")
def fabric3():
    return plan(parse_spec(spec_data("fabric-1024.yaml")))


@pytest.fixture(scope="module")
def demo():
    return plan(parse_spec(spec_data("demo-72.yaml")))


def per_switch(result, tier: LinkTier, side: str) -> Counter:
    return Counter(getattr(link, side).device for link in result.links if link.tier == tier)


def pairs(result) -> Counter:
    return Counter((link.a.device, link.b.device) for link in result.links if link.tier == LinkTier.LEAF_SPINE)


# --- reference fabric 1 -----------------------------------------------------------------------------


def test_fabric1_counts(fabric1):
    summary = fabric1.summary()
    assert summary["switches"] == {"compute": {"leaf": 8, "spine": 4, "super_spine": 0}}
    assert summary["links"] == {"compute": 1152}
    assert summary["planes"] == {"compute": 4}
    assert summary["cables"] == 1152
    down = per_switch(fabric1, LinkTier.NODE_LEAF, "b")
    up = per_switch(fabric1, LinkTier.LEAF_SPINE, "a")
    spine_down = per_switch(fabric1, LinkTier.LEAF_SPINE, "b")
    assert sorted(down) == [f"ib-leaf-{i:02d}" for i in range(1, 9)]
    assert set(down.values()) == {72} and set(up.values()) == {72}
    assert sorted(spine_down) == [f"ib-spine-{i:02d}" for i in range(1, 5)]
    assert set(spine_down.values()) == {144}
    assert set(pairs(fabric1).values()) == {18}, "each leaf reaches each spine with 72 / 4 links"


def test_fabric1_rails_and_planes_per_lane(fabric1):
    for link in fabric1.links:
        assert link.planes == (0, 1, 2, 3)
        assert link.lane_planes == (0, 1, 2, 3), "lane k is plane k at both ends"
        if link.tier == LinkTier.NODE_LEAF:
            rail = int(link.a.port.removeprefix("ib"))
            assert link.b.device == f"ib-leaf-{rail + 1:02d}"
    assert all(s.planes == (0, 1, 2, 3) and s.plane is None for s in fabric1.switches)
    assert all(s.rack.startswith("N") for s in fabric1.switches), "switches stand in the network row"


def test_fabric1_optics_follow_twin_port_cages(fabric1):
    """576 NIC transceivers; the Q3400's 144 ports sit in 72 twin-port cages: 8 x 72 + 4 x 72."""
    bom = {(line.category, line.item): line.count for line in fabric1.bom}
    assert bom[("optic", "OSFP-800G-DR4")] == 576
    assert bom[("optic", "OSFP-1.6T-2xDR4")] == 8 * 72 + 4 * 72
    switches = {line.tier: line.count for line in fabric1.bom if line.category == "switch"}
    assert switches == {"leaf": 8, "spine": 4}
    assert all(c.cable_type == CableType.FIBER for c in fabric1.cables), "twin-port cages take no copper"


# --- reference fabric 2 -----------------------------------------------------------------------------


def test_fabric2_counts(fabric2):
    summary = fabric2.summary()
    assert summary["switches"] == {"compute": {"leaf": 64, "spine": 32, "super_spine": 0}}
    assert summary["links"] == {"compute": 4096}
    assert summary["planes"] == {"compute": 1}
    assert summary["cables"] == 4096
    tiers = Counter(link.tier for link in fabric2.links)
    assert tiers == {LinkTier.NODE_LEAF: 2048, LinkTier.LEAF_SPINE: 2048}
    assert set(per_switch(fabric2, LinkTier.NODE_LEAF, "b").values()) == {32}
    assert set(per_switch(fabric2, LinkTier.LEAF_SPINE, "a").values()) == {32}
    assert set(per_switch(fabric2, LinkTier.LEAF_SPINE, "b").values()) == {64}
    assert len(pairs(fabric2)) == 64 * 32 and set(pairs(fabric2).values()) == {1}


def test_fabric2_scalable_units_are_rail_optimized(fabric2):
    leaves = {s.name: s for s in fabric2.switches if s.tier == SwitchTier.LEAF}
    for link in fabric2.links:
        if link.tier == LinkTier.NODE_LEAF:
            server = int(link.a.device.removeprefix("gpu-")) - 1
            rail = int(link.a.port.removeprefix("eth"))
            leaf = leaves[link.b.device]
            assert (leaf.su, leaf.rail) == (server // 32, rail)
            assert leaf.name == f"roce-leaf-{server // 32 * 8 + rail + 1:02d}"


def test_fabric2_cable_types_follow_the_room(fabric2):
    """Whole 800G cages may take copper: passive inside a network rack, active across a few metres
    (a server at the top of a rack facing the next row of switches); the long runs are fibre."""
    kinds = Counter((c.tier, c.cable_type) for c in fabric2.cables)
    assert kinds[(LinkTier.LEAF_SPINE, CableType.PASSIVE_COPPER)] > 0
    assert kinds[(LinkTier.LEAF_SPINE, CableType.ACTIVE_COPPER)] > 0
    assert kinds[(LinkTier.NODE_LEAF, CableType.PASSIVE_COPPER)] == 0, "servers and leaves share no rack"
    assert kinds[(LinkTier.NODE_LEAF, CableType.FIBER)] > 2000
    for cable in fabric2.cables:
        if cable.cable_type == CableType.PASSIVE_COPPER:
            assert len({end.rack for end in cable.ends}) == 1 and cable.length_m <= 2.0
            assert all(end.optic_part is None for end in cable.ends)
        if cable.cable_type == CableType.ACTIVE_COPPER:
            assert 2.0 < cable.distance_m <= cable.length_m <= 5.0


# --- reference fabric 3 -----------------------------------------------------------------------------


def test_fabric3_counts(fabric3):
    summary = fabric3.summary()
    assert summary["switches"] == {"compute": {"leaf": 256, "spine": 128, "super_spine": 0}}
    assert summary["links"] == {"compute": 32768}
    assert summary["planes"] == {"compute": 2}
    assert len(fabric3.switches) == 384
    for plane in (0, 1):
        mine = [s for s in fabric3.switches if s.plane == plane]
        assert Counter(s.tier for s in mine) == {SwitchTier.LEAF: 128, SwitchTier.SPINE: 64}
        links = Counter(link.tier for link in fabric3.links if link.planes == (plane,))
        assert links == {LinkTier.NODE_LEAF: 8192, LinkTier.LEAF_SPINE: 8192}
    assert all(link.speed_gbps == 400 for link in fabric3.links)
    assert set(per_switch(fabric3, LinkTier.NODE_LEAF, "b").values()) == {64}
    assert set(per_switch(fabric3, LinkTier.LEAF_SPINE, "a").values()) == {64}
    assert set(per_switch(fabric3, LinkTier.LEAF_SPINE, "b").values()) == {128}


def test_fabric3_cables_and_optics_with_the_breakout_choice(fabric3):
    """One 1x2 breakout fibre per NIC (legs to the plane-0 and plane-1 leaf of its rail) plus one fibre
    per leaf-spine link: 8,192 + 16,384 = 24,576 cables for 32,768 links. Optics: one per NIC and one
    twin-port 2 x 400G transceiver per switch cage: 8,192 + 256 x 64 + 128 x 64 = 32,768."""
    assert fabric3.summary()["cables"] == 24576
    breakouts = [c for c in fabric3.cables if c.is_breakout]
    assert len(breakouts) == 8192
    assert sum(1 for c in fabric3.cables if not c.is_breakout and c.tier == LinkTier.LEAF_SPINE) == 16384
    leaves = {s.name: s for s in fabric3.switches}
    for cable in breakouts[::97]:
        a, (leg0, leg1) = cable.a_end, cable.b_ends
        assert a.port.lane is None and a.port.device.startswith("gpu-")
        assert (leaves[leg0.device].plane, leaves[leg1.device].plane) == (0, 1)
        assert (leaves[leg0.device].su, leaves[leg0.device].rail) == (
            leaves[leg1.device].su,
            leaves[leg1.device].rail,
        )
        assert leg0.rack == leg1.rack, "the legs of a breakout reach one rack"
    optics = Counter()
    for line in fabric3.bom:
        if line.category == "optic":
            optics[line.item] += line.count
    assert optics == {"OSFP-800G-DR8": 8192, "OSFP-800G-2xDR4": 256 * 64 + 128 * 64}
    assert fabric3.summary()["optics"] == 32768


@pytest.mark.parametrize(("breakout_cables", "cables"), [(True, 1024 + 2048), (False, 4096)])
def test_fabric3_shape_with_and_without_breakout_cables(breakout_cables, cables):
    """Two units of fabric 3: 2 x (1,024 + 1,024) links. Breakout cables carry both planes of a NIC;
    the transceiver count is the same either way (one per NIC, one per switch cage)."""
    data = spec_data("fabric-1024.yaml")
    data["servers"][0]["count"] = 128
    data["networks"]["compute"]["breakout_cables"] = breakout_cables
    result = plan(parse_spec(data))
    assert result.summary()["links"] == {"compute": 4096}
    assert result.summary()["cables"] == cables
    assert result.summary()["optics"] == 128 * 8 + 2 * (16 * 64 + 8 * 64)


def test_fabric3_names_carry_the_plane(fabric3):
    names = {s.name for s in fabric3.switches}
    assert {"roce-p0-leaf-001", "roce-p1-leaf-128", "roce-p0-spine-01", "roce-p1-spine-64"} <= names


# --- the demo ---------------------------------------------------------------------------------------


def test_demo_networks(demo):
    summary = demo.summary()
    assert summary["switches"] == {
        "compute": {"leaf": 8, "spine": 4, "super_spine": 0},
        "storage": {"leaf": 3, "spine": 2, "super_spine": 0},
        "inband": {"leaf": 3, "spine": 2, "super_spine": 0},
        "oob": {"leaf": 3, "spine": 1, "super_spine": 0},
    }
    # storage: (72 + 6) x 2 x 400G; in-band: 72 x 100G; OOB: 78 BMCs + 22 switch management ports
    assert summary["links"] == {"compute": 1152, "storage": 156 + 156, "inband": 72 + 72, "oob": 100 + 3}
    managed = {link.a.device for link in demo.links if link.network == "oob" and link.a.port == "mgmt0"}
    assert managed == {s.name for s in demo.switches if s.network != "oob"}
    bmc = [c for c in demo.cables if c.network == "oob" and c.tier == LinkTier.NODE_LEAF]
    assert {c.cable_type for c in bmc} == {CableType.TWISTED_PAIR}
    assert all(c.a_end.optic_part is None for c in bmc)


def test_demo_storage_ports_of_a_server_land_on_different_leaves(demo):
    leaves_of = defaultdict(set)
    for link in demo.links:
        if link.network == "storage" and link.tier == LinkTier.NODE_LEAF:
            leaves_of[link.a.device].add(link.b.device)
    assert len(leaves_of) == 78
    assert all(len(leaves) == 2 for leaves in leaves_of.values())


# --- labels -----------------------------------------------------------------------------------------


def test_labels_are_unique_deterministic_and_stable_across_yaml_order(demo):
    data = spec_data("demo-72.yaml")
    data["networks"] = dict(reversed(list(data["networks"].items())))
    again = plan(parse_spec(data))
    assert [c.label for c in again.cables] == [c.label for c in demo.cables]
    assert [[e.tag for e in c.ends] for c in again.cables] == [[e.tag for e in c.ends] for c in demo.cables]
    labels = [c.label for c in demo.cables]
    assert len(set(labels)) == len(labels)
    first = demo.cables[0]
    assert first.label == "C00001"
    assert [e.tag for e in first.ends] == ["A01-U12-gpu-001-ib0", "C01-U05-ib-leaf-01-p1"]
    assert label_lines(first, first.a_end) == ["C00001", "A01-U12-gpu-001-ib0", "> C01-U05-ib-leaf-01-p1"]
    assert {c.label[0] for c in demo.cables} == {"C", "S", "I", "O"}
    assert all(link.cable for link in demo.links)


def test_other_networks_keep_their_labels_when_storage_grows(demo):
    data = spec_data("demo-72.yaml")
    data["servers"][1]["count"] = 9
    data["room"]["rows"][3]["racks"] = 3
    grown = plan(parse_spec(data))

    def compute_labels(result):
        return [(c.label, tuple(e.tag for e in c.ends)) for c in result.cables if c.network == "compute"]

    assert compute_labels(grown) == compute_labels(demo)
    assert sum(c.network == "storage" for c in grown.cables) > sum(c.network == "storage" for c in demo.cables)


# --- cable type and length ----------------------------------------------------------------------------


MEDIA = MediaSpec(
    passive_copper_max_m=2.0,
    active_copper_max_m=5.0,
    stock_lengths_m={
        CableType.PASSIVE_COPPER: (0.5, 1.0, 1.5, 2.0, 3.0),
        CableType.ACTIVE_COPPER: (3.0, 5.0, 7.0),
        CableType.FIBER: (3.0, 10.0, 30.0),
        CableType.TWISTED_PAIR: (1.0, 5.0),
    },
)


@pytest.mark.parametrize(
    ("distance", "same_rack", "copper_ok", "rj45", "expected"),
    [
        (1.2, True, True, False, (CableType.PASSIVE_COPPER, 1.5)),
        (2.0, True, True, False, (CableType.PASSIVE_COPPER, 2.0)),
        (2.1, True, True, False, (CableType.ACTIVE_COPPER, 3.0)),  # stock 3 m DAC is past the passive limit
        (1.2, False, True, False, (CableType.ACTIVE_COPPER, 3.0)),  # passive copper stays inside a rack
        (4.5, False, True, False, (CableType.ACTIVE_COPPER, 5.0)),
        (5.5, False, True, False, (CableType.FIBER, 10.0)),  # 7 m ACC exists but is over the active limit
        (1.2, True, False, False, (CableType.FIBER, 3.0)),  # a lane or a twin-port cage takes fibre
        (29.0, False, False, False, (CableType.FIBER, 30.0)),
        (31.0, False, False, False, None),
        (4.0, False, False, True, (CableType.TWISTED_PAIR, 5.0)),
    ],
)
def test_cable_type_and_length_by_run(distance, same_rack, copper_ok, rj45, expected):
    assert choose_medium(MEDIA, distance, same_rack=same_rack, copper_ok=copper_ok, rj45=rj45) == expected


def test_every_cable_covers_its_run_with_a_stock_length(demo):
    stock = demo.spec.media.stock_lengths_m
    for cable in demo.cables:
        assert cable.distance_m <= cable.length_m and cable.length_m in stock[cable.cable_type]


def test_a_run_longer_than_any_stock_length_is_an_error():
    data = spec_data("fabric-72.yaml")
    data["cabling"] = {"stock_lengths_m": {"fiber": [3, 5]}}
    with pytest.raises(PlanError, match=r"cabling.stock_lengths_m: no stock cable reaches [\d.]+ m for gpu-"):
        plan(parse_spec(data))


# --- sizes that do not fit --------------------------------------------------------------------------


def test_two_tiers_too_small_states_the_largest_size_that_fits():
    data = spec_data("fabric-256.yaml")
    data["servers"][0]["count"] = 257
    with pytest.raises(PlanError) as caught:
        plan(parse_spec(data))
    message = str(caught.value)
    assert message.startswith("networks.compute.tiers: 257 servers do not fit in 2 tiers")
    assert "2 tiers hold at most 256 servers (8 scalable units of 32)" in message


def test_auto_tiers_go_to_three_when_two_cannot_hold_the_cluster():
    data = spec_data("fabric-256.yaml")
    data["servers"][0]["count"] = 288
    data["networks"]["compute"]["tiers"] = "auto"
    data["room"]["rows"] += [
        {"name": "Z", "racks": 8, "holds": "servers"},
        {"name": "NZ", "racks": 15, "holds": "network"},
    ]
    result = plan(parse_spec(data))
    net = result.networks["compute"]
    # 9 units x 8 rails = 72 leaves; pods of 4 units (32 leaves) under 32 spines each; 2 super-spines
    # per spine index carry the spines' 1:1 uplinks.
    assert (net.tiers, net.pods, net.leaves, net.spines, net.super_spines) == (3, 3, 72, 96, 64)
    assert Counter(link.tier for link in result.links) == {
        LinkTier.NODE_LEAF: 2304,
        LinkTier.LEAF_SPINE: 2304,
        LinkTier.SPINE_SUPER_SPINE: 2304,
    }
    assert result.switches_of("compute", SwitchTier.SUPER_SPINE)[0].name == "roce-superspine-01"


def test_a_part_full_scalable_unit_reaches_every_spine():
    """Fabric 1 with a 73rd server: unit 1 has one server, so each of its 8 leaves has 1 down link. Each
    still reaches every spine (6 here: the smallest divisor of 72 whose spines hold the load), with
    one uplink per spine: up >= down on a part-full leaf, exact 72 = 72 on the full ones."""
    data = spec_data("fabric-72.yaml")
    data["servers"][0]["count"] = 73
    data["room"]["rows"][2]["racks"] = 10
    result = plan(parse_spec(data))
    spines = [s.name for s in result.switches_of("compute", SwitchTier.SPINE)]
    assert len(spines) == 6 and len(result.switches_of("compute", SwitchTier.LEAF)) == 16
    down = per_switch(result, LinkTier.NODE_LEAF, "b")
    reached = defaultdict(Counter)
    for (leaf, spine), n in pairs(result).items():
        reached[leaf][spine] = n
    for number in range(1, 17):
        leaf = f"ib-leaf-{number:02d}"
        assert sorted(reached[leaf]) == spines, f"{leaf} reaches every spine"
        expected_down, per_spine = (72, 12) if number <= 8 else (1, 1)
        assert down[leaf] == expected_down and set(reached[leaf].values()) == {per_spine}, leaf
    assert set(per_switch(result, LinkTier.LEAF_SPINE, "b").values()) == {8 * 12 + 8 * 1}
    assert result.summary()["links"] == {"compute": 73 * 8 + 8 * 72 + 8 * 6}


def test_a_part_full_pod_reaches_every_super_spine():
    """Three tiers of 8-port switches: 17 servers make 9 leaves in pods of 4, 4 and 1; spines of the last
    pod have one down link, yet each reaches both super-spines of its group (2 uplinks, up >= down)."""
    data = spec_data("fabric-256.yaml")
    data["switch_models"]["small"] = {"radix": 8, "speed_gbps": 800, "optic": "OSFP-800G"}
    data["networks"]["compute"].update(switch="small", tiers=3, scalable_unit=2)
    data["servers"][0]["ports"][0]["count"] = 1
    data["servers"][0]["count"] = 17
    result = plan(parse_spec(data))
    net = result.networks["compute"]
    assert (net.pods, net.leaves, net.spines, net.super_spines) == (3, 9, 6, 4)
    supers = {s.name: s.group for s in result.switches_of("compute", SwitchTier.SUPER_SPINE)}
    reached = defaultdict(Counter)
    for link in result.links:
        if link.tier == LinkTier.SPINE_SUPER_SPINE:
            reached[link.a.device][link.b.device] += 1
    for spine in result.switches_of("compute", SwitchTier.SPINE):
        group = (spine.number - 1) % 2  # spine j of every pod feeds super-spine group j
        assert sorted(reached[spine.name]) == sorted(n for n, g in supers.items() if g == group), spine.name
        assert set(reached[spine.name].values()) == {1 if spine.pod == 2 else 2}, spine.name


def test_three_tiers_too_small_states_their_limit():
    data = spec_data("fabric-256.yaml")
    data["switch_models"]["small"] = {"radix": 4, "speed_gbps": 800, "optic": "OSFP-800G"}
    data["networks"]["compute"].update(switch="small", tiers=3, scalable_unit=2)
    data["servers"][0]["ports"][0]["count"] = 1
    # rails 1; leaf 2 down; 3-tier spine 2 down -> 2 units a pod; 4-port super-spines -> 4 pods = 16 servers
    data["servers"][0]["count"] = 17
    with pytest.raises(PlanError, match=r"17 servers do not fit in 3 tiers .* hold at most 16 servers"):
        plan(parse_spec(data))
    data["servers"][0]["count"] = 16
    assert plan(parse_spec(data)).networks["compute"].tiers == 3


def test_too_large_is_refused_from_the_counts_before_anything_is_built(monkeypatch):
    """16,384 servers (the spec's cap) on fabric 2's switches: refused with the largest size that fits,
    before a single server, port or link is built (building them took 51 s and 600 MB at 300,000)."""
    import cabling.planner as planner

    def no_building(spec):
        raise AssertionError("servers were built for a spec that is too large to plan")

    monkeypatch.setattr(planner, "make_servers", no_building)
    data = spec_data("fabric-256.yaml")
    data["servers"][0]["count"] = 16384
    data["networks"]["compute"]["tiers"] = "auto"
    with pytest.raises(PlanError, match=r"16384 servers do not fit in 3 tiers \(128 pods.* at most 8192 servers"):
        planner.plan(parse_spec(data))
    data["networks"]["compute"]["tiers"] = 2
    with pytest.raises(PlanError, match=r"tiers: 16384 servers do not fit in 2 tiers \(4096 leaves per plane"):
        planner.plan(parse_spec(data))


def test_divisors_are_found_without_counting_to_n():
    assert all(divisors(n) == [d for d in range(1, n + 1) if n % d == 0] for n in range(1, 300))
    started = time.perf_counter()
    found = divisors(73_513_440)  # 768 divisors; counting to n takes seconds
    assert len(found) == 768 and found[:4] == [1, 2, 3, 4] and found[-1] == 73_513_440
    assert time.perf_counter() - started < 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("servers", 0, "count", 300_000), "servers[0].count: 300000 is more than the planner takes (at most 16384)"),
        (("servers", 0, "ports", 0, "count", 10**6), "servers[0].ports[0].count: 1000000 is more than the planner"),
        (("servers", 0, "ports", 0, "lanes", 64), "servers[0].ports[0].lanes: 64 is more than the planner takes"),
        (("switch_models", "N9570-64OC", "radix", 10**5), "switch_models.N9570-64OC.radix: 100000 is more than"),
        (("networks", "compute", "planes", 100), "networks.compute.planes: 100 is more than the planner takes"),
        (("networks", "compute", "breakout", "64x25G"), "networks.compute.breakout: expected a breakout such as"),
        (("networks", "compute", "breakout", "2" * 5000 + "x1G"), "networks.compute.breakout: expected a breakout"),
        (("networks", "compute", "oversubscription", "\u00b2"), "networks.compute.oversubscription: expected down:up"),
        (("networks", "compute", "oversubscription", "9" * 5000), "networks.compute.oversubscription: expected"),
        (("room", "rows", 0, "racks", 10**6), "room.rows[0].racks: 1000000 is more than the planner takes"),
        (("room", "rack_height_u", 10**6), "room.rack_height_u: 1000000 is more than the planner takes (at most 100)"),
    ],
)
def test_counts_and_radix_are_capped_in_the_spec(change, message):
    with pytest.raises(SpecError) as caught:
        parse_spec(mutate(change))
    assert any(error.startswith(message) for error in caught.value.errors), caught.value.errors


def test_total_servers_and_node_links_are_capped():
    data = spec_data("demo-72.yaml")
    data["servers"][0]["count"] = 10_000
    data["servers"][1]["count"] = 7_000
    with pytest.raises(SpecError) as caught:
        parse_spec(data)
    assert "servers: 10000 + 7000 = 17000 servers in all, more than the planner takes (at most 16384)" in (
        caught.value.errors
    )
    # 10,000 servers x 8 ports x 4 planes would be fine as shared-switch ports, not as per-plane lanes
    data["servers"][1]["count"] = 6
    data["networks"]["compute"].update(planes_share_switches=False, tiers="auto")
    with pytest.raises(SpecError) as caught:
        parse_spec(data)
    assert caught.value.errors[0].startswith("networks.compute: 320000 node links (servers x ports x planes)")


# --- spec errors name their field ---------------------------------------------------------------------


def mutate(path_and_value):
    data = spec_data("fabric-256.yaml")
    *keys, value = path_and_value
    target = data
    for key in keys[:-1]:
        target = target[key]
    if value is KeyError:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("switch_models", "N9570-64OC", "radix", 0),
            "switch_models.N9570-64OC.radix: expected a positive integer",
        ),
        (("switch_models", "N9570-64OC", "radx", 64), "switch_models.N9570-64OC.radx: unknown field"),
        (
            ("networks", "compute", "scalable_unit", "many"),
            "networks.compute.scalable_unit: expected a positive",
        ),
        (("networks", "compute", "scalable_unit", KeyError), "networks.compute.scalable_unit: required when"),
        (("networks", "compute", "scalable_unit", None), "networks.compute.scalable_unit: required when"),
        (("networks", "compute", "switch", "X1"), "networks.compute.switch: unknown switch model 'X1'"),
        (
            ("networks", "compute", "breakout", "3x100G"),
            "networks.compute.breakout: 3x100G is not a breakout",
        ),
        (
            ("networks", "compute", "oversubscription", "1:3"),
            "networks.compute.oversubscription: expected down:up",
        ),
        (("networks", "compute", "oversubscription", 61), "networks.compute.oversubscription: expected down:up"),
        (("networks", "compute", "tiers", 4), "networks.compute.tiers: expected 2, 3 or auto"),
        (("networks", "compute", "planes", 2), "servers[0].ports[0].lanes: compute has 2 planes"),
        (
            ("servers", 0, "ports", 0, "network", "storage"),
            "servers[0].ports[0].network: network 'storage' is not",
        ),
        (("servers", 0, "per_rack", 5), "servers[0].per_rack: 5 servers of 10U from U3 every 10U reach U52"),
        (("room", "rows", 0, "holds", "cars"), "room.rows[0].holds: expected one of servers, network"),
        (("room", KeyError), "room: required"),
        (
            ("cabling", {"stock_lengths_m": {"fibre": [1]}}),
            "cabling.stock_lengths_m.fibre: unknown cable type",
        ),
    ],
)
def test_spec_errors_name_the_field(change, message):
    with pytest.raises(SpecError) as caught:
        parse_spec(mutate(change))
    assert any(error.startswith(message) for error in caught.value.errors), caught.value.errors


def test_networks_may_not_share_name_or_label_prefixes():
    data = spec_data("demo-72.yaml")
    data["networks"]["storage"].update(prefix="ib", label_prefix="C")
    with pytest.raises(SpecError) as caught:
        parse_spec(data)
    assert caught.value.errors == [
        "networks.storage.prefix: 'ib' is already used by compute",
        "networks.storage.label_prefix: 'C' is already used by compute",
    ]


def test_plan_errors_name_the_field():
    data = spec_data("fabric-256.yaml")
    data["networks"]["compute"]["scalable_unit"] = 40
    with pytest.raises(PlanError, match=r"^networks.compute.scalable_unit: 40 servers per unit need 40 down"):
        plan(parse_spec(data))
    data = spec_data("fabric-256.yaml")
    data["servers"][0]["ports"][0]["speed_gbps"] = 400
    with pytest.raises(PlanError, match=r"^servers\[0\].ports\[0\]: gpu-001:eth0 runs at 400G but"):
        plan(parse_spec(data))
    data = spec_data("fabric-256.yaml")
    data["room"]["rows"] = [row for row in data["room"]["rows"] if row["name"] != "NA"]
    with pytest.raises(PlanError, match=r"room.rows: no network rack has 4U free for roce-leaf-"):
        plan(parse_spec(data))


# --- the checks catch what they promise ---------------------------------------------------------------


def test_checks_pass_on_the_reference_plans(fabric1, fabric2, demo):
    for result in (fabric1, fabric2, demo):
        assert check_plan(result) == []


def broken(kind: str):
    result = plan(parse_spec(spec_data("fabric-72.yaml")))
    links = result.links
    if kind == "port twice":
        links[1].b = links[0].b
    elif kind == "radix":
        links[0].b = PortRef(links[0].b.device, "p145", None, "cage73")
    elif kind == "oversubscribed":
        uplink = next(x for x in links if x.tier == LinkTier.LEAF_SPINE and x.a.device == "ib-leaf-01")
        result.links = [link for link in links if link is not uplink]
    elif kind == "missing rail":
        result.links = [link for link in links if not (link.a.device == "gpu-007" and link.a.port == "ib3")]
    elif kind == "wrong rail":
        swap = next(link for link in links if link.a.device == "gpu-002" and link.a.port == "ib5")
        swap.b = PortRef("ib-leaf-01", swap.b.port, None, swap.b.cage)
    elif kind == "leaf misses a spine":
        moved = [x for x in links if x.a.device == "ib-leaf-01" and x.b.device == "ib-spine-04"]
        for k, link in enumerate(moved):
            link.b = PortRef("ib-spine-01", f"p{145 + k}", None, f"cage{73 + k // 2}")
    elif kind == "extra uplink":
        uplink = next(x for x in links if x.tier == LinkTier.LEAF_SPINE and x.a.device == "ib-leaf-01")
        extra = copy.copy(uplink)
        extra.a, extra.b = PortRef("ib-leaf-01", "p145", None, "cage73"), PortRef("ib-spine-01", "p145", None, "cage73")
        links.append(extra)
    elif kind == "planes cross":
        links[0].lane_planes = (1, 0, 2, 3)
    elif kind == "label twice":
        result.cables[1].label = result.cables[0].label
    return result


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("port twice", "is used twice by links"),
        ("radix", "Q3400-RA has ports p1..p144"),
        ("oversubscribed", "ib-leaf-01: 72 down (57600G) and 71 up (56800G) is more oversubscribed than 1:1"),
        ("missing rail", "compute: gpu-007 ib rail 3 plane 0 is not connected"),
        ("wrong rail", "gpu-002:ib5 (unit 0, rail 5) lands on ib-leaf-01, which serves unit 0 rail 0"),
        ("leaf misses a spine", "ib-leaf-01: reaches 3 of the 4 upper switches of pod 0 (not ib-spine-04)"),
        ("extra uplink", "ib-leaf-01: 73 uplinks for 72 down links, more than 1:1 needs (72, or 72 to reach each"),
        ("planes cross", "lanes must map to planes 0..3 at both ends"),
        ("label twice", "cable label 'C00001' is used 2 times"),
    ],
)
def test_checks_catch_a_broken_plan(kind, expected):
    problems = check_plan(broken(kind))
    assert any(expected in problem for problem in problems), problems


def test_plan_refuses_to_return_a_plan_that_fails_its_checks(monkeypatch):
    import cabling.planner as planner

    monkeypatch.setattr(planner, "check_plan", lambda result: ["something is wrong"])
    with pytest.raises(PlanError, match="something is wrong"):
        planner.plan(parse_spec(spec_data("fabric-72.yaml")))


def test_the_planner_imports_no_django():
    code = "import sys, cabling.planner; sys.exit('django' in sys.modules)"
    root = Path(__file__).resolve().parents[2]
    assert subprocess.run([sys.executable, "-c", code], cwd=root, check=False).returncode == 0


def test_yaml_files_load_and_bad_yaml_names_its_line():
    for path in sorted(EXAMPLES.glob("*.yaml")):
        assert load_spec(path).networks, path
    with pytest.raises(SpecError, match=r"^bad.yaml line \d+: not valid YAML"):
        load_spec_text("servers: [\n  - {name: x", source="bad.yaml")
    with pytest.raises(SpecError, match=r"nowhere.yaml: cannot read the spec"):
        load_spec(EXAMPLES / "nowhere.yaml")
