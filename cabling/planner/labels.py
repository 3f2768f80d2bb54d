"""Cable labels: deterministic, unique per project, one numbering per network.

A cable's label is the network's label prefix and a zero-padded number, counted from 1 in plan
order (network, tier, A device, A port): `C00001` is the first compute cable. Each end carries a
tag `rack-U-device-port` (U of the device's top unit, two digits): `A01-U37-gpu-001-ib0`,
`N01-U04-ib-leaf-01-p1`. The printed label at an end reads the cable label, this end's tag, then the
far end(s). The same spec always gives the same labels; adding servers to one network does not
renumber the others. See docs/fabric-plan.md ("Labels").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .model import Cable, CableEnd, Link
from .spec import FabricSpec

NUMBER_WIDTH = 5
UNRACKED = "unracked"  # in place of rack-U for a device that has no place (yet): only in the database


def place_tag(*, rack: str | None, top_u: int | None, device: str, port: str) -> str:
    """`rack-U-device-port`, U the device's top unit on two digits: the one definition of the tag, printed
    by the planner's ends and by the database's (cabling.selectors), so both always read the same."""
    if not rack or top_u is None:
        return f"{UNRACKED}-{device}-{port}"
    return f"{rack}-U{top_u:02d}-{device}-{port}"


def end_tag(end: CableEnd) -> str:
    return place_tag(rack=end.rack, top_u=end.position_u, device=end.device, port=end.port.name)


def assign_labels(spec: FabricSpec, cables: Sequence[Cable], links: Sequence[Link]) -> None:
    """Label every cable and end tag in place, and tell every link the label of its cable."""
    prefixes = {net.key: net.label_prefix for net in spec.networks}
    totals: dict[str, int] = {}
    for cable in cables:
        totals[cable.network] = totals.get(cable.network, 0) + 1
    counters = dict.fromkeys(totals, 0)
    for cable in cables:
        counters[cable.network] += 1
        width = max(NUMBER_WIDTH, len(str(totals[cable.network])))
        cable.label = f"{prefixes[cable.network]}{counters[cable.network]:0{width}d}"
        for end in cable.ends:
            end.tag = end_tag(end)
        for index in cable.links:
            links[index].cable = cable.label


def label_lines(cable: Cable, end: CableEnd) -> list[str]:
    """The text printed at one end: label, this end's tag, and where the other end(s) go."""
    far: Iterable[CableEnd] = cable.b_ends if end.side == "A" else (cable.a_end,)
    return [cable.label, end.tag, *(f"> {other.tag}" for other in far)]
