"""The simulated fabric: the plan's links as the switches and hosts would show them, with planted faults,
answered in the tools' own formats (iblinkinfo, lldpcli) so a topology check runs through the same
parsers and mapping as a real one. Pure Python: validation.cluster builds a SimFabric from the project.

The faults are planned here and nowhere else (`plan_fabric_faults`), deterministic for a fabric and seed:
  - a swapped pair: two host cables on neighbouring ports of one InfiniBand switch, each in the other's
    port;
  - a cable on the wrong leaf: a host's Ethernet cable in a free port of another switch of its network
    (none when no switch has a free port);
  - a link at half width: an InfiniBand link up at 2X where 4X is planned (an Ethernet-only fabric: a link
    up at half its speed);
  - a missing link: an InfiniBand link down at both ends (Down/Polling), or an Ethernet link absent.
Every other link is seen exactly as planned, so a comparison should find these and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace

# What iblinkinfo prints per lane (libibmad), by generation.
SIGNAL_TEXT = {"SDR": "2.5 Gbps", "DDR": "5.0 Gbps", "QDR": "10.0 Gbps", "FDR10": "10.0 Gbps (FDR10)",
               "FDR": "14.0625 Gbps", "EDR": "25.78125 Gbps", "HDR": "53.125 Gbps", "NDR": "106.25 Gbps",
               "XDR": "212.5 Gbps"}


def stable_hex(*parts: object, digits: int = 16) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:digits]


def sim_guid(*parts: object) -> str:
    """A GUID in NVIDIA's OUI (b8:ce:f6), stable for the same name: 40 bits of hash, so the 50,000 ports of
    a large fabric do not share one (a real GUID is unique; the comparison trusts it)."""
    return "0xb8cef6" + stable_hex("guid", *parts, digits=10)


def sim_mac(*parts: object) -> str:
    """A locally administered MAC (02:...), stable for the same name, 40 bits of hash (see sim_guid)."""
    digits = "02" + stable_hex("mac", *parts, digits=10)
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))


@dataclass(frozen=True)
class SimEnd:
    device: str
    port: str  # our port name
    switch: bool
    os_name: str = ""  # what the device's OS calls the port (LLDP)
    ib_port: int = 1  # InfiniBand: the switch's port number, or the HCA's port number
    ibdev: str = ""  # InfiniBand host: mlx5_<rail>
    guid: str = ""  # InfiniBand: the switch's node GUID, or the HCA port's GUID
    mac: str = ""  # Ethernet: the port's MAC
    network: str = ""  # the port's network (inventory.choices.Network)
    speed_gbps: int = 0

    @property
    def text(self) -> str:
        return f"{self.device}:{self.port}"


@dataclass(frozen=True)
class SimLink:
    key: str  # the planned link (cable label, /B<n> for a breakout leg)
    a: SimEnd
    b: SimEnd
    infiniband: bool
    width: int | None = None
    generation: str | None = None
    speed_gbps: int = 0
    up: bool = True


@dataclass(frozen=True)
class FabricFaults:
    swapped: tuple[str, str] | None = None  # two keys
    wrong_leaf: tuple[str, SimEnd] | None = None  # key, the free port it lands on
    half_width: str | None = None
    missing: str | None = None

    def describe(self, links: dict[str, SimLink]) -> list[str]:
        lines = []
        if self.swapped:
            one, other = (links[key] for key in self.swapped)
            lines.append(f"swapped pair: {one.key} and {other.key} ({one.b.text} and {other.b.text})")
        if self.wrong_leaf:
            key, landed = self.wrong_leaf
            lines.append(f"cable on the wrong leaf: {key} in {landed.text} instead of {links[key].b.text}")
        if self.half_width:
            link = links[self.half_width]
            lines.append(f"half width: {self.half_width} at 2X" if link.infiniband
                         else f"half speed: {self.half_width} at {link.speed_gbps // 2}G")
        if self.missing:
            lines.append(f"missing link: {self.missing} ({links[self.missing].a.text} to {links[self.missing].b.text})")
        return lines

    def expected(self) -> dict[str, str]:
        """The planned links the faults touch and the state a comparison should find them in."""
        found = {}
        if self.swapped:
            found |= dict.fromkeys(self.swapped, "miswired")
        if self.wrong_leaf:
            found[self.wrong_leaf[0]] = "miswired"
        if self.half_width:
            found[self.half_width] = "degraded"
        if self.missing:
            found[self.missing] = "missing"
        return found


@dataclass(frozen=True)
class SimFabric:
    links: tuple[SimLink, ...]
    # Ports a switch has with no planned link, by switch (Ethernet: where a stray cable can land).
    free_ports: dict[str, tuple[SimEnd, ...]] = field(default_factory=dict)
    # Every InfiniBand port of every switch and HCA, by device: ports without a link print Down/Polling.
    ib_ports: dict[str, tuple[SimEnd, ...]] = field(default_factory=dict)

    def devices(self) -> set[str]:
        return {end.device for link in self.links for end in (link.a, link.b)}


def _host_link(link: SimLink) -> bool:
    return link.a.switch != link.b.switch


def _switch_end(link: SimLink) -> SimEnd:
    return link.a if link.a.switch else link.b


def _natural(name: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"([0-9]+)", name))


def _switch_order(link: SimLink) -> tuple:
    end = _switch_end(link)
    return end.ib_port, _natural(end.port)


def plan_fabric_faults(fabric: SimFabric, seed: int) -> FabricFaults:
    """Where the faults go: the one place that decides it. InfiniBand links take the swap, the half width
    and the missing link where the fabric has them (an Ethernet-only fabric takes them on Ethernet)."""
    rng = random.Random(f"fabric-faults:{seed}")
    used: set[str] = set()
    by_key = sorted(fabric.links, key=lambda link: link.key)
    host_links = [link for link in by_key if _host_link(link)]
    pool = [link for link in host_links if link.infiniband] or host_links
    # A swapped pair: two host cables on neighbouring ports of one switch.
    by_switch: dict[str, list[SimLink]] = defaultdict(list)
    for link in pool:
        by_switch[_switch_end(link).device].append(link)
    pairs = []
    for device in sorted(by_switch):
        ports = sorted(by_switch[device], key=_switch_order)
        pairs += [(one, two) for one, two in zip(ports, ports[1:], strict=False)
                  if not one.infiniband or _switch_end(two).ib_port == _switch_end(one).ib_port + 1]
    swapped = None
    if pairs:
        one, two = rng.choice(pairs)
        swapped = (one.key, two.key)
        used.update(swapped)
    # A cable on the wrong leaf: an Ethernet host cable into a free port of the same speed on another switch.
    wrong = None
    eth_host = [link for link in host_links if not link.infiniband and link.key not in used]
    leaves = {_switch_end(link).device for link in eth_host}  # switches that take host cables
    candidates = []
    for link in eth_host if fabric.free_ports else ():
        planned = _switch_end(link)
        for device, free in sorted(fabric.free_ports.items()):
            if device == planned.device or device not in leaves:
                continue
            fitting = [end for end in free if end.network == planned.network and end.speed_gbps == planned.speed_gbps]
            candidates += [(link, end) for end in fitting[:1]]
    if candidates:
        link, landed = rng.choice(candidates)
        wrong = (link.key, landed)
        used.add(link.key)
    ib = [link for link in by_key if link.infiniband and (link.width or 0) >= 2]
    rest = [link for link in (ib or [link for link in by_key if link.speed_gbps >= 2]) if link.key not in used]
    half = rng.choice(rest).key if rest else None
    rest = [link for link in rest if link.key != half]
    missing = rng.choice(rest).key if rest else None
    return FabricFaults(swapped=swapped, wrong_leaf=wrong, half_width=half, missing=missing)


def observed_links(fabric: SimFabric, faults: FabricFaults) -> list[SimLink]:
    """The links as the fabric shows them once the faults are in."""
    by_key = {link.key: link for link in fabric.links}
    out = []
    for link in fabric.links:
        if faults.swapped and link.key in faults.swapped:
            other = by_key[faults.swapped[1] if link.key == faults.swapped[0] else faults.swapped[0]]
            near = link.a if not link.a.switch else link.b
            far = other.a if other.a.switch else other.b
            out.append(replace(link, a=near, b=far))
        elif faults.wrong_leaf and link.key == faults.wrong_leaf[0]:
            near = link.a if not link.a.switch else link.b
            out.append(replace(link, a=near, b=faults.wrong_leaf[1]))
        elif link.key == faults.half_width and link.infiniband:
            out.append(replace(link, width=max((link.width or 4) // 2, 1)))
        elif link.key == faults.half_width:  # Ethernet: the link negotiated half its speed
            out.append(replace(link, speed_gbps=link.speed_gbps // 2))
        elif link.key == faults.missing:
            out.append(replace(link, up=False))
        else:
            out.append(link)
    return out


# ---------------------------------------------------------------------------------------------------
# iblinkinfo


def _components(links: list[SimLink]) -> list[set[str]]:
    """Devices joined by InfiniBand links: each set is one fabric (one subnet)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for link in links:
        if link.infiniband:
            parent[find(link.a.device)] = find(link.b.device)
    groups: dict[str, set[str]] = defaultdict(set)
    for device in list(parent):
        groups[find(device)].add(device)
    return list(groups.values())


