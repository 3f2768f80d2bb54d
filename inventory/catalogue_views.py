"""The hardware catalogue pages under /p/<code>/catalogue/: the list of hardware models (filtered by kind
and vendor), one model with its NIC and port templates, and the import of device-type YAML files.

The catalogue is shared by every project (HardwareModel belongs to none): any member of the project in
the URL reads it, as the API lets anyone signed in read it. Importing is for the project's managers (and
staff): a manager may add models, but changing a model already in the catalogue, which other projects
may use, is for staff (catalogue_load's allow_update), as writing through the API is."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.views.generic import DetailView, FormView

from core.views import FilteredListView
from projects.access import Capability, ProjectViewMixin

from .catalogue.forms import CatalogueImportForm
from .catalogue.selectors import catalogue_detail, catalogue_list
from .choices import PortKind
from .filters import HardwareModelFilterSet
from .services import CatalogueFile, catalogue_load

MAX_WARNINGS_SHOWN = 20


class CatalogueListView(ProjectViewMixin, FilteredListView):
    template_name = "inventory/catalogue_list.html"
    context_object_name = "models"
    filterset_class = HardwareModelFilterSet

    def base_queryset(self):
        return catalogue_list()


class CatalogueDetailView(ProjectViewMixin, DetailView):
    template_name = "inventory/catalogue_detail.html"
    context_object_name = "model"

    def get_object(self, queryset=None):
        return catalogue_detail(pk=self.kwargs["pk"])

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["port_kinds"] = PortKind
        return context


class CatalogueImportView(ProjectViewMixin, FormView):
    """GET: the upload form. POST: the files loaded all or nothing; their errors (file, line, field) come
    back on the form with a 400."""

    required_capability = Capability.MANAGE_PROJECT
    template_name = "inventory/catalogue_import.html"
    form_class = CatalogueImportForm

    def form_valid(self, form):
        files = [CatalogueFile(name=upload.name, content=upload.read()) for upload in form.cleaned_data["files"]]
        try:
            result = catalogue_load(
                files=files, default_kind=form.cleaned_data["kind"], allow_update=self.request.user.is_staff,
                user=self.request.user,
            )
        except ValidationError as exc:
            context = self.get_context_data(form=form, load_errors=exc.messages)
            return self.render_to_response(context, status=400)
        messages.success(self.request, f"Hardware catalogue: {result.summary()}.")
        for warning in result.warnings[:MAX_WARNINGS_SHOWN]:
            messages.info(self.request, warning)
        return redirect("inventory:catalogue", self.project.code)

    def form_invalid(self, form):
        return self.render_to_response(self.get_context_data(form=form), status=400)
