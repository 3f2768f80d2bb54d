"""Validation pages under /p/<code>/checks/: check runs (list, start form, a run with its progress, charts,
log and filtered results), a result with its raw output, a link's history and the acceptance profile.

Every view goes through projects.access.ProjectViewMixin (outsiders 404; starting, cancelling and
re-running need Capability.RUN_CHECKS, editing the profile Capability.MANAGE_PROJECT), reads through
validation.selectors and writes through validation.services. Charts and figures come from
validation.presenters (each chart printed beside a table of the same figures); a run's progress is polled
from the one job status endpoint (core/_progress.html).
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, HttpResponseNotModified, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import parse_etags
from django.views import View
from django.views.generic import TemplateView
from django_filters.constants import EMPTY_VALUES

from core.forms import add_service_errors
from core.history import history_rows
from core.http import attachment
from core.views import FilteredListView
from projects.access import Capability, ProjectViewMixin, can

from . import charts, presenters, selectors, services
from .choices import EXECUTING_RUNNERS, CheckKind, ResultStatus, Verdict
from .filters import CheckResultFilterSet, CheckRunFilterSet
from .forms import AcceptanceProfileForm, CheckRunStartForm
from .kinds import STARTABLE_CHECK_KINDS
from .models import CheckRun


def run_url(run: CheckRun) -> str:
    return reverse("validation:run-detail", args=[run.project.code, run.pk])


class ValidationViewMixin(ProjectViewMixin):
    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_run_checks"] = can(self.request.user, Capability.RUN_CHECKS, self.project)
        context["verdicts"] = Verdict
        context["result_statuses"] = ResultStatus
        return context


# --- Check runs -----------------------------------------------------------------------------------------


class CheckRunListView(ValidationViewMixin, FilteredListView):
    """The project's runs, newest first, and (for managers and technicians) the form that starts one."""

    template_name = "validation/run_list.html"
    context_object_name = "runs"
    filterset_class = CheckRunFilterSet
    write_capability = Capability.RUN_CHECKS  # the start form (ProjectViewMixin refuses others' POST)

    def base_queryset(self):
        return selectors.check_run_list_light(user=self.request.user, project=self.project)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if context["can_run_checks"]:
            context.setdefault("start_form", CheckRunStartForm())
        return context

    def post(self, request, *args, **kwargs):
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


def clamped_int(text: str | None, *, default: int, lo: int, hi: int) -> int:
    """A whole number from a query string, brought within [lo, hi]; `default` for anything else (a query
    string is hostile: page=-1, page=10**30 and page=abc all get a page, never an error)."""
    text = (text or "").strip()
    if len(text) > 30:  # no need to read a thousand digits: a long number is past the end
        return hi if text.isdigit() else default
    try:
        value = int(text)
    except ValueError:
        value = default
    return min(max(value, lo), hi)


class ClampedPaginationMixin:
    """A list page whose `page` is brought within the pages there are and whose `page_size` (if asked for)
    within [MIN_PAGE_SIZE, MAX_PAGE_SIZE]: the page's size stays bounded whatever the URL says."""

    MIN_PAGE_SIZE, MAX_PAGE_SIZE = 10, 200

    def get_paginate_by(self, queryset):
        return clamped_int(self.request.GET.get("page_size"), default=self.paginate_by, lo=self.MIN_PAGE_SIZE,
                           hi=self.MAX_PAGE_SIZE)

    def paginate_queryset(self, queryset, page_size):
        paginator = self.get_paginator(queryset, page_size, allow_empty_first_page=True)
        number = clamped_int(self.request.GET.get("page"), default=1, lo=1, hi=paginator.num_pages)
        page = paginator.page(number)
        return paginator, page, page.object_list, page.has_other_pages()


LOG_TAIL_LINES = 200  # a run page shows the end of the log; the whole of it is one link away


def log_tail(log: str, lines: int = LOG_TAIL_LINES) -> tuple[str, int]:
    """The last `lines` lines of a log and how many came before them."""
    parts = log.splitlines()
    return "\n".join(parts[-lines:]), max(len(parts) - lines, 0)


