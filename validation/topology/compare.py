"""The plan against the fabric, link by link (pure Python: no Django, no database).

    comparison = compare(inventory, planned_links, observation)
    comparison.counts     # {"ok": 1147, "missing": 1, "miswired": 3, "unplanned": 0, "degraded": 1, ...}
    comparison.results    # one LinkResult per planned link in scope and per unplanned observed link

Each planned link the outputs cover (an InfiniBand link with an end on a device the fabric outputs list;
another link with an end on a device whose LLDP table was read) ends up in one state:

- ok: seen between its two planned ports (or, where the far end's port was not reported, its device);
- degraded: seen there, but up at a lower width or speed than planned ("2X instead of 4X", "NDR instead
  of XDR", "100G instead of 400G");
- miswired: its cable is seen on one of its planned ports and somewhere else at the other end. The cable
  is told by the end that matches; where both ends of the observed link are planned for different
  cables, it is the cable whose A end (the end the label starts from, where a technician plugs first)
  is in the link. So a cable that lands on the wrong switch is one miswire naming the planned and the
  observed far end, never a missing link plus an unplanned one. Two miswires that each sit where the
  other belongs are a swapped pair, with one piece of advice: "swap the cables in ib-leaf-03 ports p17
  and p18";
- missing: not seen at all, with what its ports showed instead (down, or holding another cable);
- unplanned (observed links only): a link no planned link accounts for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from . import naming
from .model import Inventory, Observation, ObservedLink, PlannedLink


class LinkState(StrEnum):
    OK = "ok"
    MISSING = "missing"
    MISWIRED = "miswired"
    UNPLANNED = "unplanned"
    DEGRADED = "degraded"


STATES = tuple(LinkState)
# A cable with several links (a breakout) takes the worst of them; a cable is only "ok" when all are.
CABLE_SEVERITY = {LinkState.OK: 0, LinkState.DEGRADED: 1, LinkState.MISSING: 2, LinkState.MISWIRED: 3}
_ORDER = {LinkState.MISWIRED: 0, LinkState.MISSING: 1, LinkState.DEGRADED: 2, LinkState.UNPLANNED: 3,
          LinkState.OK: 4}


@dataclass(slots=True)
class LinkResult:
    state: LinkState
    key: str  # the planned link's key (cable label, /B<n> for a breakout leg), or obs:<ends> when unplanned
    planned: PlannedLink | None = None
    observed: ObservedLink | None = None
    planned_a: str = ""
    planned_b: str = ""
    observed_a: str = ""
    observed_b: str = ""
    note: str = ""
    advice: str = ""
    swap_with: str = ""  # the key of the other half of a swapped pair

    @property
    def cable_label(self) -> str:
        return self.planned.cable_label if self.planned else ""

    @property
    def cable_id(self) -> int | None:
        return self.planned.cable_id if self.planned else None

    def as_dict(self) -> dict:
        return {
            "state": self.state.value,
            "cable": self.cable_label or None,
            "planned": {"a": self.planned_a, "b": self.planned_b} if self.planned else None,
            "observed": {"a": self.observed_a, "b": self.observed_b} if self.observed else None,
            "note": self.note,
            "advice": self.advice,
            **({"swap_with": self.swap_with} if self.swap_with else {}),
        }


@dataclass
class Comparison:
    results: list[LinkResult] = field(default_factory=list)
    in_scope: int = 0
    observed: int = 0
    swaps: int = 0

    @property
    def counts(self) -> dict[str, int]:
        tally = Counter(result.state for result in self.results)
        return {
            **{state.value: tally.get(state, 0) for state in STATES},
            "swaps": self.swaps,
            "in_scope": self.in_scope,
            "observed": self.observed,
        }

    def describe(self, inventory: Inventory, result: LinkResult) -> LinkResult:
        """Fill in the words of an ok result (left out while comparing: a healthy fabric has tens of
        thousands), e.g. for a link fixed since the previous comparison."""
        if result.planned is not None and not result.planned_a:
            result.planned_a = inventory.port_text(result.planned.a)
            result.planned_b = inventory.port_text(result.planned.b)
        if result.observed is not None and not result.observed_a:
            for end in (result.observed.a, result.observed.b):
                text = inventory.port_text(end.port_id) if end.port_id is not None else end.text
                if result.observed_a:
                    result.observed_b = text
                else:
                    result.observed_a = text
        return result

    def faults(self) -> list[LinkResult]:
        return [result for result in self.results if result.state != LinkState.OK]

    def cable_states(self) -> dict[int, str]:
        """Cable id -> the worst state of its links (cabling.choices.FabricState values)."""
        states: dict[int, LinkState] = {}
        for result in self.results:
            if result.cable_id is None or result.state == LinkState.UNPLANNED:
                continue
            known = states.get(result.cable_id)
            if known is None or CABLE_SEVERITY[result.state] > CABLE_SEVERITY[known]:
                states[result.cable_id] = result.state
        return {cable_id: state.value for cable_id, state in states.items()}

    def as_json(self) -> dict:
        """What `compare_topology --json` prints: the counts and every link that is not ok."""
        return {**self.counts, "links": [result.as_dict() for result in self.faults()]}


def _in_scope(planned: PlannedLink, inventory: Inventory, observation: Observation) -> bool:
    devices = observation.ib_devices if planned.infiniband else observation.lldp_devices
    ports = inventory.ports
    return ports[planned.a].device_id in devices or ports[planned.b].device_id in devices


def compare(inventory: Inventory, planned: Iterable[PlannedLink], observation: Observation) -> Comparison:
    """Every planned link in the observation's scope and every observed link, in one state each."""
    return _Comparer(inventory, list(planned), observation).run()


