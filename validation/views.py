"""Validation pages under /p/<code>/checks/: check runs (list, start form, a run with its progress, charts,
log and filtered results), a result with its raw output, a link's history and the acceptance profile.

Every view goes through delivery.access.ProjectViewMixin (outsiders 404; starting, cancelling and
re-running need Capability.RUN_CHECKS, editing the profile Capability.MANAGE_PROJECT), reads through
validation.selectors and writes through validation.services. Charts are SVG from validation.charts,
each printed beside a table of the same figures.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views import View
from django.views.generic import TemplateView

from core.forms import add_service_errors
from core.history import history_rows
from core.views import FilteredListView
from delivery.access import Capability, ProjectViewMixin, can

from . import charts, criteria, selectors, services
from .choices import STARTABLE_CHECK_KINDS, CheckKind, ResultStatus, Verdict
from .filters import CheckResultFilterSet, CheckRunFilterSet
from .forms import EXECUTING_RUNNERS, AcceptanceProfileForm, CheckRunStartForm
from .models import AcceptanceProfile, CheckResult, CheckRun

PAGE_SIZE = 50
HISTORY_CHART_POINTS = 60  # newest link-health readings drawn in a link's history chart


def run_url(run: CheckRun) -> str:
    return reverse("validation:run-detail", args=[run.project.code, run.pk])


class ValidationViewMixin(ProjectViewMixin):
    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_run_checks"] = can(self.request.user, Capability.RUN_CHECKS, self.project)
        context["verdicts"] = Verdict
        context["result_statuses"] = ResultStatus
        return context

    def require(self, capability: Capability) -> None:
        """For a write on a page that members may read: 403 unless the role allows it."""
        if not can(self.request.user, capability, self.project):
            raise PermissionDenied("Your role in this project does not allow this.")


# --- How a result reads in a table --------------------------------------------------------------------


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


def _gbps(value) -> str:
    return f"{criteria.fmt_num(value, 1)} Gb/s" if isinstance(value, int | float) else ""


def _sci(value) -> str:
    return criteria.fmt_sci(value) if isinstance(value, int | float) else "—"


def result_figure(kind: str, metrics: dict) -> str:
    """The one figure a result is mostly judged by, as the results table shows it."""
    metrics = metrics or {}
    if kind == CheckKind.LINK_HEALTH:
        counters = metrics.get("counters") or {}
        state = metrics.get("state") or "?"
        return f"{state} {metrics.get('speed') or ''}, eff. BER {_sci(counters.get('effective_ber'))}".strip()
    if kind in (CheckKind.CPU_BANDWIDTH, CheckKind.GPU_RDMA):
        return _gbps(metrics.get("bw_avg_gbps"))
    if kind == CheckKind.BANDWIDTH_MATRIX:
        low, mean = metrics.get("min_gbps"), metrics.get("mean_gbps")
        return f"slowest rail {_gbps(low)}, mean {_gbps(mean)}" if low is not None else ""
    if kind == CheckKind.NCCL:
        avg = metrics.get("avg_busbw_gbps")
        return f"avg busbw {criteria.fmt_num(avg, 2)} GB/s" if isinstance(avg, int | float) else ""
    if kind == CheckKind.NODE_INVENTORY:
        versions = metrics.get("versions") or {}
        return ", ".join(f"{k} {v}" for k, v in sorted(versions.items())[:3])
    return ""


def annotate_results(results, kind: str) -> None:
    for result in results:
        result.figure = result_figure(kind, result.metrics)


# --- Check runs -----------------------------------------------------------------------------------------


class CheckRunListView(ValidationViewMixin, FilteredListView):
    """The project's runs, newest first, and (for managers and technicians) the form that starts one."""

    template_name = "validation/run_list.html"
    context_object_name = "runs"
    filterset_class = CheckRunFilterSet

    def base_queryset(self):
        return selectors.check_run_list_light(user=self.request.user, project=self.project)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if context["can_run_checks"]:
            context.setdefault("start_form", CheckRunStartForm())
        return context

    def post(self, request, *args, **kwargs):
        self.require(Capability.RUN_CHECKS)
        form = CheckRunStartForm(request.POST)
        if form.is_valid():
            try:
                run = services.check_run_start(project=self.project, requested_by=request.user,
                                               **form.service_fields())
            except ValidationError as exc:  # e.g. no GPU nodes to check, an option the kind does not take
                add_service_errors(form, exc)
            else:
                messages.success(request, f"{run.get_kind_display()} run #{run.pk} started.")
                return redirect(run_url(run))
        self.object_list = self.get_queryset()
        return self.render_to_response(self.get_context_data(start_form=form))


