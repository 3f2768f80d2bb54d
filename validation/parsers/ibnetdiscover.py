"""`ibnetdiscover` topology output -> the fabric graph (see fabric.py).

A node block is `Switch 41 "S-<guid>"  # "description" ... lid 387 ...` (or `Ca`/`Rt`) followed by
one line per linked port: `[1](portguid) "H-<guid>"[1](portguid)  # "remote description" lid 226 4xHDR`.
Node names carry the node GUID after the S-/H-/R- prefix. Both ends of a link normally list it;
they become one link. Nodes seen only as the far end of a link are added from that line.
"""

from __future__ import annotations

import re

from .base import Line, ParseError, last_line_no, normalise_guid, parse_int, shown, split_lines
from .fabric import FabricBuilder, FabricLink, FabricNode, FabricResult, LinkEnd

TOOL = "ibnetdiscover"

_NODE = re.compile(
    r"^(?P<kind>Switch|Ca|Rt)\s+(?P<ports>\S+)\s+\"(?P<name>[^\"]*)\"\s*(?:#\s*\"(?P<description>[^\"]*)\"(?P<rest>.*))?$"
)
_PORT = re.compile(
    r"^\[(?P<port>[^\]]*)\](?:\([0-9a-fA-F]*\))?\s+\"(?P<remote>[^\"]*)\"\[(?P<remote_port>[^\]]*)\]"
    r"(?:\([0-9a-fA-F]*\))?\s*(?:#\s*(?P<comment>.*))?$"
)
_NAME = re.compile(r"^(?P<prefix>[SHR])-(?P<guid>[0-9a-fA-F]+)$")
_LID = re.compile(r"\blid\s+(?P<lid>\S+)")
_QUOTED = re.compile(r"\"(?P<text>[^\"]*)\"")
_WIDTH_SPEED = re.compile(r"\b(?P<width>[0-9]+)x(?P<speed>[A-Z][A-Za-z0-9]*)\b")
_KINDS = {"Switch": "switch", "Ca": "ca", "Rt": "router", "S": "switch", "H": "ca", "R": "router"}


def parse(text: str) -> list[FabricResult]:
    lines = split_lines(text)
    fabric = FabricBuilder(TOOL)
    result = fabric.result
    node: FabricNode | None = None
    seen_links: set[frozenset] = set()
    for line in lines:
        text_ = line.stripped
        if match := _NODE.match(text_):
            node = _read_node(fabric, match, line)
        elif text_.startswith("["):
            if node is None:
                raise ParseError(
                    line.no, "port line before any node line", "a 'Switch N \"S-<guid>\"' line first"
                )
            _read_port(fabric, node, line, seen_links)
        elif not text_:
            node = None
    if not result.nodes:
        raise ParseError(
            last_line_no(lines),
            "no node found",
            "'Switch'/'Ca' lines with quoted S-/H- names and [port] lines",
        )
    return [result]


def _guid_from_name(name: str, line: Line) -> tuple[str, str]:
    match = _NAME.match(name)
    if not match:
        raise ParseError(
            line.no, f"node name {shown(name)} has no GUID", 'a name such as "S-0ff08c43213b3f30"'
        )
    return normalise_guid(match["guid"], line.no), _KINDS[match["prefix"]]


def _read_node(fabric: FabricBuilder, match: re.Match, line: Line) -> FabricNode:
    guid, _ = _guid_from_name(match["name"], line)
    rest = match["rest"] or ""
    lid = _LID.search(rest)
    node = fabric.node(guid) or fabric.add_node(FabricNode(guid=guid, kind=_KINDS[match["kind"]]))
    node.kind = _KINDS[match["kind"]]
    node.ports = parse_int(match["ports"], line.no, "number of ports")
    node.description = match["description"] or node.description
    node.lid = parse_int(lid["lid"], line.no, "LID") if lid else node.lid
    return node


def _read_port(fabric: FabricBuilder, node: FabricNode, line: Line, seen_links: set) -> None:
    match = _PORT.match(line.stripped)
    if not match:
        raise ParseError(
            line.no, "port line not readable", '[port] "S-<guid>"[port]  # "description" lid N 4xHDR'
        )
    port = parse_int(match["port"], line.no, "port")
    remote_guid, remote_kind = _guid_from_name(match["remote"], line)
    remote_port = parse_int(match["remote_port"], line.no, "remote port")
    comment = match["comment"] or ""
    local_lid, remote_lid, remote_description = _read_comment(comment, node, line)
    if local_lid is not None and node.lid is None:
        node.lid = local_lid  # a CA's LID is on its port lines
    if fabric.node(remote_guid) is None:
        far = FabricNode(guid=remote_guid, kind=remote_kind, description=remote_description, lid=remote_lid)
        fabric.add_node(far)
    key = frozenset({(node.guid, port), (remote_guid, remote_port)})
    if key in seen_links:
        return
    seen_links.add(key)
    width_speed = _WIDTH_SPEED.search(comment)
    fabric.result.links.append(
        FabricLink(
            a=LinkEnd(guid=node.guid, port=port, lid=local_lid or node.lid, description=node.description),
            b=LinkEnd(guid=remote_guid, port=remote_port, lid=remote_lid, description=remote_description),
            width=f"{width_speed['width']}X" if width_speed else None,
            speed=width_speed["speed"] if width_speed else None,
        )
    )


def _read_comment(comment: str, node: FabricNode, line: Line) -> tuple[int | None, int | None, str | None]:
    """Switch ports: '"remote" lid 226 4xHDR'. CA ports: 'lid 1181 lmc 0 "remote" lid 556 4xHDR'."""
    quoted = _QUOTED.search(comment)
    before, after = (comment[: quoted.start()], comment[quoted.end() :]) if quoted else ("", comment)
    local = _LID.search(before)
    remote = _LID.search(after)
    return (
        parse_int(local["lid"], line.no, "local LID") if local else None,
        parse_int(remote["lid"], line.no, "remote LID") if remote else None,
        quoted["text"] if quoted else None,
    )
