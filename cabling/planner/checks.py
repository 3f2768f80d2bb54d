"""Checks a finished plan before anything is written. Each check recomputes what it verifies from the
spec and the plan's own rows, independently of how the topology code built them, and returns
readable problems (an empty list when all is well).

Checked: device names unique; no port (or lane of it) used twice, by links or by cable ends; no port
beyond a switch's radix or a port's lanes; down/up within the oversubscription on every leaf (and
1:1 on three-tier spines), with no more uplinks than reaching every upper switch equally takes;
every server reached on every rail and plane; rail i of every server of a scalable unit on that
unit's leaf i; planes never cross; every leaf reaches every spine of its pod, and every three-tier
spine every super-spine of its group, with the same number of links to each; every link on exactly
one cable; cable types and lengths within their rules; optics counted once per cage; labels unique.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from .model import Cable, Link, LinkTier, Plan, PlannedSwitch, PortRef, SwitchTier, capped
from .spec import CableType, NetworkSpec, PlaneOf, rails_of


def _port_index(port: str) -> int:
    digits = port[len(port.rstrip("0123456789")) :]
    return int(digits) if digits else -1


def check_names(plan: Plan) -> list[str]:
    names = Counter([s.name for s in plan.servers] + [s.name for s in plan.switches])
    return [f"device name {name} is used {n} times" for name, n in names.items() if n > 1]


def _claims(refs: Iterable[tuple[PortRef, str]], what: str) -> list[str]:
    """A port is taken whole or lane by lane, never both, and each lane once."""
    whole: dict[tuple[str, str], str] = {}
    lanes: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    problems = []
    for ref, owner in refs:
        key = (ref.device, ref.port)
        if ref.lane is None:
            earlier = whole.get(key) or next(iter(lanes[key].values()), None)
            whole.setdefault(key, owner)
        else:
            earlier = whole.get(key) or lanes[key].get(ref.lane)
            lanes[key].setdefault(ref.lane, owner)
        if earlier:
            problems.append(f"{ref} is used twice by {what}: {earlier} and {owner}")
    return problems


def check_ports_used_once(plan: Plan) -> list[str]:
    by_links = _claims(((ref, f"link {link.a}-{link.b}") for link in plan.links for ref in (link.a, link.b)), "links")
    by_cables = _claims(
        ((end.port, f"cable {c.label or c.a_end.port}") for c in plan.cables for end in c.ends), "cables"
    )
    return by_links + by_cables


def check_radix(plan: Plan) -> list[str]:
    spec = plan.spec
    nets = {n.key: n for n in spec.networks}
    switches = {s.name: s for s in plan.switches}
    groups = {g.name: g for g in spec.servers}
    server_group = {s.name: groups[s.group] for s in plan.servers}
    problems = []
    # Devices of one model (or server group) share their ports: check each distinct port once.
    refs: dict[tuple[str, str, int | None], PortRef] = {}
    for link in plan.links:
        for ref in (link.a, link.b):
            switch = switches.get(ref.device)
            owner = f"{switch.network}:{switch.model}" if switch else server_group[ref.device].name
            refs.setdefault((owner, ref.port, ref.lane), ref)
    for ref in sorted(refs.values(), key=lambda r: (r.device, r.sort_key)):
        switch = switches.get(ref.device)
        if switch is not None:
            model = spec.switch_models[switch.model]
            breakout = nets[switch.network].breakout
            number = _port_index(ref.port)
            dedicated = model.uplink_ports.count if model.uplink_ports else 0
            if ref.port == model.mgmt_port and ref.lane is None:
                continue
            if ref.port != model.port_name(number) or not 1 <= number <= model.radix + dedicated:
                last = model.port_name(model.radix + dedicated)
                problems.append(f"{ref}: {model.part_number} has ports {model.port_name(1)}..{last}")
            elif ref.lane is not None and (number > model.radix or not breakout or ref.lane >= breakout.lanes):
                problems.append(f"{ref}: that port does not have lane {ref.lane}")
            elif ref.lane is None and breakout and number <= model.radix:
                problems.append(f"{ref}: the port is split {breakout}; a link takes one of its lanes")
            continue
        group = server_group[ref.device]
        ports = next((p for p in group.ports if ref.port.rstrip("0123456789") == p.name), None)
        index = _port_index(ref.port)
        if ports is None or not 0 <= index < ports.count:
            problems.append(f"{ref}: {group.name} servers have no such port")
        elif ref.lane is not None and not 0 <= ref.lane < ports.lanes:
            problems.append(f"{ref}: {ports.name} ports have {ports.lanes} lanes")
    return problems


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _upper_peers(plan: Plan) -> dict[str, tuple[str, list[str]]]:
    """What each switch must reach, from the plan's switch rows, as (where, names): a leaf every spine of
    its (network, plane, pod); a spine of a three-tier plane every super-spine of group j, j being the
    spine's place (by number) among its pod's spines."""
    spines: dict[tuple, list[PlannedSwitch]] = defaultdict(list)
    supers: dict[tuple, list[str]] = defaultdict(list)
    for s in plan.switches:
        if s.tier == SwitchTier.SPINE:
            spines[(s.network, s.plane, s.pod)].append(s)
        elif s.tier == SwitchTier.SUPER_SPINE:
            supers[(s.network, s.plane, s.group)].append(s.name)
    place = {s.name: j for pod in spines.values() for j, s in enumerate(sorted(pod, key=lambda x: x.number))}
    with_supers = {(s.network, s.plane) for s in plan.switches if s.tier == SwitchTier.SUPER_SPINE}
    peers: dict[str, tuple[str, list[str]]] = {}
    for s in plan.switches:
        if s.tier == SwitchTier.LEAF:
            peers[s.name] = (f"pod {s.pod}", [x.name for x in spines[(s.network, s.plane, s.pod)]])
        elif s.tier == SwitchTier.SPINE and (s.network, s.plane) in with_supers:
            j = place[s.name]
            peers[s.name] = (f"group {j}", supers[(s.network, s.plane, j)])
    return peers


def _bandwidth(links: Iterable[Link]) -> tuple[int, int, int]:
    """(count, total Gb/s, speed of one link)."""
    links = list(links)
    return (
        len(links),
        sum(link.speed_gbps for link in links),
        max((link.speed_gbps for link in links), default=0),
    )


def check_oversubscription(plan: Plan) -> list[str]:
    """Down:up within the ratio (1:1 on three-tier spines). Up may exceed what the ratio needs only as far
    as reaching every upper switch equally takes: a part-full leaf rounds its uplinks up to a multiple
    of its pod's spine count, so 1:1 means up >= down there."""
    nets = {n.key: n for n in plan.spec.networks}
    peers = _upper_peers(plan)
    down: dict[str, list[Link]] = defaultdict(list)
    up: dict[str, list[Link]] = defaultdict(list)
    for link in plan.links:  # keyed by network too: a switch's management link belongs to the OOB
        down[(link.b.device, link.network)].append(link)
        up[(link.a.device, link.network)].append(link)
    problems = []
    for switch in plan.switches:
        key = (switch.name, switch.network)
        if switch.tier == SwitchTier.SUPER_SPINE or (switch.tier == SwitchTier.SPINE and not up[key]):
            continue
        ratio = nets[switch.network].oversubscription if switch.tier == SwitchTier.LEAF else None
        ratio_down, ratio_up = (ratio.down, ratio.up) if ratio else (1, 1)
        n_down, bw_down, _ = _bandwidth(down[key])
        n_up, bw_up, up_speed = _bandwidth(up[key])
        shown = f"{ratio_down}:{ratio_up}"
        if n_down == 0 or n_up == 0:
            problems.append(f"{switch.name}: {n_down} down and {n_up} up links")
        elif bw_down * ratio_up > bw_up * ratio_down:
            problems.append(
                f"{switch.name}: {n_down} down ({bw_down}G) and {n_up} up ({bw_up}G) is more "
                f"oversubscribed than {shown}"
            )
        else:
            needed = _ceil_div(bw_down * ratio_up, ratio_down * up_speed)
            reach = max(len(peers.get(switch.name, ("", []))[1]), 1)
            allowed = _ceil_div(needed, reach) * reach
            if n_up > allowed:
                problems.append(
                    f"{switch.name}: {n_up} uplinks for {n_down} down links, more than {shown} needs "
                    f"({needed}, or {allowed} to reach each of its {reach} upper switches equally)"
                )
    return problems


