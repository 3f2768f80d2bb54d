"""Mounted under /p/<code>/tokens/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import path

from projects import token_views

app_name = "projects"

urlpatterns = [
    path("", token_views.NodeTokenListView.as_view(), name="node-token-list"),
    path("<int:pk>/revoke/", token_views.NodeTokenRevokeView.as_view(), name="node-token-revoke"),
]