class _Comparer:
    def __init__(self, inventory: Inventory, planned: list[PlannedLink], observation: Observation):
        self.inventory = inventory
        self.observation = observation
        self.planned = planned
        self.at: dict[int, PlannedLink] = {}
        for link in planned:
            self.at[link.a] = link
            self.at[link.b] = link
        self.consumed: set[str] = set()
        self.results: list[LinkResult] = []
        self.occupied: dict[int, ObservedLink] = {}  # port id -> the observed link holding it

    # -- texts -----------------------------------------------------------------------------------------

    def text(self, port_id: int) -> str:
        return self.inventory.port_text(port_id)

    def end_text(self, link: ObservedLink, end) -> str:
        return self.text(end.port_id) if end.port_id is not None else end.text

    def device_of(self, port_id: int) -> int:
        return self.inventory.ports[port_id].device_id

    def _result(self, state: LinkState, planned: PlannedLink | None, observed: ObservedLink | None,
                **texts) -> LinkResult:
        result = LinkResult(state, planned.key if planned else _observed_key(observed, self), planned, observed,
                            **texts)
        if planned is not None:
            self.consumed.add(planned.key)
        self.results.append(result)
        if state == LinkState.OK:  # the bulk of a healthy fabric: its words are made only when asked (describe)
            return result
        if planned is not None:
            result.planned_a, result.planned_b = self.text(planned.a), self.text(planned.b)
        if observed is not None and not result.observed_a:
            result.observed_a = self.end_text(observed, observed.a)
            result.observed_b = self.end_text(observed, observed.b)
        return result

    # -- the passes ------------------------------------------------------------------------------------

    def run(self) -> Comparison:
        links = self.observation.links
        for link in links:
            for end in (link.a, link.b):
                if end.port_id is not None:
                    self.occupied.setdefault(end.port_id, link)
        leftovers = [link for link in links if not self._matches(link)]
        for link in leftovers:
            self._mismatch(link)
        in_scope = [p for p in self.planned if _in_scope(p, self.inventory, self.observation)]
        for link in in_scope:
            if link.key not in self.consumed:
                self._missing(link)
        swaps = self._pair_swaps()
        self.results.sort(key=lambda r: (_ORDER[r.state], r.key))
        return Comparison(results=self.results, in_scope=len(in_scope), observed=len(links), swaps=swaps)

    def _matches(self, link: ObservedLink) -> bool:
        """An observed link between a planned link's own ends (or its own end and its far device, where the
        tool did not say which port): ok or degraded."""
        a, b = link.a.port_id, link.b.port_id
        for near, far, far_end in ((a, b, link.b), (b, a, link.a)):
            if near is None:
                continue
            planned = self.at.get(near)
            if planned is None or planned.key in self.consumed:
                continue
            other = planned.other(near)
            if far == other or (far is None and far_end.device_id == self.device_of(other)):
                note = "" if far is not None else f"{far_end.text}: port not reported, device as planned"
                worse = _degraded(planned, link)
                if worse:
                    self._result(LinkState.DEGRADED, planned, link, note=worse,
                                 advice=f"Reseat or replace {planned.cable_label} (clean or swap its optics): "
                                 f"it runs at {worse}.")
                else:
                    self._result(LinkState.OK, planned, link, note=note)
                return True
        return False

    def _mismatch(self, link: ObservedLink) -> None:
        candidates = []
        for end in (link.a, link.b):
            if end.port_id is not None:
                planned = self.at.get(end.port_id)
                if planned is not None and planned.key not in self.consumed:
                    candidates.append((end, planned))
        if not candidates:
            known = [e for e in (link.a, link.b) if e.device_id is not None]
            why = "no cable is planned between these ports" if len(known) == 2 else (
                "a device the project does not know" if known else "two devices the project does not know")
            self._result(LinkState.UNPLANNED, None, link, note=why,
                         advice="Not in the plan: unplug it, or add it to the plan.")
            return
        # The cable is the one whose A end is in the link (plugged where its label says); else the first.
        end, planned = next(((e, p) for e, p in candidates if p.a == e.port_id), candidates[0])
        far_end = link.b if end is link.a else link.a
        observed_far = self.end_text(link, far_end)
        planned_far = self.text(planned.other(end.port_id))
        taken = self.at.get(far_end.port_id) if far_end.port_id is not None else None
        note = f"planned to {planned_far}, found on {observed_far}"
        if taken is not None and taken.key != planned.key:
            note += f" (where {taken.cable_label} belongs)"
        result = self._result(LinkState.MISWIRED, planned, link, note=note,
                              advice=f"Move {planned.cable_label} from {observed_far} to {planned_far}.")
        result.observed_a, result.observed_b = self._oriented(planned, link, end)

    def _oriented(self, planned: PlannedLink, link: ObservedLink, anchor) -> tuple[str, str]:
        """The observed ends in the planned link's order (A first), so a row reads planned vs observed."""
        other = link.b if anchor is link.a else link.a
        anchor_text, other_text = self.end_text(link, anchor), self.end_text(link, other)
        return (anchor_text, other_text) if anchor.port_id == planned.a else (other_text, anchor_text)

    def _missing(self, planned: PlannedLink) -> None:
        seen = []
        for port_id in (planned.a, planned.b):
            state = self.observation.down.get(port_id)
            holder = self.occupied.get(port_id)
            if holder is not None:
                far = holder.b if holder.a.port_id == port_id else holder.a
                seen.append(f"{self.text(port_id)} is linked to {self.end_text(holder, far)}")
            elif state:
                seen.append(f"{self.text(port_id)} is {state}")
        note = "; ".join(seen) or "not seen at either end"
        down = any(port_id in self.observation.down for port_id in (planned.a, planned.b))
        advice = (f"Check {planned.cable_label} at both ends: the link is down (reseat it, then replace the optic "
                  "or the cable)." if down else f"Plug in {planned.cable_label}: {self.text(planned.a)} to "
                  f"{self.text(planned.b)}.")
        self._result(LinkState.MISSING, planned, None, note=note, advice=advice)

    def _pair_swaps(self) -> int:
        """Two miswires whose found far ends are each other's planned far ends: one swap, said once."""
        by_ends: dict[tuple[str, str], LinkResult] = {}
        for result in self.results:
            if result.state == LinkState.MISWIRED:
                far = _far_pair(result)
                if far:
                    by_ends[far] = result
        swaps = 0
        for (planned_far, found_far), result in by_ends.items():
            partner = by_ends.get((found_far, planned_far))
            if partner is None or result.swap_with or partner is result:
                continue
            result.swap_with, partner.swap_with = partner.key, result.key
            advice = _swap_advice(planned_far, found_far)
            for each in (result, partner):
                each.advice = advice
                each.note += f"; swapped with {(partner if each is result else result).cable_label}"
            swaps += 1
        return swaps


