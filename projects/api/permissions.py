"""DRF side of the scoping rules in projects.access: every project-scoped viewset derives from
ProjectScopedViewSet, whose queryset only holds rows of the user's projects (outsiders get 404)."""

from rest_framework import permissions, viewsets
from rest_framework.exceptions import PermissionDenied

from projects.access import Capability, can, projects_where, scope_to_user


def _project_of(obj, project_path: str):
    for attr in project_path.split("__"):
        obj = getattr(obj, attr)
    return obj


class ProjectRolePermission(permissions.BasePermission):
    """Reads need membership (already guaranteed by the scoped queryset); writes need the view's
    `write_capability` in the object's project. Creation is checked in perform_create, in the
    payload's project; before that, a create by someone who holds the capability in no project at
    all (a customer) is refused outright, so they get 403 whatever the payload."""

    def has_permission(self, request, view):
        if getattr(view, "action", None) != "create":
            return True
        return _can_anywhere(request.user, view.write_capability)

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        return can(request.user, view.write_capability, _project_of(obj, view.project_path))


def _can_anywhere(user, capability: Capability) -> bool:
    return projects_where(user, capability).exists()


class ProjectScopedViewSet(viewsets.ModelViewSet):
    project_path = "project"
    write_capability = Capability.EDIT_INVENTORY
    permission_classes = [permissions.IsAuthenticated, ProjectRolePermission]

    def get_queryset(self):
        return scope_to_user(super().get_queryset(), self.request.user, self.project_path)

    def check_create_allowed(self, serializer) -> None:
        """The project of a new row comes from the validated payload; the writer needs the
        capability there. Serializers limit project choices to visible projects, so an outsider
        already got a 400 that does not reveal the project."""
        project = self.project_from_validated_data(serializer.validated_data)
        if not can(self.request.user, self.write_capability, project):
            raise PermissionDenied("Your role in this project does not allow this.")

    def project_from_validated_data(self, data):
        head, _, rest = self.project_path.partition("__")
        obj = data[head]
        return _project_of(obj, rest) if rest else obj

    def perform_create(self, serializer):
        self.check_create_allowed(serializer)
        serializer.save()
