"""The cluster spec: typed, immutable dataclasses and the loader that builds them from YAML or a dict.

Every error names the field path it is about (`networks.compute.scalable_unit: expected a positive
integer`), and the loader reports every field error it finds, not only the first. The format is
documented in docs/fabric-plan.md ("The cluster spec").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

NETWORK_ORDER = ("compute", "storage", "inband", "oob")
DEFAULT_PREFIX = {"compute": "comp", "storage": "stor", "inband": "inb", "oob": "oob"}
DEFAULT_LABEL_PREFIX = {"compute": "C", "storage": "S", "inband": "I", "oob": "O"}
HOSTNAME_PART = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")

# Limits. Planning is linear in links (about 0.15 ms and 2 kB each, checks included), so the caps bound
# the time and memory of the largest plan: 131,072 node links in three tiers make about 400,000 links,
# a minute and under 1 GB. They sit far above the reference fabrics (fabric 3: 1,024 servers, 16,384
# node links) and are checked on the spec, before anything is built; each error names its field.
MAX_SERVERS = 16_384  # servers in one spec, all groups together
MAX_NODE_LINKS = 131_072  # node ports or lanes on one network, all planes together
MAX_PORTS_PER_GROUP = 64  # ports[].count: NIC ports of one kind on a server
MAX_LANES = 8  # ports[].lanes and breakout lanes
MAX_RADIX = 1024  # switch_models.*.radix and uplink_ports.count
MAX_PORTS_PER_CAGE = 8
MAX_PLANES = 8
MAX_RACK_U = 100  # rack height, and every U or height inside a rack
MAX_RACKS_PER_ROW = 1000
MAX_RACK_POSITION = 9999
RACK_ROW = re.compile(r"^[A-Za-z0-9]{1,8}$")


class SpecError(ValueError):
    """A spec that cannot be planned. `errors` holds one message per problem, each naming its field."""

    def __init__(self, errors: Iterable[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


class CableType(StrEnum):
    PASSIVE_COPPER = "passive_copper"  # DAC: inside one rack, short
    ACTIVE_COPPER = "active_copper"  # ACC/AEC: a few metres, may leave the rack
    FIBER = "fiber"  # with a transceiver (optic) in the cage at each end
    TWISTED_PAIR = "twisted_pair"  # RJ45 management ports


class Connector(StrEnum):
    CAGE = "cage"  # OSFP/QSFP cage: takes a transceiver or a copper cable
    RJ45 = "rj45"


class Holds(StrEnum):
    SERVERS = "servers"
    NETWORK = "network"


class PlaneOf(StrEnum):
    LANE = "lane"  # lane k of every node port belongs to plane k
    PORT = "port"  # node port j belongs to plane j % planes


@dataclass(frozen=True, slots=True)
class Ratio:
    """Oversubscription as down:up bandwidth, e.g. 1:1 (non-blocking) or 3:1."""

    down: int
    up: int

    def __str__(self) -> str:
        return f"{self.down}:{self.up}"


@dataclass(frozen=True, slots=True)
class Breakout:
    """How one physical port splits into lanes that are ports of their own, e.g. 2x400G."""

    lanes: int
    speed_gbps: int

    def __str__(self) -> str:
        return f"{self.lanes}x{self.speed_gbps}G"


@dataclass(frozen=True, slots=True)
class UplinkPorts:
    """Dedicated uplink ports of a switch (a management switch's 4 x 100G beside its 48 x 1G)."""

    count: int
    speed_gbps: int
    optic: str | None


@dataclass(frozen=True, slots=True)
class SwitchModel:
    part_number: str
    radix: int  # physical data ports, numbered p1..p<radix>
    speed_gbps: int
    height_u: int
    breakouts: tuple[Breakout, ...]
    ports_per_cage: int  # 2 for twin-port cages: one transceiver serves two ports
    optic: str | None  # transceiver part for a cage when the cable is fibre
    connector: Connector
    uplink_ports: UplinkPorts | None
    mgmt_port: str
    port_prefix: str  # data ports are <prefix>1..<prefix><radix>: p1, swp1
    description: str

    def port_name(self, number: int) -> str:
        return f"{self.port_prefix}{number}"


@dataclass(frozen=True, slots=True)
class PortGroup:
    """`count` identical ports of a server, named <name>0..<name><count-1>; port j is rail j."""

    name: str
    count: int
    speed_gbps: int
    lanes: int
    network: str
    optic: str | None
    connector: Connector

    @property
    def lane_speed_gbps(self) -> int:
        return self.speed_gbps // self.lanes

    def port_name(self, index: int) -> str:
        return f"{self.name}{index}"


@dataclass(frozen=True, slots=True)
class ServerGroup:
    name: str
    count: int
    model: str  # hardware model part number
    height_u: int
    per_rack: int
    first_u: int
    u_step: int
    naming: str  # str.format pattern with {n} (1-based)
    ports: tuple[PortGroup, ...]

    def server_name(self, n: int) -> str:
        return self.naming.format(n=n)


@dataclass(frozen=True, slots=True)
class NetworkSpec:
    key: str  # compute | storage | inband | oob
    prefix: str  # switch names start with it: ib-leaf-01
    label_prefix: str  # cable labels start with it: C00001
    switch: SwitchModel  # leaves (and upper tiers unless overridden)
    spine_switch: SwitchModel
    super_spine_switch: SwitchModel
    breakout: Breakout | None  # applied to every switch port of the network
    tiers: int | None  # 2, 3, or None for "as few as hold the cluster"
    rail_optimized: bool
    scalable_unit: int | None  # servers per scalable unit (rail-optimized networks)
    oversubscription: Ratio
    planes: int
    plane_of: PlaneOf
    planes_share_switches: bool
    breakout_cables: bool
    attach_switch_management: bool

    @property
    def planes_in_names(self) -> bool:
        """Switch names carry the plane only when each plane has switches of its own."""
        return self.planes > 1 and not self.planes_share_switches


@dataclass(frozen=True, slots=True)
class RowSpec:
    name: str
    index: int  # order on the floor: rows are row_pitch_m apart
    racks: int
    holds: Holds
    only: tuple[str, ...]  # server groups or networks allowed in the row (empty: any)
    first_position: int

    def rack_name(self, position: int) -> str:
        return f"{self.name}{position:02d}"


@dataclass(frozen=True, slots=True)
class RoomSpec:
    rack_height_u: int
    rack_pitch_m: float
    row_pitch_m: float
    tray_rise_m: float
    slack_m: float
    network_first_u: int
    network_top_u: int
    rows: tuple[RowSpec, ...]


@dataclass(frozen=True, slots=True)
class MediaSpec:
    passive_copper_max_m: float
    active_copper_max_m: float
    stock_lengths_m: Mapping[CableType, tuple[float, ...]]


@dataclass(frozen=True, slots=True)
class FabricSpec:
    name: str
    servers: tuple[ServerGroup, ...]
    networks: tuple[NetworkSpec, ...]  # in NETWORK_ORDER, whatever the YAML order
    room: RoomSpec
    media: MediaSpec
    switch_models: Mapping[str, SwitchModel] = field(default_factory=dict)

    def network(self, key: str) -> NetworkSpec:
        return next(n for n in self.networks if n.key == key)


DEFAULT_STOCK_LENGTHS: dict[CableType, tuple[float, ...]] = {
    CableType.PASSIVE_COPPER: (0.5, 1.0, 1.5, 2.0, 2.5, 3.0),
    CableType.ACTIVE_COPPER: (2.5, 3.0, 4.0, 5.0, 7.0),
    CableType.FIBER: (3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 70.0, 100.0),
    CableType.TWISTED_PAIR: (1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0),
}

_MISSING = object()


class _Reader:
    """Reads typed fields out of nested dicts, remembering every error with its field path."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append(f"{path}: {message}")

    def mapping(self, value: Any, path: str) -> dict | None:
        if value is None:
            self.error(path, "required")
            return None
        if not isinstance(value, dict):
            self.error(path, "expected a mapping of fields")
            return None
        return value

    def known_fields(self, data: dict, allowed: Iterable[str], path: str) -> None:
        allowed = tuple(allowed)
        for key in data:
            if key not in allowed:
                self.error(f"{path}.{key}", f"unknown field (expected one of: {', '.join(allowed)})")

    def _get(self, data: dict, key: str, path: str, default: Any) -> tuple[bool, Any]:
        """(present, value): a missing optional field gives its default, a missing required one None."""
        if key in data and data[key] is not None:
            return True, data[key]
        if default is _MISSING:
            self.error(f"{path}.{key}", "required")
            return False, None
        return False, default

    def integer(
        self,
        data: dict,
        key: str,
        path: str,
        *,
        default: Any = _MISSING,
        minimum: int = 1,
        maximum: int | None = None,
    ) -> Any:
        present, value = self._get(data, key, path, default)
        if not present:
            return value
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            self.error(f"{path}.{key}", f"expected {kind}, got {value!r}")
            return None
        if maximum is not None and value > maximum:
            self.error(f"{path}.{key}", f"{value} is more than the planner takes (at most {maximum})")
            return None
        return value

    def number(self, data: dict, key: str, path: str, *, default: Any = _MISSING, minimum: float = 0.0) -> Any:
        present, value = self._get(data, key, path, default)
        if not present:
            return value
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < minimum:
            self.error(f"{path}.{key}", f"expected a number >= {minimum:g}, got {value!r}")
            return None
        return float(value)

    def text(
        self,
        data: dict,
        key: str,
        path: str,
        *,
        default: Any = _MISSING,
        pattern: re.Pattern | None = None,
        hint: str = "",
    ) -> Any:
        present, value = self._get(data, key, path, default)
        if not present:
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)  # part numbers such as 900 are fine as text
        if not isinstance(value, str) or not value.strip():
            self.error(f"{path}.{key}", f"expected non-empty text, got {value!r}")
            return None
        if pattern and not pattern.match(value):
            self.error(f"{path}.{key}", f"{value!r} is not allowed here{hint}")
            return None
        return value

    def boolean(self, data: dict, key: str, path: str, *, default: Any = _MISSING) -> Any:
        present, value = self._get(data, key, path, default)
        if not present:
            return value
        if not isinstance(value, bool):
            self.error(f"{path}.{key}", f"expected true or false, got {value!r}")
            return None
        return value

    def choice(self, data: dict, key: str, path: str, enum: type[StrEnum], *, default: Any = _MISSING) -> Any:
        present, value = self._get(data, key, path, default)
        if not present:
            return value
        try:
            return enum(value)
        except ValueError:
            allowed = ", ".join(member.value for member in enum)
            self.error(f"{path}.{key}", f"expected one of {allowed}, got {value!r}")
            return None

    def listing(self, data: dict, key: str, path: str, *, default: Any = _MISSING) -> Any:
        present, value = self._get(data, key, path, default)
        if not present:
            return value
        if not isinstance(value, list):
            self.error(f"{path}.{key}", "expected a list")
            return None
        return value

    def names(self, data: dict, key: str, path: str) -> tuple[str, ...]:
        values = self.listing(data, key, path, default=[])
        if values is None:
            return ()
        if not all(isinstance(v, str) for v in values):
            self.error(f"{path}.{key}", "expected a list of names")
            return ()
        return tuple(values)


# [0-9], not \d: \d takes any Unicode digit ("²"), which int() refuses. Bounded, so int() never meets a
# number too long to convert.
BREAKOUT = re.compile(r"^\s*([0-9]{1,3})\s*[xX]\s*([0-9]{1,7})\s*G\s*$")
RATIO = re.compile(r"^\s*([0-9]{1,6}(?:\.[0-9]{1,3})?)\s*:\s*([0-9]{1,6}(?:\.[0-9]{1,3})?)\s*$")
WHOLE_NUMBER = re.compile(r"^\s*[0-9]{1,6}\s*$")
BREAKOUT_HINT = f"expected a breakout such as 2x400G (at most {MAX_LANES} lanes)"


def parse_breakout(value: Any) -> Breakout | None:
    match = BREAKOUT.match(value) if isinstance(value, str) else None
    if not match or not 1 <= int(match[1]) <= MAX_LANES or int(match[2]) < 1:
        return None
    return Breakout(lanes=int(match[1]), speed_gbps=int(match[2]))


MAX_PLAIN_RATIO = 16  # YAML 1.1 reads an unquoted 1:1 as the base-60 number 61: refuse such numbers


def parse_ratio(value: Any) -> Ratio | None:
    """'3:1' -> Ratio(3, 1); 2 or '2' -> 2:1. Decimals such as '1.5:1' become whole numbers (3:2)."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PLAIN_RATIO:
        return Ratio(value, 1)
    if isinstance(value, str) and WHOLE_NUMBER.match(value) and int(value) >= 1:
        return Ratio(int(value), 1)
    match = RATIO.match(value) if isinstance(value, str) else None
    if not match:
        return None
    down, up = float(match[1]), float(match[2])
    if down <= 0 or up <= 0 or down < up:
        return None
    scale = 1
    while (down * scale) % 1 or (up * scale) % 1:
        scale *= 10
        if scale > 1000:
            return None
    down_i, up_i = int(down * scale), int(up * scale)
    common = math.gcd(down_i, up_i)
    return Ratio(down_i // common, up_i // common)


# --------------------------------------------------------------------------------------------------
# Sections


SWITCH_FIELDS = (
    "radix",
    "speed_gbps",
    "height_u",
    "breakouts",
    "ports_per_cage",
    "optic",
    "connector",
    "uplink_ports",
    "mgmt_port",
    "port_prefix",
    "description",
)


def _switch_model(r: _Reader, part: str, data: Any, path: str) -> SwitchModel | None:
    data = r.mapping(data, path)
    if data is None:
        return None
    r.known_fields(data, SWITCH_FIELDS, path)
    speed = r.integer(data, "speed_gbps", path)
    breakouts = []
    for i, raw in enumerate(r.listing(data, "breakouts", path, default=[]) or []):
        breakout = parse_breakout(raw)
        if breakout is None:
            r.error(f"{path}.breakouts[{i}]", f"{BREAKOUT_HINT}, got {raw!r}")
        elif speed and breakout.lanes * breakout.speed_gbps != speed:
            r.error(f"{path}.breakouts[{i}]", f"{breakout} does not add up to the port speed {speed}G")
        else:
            breakouts.append(breakout)
    uplinks = None
    if data.get("uplink_ports") is not None:
        up_path = f"{path}.uplink_ports"
        up = r.mapping(data["uplink_ports"], up_path)
        if up is not None:
            r.known_fields(up, ("count", "speed_gbps", "optic"), up_path)
            uplinks = UplinkPorts(
                count=r.integer(up, "count", up_path, maximum=MAX_RADIX),
                speed_gbps=r.integer(up, "speed_gbps", up_path),
                optic=r.text(up, "optic", up_path, default=None),
            )
    radix = r.integer(data, "radix", path, maximum=MAX_RADIX)
    per_cage = r.integer(data, "ports_per_cage", path, default=1, maximum=MAX_PORTS_PER_CAGE)
    if radix and per_cage and radix % per_cage:
        r.error(f"{path}.ports_per_cage", f"{radix} ports do not fill cages of {per_cage}")
    return SwitchModel(
        part_number=part,
        radix=radix,
        speed_gbps=speed,
        height_u=r.integer(data, "height_u", path, default=1, maximum=MAX_RACK_U),
        breakouts=tuple(breakouts),
        ports_per_cage=per_cage,
        optic=r.text(data, "optic", path, default=None),
        connector=r.choice(data, "connector", path, Connector, default=Connector.CAGE),
        uplink_ports=uplinks,
        mgmt_port=r.text(data, "mgmt_port", path, default="mgmt0"),
        port_prefix=r.text(data, "port_prefix", path, default="p", pattern=PORT_NAME, hint=" (lower-case letters)"),
        description=r.text(data, "description", path, default=""),
    )


PORT_FIELDS = ("name", "count", "speed_gbps", "lanes", "network", "optic", "connector")
PORT_NAME = re.compile(r"^[a-z][a-z-]*$")


def _port_group(r: _Reader, data: Any, path: str) -> PortGroup | None:
    data = r.mapping(data, path)
    if data is None:
        return None
    r.known_fields(data, PORT_FIELDS, path)
    speed = r.integer(data, "speed_gbps", path)
    lanes = r.integer(data, "lanes", path, default=1, maximum=MAX_LANES)
    if speed and lanes and speed % lanes:
        r.error(f"{path}.lanes", f"{speed}G does not split evenly into {lanes} lanes")
    network = r.text(data, "network", path)
    if network and network not in NETWORK_ORDER:
        r.error(f"{path}.network", f"expected one of {', '.join(NETWORK_ORDER)}, got {network!r}")
    return PortGroup(
        name=r.text(data, "name", path, pattern=PORT_NAME, hint=" (lower-case letters; ports are <name>0, <name>1...)"),
        count=r.integer(data, "count", path, default=1, maximum=MAX_PORTS_PER_GROUP),
        speed_gbps=speed,
        lanes=lanes,
        network=network,
        optic=r.text(data, "optic", path, default=None),
        connector=r.choice(data, "connector", path, Connector, default=Connector.CAGE),
    )


SERVER_FIELDS = ("name", "count", "model", "height_u", "per_rack", "first_u", "u_step", "naming", "ports")
GROUP_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


def _server_group(r: _Reader, data: Any, path: str) -> ServerGroup | None:
    data = r.mapping(data, path)
    if data is None:
        return None
    r.known_fields(data, SERVER_FIELDS, path)
    name = r.text(data, "name", path, pattern=GROUP_NAME, hint=" (lower-case letters, digits and dashes)")
    count = r.integer(data, "count", path, maximum=MAX_SERVERS)
    height = r.integer(data, "height_u", path, default=1, maximum=MAX_RACK_U)
    naming = r.text(data, "naming", path, default=None)
    if naming is None and name and count:
        naming = f"{name}-{{n:0{max(3, len(str(count)))}d}}"
    elif naming is not None:
        try:
            sample = naming.format(n=1)
        except (KeyError, IndexError, ValueError):
            sample = None
        if sample is None or "{n" not in naming or not HOSTNAME_PART.match(sample):
            r.error(
                f"{path}.naming",
                f"expected a pattern with {{n}} giving names such as gpu-{{n:03d}}, got {naming!r}",
            )
    ports = []
    for i, raw in enumerate(r.listing(data, "ports", path) or []):
        group = _port_group(r, raw, f"{path}.ports[{i}]")
        if group is not None:
            ports.append(group)
    seen = set()
    for i, group in enumerate(ports):
        if group.name in seen:
            r.error(f"{path}.ports[{i}].name", f"{group.name!r} is used twice")
        seen.add(group.name)
    return ServerGroup(
        name=name,
        count=count,
        model=r.text(data, "model", path),
        height_u=height,
        per_rack=r.integer(data, "per_rack", path, maximum=MAX_RACK_U),
        first_u=r.integer(data, "first_u", path, default=1, maximum=MAX_RACK_U),
        u_step=r.integer(data, "u_step", path, default=height, maximum=MAX_RACK_U),
        naming=naming,
        ports=tuple(ports),
    )


NETWORK_FIELDS = (
    "prefix",
    "label_prefix",
    "switch",
    "spine_switch",
    "super_spine_switch",
    "breakout",
    "tiers",
    "rail_optimized",
    "scalable_unit",
    "oversubscription",
    "planes",
    "plane_of",
    "planes_share_switches",
    "breakout_cables",
    "attach_switch_management",
)
LABEL_PREFIX = re.compile(r"^[A-Z][A-Z0-9]{0,3}$")


def _model_ref(
    r: _Reader, data: dict, key: str, path: str, models: Mapping[str, SwitchModel], default: Any = _MISSING
) -> Any:
    part = r.text(data, key, path, default=default)
    if part is None or part is default:
        return part
    if part not in models:
        known = ", ".join(models) or "none defined"
        r.error(f"{path}.{key}", f"unknown switch model {part!r} (switch_models has: {known})")
        return None
    return models[part]


def _network(r: _Reader, key: str, data: Any, models: Mapping[str, SwitchModel]) -> NetworkSpec | None:
    path = f"networks.{key}"
    data = r.mapping(data, path)
    if data is None:
        return None
    r.known_fields(data, NETWORK_FIELDS, path)
    switch = _model_ref(r, data, "switch", path, models)
    spine = _model_ref(r, data, "spine_switch", path, models, default=None) or switch
    super_spine = _model_ref(r, data, "super_spine_switch", path, models, default=None) or spine
    breakout = None
    if data.get("breakout") is not None:
        breakout = parse_breakout(data["breakout"])
        if breakout is None:
            r.error(f"{path}.breakout", f"{BREAKOUT_HINT}, got {data['breakout']!r}")
        else:
            checked = set()
            for tier_key, model in (
                ("switch", switch),
                ("spine_switch", spine),
                ("super_spine_switch", super_spine),
            ):
                if model and model.part_number not in checked and breakout not in model.breakouts:
                    checked.add(model.part_number)
                    allowed = ", ".join(str(b) for b in model.breakouts) or "none"
                    r.error(
                        f"{path}.breakout",
                        f"{breakout} is not a breakout of {model.part_number} ({tier_key}; allowed: {allowed})",
                    )
    tiers_raw = data.get("tiers", "auto")
    tiers = None
    if tiers_raw not in ("auto", 2, 3):
        r.error(f"{path}.tiers", f"expected 2, 3 or auto, got {tiers_raw!r}")
    elif tiers_raw != "auto":
        tiers = tiers_raw
    ratio = parse_ratio(data.get("oversubscription", "1:1"))
    if ratio is None:
        r.error(
            f"{path}.oversubscription",
            f'expected down:up in quotes such as "1:1" or "3:1", got {data.get("oversubscription")!r}'
            " (unquoted, YAML reads 1:1 as the number 61)",
        )
    rail = r.boolean(data, "rail_optimized", path, default=False)
    unit = r.integer(data, "scalable_unit", path, default=None, maximum=MAX_SERVERS)
    if rail and unit is None and data.get("scalable_unit") is None:  # absent, or written as null
        r.error(f"{path}.scalable_unit", "required when rail_optimized is true (servers per scalable unit)")
    planes = r.integer(data, "planes", path, default=1, maximum=MAX_PLANES)
    share = r.boolean(data, "planes_share_switches", path, default=False)
    plane_of = r.choice(data, "plane_of", path, PlaneOf, default=PlaneOf.LANE)
    if share and plane_of == PlaneOf.PORT:
        r.error(
            f"{path}.planes_share_switches",
            "planes can share a switch port only when they are lanes of one port (plane_of: lane)",
        )
    return NetworkSpec(
        key=key,
        prefix=r.text(
            data,
            "prefix",
            path,
            default=DEFAULT_PREFIX[key],
            pattern=HOSTNAME_PART,
            hint=" (lower-case letters, digits and dashes)",
        ),
        label_prefix=r.text(
            data,
            "label_prefix",
            path,
            default=DEFAULT_LABEL_PREFIX[key],
            pattern=LABEL_PREFIX,
            hint=" (1 to 4 capitals or digits, starting with a capital)",
        ),
        switch=switch,
        spine_switch=spine,
        super_spine_switch=super_spine,
        breakout=breakout,
        tiers=tiers,
        rail_optimized=rail,
        scalable_unit=unit,
        oversubscription=ratio,
        planes=planes,
        plane_of=plane_of,
        planes_share_switches=share,
        breakout_cables=r.boolean(data, "breakout_cables", path, default=False),
        attach_switch_management=r.boolean(data, "attach_switch_management", path, default=False),
    )


ROOM_FIELDS = (
    "rack_height_u",
    "rack_pitch_m",
    "row_pitch_m",
    "tray_rise_m",
    "slack_m",
    "network_first_u",
    "network_top_u",
    "rows",
)
ROW_FIELDS = ("name", "racks", "holds", "only", "first_position")


def _room(r: _Reader, data: Any) -> RoomSpec | None:
    path = "room"
    data = r.mapping(data, path)
    if data is None:
        return None
    r.known_fields(data, ROOM_FIELDS, path)
    height = r.integer(data, "rack_height_u", path, default=48, maximum=MAX_RACK_U)
    rows = []
    for i, raw in enumerate(r.listing(data, "rows", path) or []):
        row_path = f"{path}.rows[{i}]"
        row = r.mapping(raw, row_path)
        if row is None:
            continue
        r.known_fields(row, ROW_FIELDS, row_path)
        rows.append(
            RowSpec(
                name=r.text(row, "name", row_path, pattern=RACK_ROW, hint=" (letters and digits, up to 8)"),
                index=i,
                racks=r.integer(row, "racks", row_path, maximum=MAX_RACKS_PER_ROW),
                holds=r.choice(row, "holds", row_path, Holds),
                only=r.names(row, "only", row_path),
                first_position=r.integer(row, "first_position", row_path, default=1, maximum=MAX_RACK_POSITION),
            )
        )
    names = [row.name for row in rows]
    for i, name in enumerate(names):
        if name and names.index(name) != i:
            r.error(f"{path}.rows[{i}].name", f"row {name!r} is listed twice")
    first_u = r.integer(data, "network_first_u", path, default=1, maximum=MAX_RACK_U)
    top_u = r.integer(data, "network_top_u", path, default=height, maximum=MAX_RACK_U)
    if height and top_u and top_u > height:
        r.error(f"{path}.network_top_u", f"{top_u} is above the top of a {height}U rack")
    return RoomSpec(
        rack_height_u=height,
        rack_pitch_m=r.number(data, "rack_pitch_m", path, default=0.6),
        row_pitch_m=r.number(data, "row_pitch_m", path, default=2.4),
        tray_rise_m=r.number(data, "tray_rise_m", path, default=0.3),
        slack_m=r.number(data, "slack_m", path, default=1.0),
        network_first_u=first_u,
        network_top_u=top_u,
        rows=tuple(rows),
    )


def _media(r: _Reader, data: Any) -> MediaSpec | None:
    path = "cabling"
    data = r.mapping({} if data is None else data, path)
    if data is None:
        return None
    r.known_fields(data, ("passive_copper_max_m", "active_copper_max_m", "stock_lengths_m"), path)
    stock = dict(DEFAULT_STOCK_LENGTHS)
    raw_stock = data.get("stock_lengths_m") or {}
    if not isinstance(raw_stock, dict):
        r.error(f"{path}.stock_lengths_m", "expected a mapping of cable type to lengths")
        raw_stock = {}
    for key, lengths in raw_stock.items():
        item_path = f"{path}.stock_lengths_m.{key}"
        try:
            cable_type = CableType(key)
        except ValueError:
            r.error(item_path, f"unknown cable type (expected one of {', '.join(t.value for t in CableType)})")
            continue
        if (
            not isinstance(lengths, list)
            or not lengths
            or not all(isinstance(x, int | float) and not isinstance(x, bool) and x > 0 for x in lengths)
        ):
            r.error(item_path, "expected a non-empty list of lengths in metres")
            continue
        stock[cable_type] = tuple(sorted(float(x) for x in lengths))
    return MediaSpec(
        passive_copper_max_m=r.number(data, "passive_copper_max_m", path, default=2.0),
        active_copper_max_m=r.number(data, "active_copper_max_m", path, default=5.0),
        stock_lengths_m=stock,
    )


TOP_FIELDS = ("name", "switch_models", "servers", "networks", "room", "cabling")


def _each(r: _Reader, values: Any, path: str, build: Callable[[Any, str], Any]) -> list:
    if not isinstance(values, list) or not values:
        r.error(path, "expected a non-empty list")
        return []
    return [item for i, raw in enumerate(values) if (item := build(raw, f"{path}[{i}]")) is not None]


def parse_spec(data: Any) -> FabricSpec:
    """Build a FabricSpec from plain data (a parsed YAML document). Raises SpecError naming fields."""
    r = _Reader()
    data = r.mapping(data, "spec")
    if data is None:
        raise SpecError(r.errors)
    r.known_fields(data, TOP_FIELDS, "spec")
    models: dict[str, SwitchModel] = {}
    raw_models = data.get("switch_models")
    if not isinstance(raw_models, dict) or not raw_models:
        r.error("switch_models", "expected a mapping of part number to switch model")
    else:
        for part, raw in raw_models.items():
            model = _switch_model(r, str(part), raw, f"switch_models.{part}")
            if model is not None:
                models[str(part)] = model
    servers = _each(r, data.get("servers"), "servers", lambda raw, path: _server_group(r, raw, path))
    networks_raw = data.get("networks")
    networks = []
    if not isinstance(networks_raw, dict) or not networks_raw:
        r.error("networks", f"expected a mapping with some of: {', '.join(NETWORK_ORDER)}")
    else:
        for key in networks_raw:
            if key not in NETWORK_ORDER:
                r.error(f"networks.{key}", f"unknown network (expected one of: {', '.join(NETWORK_ORDER)})")
        networks = [
            n
            for key in NETWORK_ORDER
            if key in networks_raw
            if (n := _network(r, key, networks_raw[key], models)) is not None
        ]
    room = _room(r, data.get("room"))
    media = _media(r, data.get("cabling"))
    if r.errors:
        raise SpecError(r.errors)
    spec = FabricSpec(
        name=str(data.get("name") or "fabric"),
        servers=tuple(servers),
        networks=tuple(networks),
        room=room,
        media=media,
        switch_models=models,
    )
    _cross_checks(r, spec)
    if r.errors:
        raise SpecError(r.errors)
    return spec


def _cross_checks(r: _Reader, spec: FabricSpec) -> None:
    """Rules that join several sections; they run only once every field reads cleanly."""
    _check_servers(r, spec)
    for net in spec.networks:
        _check_network(r, spec, net)
    _check_rows(r, spec)
    _check_prefixes(r, spec)


def _check_prefixes(r: _Reader, spec: FabricSpec) -> None:
    """Switch names and cable labels of different networks must never collide."""
    for field_name in ("prefix", "label_prefix"):
        seen: dict[str, str] = {}
        for net in spec.networks:
            value = getattr(net, field_name)
            if value in seen:
                r.error(f"networks.{net.key}.{field_name}", f"{value!r} is already used by {seen[value]}")
            seen.setdefault(value, net.key)


def _check_servers(r: _Reader, spec: FabricSpec) -> None:
    defined = {n.key for n in spec.networks}
    names = [g.name for g in spec.servers]
    total = sum(g.count for g in spec.servers)
    if total > MAX_SERVERS:
        counts = " + ".join(str(g.count) for g in spec.servers)
        r.error("servers", f"{counts} = {total} servers in all, more than the planner takes (at most {MAX_SERVERS})")
    for gi, group in enumerate(spec.servers):
        path = f"servers[{gi}]"
        if names.index(group.name) != gi:
            r.error(f"{path}.name", f"server group {group.name!r} is listed twice")
        top = group.first_u + (group.per_rack - 1) * group.u_step + group.height_u - 1
        if top > spec.room.rack_height_u:
            r.error(
                f"{path}.per_rack",
                f"{group.per_rack} servers of {group.height_u}U from U{group.first_u} "
                f"every {group.u_step}U reach U{top}, above a {spec.room.rack_height_u}U rack",
            )
        if group.u_step < group.height_u:
            r.error(f"{path}.u_step", f"{group.u_step}U is less than the server height {group.height_u}U")
        seen_networks: set[str] = set()
        for pi, port in enumerate(group.ports):
            if port.network not in defined:
                r.error(f"{path}.ports[{pi}].network", f"network {port.network!r} is not defined under networks")
            elif port.network in seen_networks:
                r.error(
                    f"{path}.ports[{pi}].network",
                    f"{group.name} already has a port group on {port.network}; use one group with a larger count",
                )
            seen_networks.add(port.network)


def node_links(net: NetworkSpec, group: ServerGroup, port: PortGroup) -> int:
    """Links a server group's port group makes on its network, all planes together: one per port, or
    one per lane when the lanes go to separate planes' switches."""
    per_lane = net.planes > 1 and net.plane_of == PlaneOf.LANE and not net.planes_share_switches
    return group.count * port.count * (net.planes if per_lane else 1)


def _check_network(r: _Reader, spec: FabricSpec, net: NetworkSpec) -> None:
    path = f"networks.{net.key}"
    attached = [(g, p) for g in spec.servers for p in g.ports if p.network == net.key]
    links = sum(node_links(net, g, p) for g, p in attached)
    if links > MAX_NODE_LINKS:
        r.error(
            path,
            f"{links} node links (servers x ports x planes), more than the planner takes (at most {MAX_NODE_LINKS})",
        )
    if not attached and not net.attach_switch_management:
        r.error(path, "no server port group is attached to this network")
    if net.attach_switch_management and net.rail_optimized:
        r.error(
            f"{path}.attach_switch_management",
            "switch management ports have no rails: not on a rail-optimized network",
        )
    for gi, group in enumerate(spec.servers):
        for pi, port in enumerate(group.ports):
            if port.network != net.key or net.planes == 1:
                continue
            port_path = f"servers[{gi}].ports[{pi}]"
            if net.plane_of == PlaneOf.LANE and port.lanes != net.planes:
                r.error(
                    f"{port_path}.lanes",
                    f"{net.key} has {net.planes} planes, one per lane, "
                    f"so its ports need {net.planes} lanes (has {port.lanes})",
                )
            if net.plane_of == PlaneOf.PORT and port.count % net.planes:
                r.error(f"{port_path}.count", f"{port.count} ports do not spread evenly over {net.planes} planes")
    if net.rail_optimized:
        rails = {rails_of(net, p) for _, p in attached}
        if len(rails) > 1:
            r.error(
                f"{path}.rail_optimized",
                f"every server group on a rail-optimized network needs the same number of rails (has {sorted(rails)})",
            )
    if net.switch.connector == Connector.RJ45 and net.breakout:
        r.error(f"{path}.breakout", "RJ45 ports do not break out")


def _check_rows(r: _Reader, spec: FabricSpec) -> None:
    holds = {row.holds for row in spec.room.rows}
    if Holds.SERVERS not in holds:
        r.error("room.rows", "no row holds servers")
    if Holds.NETWORK not in holds:
        r.error("room.rows", "no row holds network racks")
    groups = {g.name for g in spec.servers}
    networks = {n.key for n in spec.networks}
    for i, row in enumerate(spec.room.rows):
        allowed, what = (groups, "server group") if row.holds == Holds.SERVERS else (networks, "network")
        for name in row.only:
            if name not in allowed:
                r.error(f"room.rows[{i}].only", f"{name!r} is not a {what} of this spec")


def rails_of(net: NetworkSpec, port: PortGroup) -> int:
    """How many rails a server's port group gives this network (ports, or ports per plane)."""
    if net.planes > 1 and net.plane_of == PlaneOf.PORT:
        return port.count // net.planes
    return port.count


def load_spec(path: str | Path) -> FabricSpec:
    """Read a YAML spec file. Raises SpecError (with the file name) for unreadable or invalid YAML."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError([f"{path}: cannot read the spec ({exc.strerror})"]) from exc
    return load_spec_text(text, source=str(path))


def load_spec_text(text: str, *, source: str = "spec") -> FabricSpec:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise SpecError([f"{source}{where}: not valid YAML ({getattr(exc, 'problem', exc)})"]) from exc
    return parse_spec(data)
