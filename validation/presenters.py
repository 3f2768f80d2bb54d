"""What a run, a result and a link's history show: their charts (SVG from validation.charts) with the
figures each chart's table prints, and the one figure a results table gives each result.

Figures come from validation.selectors (scoped to the user); which charts a kind's runs and results show
is the kind's to say (validation.kinds: `run_charts`, `result_charts`, `figure`), and the builders are the
tables RUN_CHARTS and RESULT_CHARTS below. Pages use this module; so will the acceptance report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from . import charts, criteria, selectors
from .choices import CheckKind
from .kinds import kind_of
from .models import AcceptanceProfile, CheckResult, CheckRun

HISTORY_CHART_POINTS = 60  # newest link-health readings drawn in a link's history chart


def display(value) -> str:
    """A figure as engineers write it: 1e-12 rather than 0.000000000001, 440 rather than 440.0."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return criteria.fmt_sci(value) if value and abs(value) < 1e-3 else criteria.fmt_num(value, 3)
    if value is None or value == "":
        return "—"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in sorted(value.items())) or "—"
    if isinstance(value, list):
        return ", ".join(display(v) for v in value)
    return str(value)


def result_figure(kind: str, metrics: dict | None) -> str:
    """The one figure a result is mostly judged by, as the results table shows it."""
    return kind_of(kind).figure(metrics or {})


def annotate_results(results: Iterable[CheckResult], kind: str | None = None) -> None:
    """Give each result its `figure` (of `kind`, or of its own run's kind in a list across runs)."""
    for result in results:
        result.figure = result_figure(kind or result.run.kind, result.metrics)


def floor_thresholds(fail: float | None, warn: float | None) -> list[charts.Threshold]:
    """The lines of a figure that fails below one level and warns below another."""
    return [
        charts.Threshold(value, level, f"{level} < {criteria.fmt_num(value)}")
        for value, level in ((fail, "fail"), (warn, "warn"))
        if value is not None
    ]


# ---------------------------------------------------------------------------------------------------
# A run's charts


