"""Property test: on generated specs of other sizes, radices, breakouts, plane layouts, ratios and
tiers, every plan keeps the invariants (each port used once, radix, down/up ratio, every leaf on
every spine of its pod and every spine on every super-spine of its group, rails, planes, one cable
per link, deterministic unique labels), and a spec too large for its tiers fails with the
largest size that fits, which itself plans. The invariants are recomputed here from the plan's rows,
not taken from the planner's own checks."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from cabling.planner import LinkTier, PlanError, SwitchTier, parse_spec, plan

SERVERS_PER_RACK = 4


@st.composite
def fabric_specs(draw) -> dict:
    radix = draw(st.sampled_from([4, 6, 8, 12, 16]))
    split = draw(st.sampled_from([1, 2]))
    mode = draw(st.sampled_from(["single", "shared", "lanes", "ports"]))
    planes = 1 if mode == "single" else draw(st.sampled_from([2, 4]))
    ratio = draw(st.sampled_from([(1, 1), (2, 1), (3, 1)]))
    share = radix * split // sum(ratio)
    assume(share >= 1)
    down = share * ratio[0]
    rails = draw(st.integers(1, 3))
    rail_optimized = draw(st.booleans())
    count = draw(st.integers(1, 48))
    leaf_speed = 800 // split
    port = {"name": "net", "count": rails, "speed_gbps": leaf_speed, "network": "compute", "optic": "NIC-OPTIC"}
    if mode == "shared":
        port["lanes"] = planes
    elif mode == "lanes":
        port.update(lanes=planes, speed_gbps=leaf_speed * planes)
    elif mode == "ports":
        port["count"] = rails * planes
    network = {
        "switch": "SW",
        "tiers": draw(st.sampled_from(["auto", 2, 3])),
        "oversubscription": f"{ratio[0]}:{ratio[1]}",
        "planes": planes,
        "plane_of": "port" if mode == "ports" else "lane",
        "planes_share_switches": mode == "shared",
        "rail_optimized": rail_optimized,
        "breakout_cables": mode == "lanes" and draw(st.booleans()),
    }
    if split > 1:
        network["breakout"] = f"{split}x{leaf_speed}G"
    if rail_optimized:
        network["scalable_unit"] = draw(st.integers(1, down))
    switch = {"radix": radix, "speed_gbps": 800, "height_u": 1, "optic": "SW-OPTIC", "breakouts": ["2x400G"]}
    return {
        "name": "generated",
        "switch_models": {"SW": switch},
        "servers": [
            {
                "name": "node",
                "count": count,
                "model": "N",
                "height_u": 2,
                "per_rack": SERVERS_PER_RACK,
                "first_u": 2,
                "ports": [port],
            }
        ],
        "networks": {"compute": network},
        "room": {
            "rows": [
                {"name": "A", "racks": 12, "holds": "servers"},
                {"name": "N", "racks": 60, "holds": "network"},
                {"name": "M", "racks": 60, "holds": "network"},
            ]
        },
    }


def check_invariants(data: dict, result) -> None:
    net_spec = data["networks"]["compute"]
    radix = data["switch_models"]["SW"]["radix"]
    split = int(net_spec.get("breakout", "1x").split("x")[0])
    planes = net_spec["planes"]
    shared = net_spec["planes_share_switches"]
    port = data["servers"][0]["ports"][0]
    switches = {s.name: s for s in result.switches}

    # each port, or each lane of it, used once
    whole, lanes = set(), defaultdict(set)
    for link in result.links:
        for ref in (link.a, link.b):
            key = (ref.device, ref.port)
            assert key not in whole, ref
            if ref.lane is None:
                assert not lanes[key], ref
                whole.add(key)
            else:
                assert ref.lane not in lanes[key], ref
                lanes[key].add(ref.lane)

    # radix and breakout lanes
    for link in result.links:
        for ref in (link.a, link.b):
            if ref.device in switches:
                assert 1 <= int(ref.port.removeprefix("p")) <= radix, ref
                assert (ref.lane is None) == (split == 1) and (ref.lane or 0) < split, ref

    # every leaf reaches every spine of its pod, every three-tier spine every super-spine of its group,
    # each the same number of times; down/up within the ratio, and no more uplinks than that takes
    # (a part-full leaf rounds up to a multiple of its upper switches: up >= down at 1:1)
    down_ratio, up_ratio = map(int, net_spec["oversubscription"].split(":"))
    down = Counter(link.b.device for link in result.links)
    up = Counter(link.a.device for link in result.links if link.a.device in switches)
    pair = Counter((link.a.device, link.b.device) for link in result.links if link.tier != LinkTier.NODE_LEAF)
    for switch in result.switches:
        peers = upper_switches(result, switch)
        if switch.tier == SwitchTier.LEAF:
            assert down[switch.name] >= 1
            needed = math.ceil(down[switch.name] * up_ratio / down_ratio)
        elif switch.tier == SwitchTier.SPINE and result.networks["compute"].tiers == 3:
            needed = down[switch.name]
        else:
            assert up[switch.name] == 0 and not peers
            continue
        assert peers, switch.name
        per_peer = {pair[(switch.name, peer)] for peer in peers}
        assert len(per_peer) == 1 and per_peer.pop() >= 1, (switch.name, peers)
        assert up[switch.name] == sum(pair[(switch.name, peer)] for peer in peers), "no uplink outside the pod/group"
        assert needed <= up[switch.name] <= math.ceil(needed / len(peers)) * len(peers), switch.name

    # every server on every rail and plane exactly once; rails of a scalable unit share a leaf
    reached = Counter()
    leaf_of_slot = {}
    for link in result.links:
        if link.tier != LinkTier.NODE_LEAF:
            continue
        index = int(link.a.port.removeprefix("net"))
        if planes > 1 and net_spec["plane_of"] == "port":
            pairs = [(index // planes, index % planes)]
        elif planes > 1 and not shared:
            pairs = [(index, link.a.lane)]
        else:
            pairs = [(index, p) for p in range(planes)]
        server = int(link.a.device.removeprefix("node-")) - 1
        for rail, plane in pairs:
            reached[(server, rail, plane)] += 1
            if net_spec["rail_optimized"]:
                slot = (server // net_spec["scalable_unit"], rail, None if shared else plane)
                assert leaf_of_slot.setdefault(slot, link.b.device) == link.b.device, slot
    rails = port["count"] // planes if net_spec["plane_of"] == "port" and planes > 1 else port["count"]
    expected = {(s, r, p) for s in range(data["servers"][0]["count"]) for r in range(rails) for p in range(planes)}
    assert set(reached) == expected and set(reached.values()) == {1}
    if net_spec["rail_optimized"]:
        assert len(set(leaf_of_slot.values())) == len(leaf_of_slot), "one leaf per unit, rail and plane"

    # planes never cross: a switch carries one plane (or all, when they share it); links agree at both ends
    for link in result.links:
        for ref in (link.a, link.b):
            if ref.device in switches:
                assert switches[ref.device].planes == link.planes
        if shared and planes > 1:
            assert link.planes == tuple(range(planes)) == link.lane_planes
        else:
            assert len(link.planes) == 1
    assert all(len(s.planes) == (planes if shared else 1) for s in result.switches)

    # one cable per link, labels unique
    carried = Counter(i for cable in result.cables for i in cable.links)
    assert set(carried) == set(range(len(result.links))) and set(carried.values()) == {1}
    labels = [c.label for c in result.cables]
    assert len(set(labels)) == len(labels) and all(re.fullmatch(r"C\d{5}", label) for label in labels)


def upper_switches(result, switch) -> list[str]:
    """What `switch` must reach, from the switch rows: a leaf, every spine of its plane and pod; a spine
    of a three-tier plane, every super-spine of group j, j its place among its pod's spines."""
    same_plane = [s for s in result.switches if s.plane == switch.plane]
    if switch.tier == SwitchTier.LEAF:
        return [s.name for s in same_plane if s.tier == SwitchTier.SPINE and s.pod == switch.pod]
    if switch.tier == SwitchTier.SPINE:
        pod = [s for s in same_plane if s.tier == SwitchTier.SPINE and s.pod == switch.pod]
        pod.sort(key=lambda s: s.number)
        j = pod.index(switch)
        return [s.name for s in same_plane if s.tier == SwitchTier.SUPER_SPINE and s.group == j]
    return []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabric_specs())
