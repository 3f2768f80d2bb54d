"""From links to physical cables: which links share a cable, its type, its stock length, its optics.

- One cable per link, except for breakout cables (`breakout_cables: true`): the lanes of one node port
  that go to different leaves (one per plane) share one cable, A end on the whole node port, one B end
  per lane on the leaves.
- Type by run length: RJ45 ends take twisted pair; otherwise passive copper when both ends sit in one
  rack and the run is at most `passive_copper_max_m`, active copper up to `active_copper_max_m`, fibre
  beyond. Copper plugs straight into a cage, so it needs every end to fill its cage alone: a lane of a
  split port, or one port of a twin-port cage, takes fibre and a transceiver.
- Length: the shortest stock length of the chosen type that covers the run (slack included).
- Optics: a fibre end needs the transceiver of its cage (the port group's or the switch model's
  `optic`). A transceiver serves its whole cage, so ends sharing a cage share it: it is counted once,
  on the end with the lowest port in the cage (`optic_count` 1, the others 0).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .model import (
    LINK_TIER_ORDER,
    Cable,
    CableEnd,
    Link,
    LinkTier,
    PlanError,
    PlannedRack,
    PlannedServer,
    PlannedSwitch,
    PortRef,
    capped,
)
from .placement import distance_m
from .spec import CableType, Connector, FabricSpec, MediaSpec, NetworkSpec


@dataclass(frozen=True, slots=True)
class PortInfo:
    connector: Connector
    optic: str | None
    optic_field: str  # the spec field that names the transceiver, for error messages
    whole_cage: bool  # the end fills its cage alone, so a copper cable may plug in


class Devices:
    """Where each device stands and what its ports are, for the cable builder and the checks."""

    def __init__(
        self,
        spec: FabricSpec,
        racks: Sequence[PlannedRack],
        servers: Sequence[PlannedServer],
        switches: Sequence[PlannedSwitch],
    ):
        self.racks = {r.name: r for r in racks}
        self.where = {s.name: (s.rack, s.top_u) for s in servers}
        self.where.update({s.name: (s.rack, s.top_u) for s in switches})
        self.order = {s.name: i for i, s in enumerate(servers)}
        self.order.update({s.name: len(servers) + i for i, s in enumerate(switches)})
        groups = {g.name: (gi, g) for gi, g in enumerate(spec.servers)}
        self.server_ports = {s.name: groups[s.group] for s in servers}
        self.switch_models = {s.name: spec.switch_models[s.model] for s in switches}
        self._cache: dict[tuple[bool, str, str, bool], PortInfo] = {}

    def info(self, ref: PortRef) -> PortInfo:
        # Every switch of a model (every server of a group) has the same ports: cache per model/group.
        model = self.switch_models.get(ref.device)
        owner = model.part_number if model else self.server_ports[ref.device][1].name
        key = (model is None, owner, ref.port, ref.lane is None)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._info(ref)
        return found

    def _info(self, ref: PortRef) -> PortInfo:
        model = self.switch_models.get(ref.device)
        if model is None:
            gi, group = self.server_ports[ref.device]
            pi, ports = next((pi, p) for pi, p in enumerate(group.ports) if ref.port.rstrip("0123456789") == p.name)
            return PortInfo(ports.connector, ports.optic, f"servers[{gi}].ports[{pi}].optic", ref.lane is None)
        path = f"switch_models.{model.part_number}"
        if ref.port == model.mgmt_port:
            return PortInfo(Connector.RJ45, None, f"{path}.mgmt_port", True)
        number = int(ref.port[len(model.port_prefix) :])
        if number > model.radix:
            optic = model.uplink_ports.optic or model.optic
            return PortInfo(Connector.CAGE, optic, f"{path}.uplink_ports.optic", True)
        whole = ref.lane is None and model.ports_per_cage == 1
        return PortInfo(model.connector, model.optic, f"{path}.optic", whole)


def choose_medium(
    media: MediaSpec, distance: float, *, same_rack: bool, copper_ok: bool, rj45: bool
) -> tuple[CableType, float] | None:
    """(type, stock length) for a run, or None when no stock length is long enough."""
    options: list[tuple[CableType, float]] = []
    if rj45:
        options.append((CableType.TWISTED_PAIR, float("inf")))
    else:
        if copper_ok and same_rack:
            options.append((CableType.PASSIVE_COPPER, media.passive_copper_max_m))
        if copper_ok:
            options.append((CableType.ACTIVE_COPPER, media.active_copper_max_m))
        options.append((CableType.FIBER, float("inf")))
    for cable_type, longest in options:
        if distance > longest:
            continue
        fitting = [length for length in media.stock_lengths_m[cable_type] if distance <= length <= longest]
        if fitting:
            return cable_type, fitting[0]
    return None


def _groups(net: NetworkSpec, links: Iterable[tuple[int, Link]]) -> list[tuple[PortRef, list[tuple[int, Link]]]]:
    """Links that share a cable, each with the A end of that cable."""
    groups: list[tuple[PortRef, list[tuple[int, Link]]]] = []
    split: dict[tuple[str, str], list[tuple[int, Link]]] = {}
    for index, link in links:
        if net.breakout_cables and link.tier == LinkTier.NODE_LEAF and link.a.lane is not None:
            split.setdefault((link.a.device, link.a.port), []).append((index, link))
        else:
            groups.append((link.a, [(index, link)]))
    for (device, port), members in split.items():
        whole = PortRef(device, port, None, members[0][1].a.cage)
        groups.append((whole if len(members) > 1 else members[0][1].a, members))
    return groups


def _where(a_ref: PortRef, members: list[tuple[int, Link]]) -> str:
    return f"{a_ref} to {', '.join(str(link.b) for _, link in members)}"


class _CableBuilder:
    def __init__(self, spec: FabricSpec, devices: Devices):
        self.spec, self.devices = spec, devices
        self.missing_optics: dict[str, int] = defaultdict(int)
        self.errors: list[str] = []

    def end(self, side: str, position: int, ref: PortRef, planes: tuple[int, ...]) -> CableEnd:
        rack, top = self.devices.where[ref.device]
        return CableEnd(side, position, ref, rack, top, planes)

    def cable(self, net: NetworkSpec, a_ref: PortRef, members: list[tuple[int, Link]]) -> Cable | None:
        planes = tuple(sorted({p for _, link in members for p in link.planes}))
        ends = (
            self.end("A", 0, a_ref, planes),
            *(self.end("B", k, link.b, link.planes) for k, (_, link) in enumerate(members)),
        )
        racks = self.devices.racks
        a = ends[0]
        distance = max(
            distance_m(self.spec.room, racks[a.rack], a.position_u, racks[b.rack], b.position_u) for b in ends[1:]
        )
        infos = [self.devices.info(e.port) for e in ends]
        rj45 = [i.connector == Connector.RJ45 for i in infos]
        if any(rj45) and not all(rj45):
            self.errors.append(f"networks.{net.key}: {_where(a_ref, members)} joins an RJ45 port to a cage")
            return None
        medium = choose_medium(
            self.spec.media,
            distance,
            same_rack=all(e.rack == a.rack for e in ends),
            copper_ok=all(i.whole_cage for i in infos),
            rj45=all(rj45),
        )
        if medium is None:
            self.errors.append(
                f"cabling.stock_lengths_m: no stock cable reaches {distance:.1f} m for {_where(a_ref, members)}"
            )
            return None
        cable_type, length = medium
        if cable_type == CableType.FIBER:
            for end, info in zip(ends, infos, strict=True):
                if info.optic is None:
                    self.missing_optics[info.optic_field] += 1
                end.optic_part = info.optic
        return Cable(
            network=net.key,
            tier=members[0][1].tier,
            planes=planes,
            cable_type=cable_type,
            length_m=length,
            distance_m=round(distance, 3),
            speed_gbps=sum(link.speed_gbps for _, link in members),
            ends=ends,
            links=tuple(i for i, _ in members),
        )


def build_cables(spec: FabricSpec, links: Sequence[Link], devices: Devices) -> list[Cable]:
    """Every cable of every network, in label order: network, tier, A device, A port."""
    builder = _CableBuilder(spec, devices)
    cables: list[Cable] = []
    by_network: dict[str, list[tuple[int, Link]]] = defaultdict(list)
    for index, link in enumerate(links):
        by_network[link.network].append((index, link))
    for net in spec.networks:
        built = [
            c
            for a_ref, members in _groups(net, by_network[net.key])
            if (c := builder.cable(net, a_ref, members)) is not None
        ]
        built.sort(key=lambda c: (LINK_TIER_ORDER[c.tier], devices.order[c.a_end.device], c.a_end.port.sort_key))
        cables.extend(built)
    errors = capped(builder.errors) + [
        f"{field}: required: {n} fibre cable ends need this transceiver part"
        for field, n in sorted(builder.missing_optics.items())
    ]
    if errors:
        raise PlanError(errors)
    count_optics(cables)
    return cables


def count_optics(cables: Iterable[Cable]) -> None:
    """Mark, per cage, the one end that accounts for its transceiver (the lowest port in the cage)."""
    by_cage: dict[tuple[str, str], list[CableEnd]] = defaultdict(list)
    for cable in cables:
        for end in cable.ends:
            end.optic_count = 0
            if end.optic_part:
                by_cage[(end.device, end.port.cage)].append(end)
    for ends in by_cage.values():
        min(ends, key=lambda e: e.port.sort_key).optic_count = 1
