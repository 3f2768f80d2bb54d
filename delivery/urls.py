from django.urls import include, path

from delivery import views
from delivery.activity import views as activity_views
from delivery.dashboard import views as dashboard_views
from delivery.notifications import views as notification_views
from delivery.project_setup import views as project_setup_views

app_name = "delivery"

urlpatterns = [
    path("", views.ProjectListView.as_view(), name="project-list"),
    path("projects/", dashboard_views.PortfolioView.as_view(), name="portfolio"),
    path("projects/new/", project_setup_views.ProjectCreateView.as_view(), name="project-create"),
    path("p/<str:code>/", views.ProjectHomeView.as_view(), name="project-home"),
    path("account/notifications/", notification_views.NotificationSettingsView.as_view(),
         name="notification-settings"),
    path("p/<str:code>/activity/", activity_views.ActivityView.as_view(), name="activity"),
    path("p/<str:code>/dashboard/", dashboard_views.DashboardView.as_view(), name="dashboard"),
    path("p/<str:code>/handover/", include("delivery.handover.urls")),
]
