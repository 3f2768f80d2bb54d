"""The upload page, the job page (progress, preview, confirm) and the export downloads. Thin: access
through ProjectViewMixin, reads through selectors, writes through services. The job page's progress
bar polls the one job status endpoint.

The upload only stores the file and queues its preview: nothing here opens an uploaded file; the
preview task reads it, within the limits of inventory.imports.limits."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import reverse
from django.views import View
from django.views.generic import FormView, TemplateView

from core.choices import JobStatus
from core.http import attachment
from core.spreadsheets import CSV_CONTENT_TYPE, XLSX_CONTENT_TYPE
from projects.access import Capability, ProjectViewMixin

from .columns import COLUMNS, KINDS
from .export import FORMATS, export_csv, export_filename, export_xlsx
from .forms import ImportUploadForm
from .selectors import RECENT_JOBS, import_job_detail, import_job_list
from .services import import_job_confirm, import_job_create

# Errors per page of the job page (a job keeps at most IMPORT_MAX_ERRORS of them).
ERRORS_PER_PAGE = 50


def job_url(job) -> str:
    return reverse("imports:job", args=[job.project.code, job.pk])


class ImportPageView(ProjectViewMixin, FormView):
    required_capability = Capability.EDIT_INVENTORY
    template_name = "inventory/imports/upload.html"
    form_class = ImportUploadForm

    def form_valid(self, form):
        job = import_job_create(
            project=self.project, user=self.request.user, upload=form.cleaned_data["file"],
            kind=form.cleaned_data["kind"],
        )
        return redirect(job_url(job))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["jobs"] = import_job_list(user=self.request.user, project=self.project)[:RECENT_JOBS]
        context["columns"] = [(kind, COLUMNS[kind]) for kind in KINDS]
        context["kinds"] = KINDS
        context["statuses"] = JobStatus
        return context


class ImportJobView(ProjectViewMixin, TemplateView):
    required_capability = Capability.EDIT_INVENTORY
    template_name = "inventory/imports/job.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        job = import_job_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        context["job"] = job
        context["statuses"] = JobStatus
        errors = job.errors or []
        context["errors_page"] = Paginator(errors, ERRORS_PER_PAGE).get_page(self.request.GET.get("page"))
        context["error_count"] = error_count(errors)
        context["counts"] = sorted(
            (job.summary or {}).get("counts", {}).items(), key=lambda item: KINDS.index(item[0])
        )
        context["preview_rows"] = [
            (kind, [dict(row, text=_describe(row)) for row in rows])
            for kind, rows in (job.summary or {}).get("rows", {}).items() if rows
        ]
        return context


def error_count(errors: list[dict]) -> int:
    """How many errors the file had: those kept, and those the last one says were not."""
    return sum(error.get("more", 1) if isinstance(error, dict) else 1 for error in errors)


def _describe(row: dict) -> str:
    """'status: planned -> racked' for an update, 'rack=R01, position_u=3' for a create."""
    before = row.get("before") or {}
    parts = []
    for name, value in row["values"].items():
        if name in before:
            old = before[name] if before[name] not in (None, "") else "(blank)"
            parts.append(f"{name}: {old} -> {value}")
        else:
            parts.append(f"{name}={value}")
    return ", ".join(parts)


class ImportJobConfirmView(ProjectViewMixin, View):
    required_capability = Capability.EDIT_INVENTORY

    def post(self, request, *args, **kwargs):
        job = import_job_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        try:
            import_job_confirm(job=job, user=request.user)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.info(request, "Import confirmed; it is being applied.")
        return redirect(job_url(job))


class ExportView(ProjectViewMixin, View):
    """?kind=racks|devices|nics|optics&format=csv|xlsx; an XLSX without a kind holds every kind (what
    a bare link gives). Reading the inventory is all it does, so every member may download."""

    def get(self, request, *args, **kwargs):
        kind = request.GET.get("kind") or None
        file_format = request.GET.get("format") or ("csv" if kind else "xlsx")
        if kind is not None and kind not in KINDS:
            return HttpResponseBadRequest(f"kind must be one of {', '.join(KINDS)}")
        if file_format not in FORMATS:
            return HttpResponseBadRequest(f"format must be one of {', '.join(FORMATS)}")
        if file_format == "csv" and kind is None:
            return HttpResponseBadRequest("a CSV holds one kind: give kind, or ask for format=xlsx")
        if file_format == "csv":
            response = HttpResponse(export_csv(self.project, kind), content_type=CSV_CONTENT_TYPE)
        else:
            response = HttpResponse(export_xlsx(self.project, [kind] if kind else KINDS),
                                    content_type=XLSX_CONTENT_TYPE)
        return attachment(response, export_filename(self.project, kind, file_format))
