"""Acceptance criteria: measured values and a profile in, a verdict with reasons out.

Pure Python (no Django import, no database) so every threshold can be tested at its boundary in
microseconds. Every function takes either a parser's dataclass or a plain dict with the keys of
`parse_output --json` (the two have the same shape), plus a `Profile`, and returns a `Verdict`:
pass, warn or fail, with reasons that name the measured value and the threshold it was held to.

Units: perftest bandwidths are Gb/s (the parsers normalise them); nccl-tests bandwidths are GB/s,
as the tool prints them; BER is a plain float (1e-12); DOM power is dBm, temperature degrees C.
"""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Outcome(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    ERROR = "error"  # the check could not measure (unreachable node, unreadable output)


# Which outcome wins when findings are combined: a definite failure outranks "could not measure".
_SEVERITY = {Outcome.PASS: 0, Outcome.WARN: 1, Outcome.ERROR: 2, Outcome.FAIL: 3}


@dataclass(frozen=True)
class Reason:
    level: Outcome
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"level": str(self.level), "text": self.text}


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reasons: tuple[Reason, ...] = ()

    @classmethod
    def of(cls, reasons: Iterable[Reason]) -> Verdict:
        """The worst level among the reasons (pass when there are none). Pass-level reasons are notes
        worth keeping (e.g. "passive copper: no DOM"), not problems."""
        reasons = tuple(reasons)
        outcome = max((r.level for r in reasons), key=_SEVERITY.__getitem__, default=Outcome.PASS)
        return cls(outcome=outcome, reasons=reasons)

    def reasons_json(self) -> list[dict[str, str]]:
        return [r.as_dict() for r in self.reasons]

    def problems(self) -> list[str]:
        return [r.text for r in self.reasons if r.level != Outcome.PASS]


def error_verdict(message: str) -> Verdict:
    return Verdict(outcome=Outcome.ERROR, reasons=(Reason(Outcome.ERROR, message),))


@dataclass(frozen=True)
class Profile:
    """The thresholds a project's results are judged by. Defaults follow DOMAIN.md and common practice:
    warn levels sit on the safe side of fail levels so a drifting link is seen before it fails."""

    effective_ber_warn: float = 1e-13
    effective_ber_fail: float = 1e-12
    symbol_ber_warn: float = 1e-16
    symbol_ber_fail: float = 1e-15
    check_dom: bool = True
    dom_power_margin_db: float = 1.0  # warn when a lane is this close to the module's own limit
    dom_temperature_margin_c: float = 5.0
    gpu_rdma_warn_fraction: float = 0.97  # of the link's line rate
    gpu_rdma_fail_fraction: float = 0.95
    cpu_bw_warn_gbps: float = 445.0  # host memory path, capped by PCIe 5.0 x16: 440-470 expected
    cpu_bw_fail_gbps: float = 440.0
    nccl_busbw_warn_gbs: float = 800.0  # bus bandwidth at the largest message size, GB/s
    nccl_busbw_fail_gbs: float = 780.0
    matrix_outlier_fraction: float = 0.90  # a pair below this share of the run's median is flagged
    pinned_versions: Mapping[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------
# Formatting: reasons must read well and name numbers the way engineers write them.


def fmt_sci(value: float) -> str:
    """1e-12 stays "1e-12"; 3.2e-10 stays "3.2e-10"."""
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.1e}".split("e")
    mantissa = mantissa.removesuffix(".0")
    return f"{mantissa}e{int(exponent)}"


