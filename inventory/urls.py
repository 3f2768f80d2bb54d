"""Mounted under /p/<code>/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import path

from . import catalogue_views, views

app_name = "inventory"

urlpatterns = [
    path("racks/", views.RackListView.as_view(), name="rack-list"),
    path("racks/<int:pk>/", views.RackDetailView.as_view(), name="rack-detail"),
    path("devices/", views.DeviceListView.as_view(), name="device-list"),
    path("devices/<int:pk>/", views.DeviceDetailView.as_view(), name="device-detail"),
    path("devices/<int:pk>/edit/", views.DeviceEditView.as_view(), name="device-edit"),
    path("optics/", views.OpticListView.as_view(), name="optic-list"),
    path("optics/<int:pk>/", views.OpticDetailView.as_view(), name="optic-detail"),
    path("catalogue/", catalogue_views.CatalogueListView.as_view(), name="catalogue"),
    path("catalogue/import/", catalogue_views.CatalogueImportView.as_view(), name="catalogue-import"),
    path("catalogue/<int:pk>/", catalogue_views.CatalogueDetailView.as_view(), name="catalogue-detail"),
]
