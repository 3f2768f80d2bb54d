"""Validation pages under /p/<code>/checks/: check runs (list, start form, a run with its progress, charts,
log and filtered results), a result with its raw output, a link's history and the acceptance profile.

Every view goes through delivery.access.ProjectViewMixin (outsiders 404; starting, cancelling and
re-running need Capability.RUN_CHECKS, editing the profile Capability.MANAGE_PROJECT), reads through
validation.selectors and writes through validation.services. Charts and figures come from
validation.presenters (each chart printed beside a table of the same figures); a run's progress is polled
from the one job status endpoint (core/_progress.html).
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views import View
from django.views.generic import TemplateView

from core.forms import add_service_errors
from core.history import history_rows
from core.http import attachment
from core.views import FilteredListView
from delivery.access import Capability, ProjectViewMixin, can

from . import presenters, selectors, services
from .choices import EXECUTING_RUNNERS, ResultStatus, Verdict
from .filters import CheckResultFilterSet, CheckRunFilterSet
from .forms import AcceptanceProfileForm, CheckRunStartForm
from .kinds import STARTABLE_CHECK_KINDS
from .models import AcceptanceProfile, CheckRun

PAGE_SIZE = 50


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
        presenters.annotate_results(context["results"], run.kind)
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
            **presenters.run_charts(user=self.request.user, run=run, profile=profile),
        )
        return context


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
            (AcceptanceProfileForm.Meta.labels.get(name, name), presenters.display(getattr(profile, name)), name)
            for name in AcceptanceProfile.THRESHOLD_FIELDS
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