def fmt_num(value: float, digits: int = 1) -> str:
    """At most `digits` decimals, no trailing zeros: 440.0 -> "440", 472.62 -> "472.62"."""
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_bytes(size: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"


# ---------------------------------------------------------------------------------------------------
# Reading parser output: dataclasses and dicts look the same from here.


def as_dict(obj: Any) -> dict[str, Any]:
    if obj is None:
        return {}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(f"expected a parser result or a dict, got {type(obj).__name__}")


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


# ---------------------------------------------------------------------------------------------------
# Link health (mlxlink)

# Per-lane data rate (Gb/s) of each InfiniBand generation, as mlxlink names the speed.
IB_SPEED_BY_LANE_GBPS = {10: "IB-QDR", 14: "IB-FDR", 25: "IB-EDR", 50: "IB-HDR", 100: "IB-NDR", 200: "IB-XDR"}
# Electrical (SerDes) lanes of an OSFP/QSFP InfiniBand port: XDR 800G = 4 x 200G, NDR 400G = 4 x 100G.
PORT_SERDES_LANES = 4


@dataclass(frozen=True)
class LinkPlan:
    """What the inventory says the link should negotiate: mlxlink's Speed and Width strings. For a
    breakout port, `lane_ports` names the child port each electrical lane belongs to (so a reading of
    lane 2 can name its plane's port) and `problems` says where the child ports do not add up."""

    speed: str | None
    width: str | None
    lane_ports: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "speed": self.speed,
            "width": self.width,
            "lane_ports": list(self.lane_ports),
            "problems": list(self.problems),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LinkPlan:
        return cls(
            speed=data.get("speed"),
            width=data.get("width"),
            lane_ports=tuple(data.get("lane_ports") or ()),
            problems=tuple(data.get("problems") or ()),
        )

    @property
    def ethernet(self) -> bool:
        """A RoCE port's plan: an Ethernet speed ("400G"), where InfiniBand's is a generation ("IB-NDR")."""
        return ethernet_speed_gbps(self.speed) is not None

    @property
    def speed_gbps(self) -> int | None:
        """An Ethernet plan's speed in Gb/s (None for InfiniBand, whose speed is a generation)."""
        return ethernet_speed_gbps(self.speed) if self.ethernet else None


def link_plan(*, speed_gbps: int, lanes: int | None, infiniband: bool) -> LinkPlan:
    """The planned mlxlink speed/width of a link `lanes` electrical lanes wide: an 800G port of 4 lanes is
    IB-XDR at 4x. Lanes not known are assumed to be 4, the width of every OSFP/QSFP IB port."""
    lanes = lanes if lanes and lanes > 1 else PORT_SERDES_LANES
    if not infiniband:
        # An Ethernet port's width is its SerDes count, which mlxlink reports but the inventory does not
        # know (an 800G port may run 8 x 100G or 4 x 200G): a lost lane shows as a lower speed anyway.
        return LinkPlan(speed=f"{speed_gbps}G", width=None)
    per_lane = speed_gbps / lanes
    speed = IB_SPEED_BY_LANE_GBPS.get(int(per_lane)) if per_lane.is_integer() else None
    return LinkPlan(speed=speed, width=f"{lanes}x")


def port_link_plan(
    *, speed_gbps: int, breakout: Sequence[tuple[str, int]] = (), infiniband: bool = True
) -> LinkPlan:
    """The plan of a physical port from the inventory: its own speed and, for a breakout port, each child
    port's own speed (name, Gb/s), in lane order.

    Assumption: `mlxlink -d mlx5_<i>` reports the physical NIC port (one RDMA device per NIC port,
    rail-optimized numbering: see services.Rail), and a physical port negotiates all its electrical
    lanes whether they are split into planes or not: 4 x 200G planes and 2 x 400G planes of an 800G
    port are both IB-XDR at 4x. The number of child ports is not the width: each child port holds
    speed / lane rate of the lanes, in order, and is checked to be a whole number of them."""
    width = max(PORT_SERDES_LANES, len(breakout))
    plan = link_plan(speed_gbps=speed_gbps, lanes=width, infiniband=infiniband)
    if not breakout:
        return plan
    lane_rate = speed_gbps / width
    problems, lane_ports = [], []
    for name, child_speed in breakout:
        share = child_speed / lane_rate if lane_rate else 0
        if share < 1 or not share.is_integer():
            problems.append(
                f"port {name} at {fmt_num(child_speed)} Gb/s is not a whole number of the port's "
                f"{fmt_num(lane_rate)} Gb/s lanes"
            )
            continue
        lane_ports += [name] * int(share)
    total = sum(child_speed for _, child_speed in breakout)
    if total != speed_gbps:
        problems.append(
            f"the breakout ports ({' + '.join(fmt_num(s) for _, s in breakout)} Gb/s) do not add up to "
            f"the port's {fmt_num(speed_gbps)} Gb/s"
        )
    if problems or len(lane_ports) != width:
        lane_ports = []
    return dataclasses.replace(plan, lane_ports=tuple(lane_ports), problems=tuple(problems))


def _norm(text: Any) -> str:
    return str(text or "").strip().lower()


_ETHERNET_SPEED = re.compile(r"^\s*([0-9]{1,4})\s*G", re.IGNORECASE)


def ethernet_speed_gbps(text: Any) -> int | None:
    """An Ethernet speed as mlxlink prints it, in Gb/s: "100G" (MFT 4.30), "100GbE" (older MFT), "200G_4X"
    (the lane count some versions append). None for anything else (an InfiniBand "IB-NDR", "N/A")."""
    match = _ETHERNET_SPEED.match(str(text or ""))
    return int(match[1]) if match else None


def _speed_matches(measured: Any, plan: LinkPlan) -> bool:
    if plan.ethernet:
        return ethernet_speed_gbps(measured) == plan.speed_gbps
    return _norm(measured) == _norm(plan.speed)


def _link_state_reasons(link: Mapping[str, Any], plan: LinkPlan) -> list[Reason]:
    reasons = []
    state = link.get("state")
    if _norm(state) != "active":
        reasons.append(Reason(Outcome.FAIL, f"link state {state or 'unknown'}, expected Active"))
    physical = link.get("physical_state")
    # Only InfiniBand's physical state is "LinkUp" when up: an Ethernet port that is up may print its
    # auto-negotiation machine's state instead (ETH_AN_FSM_ENABLE on a ConnectX-6 at 200G).
    if plan.speed and plan.speed.startswith("IB-") and physical is not None and _norm(physical) != "linkup":
        reasons.append(Reason(Outcome.FAIL, f"physical state {physical}, expected LinkUp"))
    if plan.speed and not _speed_matches(link.get("speed"), plan):
        reasons.append(Reason(Outcome.FAIL, f"speed {link.get('speed') or 'unknown'}, planned {plan.speed}"))
    if plan.width and _norm(link.get("width")) != _norm(plan.width):
        reasons.append(Reason(Outcome.FAIL, f"width {link.get('width') or 'unknown'}, planned {plan.width}"))
    return reasons


def _level_above(value: float, *, warn: float, fail: float) -> Outcome:
    if value > fail:
        return Outcome.FAIL
    if value > warn:
        return Outcome.WARN
    return Outcome.PASS


def _ber_reasons(counters: Mapping[str, Any], profile: Profile, *, ethernet: bool = False) -> list[Reason]:
    reasons = []
    for key, label, warn, fail in (
        ("effective_ber", "effective BER", profile.effective_ber_warn, profile.effective_ber_fail),
        ("symbol_ber", "symbol BER", profile.symbol_ber_warn, profile.symbol_ber_fail),
    ):
        value = _number(counters.get(key))
        if value is None and ethernet and key == "symbol_ber":
            continue  # mlxlink prints no symbol BER for an Ethernet port: its effective BER says it all
        if value is None:
            reasons.append(Reason(Outcome.WARN, f"{label} not reported (run mlxlink with -c)"))
            continue
        level = _level_above(value, warn=warn, fail=fail)
        if level == Outcome.FAIL:
            reasons.append(Reason(level, f"{label} {fmt_sci(value)} > fail level {fmt_sci(fail)}"))
        elif level == Outcome.WARN:
            reasons.append(Reason(level, f"{label} {fmt_sci(value)} > warn level {fmt_sci(warn)}"))
    return reasons


GROWTH_COUNTERS = (
    ("symbol_errors", "symbol errors"),
    ("link_down", "link-down counter"),
    ("link_error_recovery", "link error recovery counter"),
)


def counter_growth_reasons(counters: Mapping[str, Any], baseline: Mapping[str, Any] | None) -> list[Reason]:
    """Counters must not grow between two readings of the same port. A counter lower than its baseline
    was cleared in between, which says nothing about growth."""
    if not baseline:
        return []
    reasons = []
    for key, label in GROWTH_COUNTERS:
        now, before = _number(counters.get(key)), _number(baseline.get(key))
        if now is None or before is None:
            continue
        if now > before:
            reasons.append(Reason(Outcome.FAIL, f"{label} grew from {before:.0f} to {now:.0f}"))
    return reasons


def _range_of(module: Mapping[str, Any], key: str) -> tuple[float, float] | None:
    """The module's own [low..high] limits for a reading, as mlxlink prints them after the value."""
    limits = (module.get("ranges") or {}).get(key)
    if not isinstance(limits, list | tuple) or len(limits) != 2:
        return None
    lo, hi = _number(limits[0]), _number(limits[1])
    return (lo, hi) if lo is not None and hi is not None else None


def _as_lanes(value: Any) -> list[float | None]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [_number(v) for v in value]
    return [_number(value)]


_DOM_READINGS = ("temperature_c", "voltage_mv", "rx_power_dbm", "tx_power_dbm", "bias_current_ma")


def _dom_readings(module: Mapping[str, Any]) -> list[float]:
    readings = [_number(module.get("temperature_c")), _number(module.get("voltage_mv"))]
    for key in ("rx_power_dbm", "tx_power_dbm", "bias_current_ma"):
        readings += _as_lanes(module.get(key))
    return [r for r in readings if r is not None]


def is_passive_copper(module: Mapping[str, Any]) -> bool:
    """A passive DAC has no laser and no DOM. Only the module itself can say so: its cable type or
    technology, or every reading 0 with a [0..0] range. An output with no module section at all says
    nothing about the cable (mlxlink was run without -m, or the module did not answer)."""
    if module.get("is_passive_copper"):
        return True
    described = f"{_norm(module.get('cable_type'))} {_norm(module.get('cable_technology'))}"
    if "passive" in described and "copper" in described:
        return True
    readings = _dom_readings(module)
    ranges = [_range_of(module, key) for key in _DOM_READINGS]
    ranges = [r for r in ranges if r is not None]
    return bool(readings) and bool(ranges) and all(r == 0 for r in readings) and all(r == (0.0, 0.0) for r in ranges)


def _limit_reasons(
    label: str,
    unit: str,
    values: list[float | None],
    limits: tuple[float, float] | None,
    margin: float,
    lane_ports: Sequence[str] = (),
) -> list[Reason]:
    if limits is None:
        return []
    lo, hi = limits
    reasons = []
    for lane, value in enumerate(values):
        if value is None:
            continue
        what = f"{label} lane {lane}" if len(values) > 1 else label
        if len(lane_ports) == len(values) > 1:
            what += f" ({lane_ports[lane]})"  # the breakout port (plane) this lane carries
        measured = f"{what} {fmt_num(value, 2)} {unit}"
        if value < lo:
            reasons.append(Reason(Outcome.FAIL, f"{measured} < module low limit {fmt_num(lo, 2)} {unit}"))
        elif value > hi:
            reasons.append(Reason(Outcome.FAIL, f"{measured} > module high limit {fmt_num(hi, 2)} {unit}"))
        elif margin and value < lo + margin:
            near = f"within {fmt_num(margin, 2)} {unit} of module low limit {fmt_num(lo, 2)} {unit}"
            reasons.append(Reason(Outcome.WARN, f"{measured} {near}"))
        elif margin and value > hi - margin:
            near = f"within {fmt_num(margin, 2)} {unit} of module high limit {fmt_num(hi, 2)} {unit}"
            reasons.append(Reason(Outcome.WARN, f"{measured} {near}"))
    return reasons


def dom_reasons(
    module: Mapping[str, Any] | None, profile: Profile, lane_ports: Sequence[str] = ()
) -> list[Reason]:
    """DOM readings held to the module's own limits, not to one figure for every part. `lane_ports`
    names the breakout port of each lane, so a bad lane points at its plane."""
    if not profile.check_dom:
        return []
    module = module or {}
    if is_passive_copper(module):
        return [Reason(Outcome.PASS, "passive copper cable: no DOM to check")]
    if not _dom_readings(module):
        return [Reason(Outcome.WARN, "no DOM reported (run mlxlink with -m; a passive cable says so itself)")]
    reasons = []
    temp = _number(module.get("temperature_c"))
    temp_limits, temp_margin = _range_of(module, "temperature_c"), profile.dom_temperature_margin_c
    reasons += _limit_reasons("module temperature", "C", [temp], temp_limits, temp_margin)
    voltage = _number(module.get("voltage_mv"))
    reasons += _limit_reasons("module voltage", "mV", [voltage], _range_of(module, "voltage_mv"), 0)
    for key, label in (("rx_power_dbm", "Rx power"), ("tx_power_dbm", "Tx power")):
        reasons += _limit_reasons(
            label,
            "dBm",
            _as_lanes(module.get(key)),
            _range_of(module, key),
            profile.dom_power_margin_db,
            lane_ports,
        )
    if not any(_range_of(module, k) for k in ("temperature_c", "rx_power_dbm", "tx_power_dbm")):
        reasons.append(Reason(Outcome.PASS, "the module reports no DOM limits to check against"))
    return reasons


def evaluate_link(
    result: Any, *, plan: LinkPlan, profile: Profile, baseline: Mapping[str, Any] | None = None
) -> Verdict:
    """One port's mlxlink output: state and negotiated speed/width against the plan, BER against the
    profile, counters against the previous reading of the same port, DOM against the module's limits."""
    link = as_dict(result)
    counters = link.get("counters") or {}
    reasons = _link_state_reasons(link, plan)
    reasons += [Reason(Outcome.WARN, f"inventory: {problem}") for problem in plan.problems]
    reasons += _ber_reasons(counters, profile, ethernet=plan.ethernet)
    if plan.ethernet:
        reasons += raw_ber_reasons(counters, plan)
    reasons += counter_growth_reasons(counters, baseline)
    reasons += dom_reasons(link.get("module"), profile, plan.lane_ports)
    return Verdict.of(reasons)


# ---------------------------------------------------------------------------------------------------
# Ethernet (RoCE) ports: raw BER per lane signalling, the NIC's counters (ethtool -S)

# What an Ethernet lane's FEC can still correct, by lane rate: PAM4 lanes (50 Gb/s and more per lane: 200G
# at 4 x 50G, 400G at 4 x 100G, 800G at 4 x 200G) run RS(544,514) "KP4" FEC, which IEEE 802.3 sizes for a
# pre-FEC BER up to 2.4e-4; past it frames are lost. The warn level sits well inside it (a healthy optic
# reads 1e-8..1e-6), so a link drifting towards the edge is seen before it drops frames. NRZ lanes (25G and
# below) are judged by their effective BER only: their FEC (RS(528,514) or none) leaves less to say.
PAM4_MIN_LANE_GBPS = 50
PAM4_RAW_BER_WARN = 1e-5
PAM4_RAW_BER_FAIL = 2.4e-4


def raw_ber_limits(lane_gbps: float | None) -> tuple[float, float] | None:
    """(warn, fail) pre-FEC BER levels for an Ethernet lane of this rate; None when none apply."""
    if lane_gbps is None or lane_gbps < PAM4_MIN_LANE_GBPS:
        return None
    return PAM4_RAW_BER_WARN, PAM4_RAW_BER_FAIL


def raw_ber_reasons(counters: Mapping[str, Any], plan: LinkPlan) -> list[Reason]:
    speed = plan.speed_gbps
    lane_gbps = speed / PORT_SERDES_LANES if speed else None
    limits = raw_ber_limits(lane_gbps)
    raw = _number(counters.get("raw_ber"))
    if limits is None or raw is None:
        return []
    warn, fail = limits
    level = _level_above(raw, warn=warn, fail=fail)
    if level == Outcome.PASS:
        return []
    which = "the FEC's correction limit" if level == Outcome.FAIL else "warn level"
    limit = fail if level == Outcome.FAIL else warn
    return [Reason(level, f"raw (pre-FEC) BER {fmt_sci(raw)} > {which} {fmt_sci(limit)} for "
                          f"{fmt_num(lane_gbps)} Gb/s PAM4 lanes")]


def has_dom_readings(module: Mapping[str, Any] | None) -> bool:
    return bool(_dom_readings(module or {}))


def module_from_ethtool(module: Mapping[str, Any]) -> dict[str, Any]:
    """An `ethtool -m` reading in the shape the DOM checks read (mlxlink's): readings per lane and, as the
    module's limits, its own alarm thresholds (ethtool prints high/low alarm and warning levels; the alarm
    levels are what mlxlink's [low..high] ranges are)."""
    ranges = {}
    for key, name in (("temperature_c", "temperature_c"), ("rx_power_dbm", "rx_power_dbm"),
                      ("tx_power_dbm", "tx_power_dbm"), ("bias_ma", "bias_current_ma")):
        limits = (module.get("thresholds") or {}).get(key) or {}
        low, high = _number(limits.get("low_alarm")), _number(limits.get("high_alarm"))
        if low is not None and high is not None:
            ranges[name] = [low, high]
    voltage = _number(module.get("voltage_v"))
    return {
        "vendor": module.get("vendor"),
        "part_number": module.get("part_number"),
        "serial": module.get("serial"),
        "temperature_c": _number(module.get("temperature_c")),
        "voltage_mv": voltage * 1000 if voltage is not None else None,
        "rx_power_dbm": list(module.get("rx_power_dbm") or []) or None,
        "tx_power_dbm": list(module.get("tx_power_dbm") or []) or None,
        "bias_current_ma": list(module.get("bias_ma") or []) or None,
        "ranges": ranges,
    }


@dataclass(frozen=True)
class RoceSettings:
    """How a project runs RoCE: the lossless priority and the DSCP that maps to it, the trust mode, whether
    ECN (DCQCN) must be on, and what the bandwidth and NCCL tests pass (GID index, traffic class). The
    defaults are the common RoCE v2 ones (NVIDIA's "lossless RoCE" recipe): DSCP 26 on priority 3, trust
    DSCP, GID index 3 (RoCE v2 over IPv4), traffic class 106 (DSCP 26 with ECN capable transport)."""

    pfc_priority: int = 3
    dscp: int = 26
    trust: str = "dscp"
    ecn: bool = True
    gid_index: int = 3
    traffic_class: int = 106
    # Bandwidth tests connect through RDMA-CM (ib_write_bw -R): only where each node's name resolves to its
    # rail's address, since RDMA-CM picks the device by the route, not by -d.
    rdma_cm: bool = False

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoceSettings:
        """Settings from stored overrides; a value of the wrong type or out of range is a ValueError naming
        it (a profile must never make a check crash later)."""
        if data is not None and not isinstance(data, Mapping):  # stored past the profile's checks (the admin)
            raise ValueError("roce: expected an object of settings")
        ranges = {"pfc_priority": (0, 7), "dscp": (0, 63), "gid_index": (0, 255), "traffic_class": (0, 255)}
        values: dict[str, Any] = {}
        for name, value in (data or {}).items():
            if name in ranges:
                low, high = ranges[name]
                if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                    raise ValueError(f"roce.{name}: expected a whole number from {low} to {high}")
            elif name == "trust":
                if value not in ("dscp", "pcp"):
                    raise ValueError("roce.trust: expected dscp or pcp")
            elif name in ("ecn", "rdma_cm"):
                if not isinstance(value, bool):
                    raise ValueError(f"roce.{name}: expected true or false")
            else:
                raise ValueError(f"roce.{name}: not a RoCE setting")
            values[name] = value
        return cls(**{**values, "traffic_class": cls._traffic_class(values)})

    @staticmethod
    def _traffic_class(values: Mapping[str, Any]) -> int:
        """The IP traffic class NCCL and perftest mark: the DSCP in its upper six bits, ECN-capable (2) below.
        One given apart from the DSCP must carry that DSCP, or the checks would pass a lossless priority the
        traffic never uses."""
        dscp = values.get("dscp", RoceSettings.dscp)
        if "traffic_class" not in values:
            return dscp << 2 | 2
        if values["traffic_class"] >> 2 != dscp:
            raise ValueError(f"roce.traffic_class: {values['traffic_class']} marks DSCP "
                             f"{values['traffic_class'] >> 2}, not the lossless DSCP {dscp}")
        return values["traffic_class"]


# The NIC's counters that say a port lost or mangled frames (mlx5 names; other drivers print fewer).
PORT_ERROR_COUNTERS = (
    ("rx_crc_errors_phy", "CRC errors"),
    ("rx_symbol_err_phy", "symbol errors"),
    ("tx_errors_phy", "transmit errors"),
)
PORT_DISCARD_COUNTERS = (
    ("rx_discards_phy", "received packets discarded"),
    ("tx_discards_phy", "packets discarded on transmit"),
)
PAUSE_STORM_COUNTERS = (("tx_pause_storm_error_events", "pause storms (the NIC stopped sending pauses)"),)
# What link health keeps of `ethtool -S` (a mlx5 port prints hundreds of per-queue counters).
_KEPT_COUNTER = re.compile(
    r"^(?:(?:rx|tx)_(?:crc_errors|symbol_err|errors|discards|pause_ctrl|packets|bytes)_phy"
    r"|(?:rx|tx)_prio[0-7]_(?:pause|discards)|tx_pause_storm_\w+|rx_out_of_buffer|tx_global_pause|rx_global_pause)$"
)


def kept_port_counters(counters: Mapping[str, Any]) -> dict[str, int]:
    return {name: value for name, value in counters.items() if _KEPT_COUNTER.match(name)}


def port_counter_reasons(
    counters: Mapping[str, Any], *, settings: RoceSettings, profile: Profile, baseline: Mapping[str, Any] | None = None
) -> list[Reason]:
    """An Ethernet port's NIC counters (ethtool -S): the lossless priority must drop nothing, errors are held
    to the profile's BER as a rate over the bits received, pause storms fail, pauses on a priority that is
    not lossless say PFC is configured where it should not be, and nothing may grow since the last reading."""
    reasons: list[Reason] = []
    lossless = settings.pfc_priority
    dropped = _number(counters.get(f"rx_prio{lossless}_discards"))
    if dropped:
        reasons.append(Reason(Outcome.FAIL, f"lossless priority {lossless} discarded {dropped:.0f} packets "
                                            f"(rx_prio{lossless}_discards): PFC is not holding them"))
    bits = (_number(counters.get("rx_bytes_phy")) or 0) * 8
    for key, label in PORT_ERROR_COUNTERS:
        count = _number(counters.get(key))
        if not count:
            continue
        rate = count / bits if bits else None
        if rate is not None and rate > profile.effective_ber_fail:
            reasons.append(Reason(Outcome.FAIL, f"{label} {count:.0f} ({key}) = {fmt_sci(rate)} per bit received "
                                                f"> fail level {fmt_sci(profile.effective_ber_fail)}"))
        else:
            reasons.append(Reason(Outcome.WARN, f"{label} {count:.0f} ({key}) since the counters were cleared"))
    for key, label in PORT_DISCARD_COUNTERS:
        count = _number(counters.get(key))
        if count:
            reasons.append(Reason(Outcome.WARN, f"{count:.0f} {label} ({key}): the port ran out of buffer"))
    for key, label in PAUSE_STORM_COUNTERS:
        count = _number(counters.get(key))
        if count:
            reasons.append(Reason(Outcome.FAIL, f"{count:.0f} {label} ({key})"))
    global_pauses = sum(_number(counters.get(k)) or 0 for k in ("rx_global_pause", "tx_global_pause"))
    if global_pauses:
        reasons.append(Reason(Outcome.WARN, f"{global_pauses:.0f} global pause frames (802.3x flow control): a "
                                            f"RoCE port should pause per priority (PFC), not the whole link"))
    for priority in range(8):
        if priority == lossless:
            continue
        paused = sum(_number(counters.get(f"{d}_prio{priority}_pause")) or 0 for d in ("rx", "tx"))
        if paused:
            reasons.append(Reason(Outcome.WARN, f"{paused:.0f} pause frames on priority {priority}, which is not "
                                                f"the lossless priority {lossless}"))
    reasons += _port_growth_reasons(counters, baseline, lossless)
    return reasons


def _port_growth_reasons(
    counters: Mapping[str, Any], baseline: Mapping[str, Any] | None, lossless: int
) -> list[Reason]:
    if not baseline:
        return []
    watched = [*PORT_ERROR_COUNTERS, *PORT_DISCARD_COUNTERS, (f"rx_prio{lossless}_discards", "lossless discards")]
    reasons = []
    for key, label in watched:
        now, before = _number(counters.get(key)), _number(baseline.get(key))
        if now is not None and before is not None and now > before:
            reasons.append(Reason(Outcome.FAIL, f"{label} ({key}) grew from {before:.0f} to {now:.0f}"))
    return reasons


# ---------------------------------------------------------------------------------------------------
# Lossless configuration (mlnx_qos on a host port, NVUE qos on a switch port)


def _priority_of_dscp(priority_dscps: Sequence[Sequence[int]] | None, dscp: int) -> int | None:
    for priority, dscps in enumerate(priority_dscps or []):
        if dscp in (dscps or []):
            return priority
    return None


def _pfc_reasons(enabled: Sequence[int] | None, settings: RoceSettings, where: str) -> list[Reason]:
    if not enabled:
        return [Reason(Outcome.FAIL, f"no PFC configuration in the {where} output")]
    on = [priority for priority, flag in enumerate(enabled) if flag]
    lossless = settings.pfc_priority
    reasons = []
    if lossless not in on:
        reasons.append(Reason(Outcome.FAIL, f"PFC off on priority {lossless}, the lossless priority"))
    others = [p for p in on if p != lossless]
    if others:
        listed = ", ".join(map(str, others))
        reasons.append(Reason(Outcome.FAIL, f"PFC also on priority {listed}: only priority {lossless} should be "
                                            f"lossless (a paused lossy class can stall the link)"))
    return reasons


def _buffer_reasons(qos: Mapping[str, Any], settings: RoceSettings) -> list[Reason]:
    """The lossless priority needs a receive buffer of its own with room in it (mlnx_qos from MLNX_OFED 5
    prints the buffer sizes and each priority's buffer; older ones print neither)."""
    sizes, of_priority = qos.get("receive_buffer_bytes"), qos.get("pfc_buffer")
    if not sizes or not of_priority:
        return [Reason(Outcome.PASS, "mlnx_qos printed no receive buffers (older driver): buffers not checked")]
    lossless = settings.pfc_priority
    enabled = qos.get("pfc_enabled") or []
    if lossless < len(enabled) and not enabled[lossless]:
        return []  # PFC is off there (a failure already): its buffer has nothing to hold yet
    if lossless >= len(of_priority) or of_priority[lossless] >= len(sizes):
        return [Reason(Outcome.FAIL, f"no receive buffer for the lossless priority {lossless}")]
    buffer = of_priority[lossless]
    reasons = []
    if not sizes[buffer]:
        reasons.append(Reason(Outcome.FAIL, f"lossless priority {lossless} is in receive buffer {buffer}, "
                                            f"which has 0 bytes"))
    sharing = [p for p, b in enumerate(of_priority) if b == buffer and p != lossless
               and not (p < len(enabled) and enabled[p])]
    if sharing:
        reasons.append(Reason(Outcome.WARN, f"lossy priority {', '.join(map(str, sharing))} shares receive buffer "
                                            f"{buffer} with the lossless priority {lossless}"))
    return reasons


def _ecn_reasons(ecn: Mapping[str, Any] | None, settings: RoceSettings) -> list[Reason]:
    if not settings.ecn:
        return []
    if not ecn:
        return [Reason(Outcome.WARN, f"ECN on priority {settings.pfc_priority} not read")]
    reasons = []
    for key, label in (("np", "notification point (roce_np)"), ("rp", "reaction point (roce_rp)")):
        if ecn.get(key) != 1:
            state = "off" if ecn.get(key) == 0 else "not reported"
            reasons.append(Reason(Outcome.FAIL, f"ECN {label} {state} on priority {settings.pfc_priority}"))
    return reasons


def evaluate_lossless(qos: Any, *, settings: RoceSettings, ecn: Mapping[str, Any] | None = None) -> Verdict:
    """A host port's `mlnx_qos -i <if>` (and its ECN switches) against the project's RoCE settings: trust
    mode, PFC on the lossless priority and only there, the RoCE DSCP mapped to that priority, a receive
    buffer for it, and ECN on."""
    qos = as_dict(qos)
    reasons = []
    trust = qos.get("trust")
    if _norm(trust) != settings.trust:
        reasons.append(Reason(Outcome.FAIL, f"trust state {trust or 'not reported'}, expected {settings.trust}"))
    reasons += _pfc_reasons(qos.get("pfc_enabled"), settings, "mlnx_qos")
    if settings.trust == "dscp":
        mapped = _priority_of_dscp(qos.get("priority_dscps"), settings.dscp)
        if not qos.get("priority_dscps"):
            reasons.append(Reason(Outcome.WARN, "no dscp2prio mapping printed"))
        elif mapped != settings.pfc_priority:
            where = f"priority {mapped}" if mapped is not None else "no priority"
            reasons.append(Reason(Outcome.FAIL, f"DSCP {settings.dscp} maps to {where}, expected priority "
                                                f"{settings.pfc_priority}"))
    reasons += _buffer_reasons(qos, settings)
    reasons += _ecn_reasons(ecn, settings)
    return Verdict.of(reasons)


def evaluate_switch_lossless(qos: Any, *, settings: RoceSettings) -> Verdict:
    """A switch port's (or the switch's) NVUE RoCE QoS against the project's RoCE settings: a lossless mode,
    PFC on the lossless priority with both directions on, ECN on the traffic class that priority uses, the
    trust mode, and the RoCE DSCP mapped to the lossless priority."""
    qos = as_dict(qos)
    reasons = []
    lossless = settings.pfc_priority
    mode = qos.get("mode")
    if "lossless" not in _norm(mode):
        reasons.append(Reason(Outcome.FAIL, f"RoCE mode {mode or 'not reported'}, expected a lossless mode"))
    priority = qos.get("pfc_priority")
    if priority != lossless:
        shown = priority if priority is not None else "none"
        reasons.append(Reason(Outcome.FAIL, f"PFC on switch priority {shown}, expected {lossless}"))
    for key, label in (("pfc_rx", "PFC receive"), ("pfc_tx", "PFC transmit")):
        state = qos.get(key)
        if priority is not None and _norm(state) not in ("enabled", "yes", "on", "true"):
            reasons.append(Reason(Outcome.FAIL, f"{label} {state or 'not reported'}, expected enabled"))
    if settings.ecn:
        tc = (qos.get("priority_to_tc") or {}).get(str(lossless), lossless)
        if "ecn" not in _norm(qos.get("congestion_mode")):
            reasons.append(Reason(Outcome.FAIL, f"congestion control {qos.get('congestion_mode') or 'off'}, "
                                                f"expected ECN"))
        elif tc not in (qos.get("ecn_traffic_classes") or []):
            reasons.append(Reason(Outcome.FAIL, f"ECN not enabled on traffic class {tc}, which carries the "
                                                f"lossless priority {lossless}"))
    trusts = [_norm(t) for t in qos.get("trust_modes") or []]
    if settings.trust not in trusts:
        reasons.append(Reason(Outcome.FAIL, f"trust {','.join(trusts) or 'not reported'}, expected "
                                            f"{settings.trust}"))
    mapped = (qos.get("dscp_to_priority") or {}).get(str(settings.dscp))
    if settings.trust == "dscp" and mapped != lossless:
        where = f"switch priority {mapped}" if mapped is not None else "no switch priority"
        reasons.append(Reason(Outcome.FAIL, f"DSCP {settings.dscp} maps to {where}, expected {lossless}"))
    return Verdict.of(reasons)


# ---------------------------------------------------------------------------------------------------
# Bandwidth (perftest ib_write_bw)


def measured_bandwidth(result: Any) -> float | None:
    """Average Gb/s at the largest message size the run measured."""
    rows = [as_dict(r) for r in as_dict(result).get("rows") or []]
    rows = [r for r in rows if _number(r.get("bw_avg_gbps")) is not None]
    if not rows:
        return None
    largest = max(rows, key=lambda r: _number(r.get("bytes")) or 0)
    return _number(largest["bw_avg_gbps"])


def bandwidth_reasons(
    bw_gbps: float, *, gpu: bool, line_rate_gbps: float | None, profile: Profile, where: str = ""
) -> list[Reason]:
    """GPU memory is held to a share of the line rate; host memory to an absolute figure, because the
    CPU path is capped by PCIe, not by the link."""
    prefix = f"{where}: " if where else ""
    if gpu:
        if not line_rate_gbps:
            return [Reason(Outcome.ERROR, f"{prefix}no line rate known to judge GPU RDMA bandwidth against")]
        measured = (
            f"{prefix}GPU RDMA write {fmt_num(bw_gbps, 2)} Gb/s = {bw_gbps / line_rate_gbps:.1%} of "
            f"{fmt_num(line_rate_gbps)} Gb/s line rate"
        )
        for level, fraction in (
            (Outcome.FAIL, profile.gpu_rdma_fail_fraction),
            (Outcome.WARN, profile.gpu_rdma_warn_fraction),
        ):
            if bw_gbps < fraction * line_rate_gbps:
                return [
                    Reason(
                        level,
                        f"{measured} < {level} level {fraction:.0%} "
                        f"({fmt_num(fraction * line_rate_gbps)} Gb/s)",
                    )
                ]
        return []
    measured = f"{prefix}CPU-path bandwidth {fmt_num(bw_gbps, 2)} Gb/s"
    for level, floor in ((Outcome.FAIL, profile.cpu_bw_fail_gbps), (Outcome.WARN, profile.cpu_bw_warn_gbps)):
        if bw_gbps < floor:
            return [Reason(level, f"{measured} < {level} level {fmt_num(floor)} Gb/s")]
    return []


def evaluate_bandwidth(
    result: Any, *, gpu: bool, line_rate_gbps: float | None, profile: Profile, where: str = ""
) -> Verdict:
    """An ib_write_bw run: GPU memory (--use_cuda) against a share of the line rate, host memory
    against the profile's own, lower, absolute threshold."""
    bw = measured_bandwidth(result)
    if bw is None:
        return error_verdict(f"{where + ': ' if where else ''}no bandwidth rows in the ib_write_bw output")
    reasons = bandwidth_reasons(bw, gpu=gpu, line_rate_gbps=line_rate_gbps, profile=profile, where=where)
    return Verdict.of(reasons)


def slow_outliers(values: Mapping[Any, float], fraction: float) -> tuple[float | None, dict[Any, float]]:
    """The median of a run's values and the keys whose value is below `fraction` of it: a pair much
    slower than its peers points at a bad link or port configuration even above the absolute floor."""
    if not values:
        return None, {}
    median = statistics.median(values.values())
    return median, {key: value for key, value in values.items() if value < fraction * median}


# ---------------------------------------------------------------------------------------------------
# NCCL (nccl-tests)


def _half(row: Mapping[str, Any], name: str) -> dict[str, Any]:
    return as_dict(row.get(name))


# The largest deviation old nccl-tests builds tolerate per data type before they count a value "out of
# bounds" (their DeltaMaxValue; half precision was 1e-2 in early builds, 5e-2 later: the lenient one).
# Integer types must match exactly.
NCCL_ERROR_TOLERANCE = {
    "half": 5e-2, "float16": 5e-2, "bfloat16": 1e-2, "bf16": 1e-2,
    "float": 1e-5, "float32": 1e-5, "double": 1e-12, "float64": 1e-12,
}  # fmt: skip


def evaluate_nccl(result: Any, *, profile: Profile) -> Verdict:
    """No wrong values, "Out of bounds values: 0 OK", and bus bandwidth at the largest size at least the
    profile's figure (out-of-place, the half nccl-tests' summary is read from).

    Current nccl-tests print `#wrong`, a count of wrong elements. Old builds print a float `error`: the
    largest deviation from the expected value, which a healthy run prints as 1e-07 or 2e-07, so it is
    never a count: those runs are judged by their out-of-bounds trailer and by nccl-tests' own tolerance
    for the row's data type."""
    nccl = as_dict(result)
    reasons: list[Reason] = []
    if nccl.get("failed") and not nccl.get("rows"):
        message = nccl.get("failure_message") or "no results"
        return Verdict.of([Reason(Outcome.FAIL, f"NCCL test aborted: {message}")])
    rows = [as_dict(r) for r in nccl.get("rows") or []]
    if rows and all(_half(r, h).get("wrong") is None for r in rows for h in _HALVES):
        reasons.append(
            Reason(Outcome.WARN, "values were not validated (wrong-value column N/A: run with -c 1)")
        )
    if _wrong_column_is_a_count(nccl, rows):
        value_reasons = _wrong_count_reasons(rows)
    else:
        value_reasons = _max_error_reasons(rows)
    reasons += value_reasons
    oob = nccl.get("out_of_bounds")
    oob_count = _number(oob)
    if oob_count:
        reasons.append(Reason(Outcome.FAIL, f"out-of-bounds values {oob_count:g}, expected 0 OK"))
    elif oob is None and rows:
        reasons.append(Reason(Outcome.WARN, 'no "Out of bounds values" trailer (run incomplete?)'))
    if nccl.get("failed") and not (value_reasons or oob_count):
        reasons.append(Reason(Outcome.FAIL, "nccl-tests reported a test failure"))
    reasons += _busbw_reasons(rows, profile)
    return Verdict.of(reasons)


_HALVES = ("out_of_place", "in_place")
_HALF_LABELS = {"out_of_place": "out-of-place", "in_place": "in-place"}


def _wrong_column_is_a_count(nccl: Mapping[str, Any], rows: list[dict[str, Any]]) -> bool:
    """`#wrong` is a count, `error` a deviation. A dict without the parser's `wrong_column` (stored before
    it was kept) is a count only if every value is a whole number."""
    column = nccl.get("wrong_column")
    if column is not None:
        return column == "#wrong"
    values = [_half(r, h).get("wrong") for r in rows for h in _HALVES]
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values if v is not None)