def test_generated_fabrics_keep_the_invariants(data):
    try:
        result = plan(parse_spec(data))
    except PlanError as exc:
        limit = re.search(r"do not fit in (\d) tiers.*?(\d) tiers hold at most (\d+) servers", str(exc))
        assert limit, exc.errors  # the only way a generated spec may fail: too large for its tiers
        tiers, largest = int(limit[2]), int(limit[3])
        event(f"too large for {tiers} tiers")
        assert data["servers"][0]["count"] > largest
        if 1 <= largest <= 48:
            data["servers"][0]["count"] = largest
            assert plan(parse_spec(data)).networks["compute"].tiers == tiers
        return
    event(f"planned in {result.networks['compute'].tiers} tiers")
    check_invariants(data, result)
    again = plan(parse_spec(data))
    assert [(c.label, [e.tag for e in c.ends]) for c in again.cables] == [
        (c.label, [e.tag for e in c.ends]) for c in result.cables
    ]


@settings(max_examples=25, deadline=None)
@given(fabric_specs())
def test_explicit_three_tiers_keep_the_invariants(data):
    """Every spec forced into three tiers: pods, spines split 1:1, super-spine groups."""
    net = data["networks"]["compute"]
    net["tiers"] = 3
    try:
        result = plan(parse_spec(data))
    except PlanError as exc:
        assert "do not fit in 3 tiers" in str(exc), exc.errors
        event("too large for 3 tiers")
        return
    assert result.networks["compute"].tiers == 3
    assert result.networks["compute"].super_spines > 0
    check_invariants(data, result)
