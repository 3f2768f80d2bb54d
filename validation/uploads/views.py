"""Upload pages (form, list, an upload's results or error with its progress, and its raw file) and the soak
pages (windows with progress, start, stop, a window's failures). Thin: access through ProjectViewMixin, reads
through selectors, writes through services. An upload's progress is polled from the one job status
endpoint (core/_progress.html)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views import View
from django.views.generic import FormView, ListView, TemplateView

from core.choices import JobStatus
from core.forms import add_service_errors
from projects.access import Capability, ProjectViewMixin, can

from .. import soak
from ..choices import UploadSource, Verdict
from .forms import SoakStartForm, ToolUploadForm
from .selectors import tool_upload_detail, tool_upload_list, tool_upload_results
from .services import tool_upload_create

UPLOADS_PER_PAGE = 50


class _UploadContext:
    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_run_checks"] = can(self.request.user, Capability.RUN_CHECKS, self.project)
        context["statuses"] = JobStatus
        context["verdicts"] = Verdict
        return context


class ToolUploadListView(_UploadContext, ProjectViewMixin, ListView):
    template_name = "validation/uploads/list.html"
    context_object_name = "uploads"
    paginate_by = UPLOADS_PER_PAGE

    def get_queryset(self):
        return tool_upload_list(user=self.request.user, project=self.project)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if context["can_run_checks"]:
            context["form"] = ToolUploadForm()
        return context


class ToolUploadCreateView(_UploadContext, ProjectViewMixin, FormView):
    required_capability = Capability.RUN_CHECKS
    template_name = "validation/uploads/new.html"
    form_class = ToolUploadForm

    def get_initial(self):
        return {"host": self.request.GET.get("host", ""), "tool": "auto"}

    def form_valid(self, form):
        file = form.cleaned_data["file"]
        try:
            upload = tool_upload_create(
                project=self.project,
                user=self.request.user,
                host=form.cleaned_data["host"],
                data=file.read(),
                filename=file.name,
                tool=form.cleaned_data.get("tool"),
                source=UploadSource.PAGE,
            )
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.form_invalid(form)
        return redirect("uploads:detail", self.project.code, upload.pk)


class ToolUploadDetailView(_UploadContext, ProjectViewMixin, TemplateView):
    template_name = "validation/uploads/detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        upload = tool_upload_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        context["upload"] = upload
        context["results"] = tool_upload_results(user=self.request.user, upload=upload)
        return context


class ToolUploadFileView(ProjectViewMixin, View):
    """The file exactly as it was uploaded."""

    def get(self, request, *args, **kwargs):
        upload = tool_upload_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        try:
            handle = upload.file.open("rb")
        except FileNotFoundError as exc:
            raise Http404("The stored file is missing.") from exc
        return FileResponse(handle, as_attachment=True, filename=upload.original_name, content_type="text/plain")


# ---------------------------------------------------------------------------------------------------
# Soak


class _SoakContext:
    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_run_checks"] = can(self.request.user, Capability.RUN_CHECKS, self.project)
        context["now"] = timezone.now()
        return context


def _with_progress(windows, now):
    for window in windows:
        window.percent = round(100 * window.progress(now))
    return windows


class SoakListView(_SoakContext, ProjectViewMixin, TemplateView):
    template_name = "validation/soak_list.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        windows = list(soak.soak_window_list(user=self.request.user, project=self.project))
        context["windows"] = _with_progress(windows, context["now"])
        context["open_window"] = next((w for w in windows if w.is_open), None)
        if context["can_run_checks"] and context["open_window"] is None:
            context["form"] = kwargs.get("form") or SoakStartForm()
        return context


class SoakStartView(_SoakContext, ProjectViewMixin, FormView):
    required_capability = Capability.RUN_CHECKS
    template_name = "validation/soak_list.html"
    form_class = SoakStartForm

    def get(self, request, *args, **kwargs):
        return redirect("uploads:soak-list", self.project.code)

    def form_valid(self, form):
        try:
            window = soak.soak_window_start(
                project=self.project,
                user=self.request.user,
                duration=timedelta(hours=form.cleaned_data["duration_hours"]),
                runner=form.cleaned_data["runner"],
            )
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.form_invalid(form)
        return redirect("uploads:soak-detail", self.project.code, window.pk)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        windows = list(soak.soak_window_list(user=self.request.user, project=self.project))
        context["windows"] = _with_progress(windows, context["now"])
        return context


class SoakDetailView(_SoakContext, ProjectViewMixin, TemplateView):
    template_name = "validation/soak_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        window = soak.soak_window_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        _with_progress([window], context["now"])
        context["window"] = window
        context["failures"] = soak.soak_failures(user=self.request.user, window=window)
        return context


class SoakStopView(ProjectViewMixin, View):
    required_capability = Capability.RUN_CHECKS

    def post(self, request, *args, **kwargs):
        window = soak.soak_window_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        try:
            soak.soak_window_stop(window=window, user=request.user)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.info(request, f"Soak #{window.pk} stopped; its ports were judged on the readings so far.")
        return redirect(reverse("uploads:soak-detail", args=[self.project.code, window.pk]))
