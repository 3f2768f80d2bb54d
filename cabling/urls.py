"""Mounted under /p/<code>/cabling/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import include, path

from . import views

app_name = "cabling"

urlpatterns = [
    path("", views.CableListView.as_view(), name="cable-list"),
    path("<int:pk>/", views.CableDetailView.as_view(), name="cable-detail"),
    path("cutsheet.xlsx", views.CutSheetView.as_view(), name="cutsheet"),
    path("labels.pdf", views.LabelSheetView.as_view(), name="labels"),
    path("labels/exports/", views.LabelExportListView.as_view(), name="label-exports"),
    path("labels/exports/<int:pk>/download/", views.LabelExportDownloadView.as_view(), name="label-export-download"),
    path("fabric/", views.FabricPageView.as_view(), name="fabric"),
    path("fabric.svg", views.FabricSvgView.as_view(), name="fabric-svg"),
    path("ports/<int:pk>/trace/", views.PortTraceView.as_view(), name="port-trace"),
    path("search/", views.SearchView.as_view(), name="search"),
    path("progress/", views.ProgressView.as_view(), name="progress"),
    path("swaps/", include("cabling.swaps.urls")),
]
