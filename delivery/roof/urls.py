from django.urls import include, path

from .. import token_views
from . import activity_views, dashboard_views, project_create_views, views

app_name = "delivery"

urlpatterns = [
    path("", views.ProjectListView.as_view(), name="project-list"),
    path("projects/", dashboard_views.PortfolioView.as_view(), name="portfolio"),
    path("projects/new/", project_create_views.ProjectCreateView.as_view(), name="project-create"),
    path("p/<str:code>/", views.ProjectHomeView.as_view(), name="project-home"),
    path("account/notifications/", activity_views.NotificationSettingsView.as_view(), name="notification-settings"),
    path("p/<str:code>/activity/", activity_views.ActivityView.as_view(), name="activity"),
    path("p/<str:code>/dashboard/", dashboard_views.DashboardView.as_view(), name="dashboard"),
    path("p/<str:code>/tokens/", token_views.NodeTokenListView.as_view(), name="node-token-list"),
    path("p/<str:code>/tokens/<int:pk>/revoke/", token_views.NodeTokenRevokeView.as_view(), name="node-token-revoke"),
    path("p/<str:code>/handover/", include("delivery.roof.handover.urls")),
]
