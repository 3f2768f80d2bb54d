"""The handover page under /p/<code>/handover/: the as-built as NetBox bulk-import files (a zip of CSVs with
a README of the import order) and the push to the customer's live NetBox.

Every member may download the files: they are the customer's as-built, holding nothing a member cannot see
on the project's pages already. Pushing reaches out to the customer's system with their credentials, so it
is a manager's act, and so is reading the pushes (their URLs and what NetBox answered): the page shows a
technician or a customer the download only, a push's page is 403 to them. Outsiders get 404."""

from __future__ import annotations

import tempfile

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views import View
from django.views.generic import FormView, TemplateView

from core.forms import add_service_errors
from delivery.handover.export import CSV_FILES, write_zip, zip_filename
from delivery.handover.forms import APPLY, NetBoxPushForm
from delivery.handover.selectors import RECENT_PUSHES, last_netbox_url, netbox_push_detail, netbox_push_list
from delivery.handover.services import netbox_push_start
from projects.access import Capability, ProjectViewMixin, can

ZIP_CONTENT_TYPE = "application/zip"
SPOOL_BYTES = 8 * 2**20  # a zip up to this size stays in memory; a larger one goes to a temporary file


class HandoverView(ProjectViewMixin, FormView):
    template_name = "delivery/handover/handover.html"
    form_class = NetBoxPushForm
    write_capability = Capability.MANAGE_PROJECT  # every member downloads; managers push

    def get_initial(self):
        return {"netbox_url": last_netbox_url(project=self.project)}

    def form_valid(self, form):
        apply = form.cleaned_data["action"] == APPLY
        try:
            push = netbox_push_start(project=self.project, user=self.request.user, apply=apply,
                                     url=form.cleaned_data["netbox_url"], token=form.cleaned_data["token"])
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.form_invalid(form)
        messages.info(self.request, f"NetBox {push.mode_label.lower()} {push.pk} started.")
        return redirect(reverse("delivery:handover:push-detail", args=[self.project.code, push.pk]))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["files"] = CSV_FILES
        context["zip_name"] = zip_filename(self.project)
        if can(self.request.user, Capability.MANAGE_PROJECT, self.project):
            context["pushes"] = netbox_push_list(user=self.request.user, project=self.project)[:RECENT_PUSHES]
        return context


class HandoverDownloadView(ProjectViewMixin, View):
    """The zip of every CSV file and README.txt, named <CODE>-netbox-import.zip."""

    def get(self, request, *args, **kwargs):
        bundle = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
        write_zip(bundle, self.project)
        bundle.seek(0)
        return FileResponse(bundle, as_attachment=True, filename=zip_filename(self.project),
                            content_type=ZIP_CONTENT_TYPE)


class NetBoxPushDetailView(ProjectViewMixin, TemplateView):
    """One push: its progress while it runs, then per kind of object what it would change (a dry run) or
    changed (an apply), with examples, and NetBox's refusals when it failed."""

    template_name = "delivery/handover/push_detail.html"
    required_capability = Capability.MANAGE_PROJECT

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        push = netbox_push_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        context["push"] = push
        context["totals"] = push.status_figures()
        context["form"] = NetBoxPushForm(initial={"netbox_url": push.netbox_url})
        return context
