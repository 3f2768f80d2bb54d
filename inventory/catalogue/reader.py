"""Reading one device-type YAML file (NetBox community library format, plus our `bringup:` keys) into a
HardwareModelData, or into issues that name the file, the line and the field. No database.

What a NetBox device type gives us, and how:

- manufacturer, model, part_number (the catalogue's key; a file without one falls back to its slug, with
  a warning), u_height (whole units, 0 to 60), is_full_depth;
- interfaces: each one port template. Its `type` gives the port's kind and speed (INTERFACE_TYPES); a
  type not in that table is an error, never a guess. `mgmt_only: true` makes it a BMC / management port
  on the out-of-band network. Virtual interfaces (lag, bridge, virtual) are not ports and are skipped;
- power-ports: the sum of their `maximum_draw` is the model's nameplate maximum (conservative for the
  rack's headroom rule); a PDU hands power on, so a PDU's own maximum is 0 unless `bringup.max_power_w`
  says otherwise;
- the rest (airflow, weight, console ports, outlets, module bays, images, comments) is accepted and not
  stored; module bays (NetBox's way to hold NICs) are reported as a warning.

Our keys, which NetBox's own schema does not have:

    bringup:                      # top level
      kind: ib_switch             # HardwareKind; else the importer's choice (default_kind), else an error
      max_power_w: 6000           # overrides the power-port sum
      os_port_format: "swp{n}"    # how the switch's OS names port n (HardwareModel.os_port_format)
      nics: [{slot: nic0, model: ConnectX-8 SuperNIC, part_number: 900-9X81Q-00CN-ST0}]
    interfaces:
      - name: ib0
        type: infiniband-xdr
        bringup: {nic: nic0, network: compute, breakout: 4x200G, planes_per_lane: true}

Hostile files are refused in bounded time and memory: at most MAX_FILE_BYTES, UTF-8, no aliases (so no
"billion laughs"), at most MAX_NODES nodes nested at most MAX_DEPTH deep, at most MAX_INTERFACES
interfaces, numbers within their field's bounds, names without formula or control characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from ..choices import HardwareKind, Network, PortKind

MiB = 1024 * 1024
MAX_FILE_BYTES = 1 * MiB  # the largest community file (a 1,024-port chassis) is about 100 KB
MAX_INTERFACES = 1_024
MAX_NODES = 50_000  # YAML nodes of one file: 1,024 interfaces with our keys are about 20,000
MAX_DEPTH = 12  # a device type nests 4 deep (interfaces[i].bringup.breakout)
MAX_ERRORS = 50  # per file; the last one says how many more there were
MAX_HEIGHT_U = 60  # the tallest rack (Rack.height_u)
MAX_DRAW_W = 200_000  # one power port
MAX_POWER_W = 1_000_000  # one device, all ports together
MAX_LANES = 8
NAME_MAX = 30  # PortTemplate.name; a lane adds "/k" (Port.name holds 40)
TEXT_MAX = 100

# Port names as switches, NICs and NetBox name them: eth0, ib3, p144, swp1s0, Ethernet1/1, 1/1/1, mgmt0.
PORT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./:-]*$")
SLUG = re.compile(r"^[-a-z0-9_]+$")
BREAKOUT = re.compile(r"^([0-9])x([0-9]{1,4})G$")
OS_PORT_FORMAT = re.compile(r"^[A-Za-z0-9_./:{}()*+ -]*$")
FORMULA_LEADS = ("=", "+", "-", "@")  # as core.spreadsheets: a cell starting so is a formula to Excel
CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# NetBox interface type -> (our port kind, speed in Gb/s). InfiniBand speeds are of a 4x port.
ETHERNET, INFINIBAND = PortKind.ETHERNET.value, PortKind.INFINIBAND.value
INTERFACE_TYPES: dict[str, tuple[str, int]] = {
    "1000base-t": (ETHERNET, 1),
    "1000base-tx": (ETHERNET, 1),
    "1000base-x-sfp": (ETHERNET, 1),
    "10gbase-t": (ETHERNET, 10),
    "10gbase-x-sfpp": (ETHERNET, 10),
    "25gbase-x-sfp28": (ETHERNET, 25),
    "40gbase-x-qsfpp": (ETHERNET, 40),
    "50gbase-x-sfp28": (ETHERNET, 50),
    "50gbase-x-sfp56": (ETHERNET, 50),
    "100gbase-x-qsfp28": (ETHERNET, 100),
    "100gbase-x-qsfpdd": (ETHERNET, 100),
    "100gbase-x-dsfp": (ETHERNET, 100),
    "100gbase-x-sfpdd": (ETHERNET, 100),
    "200gbase-x-qsfp56": (ETHERNET, 200),
    "200gbase-x-qsfpdd": (ETHERNET, 200),
    "400gbase-x-qsfp112": (ETHERNET, 400),
    "400gbase-x-qsfpdd": (ETHERNET, 400),
    "400gbase-x-osfp": (ETHERNET, 400),
    "400gbase-x-osfp-rhs": (ETHERNET, 400),
    "800gbase-x-qsfpdd": (ETHERNET, 800),
    "800gbase-x-osfp": (ETHERNET, 800),
    "1.6tbase-x-osfp1600": (ETHERNET, 1600),
    "1.6tbase-x-osfp1600-rhs": (ETHERNET, 1600),
    "1.6tbase-x-qsfpdd1600": (ETHERNET, 1600),
    "infiniband-edr": (INFINIBAND, 100),
    "infiniband-hdr": (INFINIBAND, 200),
    "infiniband-ndr": (INFINIBAND, 400),
    "infiniband-xdr": (INFINIBAND, 800),
}
VIRTUAL_TYPES = frozenset({"virtual", "bridge", "lag"})

# Keys of a NetBox device type we accept and do not store.
IGNORED_KEYS = frozenset({
    "slug", "airflow", "weight", "weight_unit", "front_image", "rear_image", "subdevice_role", "is_powered",
    "description", "comments", "console-ports", "console-server-ports", "power-outlets", "front-ports",
    "rear-ports", "module-bays", "device-bays", "inventory-items",
})
KNOWN_KEYS = IGNORED_KEYS | {"manufacturer", "model", "part_number", "u_height", "is_full_depth", "interfaces",
                             "power-ports", "bringup"}
INTERFACE_KEYS = frozenset({"name", "label", "type", "enabled", "mgmt_only", "description", "bridge", "poe_mode",
                            "poe_type", "rf_role", "bringup"})
INTERFACE_EXTRA_KEYS = frozenset({"nic", "network", "breakout", "planes_per_lane"})
BRINGUP_KEYS = frozenset({"kind", "max_power_w", "os_port_format", "nics"})
NIC_KEYS = frozenset({"slot", "model", "part_number"})
POWER_PORT_KEYS = frozenset({"name", "label", "type", "maximum_draw", "allocated_draw", "description"})
# Components NetBox may list that a person should know we left out.
NOT_IMPORTED = {"module-bays": "module bays are not imported: list the NICs under bringup.nics"}


@dataclass(frozen=True)
class NicData:
    slot: str
    model: str
    part_number: str = ""


@dataclass(frozen=True)
class PortData:
    name: str
    kind: str
    speed_gbps: int
    network: str = ""
    nic_slot: str = ""
    breakout_lanes: int = 1
    lane_speed_gbps: int | None = None
    planes_per_lane: bool = False


@dataclass(frozen=True)
class HardwareModelData:
    """What one file says a hardware model is: its fields, NIC templates and port templates, in file order."""

    source: str
    vendor: str
    model: str
    part_number: str
    kind: str
    height_u: int
    max_power_w: int
    is_full_depth: bool
    os_port_format: str = ""
    nics: tuple[NicData, ...] = ()
    ports: tuple[PortData, ...] = ()

    def model_fields(self) -> dict:
        return {
            "vendor": self.vendor, "model": self.model, "kind": self.kind, "height_u": self.height_u,
            "max_power_w": self.max_power_w, "is_full_depth": self.is_full_depth,
            "os_port_format": self.os_port_format,
        }


@dataclass
class ReadResult:
    data: HardwareModelData | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class _Refused(Exception):
    """The file as a whole cannot be read (too big, not YAML, an alias, too deep)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message, self.line = message, line


