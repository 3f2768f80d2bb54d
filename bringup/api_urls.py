"""One API router for every app, so /api/ lists everything."""

from django.urls import path, re_path
from rest_framework.routers import DefaultRouter

from cabling.api.traces import register as register_traces
from cabling.api.views import register as register_cabling
from core.api.tokens import token_view
from core.api.views import not_found
from delivery.punch.api import register as register_punch
from delivery.reports.api import register as register_reports
from delivery.stages.api import register as register_stages
from inventory.api.views import register as register_inventory
from projects.api.jobs import JobStatusView
from projects.api.views import MembershipViewSet, ProjectViewSet
from validation.api import register as register_validation
from validation.uploads.api import ToolUploadViewSet

router = DefaultRouter()
router.register("projects", ProjectViewSet, basename="project")
router.register("memberships", MembershipViewSet, basename="membership")
register_inventory(router)
register_cabling(router)
register_traces(router)
register_validation(router)
router.register("uploads", ToolUploadViewSet, basename="tool-upload")
register_reports(router)
register_stages(router)
register_punch(router)

urlpatterns = [
    # POST username and password, get the token to send as `Authorization: Token <key>`.
    path("token/", token_view, name="api-token"),
    path("jobs/<str:job_type>/<int:pk>/", JobStatusView.as_view(), name="api-job-status"),
    *router.urls,
    re_path(r"^.*/$", not_found),  # last: any other address under /api/ is a 404 in the API's error shape
]