def _wrong_count_reasons(rows: list[dict[str, Any]]) -> list[Reason]:
    wrong_rows = []
    for row in rows:
        counts = [_number(_half(row, half).get("wrong")) for half in _HALVES]
        if any(c for c in counts if c):
            wrong_rows.append((row, counts))
    if not wrong_rows:
        return []
    row, counts = wrong_rows[0]
    halves = ", ".join(f"{_HALF_LABELS[name]} {c:g}" for name, c in zip(_HALVES, counts, strict=True) if c)
    more = f" and at {len(wrong_rows) - 1} more size(s)" if len(wrong_rows) > 1 else ""
    size = fmt_bytes(int(row.get("size_bytes") or 0))
    return [Reason(Outcome.FAIL, f"wrong values at {size} ({halves}){more}; expected 0")]


def _fmt_deviation(value: float) -> str:
    return fmt_sci(value) if value and abs(value) < 1e-3 else fmt_num(value, 4)


def _max_error_reasons(rows: list[dict[str, Any]]) -> list[Reason]:
    """Rows whose largest deviation exceeds nccl-tests' tolerance for their data type (the rule its
    out-of-bounds count applies, so a log cut before that trailer is still judged)."""
    beyond = []
    for row in rows:
        tolerance = NCCL_ERROR_TOLERANCE.get(_norm(row.get("type")), 0.0)
        for half in _HALVES:
            error = _number(_half(row, half).get("wrong"))
            if error is not None and abs(error) > tolerance:
                beyond.append((row, half, error, tolerance))
    if not beyond:
        return []
    row, half, error, tolerance = beyond[0]
    more = f" and {len(beyond) - 1} more" if len(beyond) > 1 else ""
    return [
        Reason(
            Outcome.FAIL,
            f"largest error {_fmt_deviation(error)} at {fmt_bytes(int(row.get('size_bytes') or 0))} "
            f"({_HALF_LABELS[half]}, {row.get('type')}) > tolerance {fmt_sci(tolerance)}{more}",
        )
    ]


