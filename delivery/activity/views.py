"""The project's activity feed (/p/<code>/activity/, every member; outsiders 404)."""

from __future__ import annotations

from django.views.generic import TemplateView

from delivery.activity.selectors import project_activity
from projects.access import ProjectViewMixin


class ActivityView(ProjectViewMixin, TemplateView):
    template_name = "delivery/activity/activity.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        page = self.request.GET.get("page", "1")
        page = int(page) if page.isdigit() else 1
        context["activity"] = project_activity(user=self.request.user, project=self.project, role=self.role,
                                               page=page)
        return context