def iblinkinfo_text(fabric: SimFabric, faults: FabricFaults, *, host: str, ibdev: str) -> str | None:
    """iblinkinfo as run on `host` through its HCA `ibdev`: the fabric that HCA reaches, every switch and
    HCA of it with a row per port. None when that HCA is not in any fabric."""
    links = [link for link in observed_links(fabric, faults) if link.infiniband]
    component = next((c for c in _components(links) if host in c), None)
    start = next((e for link in links for e in (link.a, link.b) if e.device == host and e.ibdev == ibdev), None)
    if component is None or start is None:
        return None
    rows: dict[tuple[str, str], SimEnd] = {}  # (device, ibdev or "") -> a representative end
    ports: dict[tuple[str, str], dict[int, tuple[SimEnd, SimLink | None]]] = defaultdict(dict)
    for device in sorted(component):
        for end in fabric.ib_ports.get(device, ()):
            node = (device, "" if end.switch else end.ibdev)
            rows.setdefault(node, end)
            ports[node].setdefault(end.ib_port, (end, None))
    for link in links:
        if not link.up or link.a.device not in component:
            continue
        for near in (link.a, link.b):
            node = (near.device, "" if near.switch else near.ibdev)
            rows.setdefault(node, near)
            ports[node][near.ib_port] = (near, link)
    lids = {node: number for number, node in enumerate(sorted(rows, key=lambda n: (not rows[n].switch, n)), 1)}
    lines = []
    for node in sorted(rows, key=lambda n: (rows[n].switch, n)):
        end = rows[node]
        if end.switch:
            lines.append(f"Switch: {end.guid} {end.device}:")
        else:
            lines.append(f"CA: {end.device} {end.ibdev}:")
        for number in sorted(ports[node]):
            near, link = ports[node][number]
            # iblinkinfo.c: a switch row is "%6d %4d[%2s]" after six spaces; a CA row starts with the port GUID.
            lead = "      " if near.switch else f"      {near.guid} "
            prefix = f"{lead}{lids[node]:>6} {number:>4}[  ]"
            if link is None:
                lines.append(f"{prefix} ==(                Down/ Polling)==>             [  ] \"\" ( )")
                continue
            same = (link.a.device, link.a.ib_port, link.a.ibdev) == (near.device, near.ib_port, near.ibdev)
            far = link.b if same else link.a
            far_node = (far.device, "" if far.switch else far.ibdev)
            width = f"{link.width}X" if link.width else "4X"
            speed = SIGNAL_TEXT.get(link.generation or "", "212.5 Gbps")
            description = far.device if far.switch else f"{far.device} {far.ibdev}"
            lines.append(
                f"{prefix} ==({width:>3} {speed:>18} {'Active':>6}/{'LinkUp':>8})==>  "
                f"{lids.get(far_node, 0):>6} {far.ib_port:>4}[  ] \"{description}\" ( )"
            )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------
