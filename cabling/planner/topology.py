"""Switches and links of one network: leaves, spines and super-spines, and which port joins which.

The shape is a folded Clos (fat tree), built the same way for every plane:

- Leaves. Rail-optimized: servers are cut into scalable units (SU) in spec order; rail i of every
  server of SU u lands on leaf (u, i), one down port per server. Otherwise node ports are striped
  (every server's port 0, then every server's port 1...) over as many leaves as needed, so the ports of
  one server land on different leaves.
- A leaf's ports split into down and up by the oversubscription down:up (1:1 gives half and half);
  a leaf needs ceil(down x ratio) uplinks, so down = up on every full leaf at 1:1.
- Spines. Two tiers: one pod holds every leaf. The spine count S is the smallest divisor of the
  largest leaf's uplink count that keeps every spine within its ports. Every leaf reaches every spine
  of its pod with the same number of links: its uplinks are rounded UP to a multiple of S and dealt
  round-robin. A full leaf's count is a multiple of S already (exact down = up); a part-full leaf
  (the last, part-full scalable unit; the last striped leaf) may get more uplinks than it needs
  (up >= down at 1:1, never fewer), because a leaf that misses a spine loses paths. Two tiers hold at
  most as many leaves as a spine has ports.
- Three tiers: leaves are grouped in pods (whole SUs when rail-optimized) of at most as many leaves as a
  spine has down ports; each pod has S spines, whose ports split 1:1; spine j of every pod feeds
  super-spine group j (G super-spines) the same way, with its uplinks rounded up to a multiple of G.
  Three tiers hold at most as many pods as a super-spine has ports.
- Too large is said up front (`preflight`): the leaf count follows from the spec's node-port counts
  alone, so a cluster far beyond its tiers is refused before any server, port or link is built.
- Planes never cross: with separate planes each plane is its own fabric on its own switches; when
  the planes share the switches (one ASIC per plane inside the box), a port's lane k is plane k at
  both ends of every link.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .model import (
    TIER_NAME,
    Link,
    LinkTier,
    NetworkPlan,
    PlanError,
    PlannedServer,
    PlannedSwitch,
    PortRef,
    SwitchTier,
)
from .spec import NETWORK_ORDER, Breakout, FabricSpec, NetworkSpec, PlaneOf, Ratio, SwitchModel, rails_of

ONE_TO_ONE = Ratio(1, 1)
MGMT_SPEED_GBPS = 1


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(n: int, multiple: int) -> int:
    return ceil_div(n, multiple) * multiple


def divisors(n: int) -> list[int]:
    """Divisors of n in increasing order, in O(sqrt n) steps."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


@dataclass(frozen=True, slots=True)
class PortLayout:
    """How a switch in a given tier uses its ports: the first `down` logical ports face down."""

    down: int
    up: int
    down_speed: int
    up_speed: int


class SwitchPorts:
    """Names and speeds of a switch model's ports under a network's breakout.

    Logical port i (from 0) is physical port p<i // lanes + 1>, lane i % lanes when the port breaks
    out. Dedicated uplink ports follow the data ports: p<radix + 1>... (`p` is the model's port_prefix)
    """

    def __init__(self, model: SwitchModel, breakout: Breakout | None):
        self.model = model
        self.lanes = breakout.lanes if breakout else 1
        self.speed = breakout.speed_gbps if breakout else model.speed_gbps
        self.logical = model.radix * self.lanes

    def cage(self, physical: int) -> str:
        per_cage = self.model.ports_per_cage
        if per_cage == 1 or physical > self.model.radix:
            return self.model.port_name(physical)
        return f"cage{(physical - 1) // per_cage + 1}"

    def main(self, device: str, index: int) -> PortRef:
        physical = index // self.lanes + 1
        lane = index % self.lanes if self.lanes > 1 else None
        return PortRef(device, self.model.port_name(physical), lane, self.cage(physical))

    def layout(self, *, has_upper: bool, ratio: Ratio) -> PortLayout | None:
        """None when the ports cannot be split down:up at all."""
        if not has_upper:
            return PortLayout(self.logical, 0, self.speed, 0)
        dedicated = self.model.uplink_ports
        if dedicated:
            return PortLayout(self.logical, dedicated.count, self.speed, dedicated.speed_gbps)
        share = self.logical // (ratio.down + ratio.up)
        if share == 0:
            return None
        return PortLayout(share * ratio.down, share * ratio.up, self.speed, self.speed)

    def up(self, device: str, layout: PortLayout, k: int) -> PortRef:
        if self.model.uplink_ports:
            physical = self.model.radix + k + 1
            name = self.model.port_name(physical)
            return PortRef(device, name, None, name)
        return self.main(device, layout.down + k)