def _far_pair(result: LinkResult) -> tuple[str, str] | None:
    """(planned far end, found far end) of a miswire: the ends that differ between plan and fabric."""
    planned = (result.planned_a, result.planned_b)
    found = (result.observed_a, result.observed_b)
    if planned[0] == found[0] and planned[1] != found[1]:
        return planned[1], found[1]
    if planned[1] == found[1] and planned[0] != found[0]:
        return planned[0], found[0]
    return None


def _swap_advice(one: str, other: str) -> str:
    device_one, _, port_one = one.partition(":")
    device_other, _, port_other = other.partition(":")
    first, second = sorted([(device_one, port_one), (device_other, port_other)], key=_natural)
    if first[0] == second[0] and first[1] and second[1]:
        return f"Swap the cables in {first[0]} ports {first[1]} and {second[1]}."
    return f"Swap the cables at {first[0]}:{first[1]} and {second[0]}:{second[1]}."


def _natural(end: tuple[str, str]) -> tuple:
    device, port = end
    number = naming.port_number(port)
    return device, number if number is not None else -1, port


def _degraded(planned: PlannedLink, link: ObservedLink) -> str:
    worse = []
    if planned.infiniband:
        if link.width and planned.width and link.width < planned.width:
            worse.append(f"{link.width}X instead of {planned.width}X")
        expected = planned.generation
        if (link.generation in naming.IB_LANE_GBPS and expected in naming.IB_LANE_GBPS
                and naming.IB_LANE_GBPS[link.generation] < naming.IB_LANE_GBPS[expected]):
            worse.append(f"{link.generation} instead of {expected}")
    elif link.speed_gbps and link.speed_gbps < planned.speed_gbps:
        worse.append(f"{link.speed_gbps:g}G instead of {planned.speed_gbps}G")
    return ", ".join(worse)


def _observed_key(link: ObservedLink | None, comparer: _Comparer) -> str:
    if link is None:
        return ""
    ends = sorted(comparer.end_text(link, end) for end in (link.a, link.b))
    return "obs:" + "~".join(ends)