def filters_applied(filterset) -> bool:
    """Whether a list's filter form narrows it (a value it accepted; a refused one is ignored, as the list
    ignores it)."""
    if not filterset.is_bound:
        return False
    filterset.form.is_valid()
    return any(value not in EMPTY_VALUES for value in filterset.form.cleaned_data.values())


class CheckRunDetailView(ValidationViewMixin, ClampedPaginationMixin, FilteredListView):
    """A run: progress (polled while it runs), cancel and re-run buttons, its charts with their tables
    (aggregated on the server: a page's size and queries do not grow with the run's), the filtered and
    paginated results (worst first) and the end of the log."""

    template_name = "validation/run_detail.html"
    context_object_name = "results"
    filterset_class = CheckResultFilterSet

    def base_queryset(self):
        self.run = selectors.check_run_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        results = selectors.check_result_list(user=self.request.user, run=self.run)
        if self.run.kind == CheckKind.BANDWIDTH_MATRIX:
            return selectors.worst_pairs_first(results)  # the matrix's "worst pairs" are the first page
        return selectors.worst_first(results)

    def get_paginator(self, queryset, per_page, **kwargs):
        """The pager of the results; a finished run's unfiltered results are its stored count (counting
        half a million results was most of a large matrix page's time)."""
        paginator = super().get_paginator(queryset, per_page, **kwargs)
        if self.run.has_summary and not filters_applied(self.filterset):
            paginator.count = self.run.summary_results  # Paginator.count is a cached property: never counted
        return paginator

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.run
        presenters.annotate_results(context["results"], run.kind)
        profile = selectors.acceptance_profile_get(user=self.request.user, project=self.project)
        # Uploads have nothing to execute and soak windows are stopped on their own page.
        executable = run.runner in EXECUTING_RUNNERS and run.kind in STARTABLE_CHECK_KINDS
        tail, earlier = log_tail(run.log)
        filtered_by_chart = [name for name in CheckResultFilterSet.CHART_FIELDS if self.request.GET.get(name)]
        context.update(
            run=run,
            profile=profile,
            page_filters=(*CheckResultFilterSet.PAGE_FIELDS, *filtered_by_chart),
            can_cancel=context["can_run_checks"] and executable and not run.is_finished,
            can_rerun=context["can_run_checks"] and executable and run.is_finished and (run.failed or run.errored),
            reruns=list(run.reruns.order_by("-created_at").only("id", "status", "created_at")),
            log_tail=tail,
            log_earlier_lines=earlier,
            **presenters.run_charts(user=self.request.user, run=run, profile=profile),
        )
        return context


class CheckRunLogView(ProjectViewMixin, View):
    """A run's whole log, as plain text (the page shows its end)."""

    def get(self, request, *args, **kwargs):
        run = selectors.check_run_log(user=request.user, project=self.project, pk=kwargs["pk"])
        response = HttpResponse(run.log, content_type="text/plain; charset=utf-8")
        return attachment(response, f"run-{run.pk}-log.txt", inline=True)


KEPT_A_DAY = "private, max-age=86400"  # private: it is the project's data


def _matrix_run(request, project, pk) -> CheckRun:
    run = selectors.check_run_get(user=request.user, project=project, pk=pk)
    if run.kind != CheckKind.BANDWIDTH_MATRIX:
        raise Http404("Only a bandwidth-matrix run has a matrix image and nodes.")
    return run


def matrix_etag(run: CheckRun, what: str) -> str | None:
    """The version of a finished run's matrix image or nodes, or None while it may still change (running, or
    finished without its stored figures: a result recorded after a cancel clears them and changes the
    matrix). The stored figures' time and the results counted are in it, so a late result or a new summary
    makes another tag even though the run finished once."""
    if not (run.is_finished and run.has_summary):
        return None
    return f'"matrix-{what}-{run.pk}-{run.summarised_at.timestamp()}-{run.progress_done}"'


