from django.contrib.auth.mixins import LoginRequiredMixin
from django.views.generic import ListView, TemplateView

from delivery.project_setup.selectors import next_steps
from delivery.selectors import project_overview
from delivery.stages.selectors import current_stage, stage_list
from projects.access import ProjectViewMixin
from projects.choices import Role
from projects.selectors import project_list, project_members


class ProjectListView(LoginRequiredMixin, ListView):
    template_name = "delivery/project_list.html"
    context_object_name = "projects"

    def get_queryset(self):
        return project_list(user=self.request.user)


class ProjectHomeView(ProjectViewMixin, TemplateView):
    template_name = "delivery/project_home.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(project_overview(user=self.request.user, project=self.project))
        context["members"] = project_members(project=self.project)
        stages = list(stage_list(user=self.request.user, project=self.project))
        context["stage_count"], context["current_stage"] = len(stages), current_stage(stages)
        context["stages_done"] = sum(1 for s in stages if s.status in ("done", "skipped"))
        if self.role != Role.CUSTOMER:  # what the team still has to set up; until every step is done
            steps = next_steps(project=self.project)
            context["next_steps"] = steps if not all(step.done for step in steps) else []
        return context
