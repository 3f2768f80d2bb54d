"""`iblinkinfo` output -> the fabric graph (see fabric.py).

Each node has a header (`Switch: 0x506b... MF0;SB7700:MSB7700/U1:` or `CA: n02 HCA-1:`) and one
row per port: `LID PORT[ ] ==( 4X 25.78125 Gbps Active/ LinkUp)==> RLID RPORT[ ] "remote" ( )`.
CA rows start with the CA's GUID; switch rows with the switch LID. The remote end is named by LID
and port only, so its GUID is resolved from the LIDs of nodes seen elsewhere in the output. Both
directions of a link usually appear; they become one link.
"""

from __future__ import annotations

import re

from .base import Line, ParseError, last_line_no, normalise_guid, parse_int, shown, split_lines
from .fabric import FabricBuilder, FabricLink, FabricNode, FabricPort, FabricResult, LinkEnd

TOOL = "iblinkinfo"

_SWITCH = re.compile(r"^Switch:\s*(?P<guid>0x[0-9a-fA-F]+)\s*(?P<description>.*?):?\s*$")
_CA = re.compile(r"^(?P<kind>CA|Router):\s*(?P<description>.*?):?\s*$")
_ROW = re.compile(
    r"^(?:(?P<guid>0x[0-9a-fA-F]+)\s+)?(?P<lid>\S+)\s+(?P<port>[^\s\[]+)\[[^\]]*\]\s*"
    r"==\(\s*(?P<link>.*?)\s*\)==>\s*(?P<remote>.*)$"
)
_LINK = re.compile(
    r"^(?:(?P<width>[0-9]+X)\s+(?P<speed>.+?)\s+)?(?P<state>[A-Za-z]+)/\s*(?P<physical_state>[A-Za-z]+)$"
)
_REMOTE = re.compile(
    r"^(?:(?P<guid>0x[0-9a-fA-F]+)\s+)?(?P<lid>\S+)\s+(?P<port>[^\s\[]+)\[[^\]]*\]\s+\"(?P<description>[^\"]*)\""
)
_UNCONNECTED = re.compile(r"^\[[^\]]*\]\s+\"\"")
_ROW_HELP = 'LID PORT[ ] ==( 4X <speed> Active/ LinkUp)==> LID PORT[ ] "remote" ( )'


def parse(text: str) -> list[FabricResult]:
    lines = split_lines(text)
    fabric = FabricBuilder(TOOL)
    result = fabric.result
    node: FabricNode | None = None
    pending: list = []  # (node, local end, remote end, link details): remote GUIDs resolve at the end
    for line in lines:
        text_ = line.stripped
        if match := _SWITCH.match(text_):
            node = _add_node(fabric, normalise_guid(match["guid"], line.no), "switch", match["description"])
        elif (match := _CA.match(text_)) and "==(" not in text_:
            kind = "ca" if match["kind"] == "CA" else "router"
            node = FabricNode(
                guid="", kind=kind, description=match["description"] or None
            )  # GUID from its rows
        elif "==(" in text_:
            if node is None:
                raise ParseError(
                    line.no, "port row before any node header", "a 'Switch:' or 'CA:' header first"
                )
            node = _read_row(fabric, node, line, pending)
    if not result.nodes:
        raise ParseError(
            last_line_no(lines), "no node found", "'Switch: 0x...' or 'CA: name:' headers with port rows"
        )
    _resolve_links(result, pending)
    return [result]


def _add_node(fabric: FabricBuilder, guid: str, kind: str, description: str | None) -> FabricNode:
    existing = fabric.node(guid)
    if existing is not None:
        return existing
    return fabric.add_node(FabricNode(guid=guid, kind=kind, description=description or None))


def _read_row(fabric: FabricBuilder, node: FabricNode, line: Line, pending: list) -> FabricNode:
    row = _ROW.match(line.stripped)
    link = _LINK.match(row["link"]) if row else None
    if not row or not link:
        raise ParseError(line.no, "port row not readable", _ROW_HELP)
    if not node.guid:
        if not row["guid"]:
            raise ParseError(line.no, "CA port row without the CA's GUID", "the GUID as the first column")
        node = _add_node(fabric, normalise_guid(row["guid"], line.no), node.kind, node.description)
    lid, port = parse_int(row["lid"], line.no, "LID"), parse_int(row["port"], line.no, "port")
    node.lid = node.lid if node.lid is not None else lid
    local = LinkEnd(guid=node.guid, port=port, lid=lid, description=node.description)
    details = {
        "width": link["width"],
        "speed": link["speed"],
        "state": link["state"],
        "physical_state": link["physical_state"],
    }
    remote = _REMOTE.match(row["remote"])
    if remote is None and not _UNCONNECTED.match(row["remote"]):
        raise ParseError(
            line.no, f"remote end {shown(row['remote'])} not readable", 'RLID RPORT[ ] "description"'
        )
    fabric.result.ports.append(
        FabricPort(guid=node.guid, port=port, lid=lid, connected=remote is not None, **details)
    )
    if remote is not None:
        far = LinkEnd(
            guid=normalise_guid(remote["guid"], line.no) if remote["guid"] else None,
            port=parse_int(remote["port"], line.no, "remote port"),
            lid=parse_int(remote["lid"], line.no, "remote LID"),
            description=remote["description"] or None,
        )
        pending.append((node, local, far, details))
    return node


def _resolve_links(result: FabricResult, pending: list) -> None:
    guid_by_lid = {node.lid: node.guid for node in result.nodes if node.lid is not None}
    seen = set()
    for _node, local, far, details in pending:
        far.guid = far.guid or guid_by_lid.get(far.lid)
        key = frozenset({(local.lid, local.port), (far.lid, far.port)})
        if key in seen:
            continue
        seen.add(key)
        result.links.append(FabricLink(a=local, b=far, **details))