def _busbw_reasons(rows: list[dict[str, Any]], profile: Profile) -> list[Reason]:
    if not rows:
        return [Reason(Outcome.FAIL, "no result rows in the nccl-tests output")]
    largest = max(rows, key=lambda r: _number(r.get("size_bytes")) or 0)
    busbw = _number(_half(largest, "out_of_place").get("busbw_gbps"))
    size = fmt_bytes(int(largest.get("size_bytes") or 0))
    if busbw is None:
        return [Reason(Outcome.FAIL, f"no bus bandwidth at the largest size {size}")]
    if busbw < profile.nccl_busbw_fail_gbs:
        return [
            Reason(
                Outcome.FAIL,
                f"bus bandwidth {fmt_num(busbw, 2)} GB/s at {size} < fail level "
                f"{fmt_num(profile.nccl_busbw_fail_gbs)} GB/s",
            )
        ]
    if busbw < profile.nccl_busbw_warn_gbs:
        return [
            Reason(
                Outcome.WARN,
                f"bus bandwidth {fmt_num(busbw, 2)} GB/s at {size} < warn level "
                f"{fmt_num(profile.nccl_busbw_warn_gbs)} GB/s",
            )
        ]
    return []


def nccl_curve(result: Any) -> list[dict[str, float]]:
    """(size, out-of-place bus bandwidth) points for the bus-bandwidth-versus-size chart."""
    points = []
    for row in as_dict(result).get("rows") or []:
        row = as_dict(row)
        busbw = _number(_half(row, "out_of_place").get("busbw_gbps"))
        if busbw is not None:
            points.append({"size_bytes": int(row.get("size_bytes") or 0), "busbw_gbs": busbw})
    return points


