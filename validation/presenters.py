"""What a run, a result and a link's history show: their charts (SVG from validation.charts) with the
figures each chart's table prints, and the one figure a results table gives each result.

Figures come from validation.selectors (scoped to the user); which charts a kind's runs and results show
is the kind's to say (validation.kinds: `run_charts`, `result_charts`, `figure`), and the builders are the
tables RUN_CHARTS and RESULT_CHARTS below. Pages use this module; so will the acceptance report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.urls import reverse

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


def _bucket_level(bucket: str, profile: AcceptanceProfile) -> str:
    """The level a decade's ports reach at least (its lower bound against the profile's BER levels)."""
    if bucket in (selectors.BER_BELOW, selectors.BER_NONE):
        return "pass"
    return charts.ber_level(10.0 ** int(bucket), warn=profile.effective_ber_warn, fail=profile.effective_ber_fail)


def _decades_drawn(ber: selectors.BerDecades, profile: AcceptanceProfile) -> list[int]:
    """From the floor's decade to the highest of a measured port and the profile's levels: a chart whose
    axis does not move between runs of one project unless a port is worse than the levels."""
    levels = [charts.ber_decade(v) for v in (profile.effective_ber_warn, profile.effective_ber_fail) if v > 0]
    measured = [int(b) for b in ber.counts if b not in (selectors.BER_BELOW, selectors.BER_NONE)]
    top = min(max([*measured, *levels, selectors.BER_DECADES[0]]), selectors.BER_DECADES[-1])
    return list(range(selectors.BER_DECADES[0], top + 1))


def ber_per_port(user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    """The BER chart of a link-health run: ports per effective-BER decade (not a bar per port), the ports
    that counted no errors in one bucket "< 1e-20", each bar linking to the results in its bucket; the
    table beside it prints the same counts. (The name is the kind's declaration, kept.)"""
    ber = selectors.run_ber_decades(user=user, run=run)
    if not ber.total:
        return {}
    decades = _decades_drawn(ber, profile)
    buckets = [selectors.BER_BELOW, *map(str, decades)]
    labels = charts.ber_decade_labels(decades)
    warn, fail = profile.effective_ber_warn, profile.effective_ber_fail
    svg = charts.ber_decades_svg(
        decades,
        charts.DecadeSeries("effective BER", ber.count(selectors.BER_BELOW), [ber.count(str(k)) for k in decades]),
        hrefs=[f"?ber={bucket}#results" for bucket in buckets],
        levels=[_bucket_level(bucket, profile) for bucket in buckets],
        thresholds=[charts.Threshold(warn, "warn", f"warn {criteria.fmt_sci(warn)}"),
                    charts.Threshold(fail, "fail", f"fail {criteria.fmt_sci(fail)}")],
        title=f"Ports per effective BER decade, run #{run.pk}",
    )
    rows = [
        {"bucket": bucket, "label": label if bucket == selectors.BER_BELOW else f"{label} to "
         f"{criteria.fmt_sci(10.0 ** (int(bucket) + 1))}", "count": ber.count(bucket),
         "level": _bucket_level(bucket, profile)}
        for bucket, label in zip(buckets, labels, strict=True)
        if ber.count(bucket)
    ]
    if ber.count(selectors.BER_NONE):
        rows.append({"bucket": selectors.BER_NONE, "label": "no reading", "count": ber.count(selectors.BER_NONE),
                     "level": "error"})
    levels = {"warn": display(warn), "fail": display(fail), "floor": display(selectors.BER_FLOOR)}
    return {"ber_chart": svg, "ber_rows": rows, "ber_levels": levels, "ber_total": ber.total}


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


MATRIX_SVG_MAX_PAIRS = 1_200  # about 49 nodes: beyond, the heat map is an image (an SVG mark per pair is too much)


def matrix_heatmap(user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    """A small matrix: an SVG cell per pair (each linking to its result) and every pair in a table, with
    what makes a pair suspect (uneven rails, asymmetric directions). A large one: matrix_image."""
    if run.progress_total > MATRIX_SVG_MAX_PAIRS:
        return matrix_image(user, run, profile)
    matrix = selectors.bandwidth_matrix_figures(user=user, run=run, profile=profile)
    if not matrix.pairs:
        return {}
    svg = charts.heatmap_svg(
        matrix.nodes,
        {(p.a, p.b): p.min_gbps for p in matrix.pairs},
        flags={(p.a, p.b): p.level for p in matrix.pairs if p.level != "pass"},
        links={(p.a, p.b): reverse("validation:result-detail", args=[run.project.code, p.result_id])
               for p in matrix.pairs},
        title=f"Bandwidth matrix, slowest rail per node pair, run #{run.pk}",
    )
    return {"matrix_chart": svg, "matrix": matrix}


def matrix_image(user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    """A large matrix: the page shows the heat map as an image drawn by its own view (run-matrix-image) and
    its colour scale as HTML (one aggregate query); the node names come from their own view when the page's
    script starts, and the worst pairs are the first page of the results (worst_pairs_first): no query of
    the page reads every pair's metrics into Python."""
    scale = selectors.matrix_scale(user=user, run=run)
    if scale.lo_gbps is None:
        return {}
    steps = charts.heat_steps(scale.lo_gbps, scale.hi_gbps)
    code = run.project.code
    return {
        "matrix_image": {
            "url": reverse("validation:run-matrix-image", args=[code, run.pk]),
            "nodes_url": reverse("validation:run-matrix-nodes", args=[code, run.pk]),
            "pairs": run.progress_total,
            "lo": display(scale.lo_gbps),
            "hi": display(scale.hi_gbps),
            "ramp": f"linear-gradient(to right, {', '.join(steps)})",
            "colours": {"fail": charts.FAIL_COLOUR, "warn": charts.WARN_COLOUR, "missing": charts.MISSING_COLOUR},
        },
    }


def matrix_png(*, user, run: CheckRun) -> bytes:
    """The large matrix's image (the view's body)."""
    cells = selectors.matrix_cells(user=user, run=run)
    png, _, _ = charts.matrix_png(len(cells.nodes), cells.rows, cells.cols, cells.values, cells.levels)
    return png


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