class CheckRunDetailView(ValidationViewMixin, FilteredListView):
    """A run: progress (polled while it runs), cancel and re-run buttons, its charts with their tables,
    the filtered and paginated results (worst first) and the log."""

    template_name = "validation/run_detail.html"
    context_object_name = "results"
    filterset_class = CheckResultFilterSet

    def base_queryset(self):
        self.run = selectors.check_run_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        return selectors.worst_first(selectors.check_result_list(user=self.request.user, run=self.run))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.run
        annotate_results(context["results"], run.kind)
        profile = selectors.acceptance_profile_get(user=self.request.user, project=self.project)
        # Uploads have nothing to execute and soak windows are stopped on their own page.
        executable = run.runner in EXECUTING_RUNNERS and run.kind in STARTABLE_CHECK_KINDS
        context.update(
            run=run,
            profile=profile,
            page_filters=CheckResultFilterSet.PAGE_FIELDS,
            can_cancel=context["can_run_checks"] and executable and not run.is_finished,
            can_rerun=context["can_run_checks"] and executable and run.is_finished and (run.failed or run.errored),
            reruns=list(run.reruns.order_by("-created_at").only("id", "status", "created_at")),
            **run_charts(self.request.user, run, profile),
        )
        return context


def run_charts(user, run: CheckRun, profile: AcceptanceProfile) -> dict:
    """The charts of a finished or running run, by kind, each with the figures its table prints."""
    if run.kind == CheckKind.LINK_HEALTH:
        ports = selectors.run_port_ber(user=user, run=run)
        if not ports:
            return {}
        svg = charts.ber_svg(
            [(p.label, p.effective_ber) for p in ports],
            warn=profile.effective_ber_warn, fail=profile.effective_ber_fail,
            title=f"Effective BER per port, run #{run.pk}",
        )
        rows = [
            {"result_id": p.result_id, "label": p.label, "effective": display(p.effective_ber),
             "symbol": display(p.symbol_ber), "raw": display(p.raw_ber)}
            for p in ports
        ]
        levels = {"warn": display(profile.effective_ber_warn), "fail": display(profile.effective_ber_fail)}
        return {"ber_chart": svg, "ber_rows": rows, "ber_levels": levels}
    if run.kind in (CheckKind.CPU_BANDWIDTH, CheckKind.GPU_RDMA):
        return _histogram_context(selectors.run_bandwidth_figures(user=user, run=run, profile=profile), run)
    if run.kind == CheckKind.BANDWIDTH_MATRIX:
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
    if run.kind == CheckKind.NCCL:
        curves = [c for c in selectors.run_nccl_curves(user=user, run=run) if c.points]
        return {"nccl_charts": [(c, nccl_svg(c, profile)) for c in curves]}
    return {}


def _histogram_context(figures: selectors.BandwidthFigures, run: CheckRun) -> dict:
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


def floor_thresholds(fail: float | None, warn: float | None) -> list[charts.Threshold]:
    """The lines of a figure that fails below one level and warns below another."""
    return [
        charts.Threshold(value, level, f"{level} < {criteria.fmt_num(value)}")
        for value, level in ((fail, "fail"), (warn, "warn"))
        if value is not None
    ]


def nccl_svg(curve: selectors.NcclCurve, profile: AcceptanceProfile) -> str:
    return charts.nccl_curve_svg(
        curve.points,
        thresholds=floor_thresholds(profile.nccl_busbw_fail_gbs, profile.nccl_busbw_warn_gbs),
        title=f"NCCL bus bandwidth against message size, {curve.label}",
    )


class CheckRunStatusView(ProjectViewMixin, View):
    """JSON for static/js/progress.js: the run row's status, progress and verdict counts."""

    def get(self, request, *args, **kwargs):
        run = selectors.check_run_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        return JsonResponse(selectors.check_run_status(run=run))


class CheckRunCancelView(ProjectViewMixin, View):
    required_capability = Capability.RUN_CHECKS

    def post(self, request, *args, **kwargs):
        run = selectors.check_run_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        try:
            services.check_run_cancel(run=run, user=request.user)
        except ValidationError as exc:  # finished in the meantime
            messages.error(request, " ".join(exc.messages))
        else:
            messages.info(request, f"Run #{run.pk} cancelled: targets not yet started will not run.")
        return redirect(run_url(run))


class CheckRunRerunFailedView(ProjectViewMixin, View):
    required_capability = Capability.RUN_CHECKS

    def post(self, request, *args, **kwargs):
        run = selectors.check_run_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        try:
            child = services.check_run_rerun_failed(run=run, requested_by=request.user)
        except ValidationError as exc:  # nothing failed
            messages.error(request, " ".join(exc.messages))
            return redirect(run_url(run))
        messages.success(request, f"Run #{child.pk} re-runs the {child.total} failed target(s) of run #{run.pk}.")
        return redirect(run_url(child))


# --- One result -------------------------------------------------------------------------------------------


class CheckResultDetailView(ValidationViewMixin, TemplateView):
    template_name = "validation/result_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        result = selectors.check_result_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        profile = selectors.acceptance_profile_get(user=self.request.user, project=self.project)
        result.figure = result_figure(result.run.kind, result.metrics)
        context.update(result=result, run=result.run, metrics=result.metrics or {})
        context.update(result_charts(result, profile))
        return context


