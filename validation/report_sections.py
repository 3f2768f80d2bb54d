"""The acceptance report's validation sections (projects.reports): the latest topology comparison, the
physical link health of every port, the bandwidth tests, NCCL and the soak, each a provider
`(project) -> Section` registered by ValidationConfig.ready() with the chart drawers of validation.charts.

A section whose check was never run says so in a paragraph rather than disappearing: a customer's report
must state that a check was not run. Tables stream their rows (validation.report_selectors) and list
failures first; charts carry aggregated figures only (a histogram of ports per BER decade, not a bar per
port; a matrix of at most MATRIX_BLOCKS x MATRIX_BLOCKS blocks), so a 1,024-server report's chart data
stays a few kilobytes. BERs travel as the numbers mlxlink printed (1.5e-254 for "no errors"): the
renderers show what is below projects.reports.BER_FLOOR as "< 1e-20".
"""

from __future__ import annotations

import math
import re
import statistics
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from math import isfinite
from typing import NamedTuple

from django.utils import timezone

from projects.reports import BER_FLOOR, Chart, Column, Facts, Paragraph, Section, Table, register_report_chart
from projects.reports import register_report_section as register_section

from . import charts, criteria
from . import report_selectors as reads
from .choices import CheckKind, LinkState, RunnerKind, TopologySource, Verdict
from .models import AcceptanceProfile, CheckRun
from .soak.maths import GROWTH_COUNTERS

MATRIX_BLOCKS = 64  # the heat map's most rows and columns: larger matrices are drawn in blocks of nodes
NCCL_CURVES = 5  # groups drawn as curves of their own; more are drawn as min, median and max per size
SUMMARY_ROWS = 50
BER_TOP_DECADE = -1  # a BER is at most 1: the last decade drawn is [0.1, 1)


class Placed(NamedTuple):
    """A section's key, order and title in the report (projects.reports)."""

    key: str
    order: int
    title: str


TOPOLOGY = Placed("topology_comparison", 45, "Topology comparison")
LINK_HEALTH = Placed("link_health", 50, "Physical link health")
BANDWIDTH = Placed("bandwidth", 60, "CPU-path and GPU RDMA bandwidth")
NCCL = Placed("nccl", 70, "NCCL")
SOAK = Placed("soak", 80, "Soak")


# ---------------------------------------------------------------------------------------------------
# Small helpers