def _network_servers(plan: Plan, net: NetworkSpec) -> list[tuple[str, str]]:
    """(server, port group) pairs the network must reach, in network order."""
    ports = {g.name: [p for p in g.ports if p.network == net.key] for g in plan.spec.servers}
    return [(s.name, p.name) for s in plan.servers for p in ports[s.group]]


def _reached(net: NetworkSpec, link: Link) -> list[tuple[int, int]]:
    """(rail, plane) pairs a node-to-leaf link gives its node port."""
    index = _port_index(link.a.port)
    if net.planes > 1 and not net.planes_share_switches and net.plane_of == PlaneOf.LANE:
        return [(index, link.a.lane)] if link.a.lane is not None else []
    if net.planes > 1 and net.plane_of == PlaneOf.PORT:
        return [(index // net.planes, index % net.planes)]
    return [(index, p) for p in link.planes]


def check_reach(plan: Plan) -> list[str]:
    """Every server on every rail and plane, each exactly once; every managed switch on the OOB."""
    problems = []
    groups = {g.name: g for g in plan.spec.servers}
    server_group = {s.name: s.group for s in plan.servers}
    earlier: list[PlannedSwitch] = []
    for net in plan.spec.networks:
        got: Counter = Counter()
        for link in plan.links:
            if link.network == net.key and link.tier == LinkTier.NODE_LEAF:
                for rail, plane in _reached(net, link):
                    got[(link.a.device, link.a.port.rstrip("0123456789"), rail, plane)] += 1
        expected = set()
        for server, port_group in _network_servers(plan, net):
            ports = next(p for p in groups[server_group[server]].ports if p.name == port_group)
            for rail in range(rails_of(net, ports)):
                expected.update((server, port_group, rail, plane) for plane in range(net.planes))
        if net.attach_switch_management:
            for switch in earlier:
                mgmt = plan.spec.switch_models[switch.model].mgmt_port
                expected.update(
                    (switch.name, mgmt.rstrip("0123456789"), _port_index(mgmt), p) for p in range(net.planes)
                )
        for key in sorted(expected - set(got)):
            problems.append(f"{net.key}: {key[0]} {key[1]} rail {key[2]} plane {key[3]} is not connected")
        for key, n in sorted(got.items()):
            if n > 1:
                problems.append(f"{net.key}: {key[0]} {key[1]} rail {key[2]} plane {key[3]} is connected {n} times")
        earlier += [s for s in plan.switches if s.network == net.key]
    return capped(problems)


def check_rails(plan: Plan) -> list[str]:
    """Rail-optimized: rail i of every server in scalable unit u lands on the leaf serving (u, i)."""
    problems = []
    switches = {s.name: s for s in plan.switches}
    for net in plan.spec.networks:
        if not net.rail_optimized:
            continue
        order = {name: i for i, name in enumerate(dict.fromkeys(s for s, _ in _network_servers(plan, net)))}
        for link in plan.links:
            if link.network != net.key or link.tier != LinkTier.NODE_LEAF:
                continue
            leaf = switches[link.b.device]
            unit = order[link.a.device] // net.scalable_unit
            for rail, _ in _reached(net, link):
                if (leaf.su, leaf.rail) != (unit, rail):
                    problems.append(
                        f"{link.a} (unit {unit}, rail {rail}) lands on {leaf.name}, which serves "
                        f"unit {leaf.su} rail {leaf.rail}"
                    )
    return capped(problems)


def check_planes(plan: Plan) -> list[str]:
    problems = []
    nets = {n.key: n for n in plan.spec.networks}
    switches = {s.name: s for s in plan.switches}
    for link in plan.links:
        net = nets[link.network]
        ends = [
            switches[ref.device]
            for ref in (link.a, link.b)
            if ref.device in switches and switches[ref.device].network == link.network
        ]
        for switch in ends:
            if switch.planes != link.planes:
                problems.append(
                    f"{link.a}-{link.b}: link in planes {link.planes} ends on {switch.name} (planes {switch.planes})"
                )
        if link.tier == LinkTier.NODE_LEAF and link.a.device not in switches:
            planes = tuple(sorted({p for _, p in _reached(net, link)}))
            if planes != link.planes:
                problems.append(f"{link.a} carries planes {planes} but its link is in planes {link.planes}")
        if net.planes_share_switches and net.planes > 1 and link.lane_planes != tuple(range(net.planes)):
            problems.append(f"{link.a}-{link.b}: lanes must map to planes 0..{net.planes - 1} at both ends")
    return capped(problems)


def check_spread(plan: Plan) -> list[str]:
    """Every leaf reaches every spine of its pod, and every three-tier spine every super-spine of its
    group, with the same number of links to each; no uplink leaves the pod or group."""
    problems = []
    per_pair: Counter = Counter()
    for link in plan.links:
        if link.tier != LinkTier.NODE_LEAF:
            per_pair[(link.a.device, link.b.device)] += 1
    targets: dict[str, set[str]] = defaultdict(set)
    for a, b in per_pair:
        targets[a].add(b)
    for name, (where, names) in _upper_peers(plan).items():
        missed = [peer for peer in names if peer not in targets[name]]
        strays = sorted(targets[name] - set(names))
        if not names:
            problems.append(f"{name}: {where} has no upper switch for it to reach")
        elif missed:
            shown = ", ".join(missed[:4]) + (" ..." if len(missed) > 4 else "")
            problems.append(
                f"{name}: reaches {len(names) - len(missed)} of the {len(names)} upper switches of {where} "
                f"(not {shown})"
            )
        elif len({per_pair[(name, peer)] for peer in names}) > 1:
            counts = sorted({per_pair[(name, peer)] for peer in names})
            problems.append(f"{name}: uplinks spread unevenly over its {len(names)} upper switches ({counts})")
        if strays:
            problems.append(f"{name}: has uplinks to {', '.join(strays[:4])}, outside {where}")
    return capped(problems)


def check_cables(plan: Plan) -> list[str]:
    problems = []
    media = plan.spec.media
    carried = Counter(index for cable in plan.cables for index in cable.links)
    for index, link in enumerate(plan.links):
        if carried[index] != 1:
            problems.append(f"{link.a}-{link.b} is on {carried[index]} cables")
    limits: dict[CableType, Callable[[Cable], bool]] = {
        CableType.PASSIVE_COPPER: lambda c: (
            c.length_m <= media.passive_copper_max_m and len({e.rack for e in c.ends}) == 1
        ),
        CableType.ACTIVE_COPPER: lambda c: c.length_m <= media.active_copper_max_m,
    }
    cages: dict[tuple[str, str], int] = Counter()
    for cable in plan.cables:
        name = cable.label or str(cable.a_end.port)
        if cable.length_m < cable.distance_m or cable.length_m not in media.stock_lengths_m[cable.cable_type]:
            problems.append(f"{name}: {cable.length_m} m is not a stock length covering {cable.distance_m} m")
        if not limits.get(cable.cable_type, lambda c: True)(cable):
            problems.append(f"{name}: {cable.cable_type} of {cable.length_m} m breaks the copper rules")
        if cable.is_breakout and len({e.rack for e in cable.b_ends}) != 1:
            problems.append(f"{name}: breakout legs end in different racks")
        ends = {(e.port.device, e.port.port) for e in cable.ends}
        for index in cable.links:
            if not 0 <= index < len(plan.links):
                problems.append(f"{name}: carries link #{index}, which is not in the plan")
                continue
            link = plan.links[index]
            if (link.a.device, link.a.port) not in ends or (link.b.device, link.b.port) not in ends:
                problems.append(f"{name}: does not end on the ports of link {link.a}-{link.b}")
        for end in cable.ends:
            fibre = cable.cable_type == CableType.FIBER
            if fibre != bool(end.optic_part):
                problems.append(f"{name}: end {end.port} {'lacks' if fibre else 'has'} a transceiver")
            if end.optic_part:
                cages[(end.device, end.port.cage)] += end.optic_count
    problems += [
        f"{device} {cage}: its transceiver is counted {n} times" for (device, cage), n in cages.items() if n != 1
    ]
    return capped(problems)


def check_labels(plan: Plan) -> list[str]:
    labels = Counter(c.label for c in plan.cables)
    problems = [f"cable label {label!r} is used {n} times" for label, n in labels.items() if n > 1 or not label]
    return capped(problems)


CHECKS = (
    check_names,
    check_ports_used_once,
    check_radix,
    check_oversubscription,
    check_reach,
    check_rails,
    check_planes,
    check_spread,
    check_cables,
    check_labels,
)


def check_plan(plan: Plan) -> list[str]:
    """Every problem found, each a readable sentence naming the device, port or cable."""
    return [problem for check in CHECKS for problem in capped(check(plan))]