# libyaml when PyYAML has it (ten times faster than the pure-Python parser; the result is the same).
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPENING = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSING = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _check_events(text: str) -> None:
    """Walk the file's parser events before any node is built: no alias, at most MAX_NODES nodes, nested at
    most MAX_DEPTH deep. An alias is how a "billion laughs" file multiplies a few bytes into gigabytes once
    constructed; a device type never needs one, so the first alias refuses the file."""
    nodes = depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            raise _Refused("aliases (*name) are not accepted in a device type", event.start_mark.line + 1)
        if isinstance(event, _CLOSING):
            depth -= 1
            continue
        if isinstance(event, (yaml.ScalarEvent, *_OPENING)):
            nodes += 1
            if nodes > MAX_NODES:
                raise _Refused(f"more than {MAX_NODES:,} YAML nodes", event.start_mark.line + 1)
        if isinstance(event, _OPENING):
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark.line + 1)


def _compose(raw: bytes):
    if len(raw) > MAX_FILE_BYTES:
        raise _Refused(f"the file is {len(raw):,} bytes; a device type may have at most {MAX_FILE_BYTES:,}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Refused(f"not UTF-8 text (byte {exc.start})") from None
    try:
        _check_events(text)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                raise _Refused("the file is empty")
            return node, loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise _Refused(f"not valid YAML: {exc.problem or exc.context}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise _Refused(f"not valid YAML: {exc}") from None
    except (ValueError, OverflowError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
        raise _Refused(f"a value cannot be read: {_short(str(exc), 80)}") from None


def _lines(node, path: str = "", out: dict[str, int] | None = None) -> dict[str, int]:
    """The line (from 1) of every mapping value and sequence item, by path: 'interfaces[3].type'."""
    out = {} if out is None else out
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                child = f"{path}.{key.value}" if path else str(key.value)
                out[child] = key.start_mark.line + 1
                _lines(value, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, f"{path}[{i}]", out)
    return out


class _File:
    """One file being read: its issues, each placed at the line of the field it concerns."""

    def __init__(self, source: str, lines: dict[str, int]):
        self.source, self.lines = source, lines
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.dropped = 0

    def where(self, path: str) -> str:
        probe = path
        while probe and probe not in self.lines:
            parent = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", probe)
            probe = "" if parent == probe else parent  # a top-level field the file lacks: no line
        line = self.lines.get(probe) if probe else None
        return f"{self.source}, line {line}" if line else self.source

    def error(self, path: str, message: str) -> None:
        if len(self.errors) >= MAX_ERRORS:
            self.dropped += 1
            return
        self.errors.append(f"{self.where(path)}: {path}: {message}" if path else f"{self.where(path)}: {message}")

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(f"{self.where(path)}: {path}: {message}")

    # -- typed fields ----------------------------------------------------------------------------

    def text(self, data: dict, key: str, path: str, *, required: bool = False, max_length: int = TEXT_MAX,
             pattern: re.Pattern | None = None) -> str:
        value = data.get(key)
        where = f"{path}.{key}" if path else key
        if value is None:
            if required:
                self.error(where, "missing")
            return ""
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.error(where, f"expected text, got {_kind_of(value)}")
            return ""
        value = str(value).strip()
        if required and not value:
            self.error(where, "missing")
        elif len(value) > max_length:
            self.error(where, f"{len(value)} characters; at most {max_length}")
        elif CONTROL.search(value):
            self.error(where, "control characters are not accepted")
        elif value.startswith(FORMULA_LEADS):
            self.error(where, f"may not start with {value[0]!r} (spreadsheets read that as a formula)")
        elif pattern is not None and value and not pattern.match(value):
            self.error(where, f"{_short(value)!r} is not accepted here")
        else:
            return value
        return ""

    def integer(self, data: dict, key: str, path: str, *, minimum: int, maximum: int,
                required: bool = False, whole: bool = True) -> int | None:
        value = data.get(key)
        where = f"{path}.{key}" if path else key
        if value is None:
            if required:
                self.error(where, "missing")
            return None
        if isinstance(value, float) and value.is_integer() and whole:
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(where, f"expected a whole number, got {_short(repr(value))}")
            return None
        if not minimum <= value <= maximum:
            self.error(where, f"{_short(str(value))} is out of range ({minimum:,} to {maximum:,})")
            return None
        return value

    def boolean(self, data: dict, key: str, path: str, *, required: bool = False, default: bool = False) -> bool:
        value = data.get(key)
        where = f"{path}.{key}" if path else key
        if value is None:
            if required:
                self.error(where, "missing (true or false)")
            return default
        if not isinstance(value, bool):
            self.error(where, f"expected true or false, got {_short(repr(value))}")
            return default
        return value

    def mapping(self, value, path: str) -> dict | None:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(path, f"expected a mapping, got {_kind_of(value)}")
            return None
        return value

    def listing(self, value, path: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(path, f"expected a list, got {_kind_of(value)}")
            return []
        return value

    def unknown_keys(self, data: dict, known: frozenset[str] | set[str], path: str) -> None:
        for key in data:
            if key not in known:
                where = f"{path}.{key}" if path else str(key)
                self.error(where, f"unknown field (expected one of: {', '.join(sorted(known))})")


def _kind_of(value) -> str:
    return {dict: "a mapping", list: "a list", bool: "true/false", type(None): "nothing"}.get(type(value), "a value")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_device_type(raw: bytes, *, source: str, default_kind: str = "") -> ReadResult:
    """One device-type file (its bytes) -> the hardware model it describes, or its errors. `default_kind`
    is the kind of hardware for a file that does not say (a NetBox file never does)."""
    result = ReadResult()
    try:
        node, data = _compose(raw)
    except _Refused as exc:
        where = f"{source}, line {exc.line}" if exc.line else source
        result.errors.append(f"{where}: {exc.message}")
        return result
    f = _File(source, _lines(node))
    if not isinstance(data, dict):
        f.error("", "not a device type: expected a mapping with manufacturer, model, u_height, interfaces, ...")
    else:
        model = _read_model(f, data, default_kind)
        if not f.errors:
            result.data = model
    if f.dropped:
        f.errors.append(f"{source}: ... and {f.dropped} more errors")
    result.errors, result.warnings = f.errors, f.warnings
    return result


def _read_model(f: _File, data: dict, default_kind: str) -> HardwareModelData | None:
    f.unknown_keys(data, KNOWN_KEYS, "")
    ours = f.mapping(data.get("bringup"), "bringup") or {}
    f.unknown_keys(ours, BRINGUP_KEYS, "bringup")
    vendor = f.text(data, "manufacturer", "", required=True)
    name = f.text(data, "model", "", required=True)
    slug = f.text(data, "slug", "", pattern=SLUG)
    errors_before = len(f.errors)
    part_number = f.text(data, "part_number", "")
    if not part_number and len(f.errors) == errors_before:
        if slug:
            part_number = slug
            f.warn("part_number", f"none given: the slug {slug!r} is the part number")
        else:
            f.error("part_number", "missing, and no slug to use instead: the catalogue keys models by part number")
    height = f.integer(data, "u_height", "", minimum=0, maximum=MAX_HEIGHT_U, required=True)
    full_depth = f.boolean(data, "is_full_depth", "", required=True)
    kind = _kind(f, ours, default_kind)
    nics = _nics(f, ours)
    ports = _ports(f, data.get("interfaces"), {nic.slot for nic in nics})
    power = _power(f, data.get("power-ports"), ours, kind)
    os_format = f.text(ours, "os_port_format", "bringup", max_length=40, pattern=OS_PORT_FORMAT)
    for key, message in NOT_IMPORTED.items():
        if data.get(key):
            f.warn(key, message)
    if f.errors:
        return None
    return HardwareModelData(
        source=f.source, vendor=vendor, model=name, part_number=part_number, kind=kind, height_u=height,
        max_power_w=power, is_full_depth=full_depth, os_port_format=os_format, nics=nics, ports=ports,
    )


def _kind(f: _File, ours: dict, default_kind: str) -> str:
    kind = ours.get("kind") or default_kind
    kinds = ", ".join(HardwareKind.values)
    if not kind:
        f.error("bringup.kind", f"the kind of hardware is not in the file; choose one of: {kinds}")
    elif kind not in HardwareKind.values:
        f.error("bringup.kind", f"{_short(str(kind))!r} is not a kind of hardware ({kinds})")
    return str(kind or "")


def _nics(f: _File, ours: dict) -> tuple[NicData, ...]:
    nics: list[NicData] = []
    seen: set[str] = set()
    for i, raw in enumerate(f.listing(ours.get("nics"), "bringup.nics")):
        path = f"bringup.nics[{i}]"
        item = f.mapping(raw, path)
        if item is None:
            continue
        f.unknown_keys(item, NIC_KEYS, path)
        slot = f.text(item, "slot", path, required=True, max_length=30, pattern=PORT_NAME)
        if slot in seen:
            f.error(f"{path}.slot", f"slot {slot!r} is listed twice")
        seen.add(slot)
        nics.append(NicData(slot=slot, model=f.text(item, "model", path, required=True),
                            part_number=f.text(item, "part_number", path)))
    return tuple(nics)


def _ports(f: _File, raw, nic_slots: set[str]) -> tuple[PortData, ...]:
    interfaces = f.listing(raw, "interfaces")
    if len(interfaces) > MAX_INTERFACES:
        f.error("interfaces", f"{len(interfaces):,} interfaces; a device type may have at most {MAX_INTERFACES:,}")
        return ()
    ports: list[PortData] = []
    first_line: dict[str, str] = {}
    for i, item in enumerate(interfaces):
        path = f"interfaces[{i}]"
        iface = f.mapping(item, path)
        if iface is None:
            continue
        port = _port(f, iface, path, nic_slots)
        if port is None:
            continue
        if port.name in first_line:
            f.error(f"{path}.name", f"{port.name!r} is already the name of the interface at {first_line[port.name]}")
            continue
        first_line[port.name] = f.where(path)
        ports.append(port)
    return tuple(ports)


def _port(f: _File, iface: dict, path: str, nic_slots: set[str]) -> PortData | None:
    f.unknown_keys(iface, INTERFACE_KEYS, path)
    name = f.text(iface, "name", path, required=True, max_length=NAME_MAX, pattern=PORT_NAME)
    kind_type = f.text(iface, "type", path, required=True, max_length=40)
    mgmt = f.boolean(iface, "mgmt_only", path)
    ours = f.mapping(iface.get("bringup"), f"{path}.bringup") or {}
    f.unknown_keys(ours, INTERFACE_EXTRA_KEYS, f"{path}.bringup")
    if not name or not kind_type:
        return None
    if kind_type in VIRTUAL_TYPES:
        f.warn(f"{path}.type", f"{name} is a {kind_type} interface, not a port: skipped")
        return None
    known = INTERFACE_TYPES.get(kind_type)
    if known is None:
        f.error(f"{path}.type", f"unknown interface type {_short(kind_type)!r}: no port kind and speed is known for it")
        return None
    kind, speed = known
    if mgmt:
        kind = PortKind.BMC.value
    network = f.text(ours, "network", f"{path}.bringup") or (Network.OOB.value if mgmt else "")
    if network and network not in Network.values:
        f.error(f"{path}.bringup.network", f"{_short(network)!r} is not a network ({', '.join(Network.values)})")
    nic = f.text(ours, "nic", f"{path}.bringup", max_length=30)
    if nic and nic not in nic_slots:
        f.error(f"{path}.bringup.nic", f"no NIC in slot {_short(nic)!r} under bringup.nics")
    lanes, lane_speed = _breakout(f, ours, f"{path}.bringup", speed)
    planes = f.boolean(ours, "planes_per_lane", f"{path}.bringup")
    if planes and lanes == 1:
        f.error(f"{path}.bringup.planes_per_lane", "lanes in planes need a breakout (e.g. 4x200G)")
    return PortData(name=name, kind=kind, speed_gbps=speed, network=network, nic_slot=nic, breakout_lanes=lanes,
                    lane_speed_gbps=lane_speed, planes_per_lane=planes)


def _breakout(f: _File, ours: dict, path: str, speed: int) -> tuple[int, int | None]:
    text = f.text(ours, "breakout", path, max_length=10)
    if not text:
        return 1, None
    match = BREAKOUT.match(text)
    if not match or not 2 <= int(match[1]) <= MAX_LANES:
        f.error(f"{path}.breakout", f"{_short(text)!r}: expected lanes x speed such as 4x200G (2 to {MAX_LANES} lanes)")
        return 1, None
    lanes, lane_speed = int(match[1]), int(match[2])
    if lanes * lane_speed != speed:
        f.error(f"{path}.breakout", f"{text} does not add up to the port's {speed}G")
        return 1, None
    return lanes, lane_speed


def _power(f: _File, raw, ours: dict, kind: str) -> int:
    total = 0
    for i, item in enumerate(f.listing(raw, "power-ports")):
        path = f"power-ports[{i}]"
        port = f.mapping(item, path)
        if port is None:
            continue
        f.unknown_keys(port, POWER_PORT_KEYS, path)
        total += f.integer(port, "maximum_draw", path, minimum=1, maximum=MAX_DRAW_W) or 0
    declared = f.integer(ours, "max_power_w", "bringup", minimum=0, maximum=MAX_POWER_W)
    if declared is not None:
        return declared
    if kind == HardwareKind.PDU:
        return 0  # it hands its feed on; counting its inlet too would count the rack's power twice
    if total > MAX_POWER_W:
        f.error("power-ports", f"the power ports draw {total:,} W together; at most {MAX_POWER_W:,}")
        return 0
    return total
