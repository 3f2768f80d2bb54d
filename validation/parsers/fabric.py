"""The fabric graph that iblinkinfo and ibnetdiscover both produce, for the observed-topology
comparison: nodes (switches and CAs, by GUID), and links between (GUID, port) pairs.

GUIDs are normalised to `0x` + 16 lower-case hex digits, whichever spelling the tool used. A link
end whose GUID the output never states (iblinkinfo names a remote port by LID only, and a
truncated output may lack that LID's node) keeps its LID and description and a null GUID.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import ParsedResult


@dataclass(kw_only=True)
class FabricNode:
    guid: str
    kind: str  # "switch", "ca" or "router"
    description: str | None = None
    lid: int | None = None
    ports: int | None = None  # number of ports, when the tool prints it


@dataclass(kw_only=True)
class LinkEnd:
    guid: str | None
    port: int
    lid: int | None = None
    description: str | None = None


@dataclass(kw_only=True)
class FabricLink:
    a: LinkEnd
    b: LinkEnd
    width: str | None = None  # "4X"
    speed: str | None = None  # "HDR" or "25.78125 Gbps", as the tool prints it
    state: str | None = None  # "Active"
    physical_state: str | None = None  # "LinkUp"


@dataclass(kw_only=True)
class FabricPort:
    """Every local port the tool listed, linked or not (iblinkinfo shows Down/Polling ports)."""

    guid: str | None
    port: int
    lid: int | None = None
    state: str | None = None
    physical_state: str | None = None
    width: str | None = None
    speed: str | None = None
    connected: bool = False


@dataclass(kw_only=True)
class FabricResult(ParsedResult):
    tool: str
    nodes: list[FabricNode] = field(default_factory=list)
    links: list[FabricLink] = field(default_factory=list)
    ports: list[FabricPort] = field(default_factory=list)

    def node(self, guid: str) -> FabricNode | None:
        return next((node for node in self.nodes if node.guid == guid), None)


class FabricBuilder:
    """Builds a FabricResult with constant-time node lookups: a fabric runs to thousands of nodes
    and every port line looks its far end up."""

    def __init__(self, tool: str):
        self.result = FabricResult(tool=tool)
        self._nodes: dict[str, FabricNode] = {}

    def node(self, guid: str) -> FabricNode | None:
        return self._nodes.get(guid)

    def add_node(self, node: FabricNode) -> FabricNode:
        self._nodes[node.guid] = node
        self.result.nodes.append(node)
        return node