def cached_for_a_day(request, etag: str | None, render) -> HttpResponse:
    """`render()`'s response, kept a day by the browser under `etag`; a 304 when the browser holds that
    version (with the same ETag and Cache-Control, so it keeps it another day). No etag: never kept."""
    if etag is None:
        response = render()
        response["Cache-Control"] = "no-store"
        return response
    if etag in parse_etags(request.headers.get("If-None-Match", "")):
        response = HttpResponseNotModified()
    else:
        response = render()
    response["ETag"] = etag
    response["Cache-Control"] = KEPT_A_DAY
    return response


class CheckRunMatrixImageView(ProjectViewMixin, View):
    """The heat map of a bandwidth-matrix run as a PNG (a pixel square per pair), for runs too large for an
    SVG cell per pair. Members only, like the run's page; 404 for a run of another kind. A finished run with
    its stored figures is kept by the browser a day under an ETag (matrix_etag)."""

    def get(self, request, *args, **kwargs):
        run = _matrix_run(request, self.project, kwargs["pk"])

        def render():
            return HttpResponse(presenters.matrix_png(user=request.user, run=run), content_type=charts.PNG_CONTENT_TYPE)

        return cached_for_a_day(request, matrix_etag(run, "image"), render)


class CheckRunMatrixNodesView(ProjectViewMixin, View):
    """The node names of a large matrix's image, in its row order, as JSON: fetched by the page's script
    when it starts (off the page's own path: finding them reads every pair). Kept like the image."""

    def get(self, request, *args, **kwargs):
        run = _matrix_run(request, self.project, kwargs["pk"])

        def render():
            return JsonResponse({"nodes": selectors.matrix_nodes(user=request.user, run=run)})

        return cached_for_a_day(request, matrix_etag(run, "nodes"), render)


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
        messages.success(
            request, f"Run #{child.pk} re-runs the {child.progress_total} failed target(s) of run #{run.pk}."
        )
        return redirect(run_url(child))


# --- One result -------------------------------------------------------------------------------------------


class CheckResultDetailView(ValidationViewMixin, TemplateView):
    template_name = "validation/result_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        result = selectors.check_result_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        profile = selectors.acceptance_profile_get(user=self.request.user, project=self.project)
        presenters.annotate_results([result])
        context.update(result=result, run=result.run, metrics=result.metrics or {})
        context.update(presenters.result_charts(result=result, profile=profile))
        return context


class CheckResultRawView(ProjectViewMixin, View):
    """The tool's output exactly as it was captured (and what it printed on stderr), as plain text."""

    def get(self, request, *args, **kwargs):
        result = selectors.check_result_raw(user=request.user, project=self.project, pk=kwargs["pk"])
        text = result.raw_output
        if result.stderr:
            text += f"\n----- stderr -----\n{result.stderr}"
        response = HttpResponse(text, content_type="text/plain; charset=utf-8")
        return attachment(response, f"result-{result.pk}.txt", inline=True)


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
        presenters.annotate_results(context["results"])
        profile = selectors.acceptance_profile_get(user=self.request.user, project=self.project)
        context.update(subject=self.subject(), page_filters=("verdict", "kind"))
        context.update(
            presenters.link_history_charts(
                user=self.request.user, project=self.project, subject=self.subject(), profile=profile
            )
        )
        return context


# --- Acceptance profile -----------------------------------------------------------------------------------


class AcceptanceProfileView(ValidationViewMixin, TemplateView):
    """Every member reads the thresholds results are judged by; managers change them (every change is
    kept in the profile's history)."""

    template_name = "validation/profile.html"
    write_capability = Capability.MANAGE_PROJECT  # changing the thresholds

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        profile = selectors.acceptance_profile_get(user=self.request.user, project=self.project)
        if context["can_manage_project"]:
            context.setdefault("form", AcceptanceProfileForm(instance=profile))
        context["profile"] = profile
        context["settings"] = [
            (AcceptanceProfileForm.Meta.labels.get(name, name),
             presenters.display(profile.roce_shown() if name == "roce" else getattr(profile, name)), name)
            for name in AcceptanceProfileForm.Meta.fields
        ]
        context["history"] = history_rows(profile.history.all()) if profile.pk else []
        return context

    def post(self, request, *args, **kwargs):
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

