"""lldpd's `lldpcli show neighbors [details]` in its three printed formats: one result per neighbour (per
local interface it was heard on).

- text (the default): blocks start with `Interface: swp1, via: LLDP, RID: 10, Time: 0 day, 17:08:27`; the
  Chassis and Port sections follow, indented. NVUE's `nv show interface lldp-detail` prints the same
  blocks with a bare `Interface:    swp1` header and the time on its own line.
- JSON (`-f json`): `{"lldp": {"interface": ...}}`, where `interface` is an object keyed by interface
  name when there is one neighbour and a list of one-key objects when there are several, and `chassis`
  is an object keyed by the system name (by nothing when the neighbour sends none). Values are strings,
  `mgmt-ip` a string or a list. `-f json0` (every level a list of objects with `value` keys) is read too.
  SONiC's lldpctl JSON adds `lldp_loc_chassis`, the switch's own name: kept as `local_system_name`.
- keyvalue (`-f keyvalue`): `lldp.<interface>.<path>=<value>` lines, which need not come grouped by
  interface (a real capture repeats one interface's key among another's lines).

IDs keep their subtype ("mac", "ifname", "local") apart from the value. An output that lists no
neighbours at all is valid and gives no result.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .base import ParsedResult, ParseError, last_line_no, parse_int, shown, split_lines

TOOL = "lldp"

_HEADER = re.compile(r"^LLDP neighbors:\s*$")
_INTERFACE = re.compile(
    r"^Interface:\s*(?P<interface>[^,\s]+)(?:,\s*via:\s*(?P<via>[^,]+?)"
    r"(?:,\s*RID:\s*(?P<rid>[^,]+?))?(?:,\s*Time:\s*(?P<age>.*?))?)?\s*$"
)
_SECTION = re.compile(r"^(?P<section>[A-Za-z][A-Za-z -]*):\s*$")
_KEY_VALUE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 -]*):\s+(?P<value>\S.*)$")
_TYPED_ID = re.compile(r"^(?P<kind>mac|ifname|ip|local|ifalias|hostname|agentid)\s+(?P<value>\S.*)$")
_CAPABILITY = re.compile(r"^(?P<name>[^,]+),\s*(?P<state>on|off)$")
_KEYVALUE_LINE = re.compile(r"^lldp\.(?P<interface>.+?)\.(?P<key>via|rid|age|chassis|port|vlan|lldp-med|"
                            r"unknown-tlvs|ppvid|pi|status)(?:\.(?P<rest>[^=]*))?=(?P<value>.*)$")
_ID_KINDS = ("mac", "ifname", "ip", "local", "ifalias", "hostname", "agentid")
MAX_JSON_BYTES = 64 * 2**20  # a whole fabric's neighbours are a few MB; anything far larger is not ours


@dataclass(kw_only=True)
class LldpNeighbor(ParsedResult):
    tool: str = TOOL
    interface: str
    via: str | None = None
    rid: int | None = None
    age: str | None = None
    chassis_id_type: str | None = None
    chassis_id: str | None = None
    system_name: str | None = None
    system_description: str | None = None
    management_ips: list[str] = field(default_factory=list)
    capabilities: dict[str, bool] = field(default_factory=dict)  # {"Bridge": True, "Router": False}
    port_id_type: str | None = None
    port_id: str | None = None
    port_description: str | None = None
    ttl: int | None = None
    mau_type: str | None = None  # the negotiated medium, when printed ("10GigBaseLR - R fiber ...")
    speed: str | None = None  # the local port's speed, when the output prints it (NVUE: "400G")
    local_system_name: str | None = None  # the device the table was read on, when the output says
    line_no: int = 1


def parse(text: str) -> list[LldpNeighbor]:
    """Any of the three formats, told apart by their first meaningful line."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return parse_json(text, first_line=text[: len(text) - len(stripped)].count("\n") + 1)
    lines = split_lines(text)
    if any(line.stripped.startswith("lldp.") and "=" in line.stripped for line in lines[:50]):
        return parse_keyvalue(text)
    return parse_text(text)


# ---------------------------------------------------------------------------------------------------
# Text


def parse_text(text: str) -> list[LldpNeighbor]:
    lines = split_lines(text)
    neighbors: list[LldpNeighbor] = []
    seen_header = False
    section: str | None = None
    for line in lines:
        text_ = line.stripped
        if _HEADER.match(text_):
            seen_header = True
        elif text_.startswith("Interface:"):
            neighbors.append(_read_interface(text_, line.no))
            section = None
        elif not neighbors:
            continue
        elif match := _SECTION.match(text_):
            section = match["section"]
        elif match := _KEY_VALUE.match(text_):
            _apply(neighbors[-1], section, match["key"], match["value"].strip(), line.no)
    if not neighbors and not seen_header:
        raise ParseError(
            last_line_no(lines),
            "no LLDP neighbour found",
            "'LLDP neighbors:' and 'Interface: <name>, via: LLDP, ...' blocks, lldpcli -f json or -f keyvalue",
        )
    return neighbors