def ber_per_port(user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    ports = selectors.run_port_ber(user=user, run=run)
    if not ports:
        return {}
    svg = charts.ber_svg(
        [(p.label, p.effective_ber) for p in ports],
        warn=profile.effective_ber_warn,
        fail=profile.effective_ber_fail,
        title=f"Effective BER per port, run #{run.pk}",
    )
    rows = [
        {"result_id": p.result_id, "label": p.label, "effective": display(p.effective_ber),
         "symbol": display(p.symbol_ber), "raw": display(p.raw_ber)}
        for p in ports
    ]
    levels = {"warn": display(profile.effective_ber_warn), "fail": display(profile.effective_ber_fail)}
    return {"ber_chart": svg, "ber_rows": rows, "ber_levels": levels}


def bandwidth_histogram(user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    figures = selectors.run_bandwidth_figures(user=user, run=run, profile=profile)
    if not figures.values:
        return {}
    line_rate = figures.line_rate_gbps or max(v for _, _, v in figures.values)
    bins = charts.bandwidth_bins([v for _, _, v in figures.values], line_rate=line_rate)
    thresholds = floor_thresholds(figures.fail_gbps, figures.warn_gbps)
    if figures.line_rate_gbps:
        thresholds.append(charts.Threshold(figures.line_rate_gbps, "line", "line rate"))
    path = "GPU RDMA write" if figures.gpu else "CPU-path write"
    svg = charts.histogram_svg(bins, thresholds=thresholds, title=f"{path} bandwidth per link, run #{run.pk}")
    return {"histogram_chart": svg, "histogram_bins": [b for b in bins if b.count], "bandwidth": figures}


def matrix_heatmap(user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    matrix = selectors.bandwidth_matrix_figures(user=user, run=run, profile=profile)
    if not matrix.pairs:
        return {}
    svg = charts.heatmap_svg(
        matrix.nodes,
        {(p.a, p.b): p.min_gbps for p in matrix.pairs},
        flags={(p.a, p.b): p.level for p in matrix.pairs if p.level != "pass"},
        title=f"Bandwidth matrix, slowest rail per node pair, run #{run.pk}",
    )
    return {"matrix_chart": svg, "matrix": matrix}


def nccl_svg(curve: selectors.NcclCurve, profile: AcceptanceProfile) -> str:
    return charts.nccl_curve_svg(
        curve.points,
        thresholds=floor_thresholds(profile.nccl_busbw_fail_gbs, profile.nccl_busbw_warn_gbs),
        title=f"NCCL bus bandwidth against message size, {curve.label}",
    )


def nccl_curves(user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    curves = [c for c in selectors.run_nccl_curves(user=user, run=run) if c.points]
    return {"nccl_charts": [(c, nccl_svg(c, profile)) for c in curves]}


RunCharts = Callable[[object, CheckRun, AcceptanceProfile], dict]
RUN_CHARTS: dict[str, RunCharts] = {
    "ber_per_port": ber_per_port,
    "bandwidth_histogram": bandwidth_histogram,
    "matrix_heatmap": matrix_heatmap,
    "nccl_curves": nccl_curves,
}


def run_charts(*, user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    """The charts of a finished or running run, as its kind declares them, each with the figures its
    table prints (template context: one key per chart and its table)."""
    context: dict = {}
    for name in kind_of(run.kind).run_charts:
        context.update(RUN_CHARTS[name](user, run, profile))
    return context


# ---------------------------------------------------------------------------------------------------
# A result's charts


def link_reading(result: CheckResult, profile: AcceptanceProfile) -> dict:
    """The counters of an mlxlink reading and, for an optical module, its DOM per lane."""
    metrics = result.metrics or {}
    counters = [(name, display(value)) for name, value in (metrics.get("counters") or {}).items()]
    dom = selectors.dom_figures(metrics)
    if dom is None:
        return {"counters": counters}
    series = [
        charts.DomSeries("Rx power", [lane.rx_dbm for lane in dom.lanes], dom.rx_limits),
        charts.DomSeries("Tx power", [lane.tx_dbm for lane in dom.lanes], dom.tx_limits),
    ]
    svg = charts.dom_svg(
        series, margin=profile.dom_power_margin_db, title=f"DOM per lane, {selectors.result_label(result)}"
    )
    return {"dom": dom, "dom_chart": svg, "counters": counters}


def nccl_curve(result: CheckResult, profile: AcceptanceProfile) -> dict:
    curve = selectors.NcclCurve(
        result_id=result.pk,
        label=result.target_key,
        verdict=result.verdict,
        points=sorted((int(p["size_bytes"]), float(p["busbw_gbs"])) for p in selectors.nccl_curve(result=result)),
        avg_busbw_gbs=(result.metrics or {}).get("avg_busbw_gbps"),
    )
    return {"nccl_curve": curve, "nccl_chart": nccl_svg(curve, profile) if curve.points else ""}


def matrix_rails(result: CheckResult, profile: AcceptanceProfile) -> dict:
    return {"rails": (result.metrics or {}).get("rails") or []}


def versions(result: CheckResult, profile: AcceptanceProfile) -> dict:
    return {"versions": sorted(((result.metrics or {}).get("versions") or {}).items())}


ResultCharts = Callable[[CheckResult, AcceptanceProfile], dict]
RESULT_CHARTS: dict[str, ResultCharts] = {
    "link_reading": link_reading,
    "nccl_curve": nccl_curve,
    "matrix_rails": matrix_rails,
    "versions": versions,
}


def result_charts(*, result: CheckResult, profile: AcceptanceProfile) -> dict:
    """What a result's page draws and tabulates, as its run's kind declares it."""
    context: dict = {}
    for name in kind_of(result.run.kind).result_charts:
        context.update(RESULT_CHARTS[name](result, profile))
    return context


# ---------------------------------------------------------------------------------------------------
# A link's history


def link_history_charts(*, user, project, subject: selectors.LinkSubject, profile: AcceptanceProfile) -> dict:
    """The link-health readings of a port or cable over time: BER and counters as two charts (oldest to
    newest) and as a table (newest first, like the results below it). `readings` is empty when the link
    was never read."""
    history = selectors.link_history(user=user, project=project, subject=subject)
    readings = selectors.link_readings(history.filter(run__kind=CheckKind.LINK_HEALTH)[:HISTORY_CHART_POINTS])
    rows = [
        {"reading": r, "effective": display(r.effective_ber), "symbol": display(r.symbol_ber),
         "counters": [display(r.symbol_errors), display(r.link_down), display(r.link_error_recovery)]}
        for r in reversed(readings)
    ]
    if not readings:
        return {"readings": rows}
    labels = [r.when for r in readings]
    ber = charts.timeline_svg(
        labels,
        {"effective BER": [r.effective_ber for r in readings], "symbol BER": [r.symbol_ber for r in readings]},
        log=True,
        thresholds=[
            charts.Threshold(profile.effective_ber_warn, "warn", "eff. warn"),
            charts.Threshold(profile.effective_ber_fail, "fail", "eff. fail"),
        ],
        title="BER over time",
        y_title="BER (log scale)",
    )
    counters = charts.timeline_svg(
        labels,
        {
            "symbol errors": [r.symbol_errors for r in readings],
            "link down": [r.link_down for r in readings],
            "error recovery": [r.link_error_recovery for r in readings],
        },
        title="Counters over time",
        y_title="count",
    )
    return {"readings": rows, "ber_history_chart": ber, "counter_history_chart": counters}
