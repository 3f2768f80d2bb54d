"""Mounted under /p/<code>/checks/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import path

from . import views
from .topology import views as topology_views

app_name = "validation"

urlpatterns = [
    path("", views.CheckRunListView.as_view(), name="run-list"),
    path("runs/<int:pk>/", views.CheckRunDetailView.as_view(), name="run-detail"),
    path("runs/<int:pk>/log/", views.CheckRunLogView.as_view(), name="run-log"),
    path("runs/<int:pk>/matrix.png", views.CheckRunMatrixImageView.as_view(), name="run-matrix-image"),
    path("runs/<int:pk>/matrix-nodes/", views.CheckRunMatrixNodesView.as_view(), name="run-matrix-nodes"),
    path("runs/<int:pk>/cancel/", views.CheckRunCancelView.as_view(), name="run-cancel"),
    path("runs/<int:pk>/rerun-failed/", views.CheckRunRerunFailedView.as_view(), name="run-rerun-failed"),
    path("results/<int:pk>/", views.CheckResultDetailView.as_view(), name="result-detail"),
    path("results/<int:pk>/raw/", views.CheckResultRawView.as_view(), name="result-raw"),
    path("links/<str:what>/<int:pk>/", views.LinkHistoryView.as_view(), name="link-history"),
    path("profile/", views.AcceptanceProfileView.as_view(), name="profile"),
    # Topology comparisons: the fabric as the switches and hosts see it, against the plan.
    path("topology/", topology_views.TopologyComparisonListView.as_view(), name="topology-list"),
    path("topology/new/", topology_views.TopologyUploadView.as_view(), name="topology-new"),
    path("topology/<int:pk>/", topology_views.TopologyComparisonDetailView.as_view(), name="topology-detail"),
    path("topology/<int:pk>/files/<int:file_pk>/", topology_views.TopologyFileView.as_view(), name="topology-file"),
]