def needed_uplinks(down: int, layout: PortLayout, ratio: Ratio) -> int:
    """Uplinks that keep down bandwidth / up bandwidth within the ratio: ceil(down x down:up)."""
    return ceil_div(down * layout.down_speed * ratio.up, ratio.down * layout.up_speed)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A node port (or lane) that a leaf port must take."""

    port: PortRef
    node_order: int  # position of its node on this network, from 0
    port_index: int  # index of the port in its port group
    rail: int
    planes: tuple[int, ...]
    speed_gbps: int
    source: str  # spec field it comes from, for error messages


@dataclass(slots=True)
class _Leaf:
    su: int | None
    rail: int | None
    endpoints: list[Endpoint]
    uplinks: int = 0
    switch: PlannedSwitch | None = None


@dataclass(slots=True)
class NetworkTopology:
    switches: list[PlannedSwitch]
    links: list[Link]
    summary: NetworkPlan


class _NetworkBuilder:
    def __init__(
        self,
        spec: FabricSpec,
        net: NetworkSpec,
        servers: Sequence[PlannedServer],
        managed: Sequence[tuple[PlannedSwitch, SwitchModel]],
    ):
        self.spec, self.net = spec, net
        self.path = f"networks.{net.key}"
        self.leaf_ports = SwitchPorts(net.switch, net.breakout)
        self.spine_ports = SwitchPorts(net.spine_switch, net.breakout)
        self.super_ports = SwitchPorts(net.super_spine_switch, net.breakout)
        self.attached = [
            (gi, g, pi, p) for gi, g in enumerate(spec.servers) for pi, p in enumerate(g.ports) if p.network == net.key
        ]
        groups = {g.name for _, g, _, _ in self.attached}
        self.nodes = [s for s in servers if s.group in groups]
        # From the spec, not from `servers`: the preflight sizes the fabric before servers exist.
        self.node_count = sum(g.count for g in spec.servers if g.name in groups)
        self.managed = list(managed) if net.attach_switch_management else []
        self.rails = rails_of(net, self.attached[0][3]) if self.attached else 1
        self.switches: list[PlannedSwitch] = []
        self.links: list[Link] = []
        self.lane_planes = tuple(range(net.planes)) if net.planes_share_switches and net.planes > 1 else ()

    # -- the fabrics, one per plane (or one for all planes when they share the switches) -------------

    def instances(self) -> list[tuple[int | None, tuple[int, ...]]]:
        if self.net.planes_share_switches and self.net.planes > 1:
            return [(None, tuple(range(self.net.planes)))]
        return [(p, (p,)) for p in range(self.net.planes)]

    def endpoints(self, plane: int | None, planes: tuple[int, ...]) -> list[Endpoint]:
        net = self.net
        order = {s.name: i for i, s in enumerate(self.nodes)}
        by_group = {s.group: [] for s in self.nodes}
        for s in self.nodes:
            by_group[s.group].append(s)
        found: list[Endpoint] = []
        for gi, group, pi, ports in self.attached:
            source = f"servers[{gi}].ports[{pi}]"
            for server in by_group[group.name]:
                for j in range(ports.count):
                    name = ports.port_name(j)
                    if net.planes == 1 or net.planes_share_switches:
                        ref, rail, speed = PortRef(server.name, name, None, name), j, ports.speed_gbps
                    elif net.plane_of == PlaneOf.LANE:
                        ref, rail, speed = PortRef(server.name, name, plane, name), j, ports.lane_speed_gbps
                    elif j % net.planes == plane:
                        ref, rail, speed = (
                            PortRef(server.name, name, None, name),
                            j // net.planes,
                            ports.speed_gbps,
                        )
                    else:
                        continue
                    found.append(Endpoint(ref, order[server.name], j, rail, planes, speed, source))
        base = len(self.nodes)
        for k, (switch, model) in enumerate(self.managed):
            ref = PortRef(switch.name, model.mgmt_port, None, model.mgmt_port)
            found.append(
                Endpoint(
                    ref,
                    base + k,
                    0,
                    0,
                    planes,
                    MGMT_SPEED_GBPS,
                    f"switch_models.{model.part_number}.mgmt_port",
                )
            )
        return found

    # -- sizing -------------------------------------------------------------------------------------

    def leaf_layout(self) -> PortLayout:
        layout = self.leaf_ports.layout(has_upper=True, ratio=self.net.oversubscription)
        if layout is None or layout.down == 0 or layout.up == 0:
            raise PlanError(
                f"{self.path}.oversubscription: {self.leaf_ports.logical} leaf ports of "
                f"{self.net.switch.part_number} cannot be split {self.net.oversubscription}"
            )
        return layout

    def leaves_for(self, endpoints: list[Endpoint], layout: PortLayout) -> list[_Leaf]:
        for ep in endpoints:
            if ep.speed_gbps != layout.down_speed:
                breakout = f" split {self.net.breakout}" if self.net.breakout else ""
                raise PlanError(
                    f"{ep.source}: {ep.port} runs at {ep.speed_gbps}G but the {self.net.key} leaves' "
                    f"ports ({self.net.switch.part_number}{breakout}) run at {layout.down_speed}G"
                )
        if not self.net.rail_optimized:
            ordered = sorted(endpoints, key=lambda e: (e.port_index, e.node_order))
            return [_Leaf(None, None, ordered[i : i + layout.down]) for i in range(0, len(ordered), layout.down)]
        unit = self.net.scalable_unit
        if unit > layout.down:
            raise PlanError(
                f"{self.path}.scalable_unit: {unit} servers per unit need {unit} down ports on every "
                f"leaf; a {self.net.switch.part_number} leaf has {layout.down} at "
                f"{self.net.oversubscription}"
            )
        by_slot: dict[tuple[int, int], list[Endpoint]] = {}
        for ep in endpoints:
            by_slot.setdefault((ep.node_order // unit, ep.rail), []).append(ep)
        units = ceil_div(self.node_count, unit)
        return [
            _Leaf(su, rail, sorted(by_slot.get((su, rail), []), key=lambda e: e.node_order))
            for su in range(units)
            for rail in range(self.rails)
        ]

    def endpoints_per_plane(self) -> int:
        """Node ports (or lanes) one plane's leaves take, counted from the spec alone."""
        return sum(g.count * rails_of(self.net, p) for _, g, _, p in self.attached) + len(self.managed)

    def leaf_count(self, layout: PortLayout) -> int | None:
        """Leaves per plane, from the counts alone; None when the spec is wrong in a way build() reports."""
        if not self.net.rail_optimized:
            return ceil_div(self.endpoints_per_plane(), layout.down)
        if self.net.scalable_unit > layout.down:
            return None
        return ceil_div(self.node_count, self.net.scalable_unit) * self.rails

    def preflight(self) -> None:
        """Refuse a network too large for its tiers before building anything (its leaf count is
        arithmetic). Managed switch ports are not known yet, so for an out-of-band network this is a
        lower bound and build() checks again."""
        layout = self.leaf_layout()
        count = self.leaf_count(layout)
        if count is not None:
            self.choose_tiers(count, layout)

    def capacity(self, leaf_layout: PortLayout) -> dict[int, tuple[int, str]]:
        """Largest size that fits in 2 and in 3 tiers: tiers -> (servers or node ports, wording)."""
        spine2 = self.spine_ports.logical
        spine3 = self.spine_ports.layout(has_upper=True, ratio=ONE_TO_ONE)
        spine3_down = spine3.down if spine3 else 0
        supers = self.super_ports.logical
        if self.net.rail_optimized:
            unit, sizes = self.net.scalable_unit, {}
            for tiers, units in ((2, spine2 // self.rails), (3, supers * (spine3_down // self.rails))):
                sizes[tiers] = (units * unit, f"{units * unit} servers ({units} scalable units of {unit})")
            return sizes
        counts = self._ports_per_node()
        sizes = {}
        for tiers, leaves in ((2, spine2), (3, supers * spine3_down)):
            ports = leaves * leaf_layout.down
            if len(counts) == 1 and not self.managed:
                per_node = next(iter(counts))
                sizes[tiers] = (
                    ports // per_node,
                    f"{ports // per_node} servers ({ports} node ports per plane)",
                )
            else:
                sizes[tiers] = (ports, f"{ports} node ports per plane")
        return sizes

    def _ports_per_node(self) -> set[int]:
        plane_split = self.net.planes if self.net.plane_of == PlaneOf.PORT and self.net.planes > 1 else 1
        return {p.count // plane_split for _, _, _, p in self.attached}

    def too_large(self, tiers: int, leaf_layout: PortLayout, reason: str) -> PlanError:
        sizes = self.capacity(leaf_layout)
        asked = f"{self.node_count} servers" + (
            f" and {len(self.managed)} switch management ports" if self.managed else ""
        )
        models = (
            f"{self.net.switch.part_number} leaves ({leaf_layout.down} down ports at "
            f"{self.net.oversubscription}), {self.net.spine_switch.part_number} spines"
        )
        if tiers == 2:
            hint = f"; 3 tiers would hold {sizes[3][1]}: set tiers: 3 or auto" if sizes[3][0] else ""
            return PlanError(
                f"{self.path}.tiers: {asked} do not fit in 2 tiers ({reason}). With {models}, "
                f"2 tiers hold at most {sizes[2][1]}{hint}."
            )
        return PlanError(
            f"{self.path}: {asked} do not fit in 3 tiers ({reason}). With {models} and "
            f"{self.net.super_spine_switch.part_number} super-spines, 3 tiers hold at most "
            f"{sizes[3][1]} (2 tiers: {sizes[2][1]})."
        )

    # -- building -----------------------------------------------------------------------------------

    def switch(
        self,
        tier: SwitchTier,
        plane: int | None,
        planes: tuple[int, ...],
        number: int,
        count: int,
        model: SwitchModel,
        **where: int | None,
    ) -> PlannedSwitch:
        width = max(2, len(str(count)))
        plane_part = f"-p{plane}" if self.net.planes_in_names else ""
        name = f"{self.net.prefix}{plane_part}-{TIER_NAME[tier]}-{number:0{width}d}"
        switch = PlannedSwitch(
            name=name,
            network=self.net.key,
            tier=tier,
            number=number,
            plane=plane,
            planes=planes,
            model=model.part_number,
            height_u=model.height_u,
            **where,
        )
        self.switches.append(switch)
        return switch

    def link(
        self,
        tier: LinkTier,
        planes: tuple[int, ...],
        a: PortRef,
        b: PortRef,
        speed: int,
        rail: int | None = None,
    ) -> None:
        self.links.append(Link(self.net.key, tier, planes, a, b, speed, rail, self.lane_planes))

    def build(self) -> NetworkTopology:
        net = self.net
        leaf_layout = self.leaf_layout()
        instances = self.instances()
        per_instance = [
            (plane, planes, self.leaves_for(self.endpoints(plane, planes), leaf_layout)) for plane, planes in instances
        ]
        leaves = per_instance[0][2]
        for leaf in leaves:
            leaf.uplinks = needed_uplinks(len(leaf.endpoints), leaf_layout, net.oversubscription)
            if leaf.uplinks > leaf_layout.up:
                raise PlanError(
                    f"{self.path}.oversubscription: a leaf with {len(leaf.endpoints)} down ports needs "
                    f"{leaf.uplinks} uplinks for {net.oversubscription}; "
                    f"{net.switch.part_number} has {leaf_layout.up}"
                )
        spine_down_speed = self.spine_ports.speed
        if leaf_layout.up_speed != spine_down_speed:
            raise PlanError(
                f"{self.path}.spine_switch: leaf uplinks run at {leaf_layout.up_speed}G but "
                f"{net.spine_switch.part_number} ports run at {spine_down_speed}G"
            )
        tiers, pods = self.choose_tiers(len(leaves), leaf_layout)
        spine_layout = self.spine_ports.layout(has_upper=tiers == 3, ratio=ONE_TO_ONE)
        spine_count = self.spine_count(leaves, pods, spine_layout.down, tiers, leaf_layout)
        for leaf in leaves:
            leaf.uplinks = round_up(leaf.uplinks, spine_count)  # reach every spine of the pod
        super_count = 0
        for plane, planes, plane_leaves in per_instance:
            for leaf, shape in zip(plane_leaves, leaves, strict=True):
                leaf.uplinks = shape.uplinks
            spines, spine_down = self.build_two_tiers(plane, planes, plane_leaves, pods, spine_count, leaf_layout)
            if tiers == 3:
                super_count = self.build_third_tier(plane, planes, spines, spine_down, spine_count, spine_layout)
        summary = NetworkPlan(
            key=net.key,
            planes=net.planes,
            tiers=tiers,
            pods=len(pods),
            leaves=len(leaves) * len(instances),
            spines=spine_count * len(pods) * len(instances),
            super_spines=super_count * len(instances),
            links=len(self.links),
            max_servers={t: size for t, (size, _) in self.capacity(leaf_layout).items()},
        )
        return NetworkTopology(self.switches, self.links, summary)

    def choose_tiers(self, leaf_count: int, leaf_layout: PortLayout) -> tuple[int, list[range]]:
        """Tiers and pods (ranges of leaf indexes). Raises with the largest size that fits when too large.
        Only counts are used, so the preflight can call it before any leaf exists."""
        spine_ports = self.spine_ports.logical
        if leaf_count <= spine_ports and self.net.tiers in (None, 2):
            return 2, [range(leaf_count)]
        if self.net.tiers == 2:
            raise self.too_large(2, leaf_layout, f"{leaf_count} leaves per plane, a spine has {spine_ports} ports")
        spine3 = self.spine_ports.layout(has_upper=True, ratio=ONE_TO_ONE)
        down3 = spine3.down if spine3 else 0
        if self.net.rail_optimized:
            units_per_pod = down3 // self.rails
            if units_per_pod == 0:
                raise self.too_large(3, leaf_layout, f"{self.rails} rails need {self.rails} down ports per spine")
            per_pod = units_per_pod * self.rails
        else:
            per_pod = down3
        if per_pod == 0:
            raise self.too_large(3, leaf_layout, f"a {self.net.spine_switch.part_number} spine has no ports to split")
        pod_count = ceil_div(leaf_count, per_pod)
        if pod_count > self.super_ports.logical:
            reason = f"{pod_count} pods, a super-spine has {self.super_ports.logical} ports"
            raise self.too_large(3, leaf_layout, reason)
        return 3, [range(i, min(i + per_pod, leaf_count)) for i in range(0, leaf_count, per_pod)]

    def spine_count(
        self, leaves: list[_Leaf], pods: list[range], spine_down: int, tiers: int, leaf_layout: PortLayout
    ) -> int:
        """Spines per pod: the smallest divisor of the largest uplink count that keeps spines within ports."""
        loads = [[leaves[i].uplinks for i in pod] for pod in pods]
        count = _group_size(max(leaf.uplinks for leaf in leaves), loads, spine_down)
        if count is None:
            raise self.too_large(tiers, leaf_layout, "the leaf uplinks do not spread over the spines")
        return count

    def build_two_tiers(
        self,
        plane: int | None,
        planes: tuple[int, ...],
        leaves: list[_Leaf],
        pods: list[range],
        spine_count: int,
        leaf_layout: PortLayout,
    ) -> tuple[list[list[PlannedSwitch]], dict[str, int]]:
        """Leaves with their node links, and the pods' spines with the leaf uplinks. Returns the spines
        per pod and how many down ports each spine uses."""
        net, rail_optimized = self.net, self.net.rail_optimized
        pod_of = {i: q for q, members in enumerate(pods) for i in members}
        for number, leaf in enumerate(leaves, start=1):
            pod = pod_of[number - 1]
            leaf.switch = self.switch(
                SwitchTier.LEAF,
                plane,
                planes,
                number,
                len(leaves),
                net.switch,
                su=leaf.su,
                rail=leaf.rail if rail_optimized else None,
                pod=pod,
            )
            for i, ep in enumerate(leaf.endpoints):
                self.link(
                    LinkTier.NODE_LEAF,
                    planes,
                    ep.port,
                    self.leaf_ports.main(leaf.switch.name, i),
                    ep.speed_gbps,
                    ep.rail,
                )
        total = spine_count * len(pods)
        spines_by_pod = [
            [
                self.switch(SwitchTier.SPINE, plane, planes, q * spine_count + j + 1, total, net.spine_switch, pod=q)
                for j in range(spine_count)
            ]
            for q in range(len(pods))
        ]
        used = {s.name: 0 for pod in spines_by_pod for s in pod}
        for q, members in enumerate(pods):
            spines = spines_by_pod[q]
            for i in members:
                leaf = leaves[i]
                for k in range(leaf.uplinks):  # a multiple of spine_count: each spine gets the same share
                    spine = spines[k % spine_count]
                    a = self.leaf_ports.up(leaf.switch.name, leaf_layout, k)
                    b = self.spine_ports.main(spine.name, used[spine.name])
                    used[spine.name] += 1
                    self.link(LinkTier.LEAF_SPINE, planes, a, b, leaf_layout.up_speed)
        return spines_by_pod, used

    def build_third_tier(
        self,
        plane: int | None,
        planes: tuple[int, ...],
        spines_by_pod: list[list[PlannedSwitch]],
        used: dict[str, int],
        spine_count: int,
        spine_layout: PortLayout,
    ) -> int:
        """Super-spine groups and the spine uplinks; returns the super-spine count of the plane."""
        uplinks = {s.name: needed_uplinks(used[s.name], spine_layout, ONE_TO_ONE) for pod in spines_by_pod for s in pod}
        short = next((name for name, n in uplinks.items() if n > spine_layout.up), None)
        if short:
            raise PlanError(
                f"{self.path}.spine_switch: {short} needs {uplinks[short]} uplinks to stay 1:1; "
                f"{self.net.spine_switch.part_number} has {spine_layout.up}"
            )
        if spine_layout.up_speed != self.super_ports.speed:
            raise PlanError(
                f"{self.path}.super_spine_switch: spine uplinks run at {spine_layout.up_speed}G but "
                f"{self.net.super_spine_switch.part_number} ports run at {self.super_ports.speed}G"
            )
        loads = [[uplinks[pod[j].name] for pod in spines_by_pod] for j in range(spine_count)]
        group = _group_size(max(uplinks.values()), loads, self.super_ports.logical)
        if group is None:
            raise PlanError(f"{self.path}: the spine uplinks do not spread over the super-spines")
        uplinks = {name: round_up(n, group) for name, n in uplinks.items()}  # reach the whole group
        total = spine_count * group
        supers = [
            [
                self.switch(
                    SwitchTier.SUPER_SPINE,
                    plane,
                    planes,
                    j * group + g + 1,
                    total,
                    self.net.super_spine_switch,
                    group=j,
                )
                for g in range(group)
            ]
            for j in range(spine_count)
        ]
        taken = {s.name: 0 for row in supers for s in row}
        for j in range(spine_count):
            for pod in spines_by_pod:
                spine = pod[j]
                for k in range(uplinks[spine.name]):  # a multiple of group: each super-spine the same share
                    top = supers[j][k % group]
                    a = self.spine_ports.up(spine.name, spine_layout, k)
                    b = self.super_ports.main(top.name, taken[top.name])
                    taken[top.name] += 1
                    self.link(LinkTier.SPINE_SUPER_SPINE, planes, a, b, spine_layout.up_speed)
        return total


def _group_size(largest: int, loads: list[list[int]], capacity: int) -> int | None:
    """Smallest divisor s of `largest` that keeps every upper switch within `capacity` ports when each
    lower switch of a group sends ceil(uplinks / s) links to each of the group's s upper switches."""
    if largest == 0:
        return None
    return next(
        (s for s in divisors(largest) if all(sum(ceil_div(n, s) for n in group) <= capacity for group in loads)),
        None,
    )


def preflight(spec: FabricSpec) -> None:
    """Refuse, from the counts alone, a network too large for its tiers, before anything is built."""
    for net in spec.networks:
        _NetworkBuilder(spec, net, (), ()).preflight()


def build_networks(spec: FabricSpec, servers: Sequence[PlannedServer]) -> list[NetworkTopology]:
    """Every network of the spec in NETWORK_ORDER; a network that attaches switch management ports
    (out-of-band) takes those of the networks built before it."""
    built: list[NetworkTopology] = []
    models = {}
    for net in spec.networks:
        assert net.key in NETWORK_ORDER
        managed = [(sw, models[sw.model]) for topology in built for sw in topology.switches]
        topology = _NetworkBuilder(spec, net, servers, managed).build()
        for model in (net.switch, net.spine_switch, net.super_spine_switch):
            models[model.part_number] = model
        built.append(topology)
    return built