# lldpcli


def _neighbour_json(far: SimEnd, link: SimLink) -> dict:
    chassis_id = sim_mac(far.device, "chassis")
    if far.switch:
        port = {"id": {"type": "ifname", "value": far.os_name}, "descr": far.os_name, "ttl": "120"}
    else:  # lldpd on a host sends its MAC as the port id and the interface name as the description
        port = {"id": {"type": "mac", "value": far.mac}, "descr": far.os_name, "ttl": "120"}
    port["auto-negotiation"] = {"supported": False, "enabled": False, "current": f"{link.speed_gbps}GbaseR"}
    return {
        "via": "LLDP",
        "rid": str(int(stable_hex(far.device, digits=4), 16) % 1000 + 1),
        "age": "0 day, 02:11:09",
        "chassis": {far.device: {
            "id": {"type": "mac", "value": chassis_id},
            "descr": "Cumulus Linux version 5.9.1" if far.switch else "Ubuntu 24.04.2 LTS Linux 6.8.0-60-generic",
            "mgmt-ip": f"10.{int(stable_hex(far.device, digits=2), 16)}.0.1",
            "capability": [{"type": "Bridge", "enabled": far.switch}, {"type": "Router", "enabled": far.switch}],
        }},
        "port": port,
    }


def lldp_tables(fabric: SimFabric, faults: FabricFaults) -> dict[str, list[tuple[str, dict]]]:
    """Every device's LLDP neighbours (interface, neighbour as lldpcli's JSON has it), in one pass over the
    links: what each device's `lldpcli` prints."""
    tables: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for link in observed_links(fabric, faults):
        if link.infiniband or not link.up:
            continue
        for near, far in ((link.a, link.b), (link.b, link.a)):
            tables[near.device].append((near.os_name, _neighbour_json(far, link)))
    for rows in tables.values():
        rows.sort(key=lambda item: _natural(item[0]))
    return tables


