"""Mounted under /p/<code>/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import path

from . import views

app_name = "inventory"

urlpatterns = [
    path("racks/", views.RackListView.as_view(), name="rack-list"),
    path("racks/<int:pk>/", views.RackDetailView.as_view(), name="rack-detail"),
    path("devices/", views.DeviceListView.as_view(), name="device-list"),
    path("devices/<int:pk>/", views.DeviceDetailView.as_view(), name="device-detail"),
    path("devices/<int:pk>/edit/", views.DeviceEditView.as_view(), name="device-edit"),
    path("optics/", views.OpticListView.as_view(), name="optic-list"),
    path("optics/<int:pk>/", views.OpticDetailView.as_view(), name="optic-detail"),
]
