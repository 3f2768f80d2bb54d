from rest_framework import viewsets

from delivery.access import Capability
from delivery.models import Membership
from delivery.selectors import project_list

from .permissions import ProjectScopedViewSet
from .serializers import MembershipSerializer, ProjectSerializer


class ProjectViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = ProjectSerializer
    lookup_field = "code"
    filterset_fields = ["status"]

    def get_queryset(self):
        return project_list(user=self.request.user)


class MembershipViewSet(ProjectScopedViewSet):
    """Members of the user's projects; only the project's managers may change them."""

    queryset = Membership.objects.select_related("user", "project")
    serializer_class = MembershipSerializer
    write_capability = Capability.MANAGE_PROJECT
    filterset_fields = {"role": ["exact"], "project__code": ["exact"]}