def _read_interface(text: str, line_no: int) -> LldpNeighbor:
    match = _INTERFACE.match(text)
    if not match:
        raise ParseError(
            line_no, "neighbour header not readable", "'Interface: swp1, via: LLDP, RID: 1, Time: ...'"
        )
    return LldpNeighbor(
        interface=match["interface"],
        via=match["via"],
        rid=parse_int(match["rid"], line_no, "RID") if match["rid"] else None,
        age=match["age"] or None,
        line_no=line_no,
    )


def _apply(neighbor: LldpNeighbor, section: str | None, key: str, value: str, line_no: int) -> None:
    if key == "ChassisID":
        neighbor.chassis_id_type, neighbor.chassis_id = _typed_id(value)
    elif key == "SysName":
        neighbor.system_name = value
    elif key == "SysDescr":
        neighbor.system_description = value
    elif key == "MgmtIP":
        neighbor.management_ips.append(value)
    elif key == "Capability" and (capability := _CAPABILITY.match(value)):
        neighbor.capabilities[capability["name"].strip()] = capability["state"] == "on"
    elif key == "PortID":
        neighbor.port_id_type, neighbor.port_id = _typed_id(value)
    elif key == "PortDescr":
        neighbor.port_description = value
    elif key == "TTL" and section == "Port":
        neighbor.ttl = parse_int(value, line_no, "TTL")
    elif key == "MAU oper type":
        neighbor.mau_type = value


def _typed_id(value: str) -> tuple[str | None, str]:
    match = _TYPED_ID.match(value)
    return (match["kind"], match["value"].strip()) if match else (None, value)


# ---------------------------------------------------------------------------------------------------
# JSON (-f json and -f json0)


