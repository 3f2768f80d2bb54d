from rest_framework import status, viewsets
from rest_framework.exceptions import APIException

from projects.access import Capability
from projects.api.permissions import ProjectScopedViewSet
from projects.api.serializers import MembershipSerializer, ProjectSerializer
from projects.selectors import membership_list, project_list
from projects.services import LastManagerError, membership_delete


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the project's current state."
    default_code = "conflict"


class ProjectViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = ProjectSerializer
    lookup_field = "code"
    filterset_fields = ["status"]

    def get_queryset(self):
        return project_list(user=self.request.user)


class MembershipViewSet(ProjectScopedViewSet):
    """Members of the user's projects; only the project's managers may change them, and a project
    always keeps at least one manager."""

    serializer_class = MembershipSerializer
    write_capability = Capability.MANAGE_PROJECT
    filterset_fields = {"role": ["exact"], "project__code": ["exact"]}

    def get_queryset(self):
        # The selector already scopes to the user's projects; scoping twice would join twice.
        return membership_list(user=self.request.user)

    def perform_destroy(self, instance):
        try:
            membership_delete(membership=instance)
        except LastManagerError as exc:
            raise Conflict(" ".join(exc.messages)) from exc
