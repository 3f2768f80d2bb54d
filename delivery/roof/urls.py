from django.urls import path

from .. import token_views
from . import views

app_name = "delivery"

urlpatterns = [
    path("", views.ProjectListView.as_view(), name="project-list"),
    path("p/<str:code>/", views.ProjectHomeView.as_view(), name="project-home"),
    path("p/<str:code>/tokens/", token_views.NodeTokenListView.as_view(), name="node-token-list"),
    path("p/<str:code>/tokens/<int:pk>/revoke/", token_views.NodeTokenRevokeView.as_view(), name="node-token-revoke"),
]
