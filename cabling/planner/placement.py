"""Where things stand in the room, and how far apart they are.

Racks are named <row><position:02d> (A01) and stand `rack_pitch_m` apart along a row; rows stand
`row_pitch_m` apart in the order the spec lists them. Server groups fill the server racks in spec
order, each group starting on a fresh rack. Switches fill the network racks per network, first fit
from `network_first_u` up, keeping the plane siblings of a switch (leaf 3 of plane 0 and of plane 1)
together in one rack so a breakout cable's legs reach both.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from .model import PlanError, PlannedRack, PlannedServer, PlannedSwitch
from .spec import FabricSpec, Holds, RoomSpec

RACK_UNIT_M = 0.04445


def room_racks(room: RoomSpec) -> list[PlannedRack]:
    racks = [
        PlannedRack(row.rack_name(position), row.name, row.index, position, row.holds)
        for row in room.rows
        for position in range(row.first_position, row.first_position + row.racks)
    ]
    names = [r.name for r in racks]
    clash = next((n for i, n in enumerate(names) if names.index(n) != i), None)
    if clash:
        raise PlanError(f"room.rows: two racks would both be named {clash}; rename a row")
    return racks


def _allowed(room: RoomSpec, holds: Holds, name: str) -> set[str]:
    return {row.name for row in room.rows if row.holds == holds and (not row.only or name in row.only)}


def make_servers(spec: FabricSpec) -> list[PlannedServer]:
    """Every server of the spec, named and ordered (group by group), not yet placed."""
    return [
        PlannedServer(
            name=group.server_name(n),
            group=group.name,
            model=group.model,
            order=0,
            rack="",
            position_u=0,
            height_u=group.height_u,
        )
        for group in spec.servers
        for n in range(1, group.count + 1)
    ]


def place_servers(spec: FabricSpec, racks: Sequence[PlannedRack], servers: Sequence[PlannedServer]) -> None:
    """Fill the server racks group by group, `per_rack` servers each, from `first_u` every `u_step`."""
    taken: set[str] = set()
    by_group = {g.name: [] for g in spec.servers}
    for order, server in enumerate(servers):
        server.order = order
        by_group[server.group].append(server)
    for gi, group in enumerate(spec.servers):
        rows = _allowed(spec.room, Holds.SERVERS, group.name)
        free = [r for r in racks if r.row in rows and r.name not in taken]
        needed = -(-group.count // group.per_rack)
        if needed > len(free):
            raise PlanError(
                f"room.rows: servers[{gi}] ({group.name}) needs {needed} racks for {group.count} "
                f"servers at {group.per_rack} per rack, but only {len(free)} server racks are free "
                "for it"
            )
        for k, server in enumerate(by_group[group.name]):
            rack = free[k // group.per_rack]
            taken.add(rack.name)
            server.rack, server.position_u = rack.name, group.first_u + (k % group.per_rack) * group.u_step


def place_switches(spec: FabricSpec, racks: Sequence[PlannedRack], switches: Sequence[PlannedSwitch]) -> None:
    """Give every switch a rack and U. Siblings across planes are placed as one block."""
    room = spec.room
    next_u = {r.name: room.network_first_u for r in racks if r.holds == Holds.NETWORK}
    tier_order = {"leaf": 0, "spine": 1, "super_spine": 2}
    for network, members in groupby(switches, key=lambda s: s.network):
        rows = _allowed(room, Holds.NETWORK, network)
        candidates = [r.name for r in racks if r.row in rows]
        ordered = sorted(members, key=lambda s: (tier_order[s.tier], s.number, s.plane or 0))
        for _, block_iter in groupby(ordered, key=lambda s: (s.tier, s.number)):
            block = list(block_iter)
            height = sum(s.height_u for s in block)
            rack = next((name for name in candidates if next_u[name] + height - 1 <= room.network_top_u), None)
            if rack is None:
                raise PlanError(
                    f"room.rows: no network rack has {height}U free for {block[0].name} "
                    f"({network}); add network racks or rows"
                )
            for switch in block:
                switch.rack, switch.position_u = rack, next_u[rack]
                next_u[rack] += switch.height_u


def distance_m(room: RoomSpec, a: PlannedRack, a_top_u: int, b: PlannedRack, b_top_u: int) -> float:
    """Cable run between two devices, slack included. Inside a rack: the vertical gap. Between racks: up
    from each device to the overhead tray, then along and across rows (Manhattan)."""
    if a.name == b.name:
        return abs(a_top_u - b_top_u) * RACK_UNIT_M + room.slack_m
    rise_a = (room.rack_height_u - a_top_u) * RACK_UNIT_M + room.tray_rise_m
    rise_b = (room.rack_height_u - b_top_u) * RACK_UNIT_M + room.tray_rise_m
    along = abs(a.position - b.position) * room.rack_pitch_m
    across = abs(a.row_index - b.row_index) * room.row_pitch_m
    return rise_a + along + across + rise_b + room.slack_m