def _number(value) -> float | None:
    """A figure read from the metrics JSON, or None for what is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _numbers(values) -> list[float]:
    return [v for v in (_number(x) for x in (values if isinstance(values, list) else [values])) if v is not None]


def _when(moment) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M %Z") if moment else "—"


def _who(user) -> str:
    return (user.get_full_name() or user.get_username()) if user else "—"


def _first_reason(reasons) -> str:
    """What a reader needs of a result's reasons: the first failure, else the first error, else the first
    warning (a pass has nothing to say)."""
    texts = {}
    for reason in reasons if isinstance(reasons, list) else ():
        if isinstance(reason, dict) and isinstance(reason.get("level"), str):
            texts.setdefault(reason["level"], str(reason.get("text", "")))
    return next((texts[level] for level in ("fail", "error", "warn") if level in texts), "")


def _mapping(value) -> dict:
    """A JSON object read from a result, or an empty one for anything else."""
    return value if isinstance(value, dict) else {}


def _lanes(values) -> str:
    """Per-lane readings as text: "-0.13, -0.25, n/a, 1.1"."""
    if not isinstance(values, list):
        return ""
    return ", ".join(criteria.fmt_num(v, 2) if _number(v) is not None else "n/a" for v in values)


def _verdict_items(counts: Counter) -> list[tuple[str, int]]:
    return [(Verdict(v).label, counts.get(v, 0)) for v in (Verdict.PASS, Verdict.WARN, Verdict.FAIL, Verdict.ERROR)]


def _natural_key(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name or "")]


def _not_run(title: str, text: str) -> Section:
    return Section(title=title, blocks=[Paragraph(text)])


def _runner(run: CheckRun) -> str:
    return "uploaded output" if run.runner == RunnerKind.UPLOAD else RunnerKind(run.runner).label


def _floor_lines(fail: float | None, warn: float | None, unit: str) -> list[list]:
    return [[value, level, f"{level} < {criteria.fmt_num(value)} {unit}"]
            for value, level in ((fail, "fail"), (warn, "warn")) if value is not None]


@dataclass
class Readings:
    """What the facts and charts of a set of latest results need, gathered in one pass over them."""

    count: int = 0
    verdicts: Counter = field(default_factory=Counter)
    runs: set = field(default_factory=set)
    first: object = None
    last: object = None

    def add(self, row: dict) -> None:
        self.count += 1
        self.verdicts[row["verdict"]] += 1
        self.runs.add(row["run_id"])
        moment = row["finished_at"]
        if moment is not None:
            self.first = moment if self.first is None else min(self.first, moment)
            self.last = moment if self.last is None else max(self.last, moment)

    def items(self, what: str) -> list[tuple[str, object]]:
        return [
            (what, self.count),
            *_verdict_items(self.verdicts),
            ("Runs and uploads read", len(self.runs)),
            ("Oldest reading", _when(self.first)),
            ("Newest reading", _when(self.last)),
        ]


# ---------------------------------------------------------------------------------------------------
# Topology comparison (45)

TOPOLOGY_FILE_COLUMNS = [
    Column("name", "File", width=22), Column("host", "Taken on", width=12), Column("tool", "Tool", width=10),
    Column("size", "Size", kind="bytes", width=8), Column("sha256", "SHA-256", width=24),
    Column("error", "Could not read", width=20),
]
TOPOLOGY_LINK_COLUMNS = [
    Column("state", "State", width=9), Column("cable", "Cable", width=9),
    Column("planned_a", "Planned A", width=16), Column("planned_b", "Planned B", width=16),
    Column("observed_a", "Observed A", width=16), Column("observed_b", "Observed B", width=16),
    Column("change", "Since previous", width=8), Column("note", "Note", width=20), Column("advice", "Advice", width=20),
]


def _comparison_source(comparison) -> str:
    source = TopologySource(comparison.source).label
    return f"{source} #{comparison.run_id}" if comparison.run_id else source


def topology_comparison_section(project) -> Section:
    title = TOPOLOGY.title
    comparison = reads.latest_comparison(project)
    if comparison is None:
        return _not_run(title, "No topology comparison yet: the fabric as the switches see it was not compared "
                               "with the cable plan.")
    counts, changes = comparison.counts or {}, comparison.changes or {}
    facts = Facts(title=f"Topology comparison #{comparison.pk}", items=[
        ("Compared", _when(comparison.finished_at or comparison.created_at)),
        ("From", _comparison_source(comparison)),
        ("Requested by", _who(comparison.requested_by)),
        ("Planned links in scope", counts.get("in_scope", 0)),
        ("Links observed", counts.get("observed", 0)),
        *[(LinkState(state).label, counts.get(state, 0)) for state in LinkState.values],
        ("Swaps found", counts.get("swaps", 0)),
        ("New since the previous comparison", changes.get("new", 0)),
        ("Also in the previous comparison", changes.get("still", 0)),
        ("Fixed since the previous comparison", changes.get("fixed", 0)),
        ("Cables whose state it changed", comparison.cables_changed),
    ])
    files = comparison.files.order_by("id")
    links = reads.faulty_links(comparison)
    link_count = links.count()
    blocks: list = [facts]
    if not link_count:
        blocks.append(Paragraph("Every planned link in scope was seen where the plan puts it."))
    blocks += [
        Table(key="topology_faults", title="Links not as planned, worst first", columns=TOPOLOGY_LINK_COLUMNS,
              rows=_topology_link_rows(links), row_count=link_count, summary_rows=SUMMARY_ROWS),
        Table(key="topology_files", title="Tool outputs read", columns=TOPOLOGY_FILE_COLUMNS,
              rows=_topology_file_rows(files), row_count=files.count(), summary_rows=20),
    ]
    notes = [str(note) for note in comparison.notes or []]
    if notes:
        blocks.append(Table(key="topology_notes", title="What the comparison could not place",
                            columns=[Column("note", "Note", width=60)], rows=([note] for note in notes),
                            row_count=len(notes), summary_rows=10))
    return Section(title=title, blocks=blocks)


def _topology_link_rows(links) -> Iterator[list]:
    for row in reads.stream(links.values(*reads.LINK_FAULT_ROW)):
        yield [LinkState(row["state"]).label, row["cable_label"], row["planned_a"], row["planned_b"],
               row["observed_a"], row["observed_b"], row["change"], row["note"], row["advice"]]


def _topology_file_rows(files) -> Iterator[list]:
    for row in reads.stream(files.values_list("original_name", "host", "tool", "size_bytes", "sha256", "error")):
        yield list(row)


# ---------------------------------------------------------------------------------------------------
# Physical link health (50)

LINK_COLUMNS = [
    Column("port", "Port", width=14), Column("cable", "Cable", width=8),
    Column("verdict", "Verdict", kind="verdict", width=6), Column("state", "State", width=12),
    Column("speed", "Speed", width=7), Column("width", "Width", width=5),
    Column("fec", "FEC", width=16), Column("effective_ber", "Effective BER", kind="ber", width=8),
    Column("raw_ber", "Raw BER", kind="ber", width=8), Column("symbol_errors", "Symbol errors", kind="int", width=7),
    Column("effective_errors", "Effective errors", kind="int", width=7),
    Column("link_down", "Link down", kind="int", width=5), Column("recovery", "Error recovery", kind="int", width=6),
    Column("checked", "Read", kind="datetime", width=11), Column("reason", "Reason", width=24),
]
OPTIC_COLUMNS = [
    Column("port", "Port", width=14), Column("verdict", "Verdict", kind="verdict", width=6),
    Column("module", "Module", width=14), Column("serial", "Serial", width=12),
    Column("temperature", "Temperature", unit="°C", kind="celsius", width=7),
    Column("voltage", "Voltage", unit="V", kind="volts", width=6),
    Column("tx_min", "Tx min", unit="dBm", kind="dbm", width=6),
    Column("tx_max", "Tx max", unit="dBm", kind="dbm", width=6),
    Column("rx_min", "Rx min", unit="dBm", kind="dbm", width=6),
    Column("rx_max", "Rx max", unit="dBm", kind="dbm", width=6),
    Column("tx_lanes", "Tx per lane", unit="dBm", width=16), Column("rx_lanes", "Rx per lane", unit="dBm", width=16),
]


@dataclass
class LinkReadings(Readings):
    """Readings plus the BER decades and the module temperatures of the latest link-health results."""

    effective: Counter = field(default_factory=Counter)  # decade (or None: below the floor) -> ports
    raw: Counter = field(default_factory=Counter)
    no_ber: int = 0
    temperatures: list = field(default_factory=list)
    temperature_limits: Counter = field(default_factory=Counter)

    def add(self, row: dict) -> None:
        super().add(row)
        effective = _number(row["metrics__counters__effective_ber"])
        if effective is None:
            self.no_ber += 1
        else:
            self.effective[_decade(effective)] += 1
        raw = _number(row["metrics__counters__raw_ber"])
        if raw is not None:
            self.raw[_decade(raw)] += 1
        temperature = _number(row["metrics__module__temperature_c"])
        if temperature is not None and not row["metrics__module__is_passive_copper"]:
            self.temperatures.append(temperature)
            limits = _numbers(row["metrics__module__ranges__temperature_c"])
            if len(limits) == 2:
                self.temperature_limits[limits[1]] += 1


def _decade(value: float) -> int | None:
    """The BER decade a value falls in, None below the floor (no errors counted)."""
    if value < BER_FLOOR:
        return None
    return min(charts.ber_decade(value), BER_TOP_DECADE)


def link_health_section(project) -> Section:
    title = LINK_HEALTH.title
    bound = reads.result_bound()
    latest = reads.latest_link_health(project=project, bound=bound)
    seen = LinkReadings()
    for row in reads.figures_of(latest, reads.LINK_FIGURES):
        seen.add(row)
    if not seen.count:
        return _not_run(title, "No link-health results yet: mlxlink was not run on the compute ports (no run "
                               "and no uploaded output).")
    profile = reads.acceptance_profile(project)
    below = seen.effective.get(None, 0)
    blocks: list = [
        Paragraph("The latest reading of each port, whichever run or upload took it: its state, speed, width "
                  "and FEC, its bit error rates and error counters, and its module's DOM readings."),
        Facts(title="Ports", items=[
            *seen.items("Ports read"),
            ("Effective BER warn level", criteria.fmt_sci(profile.effective_ber_warn)),
            ("Effective BER fail level", criteria.fmt_sci(profile.effective_ber_fail)),
            (f"Ports without errors (effective BER < {criteria.fmt_sci(BER_FLOOR)})", below),
            ("Ports without a BER reading", seen.no_ber),
        ]),
        _ber_chart(seen, profile),
    ]
    if seen.temperatures:
        blocks.append(_temperature_chart(seen, profile))
    blocks += [
        Table(key="link_health", title="Link state, bit error rates and counters, failures first",
              columns=LINK_COLUMNS, rows=_link_rows(latest), row_count=seen.count, summary_rows=SUMMARY_ROWS,
              verdict_column="verdict"),
        Table(key="link_optics", title="Modules and DOM readings, failures first", columns=OPTIC_COLUMNS,
              rows=_optic_rows(latest), row_count=seen.count, summary_rows=SUMMARY_ROWS, verdict_column="verdict",
              note="Passive copper cables have no DOM: their readings are left blank."),
    ]
    return Section(title=title, blocks=blocks)


def _ber_chart(seen: LinkReadings, profile: AcceptanceProfile) -> Chart:
    floor = charts.ber_decade(BER_FLOOR)
    measured = [d for d in (*seen.effective, *seen.raw) if d is not None]
    levels = [profile.effective_ber_warn, profile.effective_ber_fail]
    top = min(max(measured + [charts.ber_decade(v) for v in levels if v > 0] + [floor]), BER_TOP_DECADE)
    decades = list(range(floor, top + 1))
    series = [{"name": "effective BER", "below_floor": seen.effective.get(None, 0),
               "counts": [seen.effective.get(d, 0) for d in decades]}]
    if seen.raw:
        series.append({"name": "raw BER", "below_floor": seen.raw.get(None, 0),
                       "counts": [seen.raw.get(d, 0) for d in decades]})
    thresholds = [[profile.effective_ber_warn, "warn", f"warn {criteria.fmt_sci(profile.effective_ber_warn)}"],
                  [profile.effective_ber_fail, "fail", f"fail {criteria.fmt_sci(profile.effective_ber_fail)}"]]
    return Chart(kind="validation.ber_decades", title="Ports per bit error rate decade",
                 data={"decades": decades, "series": series, "thresholds": thresholds},
                 caption=f"The latest reading of each port. The first group holds the ports below "
                         f"{criteria.fmt_sci(BER_FLOOR)}: those that counted no errors (mlxlink prints 1.5e-254). The "
                         f"lines are the acceptance profile's levels for the effective BER.")


def _temperature_chart(seen: LinkReadings, profile: AcceptanceProfile) -> Chart:
    values = seen.temperatures
    limit = seen.temperature_limits.most_common(1)[0][0] if seen.temperature_limits else None
    lo, hi = min(values), max(values + ([limit] if limit is not None else []))
    step = max(charts.nice_step(max(hi - lo, 5.0), 15), 1.0)
    start, end = math.floor(lo / step) * step, (math.floor(hi / step) + 1) * step
    bins = charts.histogram(values, lo=start, hi=end, bins=max(1, round((end - start) / step)))
    thresholds = []
    if limit is not None:
        thresholds.append([limit, "fail", f"module limit {criteria.fmt_num(limit)} °C"])
        if profile.dom_temperature_margin_c:
            warn = limit - profile.dom_temperature_margin_c
            thresholds.append([warn, "warn", f"margin {criteria.fmt_num(warn)} °C"])
    return Chart(kind="validation.histogram", title="Module temperature",
                 data={"bins": [[b.lo, b.hi, b.count] for b in bins], "thresholds": thresholds,
                       "x_title": "°C", "y_title": "modules"},
                 caption=f"{len(values)} optical modules (passive copper has no sensor); the limit is the one "
                         "most modules report.")


def _link_rows(latest) -> Iterator[list]:
    for row in reads.rows_of(latest, reads.LINK_ROW):
        state, physical = row["metrics__state"], row["metrics__physical_state"]
        yield [
            f"{row['device__name']}:{row['port__name']}", row["cable__label"], row["verdict"] or None,
            f"{state} ({physical})" if state and physical else state or physical,
            row["metrics__speed"], row["metrics__width"], row["metrics__fec"],
            _number(row["metrics__counters__effective_ber"]), _number(row["metrics__counters__raw_ber"]),
            _number(row["metrics__counters__symbol_errors"]),
            _number(row["metrics__counters__effective_physical_errors"]),
            _number(row["metrics__counters__link_down"]), _number(row["metrics__counters__link_error_recovery"]),
            row["finished_at"], _first_reason(row["reasons"]),
        ]


def _optic_rows(latest) -> Iterator[list]:
    for row in reads.rows_of(latest, reads.OPTIC_ROW):
        part = row["metrics__module__part_number"] or ""
        port = f"{row['device__name']}:{row['port__name']}"
        if row["metrics__module__is_passive_copper"]:
            yield [port, row["verdict"] or None, f"{part} (passive copper)".strip(), row["metrics__module__serial"],
                   None, None, None, None, None, None, "", ""]
            continue
        tx, rx = _numbers(row["metrics__module__tx_power_dbm"]), _numbers(row["metrics__module__rx_power_dbm"])
        voltage = _number(row["metrics__module__voltage_mv"])
        yield [
            port, row["verdict"] or None, part, row["metrics__module__serial"],
            _number(row["metrics__module__temperature_c"]), round(voltage / 1000, 4) if voltage is not None else None,
            min(tx, default=None), max(tx, default=None), min(rx, default=None), max(rx, default=None),
            _lanes(row["metrics__module__tx_power_dbm"]), _lanes(row["metrics__module__rx_power_dbm"]),
        ]


# ---------------------------------------------------------------------------------------------------
# CPU-path and GPU RDMA bandwidth, the bandwidth matrix (60)

BANDWIDTH_COLUMNS = [
    Column("link", "Link", width=16), Column("peer", "Partner", width=16), Column("cable", "Cable", width=8),
    Column("verdict", "Verdict", kind="verdict", width=6),
    Column("bandwidth", "Bandwidth", unit="Gb/s", kind="gbps", width=7),
    Column("peak", "Peak", unit="Gb/s", kind="gbps", width=7),
    Column("line_rate", "Line rate", unit="Gb/s", kind="gbps", width=7),
    Column("share", "Of line rate", unit="%", kind="percent", width=6),
    Column("measured", "Measured", kind="datetime", width=11), Column("reason", "Reason", width=24),
]
MATRIX_COLUMNS = [
    Column("node", "Node", width=12), Column("peer", "Partner", width=12),
    Column("verdict", "Verdict", kind="verdict", width=6),
    Column("slowest", "Slowest rail", unit="Gb/s", kind="gbps", width=8),
    Column("mean", "Mean of rails", unit="Gb/s", kind="gbps", width=8), Column("reason", "Reason", width=36),
]
PAIR_KINDS = (
    (CheckKind.CPU_BANDWIDTH, "CPU-path bandwidth", "ib_write_bw between host memories"),
    (CheckKind.GPU_RDMA, "GPU RDMA bandwidth", "ib_write_bw --use_cuda between GPU memories"),
)


@dataclass
class BandwidthReadings(Readings):
    values: array = field(default_factory=lambda: array("d"))
    line_rates: Counter = field(default_factory=Counter)

    def add(self, row: dict) -> None:
        super().add(row)
        bandwidth, rate = _number(row["metrics__bw_avg_gbps"]), _number(row["metrics__line_rate_gbps"])
        if bandwidth is not None:
            self.values.append(bandwidth)
        if rate:
            self.line_rates[rate] += 1


def bandwidth_section(project) -> Section:
    title = BANDWIDTH.title
    bound = reads.result_bound()
    profile = reads.acceptance_profile(project)
    blocks: list = []
    for kind, name, how in PAIR_KINDS:
        blocks += _pair_bandwidth_blocks(project, kind, name, how, bound, profile)
    blocks += _matrix_blocks(project)
    return Section(title=title, blocks=blocks)


def _spread(values: array, unit: str = "Gb/s") -> list[tuple[str, object]]:
    if not values:
        return [("Measured values", 0)]
    ordered = sorted(values)
    return [(f"Slowest ({unit})", round(ordered[0], 2)), (f"Median ({unit})", round(statistics.median(ordered), 2)),
            (f"Fastest ({unit})", round(ordered[-1], 2))]


def _pair_bandwidth_blocks(project, kind: str, name: str, how: str, bound: int, profile) -> list:
    latest = reads.latest_per_port(project=project, kinds=[kind], bound=bound)
    seen = BandwidthReadings()
    for row in reads.figures_of(latest, reads.BANDWIDTH_FIGURES):
        seen.add(row)
    if not seen.count:
        return [Paragraph(f"No {name} results yet: {how} was not run.")]
    gpu = kind == CheckKind.GPU_RDMA
    line_rate = seen.line_rates.most_common(1)[0][0] if seen.line_rates else None
    if gpu:
        fail = profile.gpu_rdma_fail_fraction * line_rate if line_rate else None
        warn = profile.gpu_rdma_warn_fraction * line_rate if line_rate else None
    else:
        fail, warn = profile.cpu_bw_fail_gbps, profile.cpu_bw_warn_gbps
    blocks: list = [Facts(title=f"{name} ({how})", items=[
        *seen.items("Links measured"), *_spread(seen.values),
        ("Line rate (Gb/s)", line_rate), ("Fail below (Gb/s)", _rounded(fail)), ("Warn below (Gb/s)", _rounded(warn)),
    ])]
    if seen.values:
        top = line_rate or max(seen.values)
        bins = charts.bandwidth_bins(list(seen.values), line_rate=top)
        thresholds = _floor_lines(fail, warn, "Gb/s")
        if line_rate:
            thresholds.append([line_rate, "line", "line rate"])
        blocks.append(Chart(kind="validation.histogram", title=f"{name} per link against the line rate",
                            data={"bins": [[b.lo, b.hi, b.count] for b in bins], "thresholds": thresholds,
                                  "x_title": "Gb/s", "y_title": "links"},
                            caption="The latest measurement of each link."))
    blocks.append(Table(key=f"{kind}_links", title=f"{name} per link, failures first", columns=BANDWIDTH_COLUMNS,
                        rows=_bandwidth_rows(latest), row_count=seen.count, summary_rows=SUMMARY_ROWS,
                        verdict_column="verdict"))
    return blocks


def _rounded(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None


def _bandwidth_rows(latest) -> Iterator[list]:
    for row in reads.rows_of(latest, reads.BANDWIDTH_ROW):
        bandwidth, rate = _number(row["metrics__bw_avg_gbps"]), _number(row["metrics__line_rate_gbps"])
        peer = f"{row['peer_device__name']}:{row['peer_port__name']}" if row["peer_device__name"] else ""
        yield [
            f"{row['device__name']}:{row['port__name']}", peer, row["cable__label"], row["verdict"] or None,
            bandwidth, _number(row["metrics__bw_peak_gbps"]), rate,
            100 * bandwidth / rate if bandwidth is not None and rate else None,
            row["finished_at"], _first_reason(row["reasons"]),
        ]


@dataclass
class MatrixGrid:
    """A matrix run folded into blocks of `block` nodes: each cell the slowest pair between two blocks and
    their worst level, plus the run's figures."""

    nodes: list[str]
    block: int
    values: list[list[float | None]] = field(init=False)
    levels: list[list[int]] = field(init=False)
    measured: array = field(default_factory=lambda: array("d"))
    verdicts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        blocks = math.ceil(len(self.nodes) / self.block) if self.nodes else 0
        self.values = [[None] * (i + 1) for i in range(blocks)]
        self.levels = [[0] * (i + 1) for i in range(blocks)]
        self._index = {name: i // self.block for i, name in enumerate(self.nodes)}

    @property
    def labels(self) -> list[str]:
        return self.nodes[:: self.block]

    def add(self, a: str, b: str, slowest, verdict: str) -> None:
        self.add_all([(a, b, slowest, verdict)])

    def add_all(self, pairs: Iterable[tuple[str, str, object, str]]) -> None:
        """Fold (node, peer, slowest rail, verdict) rows in: half a million of them for 1,024 nodes, hence
        the local names (a method lookup per pair would double the time)."""
        index, values, levels, measured = self._index, self.values, self.levels, self.measured.append
        verdicts: dict[str, int] = {}
        for a, b, slowest, verdict in pairs:
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
            try:  # the JSON's text (PostgreSQL) or its number (SQLite)
                value = float(slowest) if slowest is not None else None
            except (TypeError, ValueError):
                value = None
            if value is not None and isfinite(value):
                measured(value)
            else:
                value = None
            i, j = index.get(a), index.get(b)
            if i is None or j is None:
                continue
            row, col = (i, j) if i >= j else (j, i)
            if value is not None:
                current = values[row][col]
                if current is None or value < current:
                    values[row][col] = value
            level = _MATRIX_LEVELS.get(verdict, 0)
            if level > levels[row][col]:
                levels[row][col] = level
        self.verdicts.update(verdicts)


_MATRIX_LEVELS = {Verdict.FAIL: 2, Verdict.ERROR: 2, Verdict.WARN: 1}  # charts.LEVEL_CODES indexes


def _matrix_blocks(project) -> list:
    run = reads.latest_run(project=project, kind=CheckKind.BANDWIDTH_MATRIX)
    if run is None:
        return [Paragraph("No bandwidth matrix yet: the pairwise ib_write_bw between every two nodes was not run.")]
    nodes = sorted(reads.matrix_nodes(run), key=_natural_key)
    grid = MatrixGrid(nodes=nodes, block=max(1, math.ceil(len(nodes) / MATRIX_BLOCKS)))
    grid.add_all(reads.matrix_pairs(run))
    pairs = sum(grid.verdicts.values())
    blocks: list = [Facts(title=f"Bandwidth matrix, run #{run.pk}", items=[
        ("Run", f"#{run.pk}, {_runner(run)}, {run.status_label.lower()}"),
        ("Finished", _when(run.finished_at)),
        ("Nodes", len(nodes)), ("Node pairs measured", pairs), *_verdict_items(grid.verdicts),
        *_spread(grid.measured),
    ])]
    if pairs:
        caption = ("Each cell is a node pair's slowest rail; amber: slow or uneven, red: failed." if grid.block == 1
                   else f"Each cell is the slowest pair between two blocks of {grid.block} nodes, named by their "
                        f"first node; amber: a slow pair in the block, red: a failed one.")
        blocks.append(Chart(kind="validation.heatmap", title="Bandwidth matrix, slowest rail per node pair",
                            data={"labels": grid.labels, "values": grid.values, "levels": grid.levels,
                                  "block_size": grid.block, "nodes": len(nodes), "unit": "Gb/s"},
                            caption=caption))
    flagged = reads.matrix_flagged(run)
    count = flagged.count()
    passed = grid.verdicts.get(Verdict.PASS, 0)
    blocks.append(Table(key="bw_matrix_flagged", title="Node pairs that did not pass, failures first",
                        columns=MATRIX_COLUMNS, rows=_matrix_rows(flagged), row_count=count,
                        summary_rows=SUMMARY_ROWS, verdict_column="verdict",
                        note=f"The {passed} pairs that passed are in the heat map, not listed."))
    return blocks


def _matrix_rows(flagged) -> Iterator[list]:
    for row in reads.stream(flagged.values(*reads.MATRIX_ROW)):
        yield [row["device__name"] or row["target_key"], row["peer_device__name"], row["verdict"] or None,
               _number(row["metrics__min_gbps"]), _number(row["metrics__mean_gbps"]), _first_reason(row["reasons"])]


# ---------------------------------------------------------------------------------------------------
# NCCL (70)


def _nccl_columns(wrong_is_error: bool) -> list[Column]:
    wrong = (Column("{half}_wrong", "{Half} max error", kind="float", width=8) if wrong_is_error
             else Column("{half}_wrong", "{Half} #wrong", kind="int", width=8))
    columns = [Column("group", "Nodes", width=9), Column("size", "Size", kind="bytes", width=7),
               Column("count", "Count", kind="int", width=8), Column("type", "Type", width=5),
               Column("redop", "Op", width=4)]
    for half, label in (("oop", "Out-of-place"), ("ip", "In-place")):
        columns += [
            Column(f"{half}_time", f"{label} time", unit="µs", kind="float", width=8),
            Column(f"{half}_algbw", f"{label} algbw", unit="GB/s", kind="float", width=8),
            Column(f"{half}_busbw", f"{label} busbw", unit="GB/s", kind="float", width=8),
            Column(wrong.key.format(half=half), wrong.label.format(Half=label), kind=wrong.kind, width=wrong.width),
        ]
    return columns


NCCL_GROUP_COLUMNS = [
    Column("group", "Nodes", width=14), Column("verdict", "Verdict", kind="verdict", width=6),
    Column("ranks", "Ranks", kind="int", width=5), Column("hosts", "Hosts", kind="int", width=5),
    Column("average", "Average busbw", unit="GB/s", kind="float", width=7),
    Column("largest", "Busbw at the largest size", unit="GB/s", kind="float", width=8),
    Column("out_of_bounds", "Out of bounds values", kind="int", width=6), Column("reason", "Reason", width=30),
]


def _half(half) -> list:
    half = _mapping(half)
    return [_number(half.get("time_us")), _number(half.get("algbw_gbps")), _number(half.get("busbw_gbps")),
            _number(half.get("wrong"))]


def _size_rows(metrics: dict) -> list[dict]:
    """The parsed table of an NCCL result, one dict per message size."""
    rows = metrics.get("rows")
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []


def _largest_busbw(metrics: dict) -> float | None:
    rows = [r for r in _size_rows(metrics) if _number(r.get("size_bytes")) is not None]
    if not rows:
        return None
    largest = max(rows, key=lambda r: r["size_bytes"])
    return _number(_mapping(largest.get("out_of_place")).get("busbw_gbps"))


def _wrong_total(metrics: dict) -> int:
    """How many wrong values the run's #wrong columns count (old builds print a max error instead: 0)."""
    if metrics.get("wrong_column") == "error":
        return 0
    total = 0
    for row in _size_rows(metrics):
        for half in ("out_of_place", "in_place"):
            figures = row.get(half)
            wrong = _number(figures.get("wrong")) if isinstance(figures, dict) else None
            total += int(wrong) if wrong else 0
    return total


def nccl_section(project) -> Section:
    title = NCCL.title
    run = reads.latest_run(project=project, kind=CheckKind.NCCL)
    if run is None:
        return _not_run(title, "No NCCL results yet: nccl-tests (all_reduce_perf) was not run across the nodes.")
    profile = reads.acceptance_profile(project)
    results = reads.nccl_results(run)
    metrics = [_mapping(r["metrics"]) for r in results]
    averages = [v for v in (_number(m.get("avg_busbw_gbps")) for m in metrics) if v is not None]
    largest = [v for v in (_largest_busbw(m) for m in metrics) if v is not None]
    out_of_bounds = sum(int(_number(m.get("out_of_bounds")) or 0) for m in metrics)
    tests = sorted({m["test"] for m in metrics if isinstance(m.get("test"), str) and m["test"]})
    verdicts = Counter(r["verdict"] for r in results)
    blocks: list = [Facts(title=f"NCCL, run #{run.pk}", items=[
        ("Run", f"#{run.pk}, {_runner(run)}, {run.status_label.lower()}"),
        ("Finished", _when(run.finished_at)),
        ("Test", ", ".join(tests) or "—"),
        ("Groups of nodes", len(results)), *_verdict_items(verdicts),
        ("Ranks", sum(int(_number(m.get("n_ranks")) or 0) for m in metrics)),
        ("Average bus bandwidth (GB/s)", round(statistics.mean(averages), 2) if averages else None),
        ("Bus bandwidth at the largest size, lowest group (GB/s)", round(min(largest), 2) if largest else None),
        ("Out of bounds values", out_of_bounds),
        ("Wrong values (#wrong)", sum(_wrong_total(m) for m in metrics)),
        ("Fail below (GB/s)", profile.nccl_busbw_fail_gbs), ("Warn below (GB/s)", profile.nccl_busbw_warn_gbs),
    ])]
    failures = [f"{r['target_key']}: {m.get('failure_message')}" for r, m in zip(results, metrics, strict=True)
                if m.get("failed") and m.get("failure_message")]
    if failures:
        blocks.append(Paragraph("The test reported a failure: " + "; ".join(failures[:5])))
    curve = _nccl_curve(results, profile)
    if curve is not None:
        blocks.append(curve)
    if len(results) > 1:
        blocks.append(Table(key="nccl_groups", title="Groups of nodes", columns=NCCL_GROUP_COLUMNS,
                            rows=_nccl_group_rows(results), row_count=len(results), summary_rows=SUMMARY_ROWS,
                            verdict_column="verdict"))
    wrong_is_error = any(m.get("wrong_column") == "error" for m in metrics)
    row_count = sum(len(_size_rows(m)) for m in metrics)
    blocks.append(Table(key="nccl_sizes", title="Results per message size", columns=_nccl_columns(wrong_is_error),
                        rows=_nccl_size_rows(results), row_count=row_count, summary_rows=SUMMARY_ROWS))
    return Section(title=title, blocks=blocks)


def _hosts(metrics: dict) -> list:
    hosts = metrics.get("hosts")
    return hosts if isinstance(hosts, list) else []


def _group_label(result: dict) -> str:
    """A group by its nodes (the target key names its first and last), all nodes by their number."""
    hosts = _hosts(_mapping(result["metrics"]))
    if result["target_key"] == "nccl:all" and hosts:
        return f"{len(hosts)} hosts"
    return result["target_key"].removeprefix("nccl:")


def _nccl_group_rows(results: list[dict]) -> Iterator[list]:
    for result in results:
        metrics = _mapping(result["metrics"])
        yield [_group_label(result), result["verdict"] or None, _number(metrics.get("n_ranks")),
               len(_hosts(metrics)), _number(metrics.get("avg_busbw_gbps")), _largest_busbw(metrics),
               _number(metrics.get("out_of_bounds")), _first_reason(result["reasons"])]


def _nccl_size_rows(results: list[dict]) -> Iterator[list]:
    for result in results:
        label = _group_label(result)
        for row in _size_rows(_mapping(result["metrics"])):
            yield [label, _number(row.get("size_bytes")), _number(row.get("count")), row.get("type"), row.get("redop"),
                   *_half(row.get("out_of_place")), *_half(row.get("in_place"))]


def _curve_points(metrics: dict) -> list[tuple[int, float]]:
    """(size, out-of-place bus bandwidth) of an NCCL result: the curve its kind kept, else its table's."""
    kept = metrics.get("curve")
    if isinstance(kept, list) and kept:
        points = [(p.get("size_bytes"), p.get("busbw_gbs")) for p in kept if isinstance(p, dict)]
    else:
        points = [(row.get("size_bytes"), _mapping(row.get("out_of_place")).get("busbw_gbps"))
                  for row in _size_rows(metrics)]
    return sorted((int(size), float(busbw)) for size, busbw in points
                  if _number(size) is not None and _number(busbw) is not None)


def _nccl_curve(results: list[dict], profile: AcceptanceProfile) -> Chart | None:
    curves = [(_group_label(r), _curve_points(_mapping(r["metrics"]))) for r in results]
    curves = [(name, points) for name, points in curves if points]
    if not curves:
        return None
    if len(curves) <= NCCL_CURVES:
        series = [{"name": name if len(curves) > 1 else "busbw", "points": [list(p) for p in points]}
                  for name, points in curves]
        caption = "Out-of-place bus bandwidth against message size."
    else:
        by_size: dict[int, list[float]] = {}
        for _, points in curves:
            for size, busbw in points:
                by_size.setdefault(size, []).append(busbw)
        sizes = sorted(by_size)
        series = [{"name": name, "points": [[size, pick(by_size[size])] for size in sizes]}
                  for name, pick in (("lowest group", min), ("median group", statistics.median),
                                     ("highest group", max))]
        caption = f"Out-of-place bus bandwidth of the {len(curves)} groups: lowest, median and highest per size."
    return Chart(kind="validation.nccl_curve", title="NCCL bus bandwidth against message size",
                 data={"series": series, "thresholds": _floor_lines(profile.nccl_busbw_fail_gbs,
                                                                    profile.nccl_busbw_warn_gbs, "GB/s")},
                 caption=caption)


# ---------------------------------------------------------------------------------------------------
# Soak (80)

SOAK_GROWTH_LABELS = {"symbol_errors": "Symbol errors", "effective_physical_errors": "Effective errors",
                      "link_down": "Link down", "link_error_recovery": "Error recovery"}
SOAK_COLUMNS = [
    Column("port", "Port", width=14), Column("cable", "Cable", width=8),
    Column("verdict", "Verdict", kind="verdict", width=6),
    *[Column(key, SOAK_GROWTH_LABELS.get(key, label), kind="int", width=7) for key, label in GROWTH_COUNTERS],
    Column("samples", "Samples compared", width=7), Column("effective_ber", "Last effective BER", kind="ber", width=8),
    Column("first_growth", "First growth", width=18), Column("reason", "Reason", width=26),
]


def soak_section(project) -> Section:
    title = SOAK.title
    window = reads.latest_soak_window(project)
    if window is None:
        return _not_run(title, "No soak yet: the link counters were not sampled across a soak window.")
    ports = reads.soak_ports(window)
    verdicts = reads.verdict_counts(ports)
    count = sum(verdicts.values())
    run = window.run
    blocks: list = [Facts(title=f"Soak #{window.pk}", items=[
        ("Status", run.status_label),
        ("Started", _when(window.started_at)),
        ("Ended" if not window.is_open else "Ends", _when(run.finished_at if not window.is_open else window.ends_at)),
        ("Planned duration (h)", round(window.duration_hours, 2)),
        ("Sampling interval (min)", round(window.interval_minutes, 2)),
        ("Samples taken", window.sweeps),
        ("Ports", count),
        *_verdict_items(verdicts),
        ("Started by", _who(window.started_by)),
    ])]
    if window.is_open:
        share = window.progress(timezone.now())
        blocks.append(Paragraph(f"Soak #{window.pk} is still open ({share:.0%} of its window elapsed): the figures "
                                f"below are the readings so far."))
    blocks.append(Table(key="soak_ports", title="Counter growth per port across the window, failures first",
                        columns=SOAK_COLUMNS, rows=_soak_rows(window, ports), row_count=count,
                        summary_rows=SUMMARY_ROWS, verdict_column="verdict",
                        note="Growth: the counter at the port's last good reading minus its first good reading."))
    return Section(title=title, blocks=blocks)


def _soak_rows(window, ports) -> Iterator[list]:
    baselines = reads.soak_baselines(window)
    for row in reads.rows_of(ports, reads.SOAK_ROW):
        last = _mapping(row["metrics__counters"])
        first = baselines.get(row["id"])
        deltas = []
        for counter, _label in GROWTH_COUNTERS:
            before, after = (_number(first.get(counter)) if first else None), _number(last.get(counter))
            deltas.append(after - before if before is not None and after is not None else None)
        last_sweep = row["metrics__last_sweep"]
        samples = f"{first['sweep']}–{last_sweep}" if first and isinstance(last_sweep, int) else ""
        port = f"{row['device__name']}:{row['port__name']}" if row["device__name"] else row["target_key"]
        yield [port, row["cable__label"], row["verdict"] or None, *deltas, samples,
               _number(last.get("effective_ber")), _first_growth(row["metrics__growth"]), _first_reason(row["reasons"])]


def _first_growth(growth) -> str:
    """The counter that grew first and the sample it grew at (the soak's growth record)."""
    labels = dict(GROWTH_COUNTERS)
    order = list(labels)  # on one sample, in the order the reasons name them (validation.soak.maths)
    grown = [(seen["sweep"], order.index(key), key) for key, seen in _mapping(growth).items()
             if key in labels and isinstance(seen, dict) and isinstance(seen.get("sweep"), int)]
    if not grown:
        return ""
    sweep, _, key = min(grown)
    return f"{labels[key]} at sample {sweep}"


# ---------------------------------------------------------------------------------------------------
# Registration

SECTIONS = (
    (TOPOLOGY, topology_comparison_section),
    (LINK_HEALTH, link_health_section),
    (BANDWIDTH, bandwidth_section),
    (NCCL, nccl_section),
    (SOAK, soak_section),
)


def register() -> None:
    """The sections and the chart drawers with the report registry (ValidationConfig.ready())."""
    for placed, provider in SECTIONS:
        register_section(placed.key, provider, order=placed.order, title=placed.title)
    for kind, drawer in charts.REPORT_CHARTS.items():
        register_report_chart(kind, drawer)


__all__ = [
    "MATRIX_BLOCKS",
    "SECTIONS",
    "bandwidth_section",
    "link_health_section",
    "nccl_section",
    "register",
    "soak_section",
    "topology_comparison_section",
]