def _lldp_neighbours(fabric: SimFabric, faults: FabricFaults, device: str) -> list[tuple[str, dict]]:
    return lldp_tables(fabric, faults).get(device, [])


def lldpcli_json(fabric: SimFabric, faults: FabricFaults, device: str,
                 tables: dict[str, list[tuple[str, dict]]] | None = None) -> str:
    """`lldpcli -f json show neighbors` on `device`, with lldpcli's quirk: one neighbour is an object,
    several a list of one-key objects. `tables` (lldp_tables) spares the pass over every link."""
    neighbours = (tables if tables is not None else lldp_tables(fabric, faults)).get(device, [])
    if not neighbours:
        return json.dumps({"lldp": {}}, indent=2) + "\n"
    if len(neighbours) == 1:
        name, body = neighbours[0]
        interface: object = {name: body}
    else:
        interface = [{name: body} for name, body in neighbours]
    return json.dumps({"lldp": {"interface": interface}}, indent=2) + "\n"


def lldpcli_text(fabric: SimFabric, faults: FabricFaults, device: str) -> str:
    rule = "-" * 79
    lines = [rule, "LLDP neighbors:", rule]
    for name, body in _lldp_neighbours(fabric, faults, device):
        [(system, chassis)] = body["chassis"].items()
        port = body["port"]
        lines += [
            f"Interface:    {name}, via: LLDP, RID: {body['rid']}, Time: {body['age']}",
            "  Chassis:",
            f"    ChassisID:    mac {chassis['id']['value']}",
            f"    SysName:      {system}",
            f"    SysDescr:     {chassis['descr']}",
            f"    MgmtIP:       {chassis['mgmt-ip']}",
            "  Port:",
            f"    PortID:       {port['id']['type']} {port['id']['value']}",
            f"    PortDescr:    {port['descr']}",
            f"    TTL:          {port['ttl']}",
            rule,
        ]
    return "\n".join(lines) + "\n"

