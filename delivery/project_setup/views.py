"""/projects/new/: staff, or users with `projects.add_project`, create a project from the site (403 for
anyone else; delivery/project_create.py says what is asked and made)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect
from django.views.generic import FormView

from delivery.project_setup.services import ProjectCreateForm, may_create_projects, project_create_with_team


class ProjectCreateView(LoginRequiredMixin, FormView):
    template_name = "delivery/project_setup/project_create.html"
    form_class = ProjectCreateForm

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and not may_create_projects(request.user):
            raise PermissionDenied("Only staff and people allowed to add projects may create one.")
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form):
        data = form.cleaned_data
        try:
            project = project_create_with_team(
                creator=self.request.user, code=data["code"], name=data["name"], customer_name=data["customer_name"],
                site=data["site"], target_date=data["target_date"], members=data["members"], template=data["template"],
                name_zh=data["name_zh"], customer_name_zh=data["customer_name_zh"],
            )
        except ValidationError as exc:
            errors = exc.message_dict if hasattr(exc, "error_dict") else {None: exc.messages}
            for field, messages_of_field in errors.items():
                form.add_error(field if field in form.fields else None, messages_of_field)
            return self.form_invalid(form)
        messages.success(self.request, f"Project {project.code} created.")
        return redirect("delivery:dashboard", project.code)
