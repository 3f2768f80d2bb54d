"""Mounted under /p/<code>/checks/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import path

from . import views

app_name = "validation"

urlpatterns = [
    path("", views.CheckRunListView.as_view(), name="run-list"),
    path("runs/<int:pk>/", views.CheckRunDetailView.as_view(), name="run-detail"),
    path("runs/<int:pk>/cancel/", views.CheckRunCancelView.as_view(), name="run-cancel"),
    path("runs/<int:pk>/rerun-failed/", views.CheckRunRerunFailedView.as_view(), name="run-rerun-failed"),
    path("results/<int:pk>/", views.CheckResultDetailView.as_view(), name="result-detail"),
    path("results/<int:pk>/raw/", views.CheckResultRawView.as_view(), name="result-raw"),
    path("links/<str:what>/<int:pk>/", views.LinkHistoryView.as_view(), name="link-history"),
    path("profile/", views.AcceptanceProfileView.as_view(), name="profile"),
]
