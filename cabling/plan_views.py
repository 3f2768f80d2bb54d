"""The plan pages under /p/<code>/plan/: the spec form (YAML text or upload, the shipped examples one click
away) whose preview shows the plan's figures, bill of materials and what applying changes; then Confirm,
which queues the apply (a task) and shows its progress. Managers only: technicians and customers get
403, outsiders 404 (projects.access). Thin: reads through selectors, writes through services. The
apply's progress is polled from the one job status endpoint (templates/core/_progress.html)."""

from __future__ import annotations

from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views import View
from django.views.generic import FormView, TemplateView

from core.choices import JobStatus
from core.forms import add_service_errors
from core.http import attachment
from projects.access import Capability, ProjectViewMixin

from .choices import FabricPlanSource
from .selectors import RECENT_PLANS, fabric_plan_detail, fabric_plan_list
from .services import fabric_plan_confirm, fabric_plan_preview

EXAMPLES_DIR = Path(settings.BASE_DIR) / "examples"
EXAMPLES = ("fabric-72", "fabric-256", "fabric-1024", "demo-72")
MAX_SPEC_BYTES = 1024 * 1024


def example_text(name: str) -> str:
    if name not in EXAMPLES:
        raise Http404("No such example.")
    return (EXAMPLES_DIR / f"{name}.yaml").read_text(encoding="utf-8")


class FabricPlanForm(forms.Form):
    spec = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code"}), required=False,
        help_text="The cluster spec in YAML (JSON is YAML too).",
    )
    upload = forms.FileField(required=False, help_text="...or a .yaml file; it replaces the text above.")

    def clean(self):
        data = super().clean()
        upload = data.get("upload")
        if upload:
            if upload.size > MAX_SPEC_BYTES:
                raise forms.ValidationError({"upload": f"The file is larger than {MAX_SPEC_BYTES // 1024} KB."})
            try:
                data["spec"] = upload.read().decode("utf-8")
            except UnicodeDecodeError as exc:
                raise forms.ValidationError({"upload": "The file is not UTF-8 text."}) from exc
        if not (data.get("spec") or "").strip():
            raise forms.ValidationError({"spec": "Paste a spec, upload one, or start from an example."})
        if len(data["spec"].encode()) > MAX_SPEC_BYTES:
            raise forms.ValidationError({"spec": f"The spec is larger than {MAX_SPEC_BYTES // 1024} KB."})
        return data


def plan_url(row) -> str:
    return reverse("plans:detail", args=[row.project.code, row.pk])


class ManagerOnlyMixin(ProjectViewMixin):
    required_capability = Capability.MANAGE_PROJECT


class FabricPlanPageView(ManagerOnlyMixin, FormView):
    template_name = "cabling/plan_form.html"
    form_class = FabricPlanForm

    def get_initial(self):
        name = self.request.GET.get("example")
        return {"spec": example_text(name)} if name else {}

    def form_valid(self, form):
        try:
            row = fabric_plan_preview(
                project=self.project, user=self.request.user, spec_text=form.cleaned_data["spec"],
                source=FabricPlanSource.FORM,
            )
        except ValidationError as exc:  # the spec cannot be planned: each message names the spec's field
            add_service_errors(form, exc)
            return self.form_invalid(form)
        return redirect(plan_url(row))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["plans"] = fabric_plan_list(user=self.request.user, project=self.project)[:RECENT_PLANS]
        context["examples"] = EXAMPLES
        context["statuses"] = JobStatus
        return context


class FabricPlanDetailView(ManagerOnlyMixin, TemplateView):
    template_name = "cabling/plan_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        row = fabric_plan_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        summary, diff = row.summary or {}, row.diff or {}
        context.update(
            plan=row, statuses=JobStatus, summary=summary, diff=diff, counts=diff.get("counts", {}),
            networks=_network_rows(summary), bom=summary.get("bom", []),
            blocked_count=(diff.get("counts", {}).get("cables_blocked", 0)
                           + diff.get("counts", {}).get("switches_blocked", 0)),
        )
        return context


def _network_rows(summary: dict) -> list[dict]:
    """One row per network of the plan's summary: switches per tier, planes, tiers, links, cables, optics."""
    rows = []
    for key, switches in summary.get("switches", {}).items():
        rows.append({
            "key": key, **switches, "planes": summary["planes"][key], "tiers": summary.get("tiers", {}).get(key),
            "links": summary["links"][key], "cables": summary.get("cables_by_network", {}).get(key),
            "optics": summary.get("optics_by_network", {}).get(key),
        })
    return rows


class FabricPlanConfirmView(ManagerOnlyMixin, View):
    def post(self, request, *args, **kwargs):
        row = fabric_plan_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        try:
            fabric_plan_confirm(fabric_plan=row, user=request.user,
                                keep_installed=request.POST.get("keep_installed") == "on")
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.info(request, "Plan confirmed; it is being applied.")
        return redirect(plan_url(row))


class FabricPlanExampleView(ManagerOnlyMixin, View):
    """A shipped example spec as a YAML download."""

    def get(self, request, *args, **kwargs):
        response = HttpResponse(example_text(kwargs["name"]), content_type="application/yaml; charset=utf-8")
        return attachment(response, f"{kwargs['name']}.yaml")
