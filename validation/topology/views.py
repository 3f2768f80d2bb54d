"""Topology comparison pages under /p/<code>/checks/topology/: the list (with the upload form for those
who may compare), the upload, one comparison (counts, a chart of states, what changed since the previous
one, its links worst first with their advice, its files) and a file as it was uploaded. Thin: access
through ProjectViewMixin (outsiders 404; uploading needs RUN_CHECKS), reads through the selectors, writes
through the services. A queued comparison's progress is polled from the one job status endpoint."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import FileResponse, Http404
from django.shortcuts import redirect
from django.views import View
from django.views.generic import FormView, ListView, TemplateView

from core.choices import JobStatus
from core.forms import add_service_errors
from projects.access import Capability, ProjectViewMixin, can

from ..charts import StateBar, state_bars_svg
from ..choices import LinkChange, LinkState, TopologySource
from . import selectors
from .forms import TopologyUploadForm
from .services import TopologyInput, topology_comparison_start

PER_PAGE = 50
LINKS_PER_PAGE = 50
STATE_COLOURS = {"ok": "#2e7d32", "missing": "#c62828", "miswired": "#8e24aa", "degraded": "#ef8f00",
                 "unplanned": "#5b6677"}


class _TopologyContext:
    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_compare"] = can(self.request.user, Capability.RUN_CHECKS, self.project)
        context["statuses"] = JobStatus
        context["link_states"] = LinkState
        return context


class TopologyComparisonListView(_TopologyContext, ProjectViewMixin, ListView):
    template_name = "validation/topology/list.html"
    context_object_name = "comparisons"
    paginate_by = PER_PAGE

    def get_queryset(self):
        return selectors.topology_comparison_list(user=self.request.user, project=self.project)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if context["can_compare"]:
            context.setdefault("form", TopologyUploadForm())
        return context


class TopologyUploadView(_TopologyContext, ProjectViewMixin, FormView):
    required_capability = Capability.RUN_CHECKS
    template_name = "validation/topology/new.html"
    form_class = TopologyUploadForm

    def form_valid(self, form):
        files = form.cleaned_data["files"]
        host = form.cleaned_data.get("host", "").strip()
        inputs = [TopologyInput(name=upload.name, data=upload.read(), host=host if len(files) == 1 else "")
                  for upload in files]
        try:
            comparison = topology_comparison_start(project=self.project, user=self.request.user, inputs=inputs,
                                                   source=TopologySource.PAGE)
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.form_invalid(form)
        messages.success(self.request, f"Comparison #{comparison.pk}: {len(inputs)} file(s) kept.")
        return redirect("validation:topology-detail", self.project.code, comparison.pk)


def state_chart(counts: dict) -> str:
    bars = [StateBar(state.value, state.label, int(counts.get(state.value, 0)), STATE_COLOURS[state.value])
            for state in LinkState]
    return state_bars_svg(bars, title="Links per state")


class TopologyComparisonDetailView(_TopologyContext, ProjectViewMixin, TemplateView):
    template_name = "validation/topology/detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        user = self.request.user
        comparison = selectors.topology_comparison_detail(user=user, project=self.project, pk=self.kwargs["pk"])
        state = self.request.GET.get("state", "")
        change = self.request.GET.get("change", "")
        links = selectors.topology_links(user=user, comparison=comparison, state=state, change=change)
        page = Paginator(links, LINKS_PER_PAGE).get_page(self.request.GET.get("page"))
        counts = comparison.counts or {}
        context.update(
            comparison=comparison,
            counts=[(s, counts.get(s.value, 0)) for s in LinkState],
            chart=state_chart(counts) if comparison.status == JobStatus.DONE else "",
            page_obj=page,
            paginator=page.paginator,
            is_paginated=page.has_other_pages(),
            links=page.object_list,
            current_state=state,
            files=selectors.topology_files(user=user, comparison=comparison),
            state=state if state in LinkState.values else "",
            change=change if change in LinkChange.values else "",
            changes=comparison.changes or {},
            link_changes=LinkChange,
        )
        return context


class TopologyFileView(ProjectViewMixin, View):
    """A file exactly as it was uploaded (or collected)."""

    def get(self, request, *args, **kwargs):
        row = selectors.topology_file_detail(user=request.user, project=self.project, comparison_pk=kwargs["pk"],
                                             pk=kwargs["file_pk"])
        try:
            handle = row.file.open("rb")
        except FileNotFoundError as exc:
            raise Http404("The stored file is missing.") from exc
        return FileResponse(handle, as_attachment=True, filename=row.original_name, content_type="text/plain")
