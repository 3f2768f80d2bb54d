"""Who may see and do what in a project: the one scoping mechanism.

Every selector, view and API viewset goes through these functions, so a rule changes in one place.
Someone outside a project gets 404 for its objects (they cannot tell it exists); a member whose role
does not allow an action gets 403.
"""

from __future__ import annotations

from enum import Enum

from django.db.models import QuerySet

from projects.choices import Role
from projects.models import Membership, Project
from projects.sql import member_project_with_role

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")  # reads; any other method writes
DEFAULT_REFUSAL = "Your role in this project does not allow this."


class Capability(Enum):
    VIEW = "view"
    EDIT_INVENTORY = "edit_inventory"  # racks, devices, NICs, ports, optics, imports
    RUN_CHECKS = "run_checks"  # start, cancel and re-run check runs; upload tool outputs
    MANAGE_PROJECT = "manage_project"  # memberships, project settings


ROLE_CAPABILITIES: dict[str, frozenset[Capability]] = {
    Role.MANAGER: frozenset(Capability),
    Role.TECHNICIAN: frozenset({Capability.VIEW, Capability.EDIT_INVENTORY, Capability.RUN_CHECKS}),
    Role.CUSTOMER: frozenset({Capability.VIEW}),
}


def is_node(user) -> bool:
    """Whether the request came with a node token (projects.tokens.NodePrincipal): no user, one project."""
    return getattr(user, "is_node", False)


def visible_projects(user) -> QuerySet[Project]:
    if is_node(user):
        return Project.objects.filter(pk=user.project_id)
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user)


def roles_with(capability: Capability) -> list[str]:
    return [role for role, capabilities in ROLE_CAPABILITIES.items() if capability in capabilities]


def projects_where(user, capability: Capability) -> QuerySet[Project]:
    """Projects in which the user's role carries the capability (staff: every project)."""
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user, memberships__role__in=roles_with(capability))


def scope_to_user(queryset: QuerySet, user, project_path: str = "project") -> QuerySet:
    """Limit any queryset to rows of projects the user belongs to (staff see everything).

    `project_path` is the lookup from the queryset's model to its project, e.g. "device__project".
    One membership per user and project means the join never duplicates rows.
    """
    if is_node(user):  # its own project's rows; the endpoints that admit node tokens decide what it may do
        return queryset.filter(**{f"{project_path}_id": user.project_id})
    if not user.is_authenticated:
        return queryset.none()
    if user.is_staff:
        return queryset
    return queryset.filter(**{f"{project_path}__memberships__user": user})


def project_role(user, project: Project | int) -> str | None:
    """The user's role in the project; staff act as managers; None for outsiders."""
    if not user.is_authenticated:
        return None
    if user.is_staff:
        return Role.MANAGER
    project_id = project if isinstance(project, int) else project.pk
    cache = getattr(user, "_bringup_roles", None)
    if cache is None:
        cache = user._bringup_roles = {}
    if project_id not in cache:
        cache[project_id] = (
            Membership.objects.filter(user=user, project_id=project_id).values_list("role", flat=True).first()
        )
    return cache[project_id]


def can(user, capability: Capability, project: Project | int) -> bool:
    if is_node(user):
        return user.may(capability, project)
    role = project_role(user, project)
    return role is not None and capability in ROLE_CAPABILITIES[role]


def require(user, capability: Capability, project: Project, refusal: str) -> None:
    """Refuse (PermissionDenied with `refusal`, which says what the role may not do) unless `user` may do
    `capability` in `project`. The services' one check; a service the system itself calls (a task, a gate's
    own completion) passes user=None: nobody to refuse."""
    from django.core.exceptions import PermissionDenied

    if user is not None and not can(user, capability, project):
        raise PermissionDenied(refusal)


def project_to_write(user, code, capability: Capability, refusal: str = DEFAULT_REFUSAL) -> Project | None:
    """The project a create names in its payload (by code), checked before anything else in the payload:
    404 when the user cannot see it (the same answer as for a project that does not exist, so an outsider
    learns nothing), 403 when their role there lacks `capability`, so a customer's write is a 403 whatever
    it sends. None when no code is given (the serializer then says the field is required)."""
    from django.core.exceptions import PermissionDenied
    from django.http import Http404
    from django.shortcuts import get_object_or_404

    if not code or not isinstance(code, str):
        return None
    if "\x00" in code:  # names no project, and PostgreSQL cannot even compare it (a 500): as for no such project
        raise Http404("No Project matches the given query.")
    if is_node(user) or not user.is_authenticated or user.is_staff:
        project = get_object_or_404(visible_projects(user), code=code)
    else:
        project = _member_project(user, code)
        if project is None:
            raise Http404("No Project matches the given query.")
    if not can(user, capability, project):
        raise PermissionDenied(refusal)
    return project


def _member_project(user, code: str) -> Project | None:
    """The project of that code where the user is a member, the role cached as project_role caches it: one
    written-out query (projects.sql) instead of two compiled ones, since every create of the API names its
    project so (a scan among them, 200 a second)."""
    found = member_project_with_role(user_id=user.pk, code=code)
    if found is None:
        return None
    project, role = found
    roles = getattr(user, "_bringup_roles", None)
    if roles is None:
        roles = user._bringup_roles = {}
    roles[project.pk] = role
    return project


class ProjectViewMixin:
    """For class-based views under /p/<code>/: resolves the project or 404s for outsiders, and 403s
    members whose role lacks `required_capability` (every request) or, for a write (POST and the other
    unsafe methods), `write_capability` when the view declares one: a page every member reads whose form
    only some may send declares both. The access matrix (tests/test_access_matrix.py) holds every view
    to what it declares."""

    required_capability: Capability = Capability.VIEW
    write_capability: Capability | None = None  # None: a write needs what reading needs
    project: Project
    role: str

    def dispatch(self, request, *args, **kwargs):
        from django.core.exceptions import PermissionDenied
        from django.shortcuts import get_object_or_404

        if not request.user.is_authenticated:
            from django.contrib.auth.views import redirect_to_login

            return redirect_to_login(request.get_full_path())
        self.project = get_object_or_404(visible_projects(request.user), code=kwargs["code"])
        self.role = project_role(request.user, self.project)
        if not all(can(request.user, needed, self.project) for needed in self.capabilities_for(request.method)):
            raise PermissionDenied(DEFAULT_REFUSAL)
        return super().dispatch(request, *args, **kwargs)

    def capabilities_for(self, method: str) -> list[Capability]:
        """What the request needs: a write needs the page and the write capability, never less."""
        if method in SAFE_METHODS or self.write_capability is None:
            return [self.required_capability]
        return [self.required_capability, self.write_capability]

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["project"] = self.project
        context["role"] = self.role
        context["role_label"] = Role(self.role).label if self.role else ""
        context["can_edit_inventory"] = can(self.request.user, Capability.EDIT_INVENTORY, self.project)
        context["can_manage_project"] = can(self.request.user, Capability.MANAGE_PROJECT, self.project)
        return context
