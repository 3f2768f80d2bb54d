from django.contrib.auth.mixins import LoginRequiredMixin
from django.views.generic import ListView, TemplateView

from inventory.selectors import device_list, is_power_flagged, optic_list, rack_list

from .access import ProjectViewMixin
from .selectors import project_list


class ProjectListView(LoginRequiredMixin, ListView):
    template_name = "delivery/project_list.html"
    context_object_name = "projects"

    def get_queryset(self):
        return project_list(user=self.request.user)


class ProjectHomeView(ProjectViewMixin, TemplateView):
    template_name = "delivery/project_home.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        user, project = self.request.user, self.project
        racks = list(rack_list(user=user, project=project))
        context["rack_count"] = len(racks)
        context["flagged_racks"] = [
            r for r in racks if is_power_flagged(used_w=r.power_used_w, budget_w=r.power_budget_w)
        ]
        context["device_count"] = device_list(user=user, project=project).count()
        context["optic_count"] = optic_list(user=user, project=project).count()
        context["members"] = project.memberships.select_related("user").order_by("role", "user__username")
        return context
