"""The project dashboard (/p/<code>/dashboard/) and the portfolio (/projects/).

Every member reads the dashboard; a customer reads it without the floor's internals (who scanned what
today: the totals stay), so what the customer sees is the delivery's progress, not the people's day.
Outsiders get 404 (projects.access.ProjectViewMixin). The portfolio lists the projects the user sees."""

from __future__ import annotations

from django.contrib.auth.mixins import LoginRequiredMixin
from django.urls import reverse
from django.views.generic import TemplateView

from cabling.exports.fabric_svg import rack_heatmap_svg
from delivery.dashboard.charts import burnup_svg
from delivery.dashboard.selectors import burnup_rows, portfolio, project_dashboard
from delivery.project_setup.services import may_create_projects
from projects.access import ProjectViewMixin
from projects.choices import Role

HEATMAP_STAGE = "verified"  # what the heat map colours: the share of each rack's cables verified


URL_PK = 2147483647  # a rack id no rack has, reversed once and replaced by each rack's


def rack_urls(code: str):
    """pk -> the rack's page, with one reverse() for all the racks: the heat map links every rack of the
    hall, and on the 1,024-server project (298 racks) a reverse() each cost more than drawing the map."""
    prefix, suffix = reverse("inventory:rack-detail", args=[code, URL_PK]).rsplit(str(URL_PK), 1)
    return lambda pk: f"{prefix}{pk}{suffix}"


class DashboardView(ProjectViewMixin, TemplateView):
    template_name = "delivery/dashboard/dashboard.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        project = self.project
        internal = self.role != Role.CUSTOMER
        board = project_dashboard(user=self.request.user, project=project, show_people=internal)
        context.update(
            board=board,
            internal=internal,
            heatmap=rack_heatmap_svg(board.floor.racks, stage=HEATMAP_STAGE, rack_url=rack_urls(project.code)),
            burnup=burnup_svg(board.series, today=board.today, target=project.target_date, first=board.first_day,
                              title=f"Burn-up of {project.code}: cables verified and links passing"),
            burnup_rows=burnup_rows(board.series),
            series=[(s, s.recent(board.today), board.forecasts[s.name]) for s in board.series],
        )
        return context


class PortfolioView(LoginRequiredMixin, TemplateView):
    template_name = "delivery/dashboard/portfolio.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["rows"] = portfolio(user=self.request.user)
        context["can_create"] = may_create_projects(self.request.user)
        return context