# ---------------------------------------------------------------------------------------------------
# Node inventory: one pinned version set on every node.


def majority_versions(inventories: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """The most common value of each key across nodes (ties go to the value seen first)."""
    counters: dict[str, Counter] = {}
    for inventory in inventories:
        for key, value in inventory.items():
            counters.setdefault(key, Counter())[value] += 1
    return {key: counter.most_common(1)[0][0] for key, counter in counters.items()}


def evaluate_versions(versions: Mapping[str, str], *, expected: Mapping[str, str], source: str) -> Verdict:
    """Each expected key must match exactly; `source` says where the expectation came from (the
    profile's pinned set, or the majority of the run's nodes)."""
    reasons = []
    for key, want in sorted(expected.items()):
        have = versions.get(key)
        if have is None:
            reasons.append(Reason(Outcome.FAIL, f"{key} not reported, {source} {want}"))
        elif have != want:
            reasons.append(Reason(Outcome.FAIL, f"{key} {have} != {source} {want}"))
    return Verdict.of(reasons)


__all__ = [
    "IB_SPEED_BY_LANE_GBPS",
    "LinkPlan",
    "Outcome",
    "Profile",
    "Reason",
    "RoceSettings",
    "Verdict",
    "as_dict",
    "bandwidth_reasons",
    "counter_growth_reasons",
    "dom_reasons",
    "error_verdict",
    "evaluate_bandwidth",
    "ethernet_speed_gbps",
    "evaluate_link",
    "evaluate_lossless",
    "evaluate_switch_lossless",
    "has_dom_readings",
    "module_from_ethtool",
    "kept_port_counters",
    "port_counter_reasons",
    "raw_ber_limits",
    "evaluate_nccl",
    "evaluate_versions",
    "fmt_bytes",
    "fmt_num",
    "fmt_sci",
    "is_passive_copper",
    "link_plan",
    "port_link_plan",
    "majority_versions",
    "measured_bandwidth",
    "nccl_curve",
    "slow_outliers",
]
