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


def link_plan(*, speed_gbps: int, lanes: int | None, infiniband: bool) -> LinkPlan:
    """The planned mlxlink speed/width of a link `lanes` electrical lanes wide: an 800G port of 4 lanes is
    IB-XDR at 4x. Lanes not known are assumed to be 4, the width of every OSFP/QSFP IB port."""
    lanes = lanes if lanes and lanes > 1 else PORT_SERDES_LANES
    if not infiniband:
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


def _link_state_reasons(link: Mapping[str, Any], plan: LinkPlan) -> list[Reason]:
    reasons = []
    state = link.get("state")
    if _norm(state) != "active":
        reasons.append(Reason(Outcome.FAIL, f"link state {state or 'unknown'}, expected Active"))
    physical = link.get("physical_state")
    if plan.speed and plan.speed.startswith("IB-") and physical is not None and _norm(physical) != "linkup":
        reasons.append(Reason(Outcome.FAIL, f"physical state {physical}, expected LinkUp"))
    if plan.speed and _norm(link.get("speed")) != _norm(plan.speed):
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


def _ber_reasons(counters: Mapping[str, Any], profile: Profile) -> list[Reason]:
    reasons = []
    for key, label, warn, fail in (
        ("effective_ber", "effective BER", profile.effective_ber_warn, profile.effective_ber_fail),
        ("symbol_ber", "symbol BER", profile.symbol_ber_warn, profile.symbol_ber_fail),
    ):
        value = _number(counters.get(key))
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
    reasons += _ber_reasons(counters, profile)
    reasons += counter_growth_reasons(counters, baseline)
    reasons += dom_reasons(link.get("module"), profile, plan.lane_ports)
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
    "Verdict",
    "as_dict",
    "bandwidth_reasons",
    "counter_growth_reasons",
    "dom_reasons",
    "error_verdict",
    "evaluate_bandwidth",
    "evaluate_link",
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