def parse_json(text: str, *, first_line: int = 1) -> list[LldpNeighbor]:
    if len(text) > MAX_JSON_BYTES:
        raise ParseError(first_line, f"{len(text):,} characters of JSON", f"at most {MAX_JSON_BYTES:,}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(max(exc.lineno, 1), f"not valid JSON ({exc.msg})", "the output of lldpcli -f json") from None
    except (ValueError, RecursionError):
        raise ParseError(first_line, "not valid JSON", "the output of lldpcli -f json") from None
    if not isinstance(data, dict) or not ("lldp" in data or "lldp_loc_chassis" in data or "local-chassis" in data):
        raise ParseError(first_line, "no \"lldp\" object", '{"lldp": {"interface": ...}} as lldpcli -f json prints it')
    local = _local_name(data.get("lldp_loc_chassis") or data.get("local-chassis"))
    root = data.get("lldp")
    neighbors: list[LldpNeighbor] = []
    for interface, body in _interfaces(root, first_line):
        neighbor = LldpNeighbor(interface=interface, line_no=first_line, local_system_name=local)
        _apply_json(neighbor, body)
        neighbors.append(neighbor)
    return neighbors


def _bad(line: int, what: str) -> ParseError:
    return ParseError(line, f"{what} is not what lldpcli prints", "lldpcli -f json (or json0) output")


def _interfaces(root, line: int):
    """(interface name, body) pairs, whichever of the shapes lldpcli chose."""
    if root is None:
        return
    if isinstance(root, list):  # json0: [{"interface": [{"name": ..., ...}]}]
        for item in root:
            if not isinstance(item, dict):
                raise _bad(line, "an item of \"lldp\"")
            yield from _interfaces(item, line)
        return
    if not isinstance(root, dict):
        raise _bad(line, "\"lldp\"")
    entries = root.get("interface")
    if entries is None:
        return
    if isinstance(entries, dict):
        entries = [entries]
    if not isinstance(entries, list):
        raise _bad(line, "\"interface\"")
    for entry in entries:
        if not isinstance(entry, dict):
            raise _bad(line, "an interface entry")
        if "name" in entry and isinstance(entry.get("name"), str):  # json0 entry
            yield entry["name"], entry
            continue
        for name, body in entry.items():
            if not isinstance(body, dict):
                raise _bad(line, f"interface {shown(str(name))}")
            yield str(name), body


def _value(node) -> str | None:
    """A leaf: a string, a number, {"value": x} or json0's [{"value": x}]."""
    if type(node) is str:  # the common case, first: lldpcli prints every value as a string
        return node
    if isinstance(node, list):
        node = node[0] if node else None
    if isinstance(node, dict):
        node = node.get("value")
    if isinstance(node, bool) or node is None or isinstance(node, dict | list):
        return None
    return str(node)


def _values(node) -> list[str]:
    if type(node) is str:
        return [node]
    items = node if isinstance(node, list) else [node]
    return [value for item in items if (value := _value(item)) is not None]


def _typed(node) -> tuple[str | None, str | None]:
    if type(node) is dict and type(node.get("type")) is str and type(node.get("value")) is str:
        return node["type"], node["value"]
    if isinstance(node, list):
        node = node[0] if node else None
    if not isinstance(node, dict):
        return None, _value(node)
    kind = node.get("type")
    return (kind if isinstance(kind, str) else None), _value(node)


def _local_name(node) -> str | None:
    if not isinstance(node, dict):
        return None
    chassis = node.get("local-chassis", node)
    if isinstance(chassis, dict):
        chassis = chassis.get("chassis", chassis)
    name, _ = _chassis(chassis)
    return name


def _chassis(node) -> tuple[str | None, dict]:
    """(system name, body): json keys the chassis by its name; json0 and name-less chassis are bodies."""
    if isinstance(node, list):
        node = node[0] if node else {}
    if not isinstance(node, dict):
        return None, {}
    if "id" in node or "descr" in node or "name" in node:
        return _value(node.get("name")), node
    if len(node) == 1:
        name, body = next(iter(node.items()))
        return str(name), body if isinstance(body, dict) else {}
    return None, node


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value is not None and value.isascii() and value.isdigit() and len(value) < 10 else None


def _apply_json(neighbor: LldpNeighbor, body: dict) -> None:
    neighbor.via = _value(body.get("via"))
    neighbor.rid = _int_or_none(_value(body.get("rid")))
    neighbor.age = _value(body.get("age"))
    name, chassis = _chassis(body.get("chassis"))
    neighbor.system_name = name
    neighbor.chassis_id_type, neighbor.chassis_id = _typed(chassis.get("id"))
    neighbor.system_description = _value(chassis.get("descr"))
    neighbor.management_ips = _values(chassis.get("mgmt-ip")) if "mgmt-ip" in chassis else []
    capabilities = chassis.get("capability")
    for capability in capabilities if isinstance(capabilities, list) else []:
        if isinstance(capability, dict) and isinstance(capability.get("type"), str):
            enabled = capability.get("enabled")
            neighbor.capabilities[capability["type"]] = enabled is True or enabled in ("on", "yes", "true")
    port = body.get("port")
    if isinstance(port, list):
        port = port[0] if port else {}
    port = port if isinstance(port, dict) else {}
    neighbor.port_id_type, neighbor.port_id = _typed(port.get("id"))
    neighbor.port_description = _value(port.get("descr"))
    neighbor.ttl = _int_or_none(_value(port.get("ttl")) or _value(chassis.get("ttl")))
    negotiation = port.get("auto-negotiation")
    if isinstance(negotiation, list):
        negotiation = negotiation[0] if negotiation else {}
    if isinstance(negotiation, dict):
        current = _value(negotiation.get("current"))
        neighbor.mau_type = current if current and current != "unknown" else None


# ---------------------------------------------------------------------------------------------------
# keyvalue


def parse_keyvalue(text: str) -> list[LldpNeighbor]:
    lines = split_lines(text)
    neighbors: dict[str, LldpNeighbor] = {}
    started = False
    for line in lines:
        text_ = line.stripped
        if not text_:
            continue
        match = _KEYVALUE_LINE.match(text_)
        if match is None:
            if not started or not text_.startswith("lldp."):
                continue  # a prompt, a command line or a trailer around the key=value lines
            raise ParseError(line.no, f"key {shown(text_.partition('=')[0])} not readable",
                             "lldp.<interface>.<via|rid|age|chassis|port...>=<value>")
        started = True
        interface = match["interface"]
        neighbor = neighbors.get(interface)
        if neighbor is None:
            neighbor = neighbors[interface] = LldpNeighbor(interface=interface, line_no=line.no)
        _apply_keyvalue(neighbor, match["key"], match["rest"] or "", match["value"].strip(), line.no)
    if not started:
        raise ParseError(last_line_no(lines), "no lldp.<interface>... line", "lldpcli -f keyvalue output")
    return list(neighbors.values())


def _apply_keyvalue(neighbor: LldpNeighbor, key: str, rest: str, value: str, line_no: int) -> None:
    if key == "via" and not rest:
        neighbor.via = value
    elif key == "rid" and not rest:
        neighbor.rid = parse_int(value, line_no, "rid")
    elif key == "age" and not rest:
        neighbor.age = value
    elif key == "chassis":
        if rest in _ID_KINDS:
            neighbor.chassis_id_type, neighbor.chassis_id = rest, value
        elif rest == "name":
            neighbor.system_name = value
        elif rest == "descr":
            neighbor.system_description = value
        elif rest == "mgmt-ip":
            neighbor.management_ips.append(value)
        elif rest.endswith(".enabled"):
            neighbor.capabilities[rest.removesuffix(".enabled")] = value in ("on", "yes")
    elif key == "port":
        if rest in _ID_KINDS:
            neighbor.port_id_type, neighbor.port_id = rest, value
        elif rest == "descr":
            neighbor.port_description = value
        elif rest == "ttl":
            neighbor.ttl = parse_int(value, line_no, "ttl")
        elif rest == "auto-negotiation.current" and value != "unknown":
            neighbor.mau_type = value
