"""Mounted under /p/<code>/punch/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import path

from delivery.punch import views

app_name = "punch"

urlpatterns = [
    path("", views.PunchListView.as_view(), name="list"),
    path("new/", views.PunchCreateView.as_view(), name="create"),
    path("<int:pk>/", views.PunchDetailView.as_view(), name="detail"),
    path("<int:pk>/edit/", views.PunchEditView.as_view(), name="edit"),
    path("<int:pk>/status/", views.PunchStatusView.as_view(), name="status"),
]