def result_charts(result: CheckResult, profile: AcceptanceProfile) -> dict:
    kind, metrics = result.run.kind, result.metrics or {}
    if kind == CheckKind.LINK_HEALTH:
        dom = selectors.dom_figures(metrics)
        counters = [(name, display(value)) for name, value in (metrics.get("counters") or {}).items()]
        if dom is None:
            return {"counters": counters}
        series = [
            charts.DomSeries("Rx power", [lane.rx_dbm for lane in dom.lanes], dom.rx_limits),
            charts.DomSeries("Tx power", [lane.tx_dbm for lane in dom.lanes], dom.tx_limits),
        ]
        margin = profile.dom_power_margin_db
        svg = charts.dom_svg(series, margin=margin, title=f"DOM per lane, {selectors.result_label(result)}")
        return {"dom": dom, "dom_chart": svg, "counters": counters}
    if kind == CheckKind.NCCL:
        curve = selectors.NcclCurve(
            result_id=result.pk, label=result.target_key, verdict=result.verdict,
            points=sorted((int(p["size_bytes"]), float(p["busbw_gbs"])) for p in selectors.nccl_curve(result=result)),
            avg_busbw_gbs=metrics.get("avg_busbw_gbps"),
        )
        return {"nccl_curve": curve, "nccl_chart": nccl_svg(curve, profile) if curve.points else ""}
    if kind == CheckKind.BANDWIDTH_MATRIX:
        return {"rails": metrics.get("rails") or []}
    if kind == CheckKind.NODE_INVENTORY:
        return {"versions": sorted((metrics.get("versions") or {}).items())}
    return {}


class CheckResultRawView(ProjectViewMixin, View):
    """The tool's output exactly as it was captured (and what it printed on stderr), as plain text."""

    def get(self, request, *args, **kwargs):
        result = selectors.check_result_raw(user=request.user, project=self.project, pk=kwargs["pk"])
        text = result.raw_output
        if result.stderr:
            text += f"\n----- stderr -----\n{result.stderr}"
        response = HttpResponse(text, content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'inline; filename="result-{result.pk}.txt"'
        return response


# --- A link's history ---------------------------------------------------------------------------------------


class LinkHistoryView(ValidationViewMixin, FilteredListView):
    """Every result that concerns a port or a cable, across runs, newest first, with its link-health
    readings (BER and counters) over time as small charts."""

    template_name = "validation/link_history.html"
    context_object_name = "results"
    filterset_class = CheckResultFilterSet

    def subject(self) -> selectors.LinkSubject:
        if not hasattr(self, "_subject"):
            finder = selectors.link_subject_port if self.kwargs["what"] == "port" else selectors.link_subject_cable
            self._subject = finder(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        return self._subject

    def base_queryset(self):
        return selectors.link_history(user=self.request.user, project=self.project, subject=self.subject())

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        for result in context["results"]:
            result.figure = result_figure(result.run.kind, result.metrics)
        recent = self.base_queryset().filter(run__kind=CheckKind.LINK_HEALTH)[:HISTORY_CHART_POINTS]
        readings = selectors.link_readings(recent)
        profile = selectors.acceptance_profile_get(user=self.request.user, project=self.project)
        rows = [
            {"reading": r, "effective": display(r.effective_ber), "symbol": display(r.symbol_ber),
             "counters": [display(r.symbol_errors), display(r.link_down), display(r.link_error_recovery)]}
            for r in reversed(readings)  # the table reads newest first, like the results below it
        ]
        context.update(subject=self.subject(), readings=rows, page_filters=("verdict", "kind"))
        if readings:
            context.update(history_charts(readings, profile))
        return context


def history_charts(readings: list[selectors.LinkReading], profile: AcceptanceProfile) -> dict:
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
    return {"ber_history_chart": ber, "counter_history_chart": counters}


# --- Acceptance profile -----------------------------------------------------------------------------------


class AcceptanceProfileView(ValidationViewMixin, TemplateView):
    """Every member reads the thresholds results are judged by; managers change them (every change is
    kept in the profile's history)."""

    template_name = "validation/profile.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        profile = selectors.acceptance_profile_get(user=self.request.user, project=self.project)
        if context["can_manage_project"]:
            context.setdefault("form", AcceptanceProfileForm(instance=profile))
        context["profile"] = profile
        context["settings"] = [
            (AcceptanceProfileForm.Meta.labels.get(name, name), display(getattr(profile, name)), name)
            for name in AcceptanceProfile.THRESHOLD_FIELDS
        ]
        context["history"] = history_rows(profile.history.all()) if profile.pk else []
        return context

    def post(self, request, *args, **kwargs):
        self.require(Capability.MANAGE_PROJECT)
        profile = selectors.acceptance_profile_get(user=request.user, project=self.project)
        form = AcceptanceProfileForm(request.POST, instance=profile)
        if form.is_valid():
            try:
                services.acceptance_profile_update(project=self.project, user=request.user, **form.service_fields())
            except ValidationError as exc:
                add_service_errors(form, exc)
            else:
                messages.success(request, "Acceptance profile saved: new results are judged by it.")
                return redirect("validation:profile", self.project.code)
        return self.render_to_response(self.get_context_data(form=form))

