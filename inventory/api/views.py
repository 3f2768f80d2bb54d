"""Inventory API viewsets. Reads come from inventory.selectors (scoped to the user's projects and
joined so a list costs the same number of queries whatever its length); writes are checked by
projects.api.permissions (outsiders 404, customers 403) and validated by the serializers.

The big lists (devices, NICs, ports, optics: a 1,024-server fabric has 103,000 ports) page by cursor in
id order (core.api.pagination.BigListPagination: `?page_size=` up to 500, follow `next`); sites, racks
and the catalogue are small and keep numbered pages."""

from django.db.models import Count, IntegerField, OuterRef, Prefetch, ProtectedError, RestrictedError, Subquery
from django.db.models.functions import Coalesce
from rest_framework import permissions, status, viewsets
from rest_framework.exceptions import APIException

from core.api.pagination import BigListPagination
from inventory import selectors
from inventory.filters import (
    DeviceFilterSet,
    HardwareModelFilterSet,
    NicFilterSet,
    OpticFilterSet,
    PortFilterSet,
    RackFilterSet,
    SiteFilterSet,
)
from inventory.models import Port, PortTemplate, Site
from projects.access import scope_to_user
from projects.api.permissions import ProjectScopedViewSet

from .serializers import (
    DeviceSerializer,
    HardwareModelDetailSerializer,
    HardwareModelSerializer,
    NicSerializer,
    OpticSerializer,
    PortSerializer,
    RackSerializer,
    SiteSerializer,
)


class StillInUse(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "Still in use."
    default_code = "in_use"


class DeletesSafelyMixin:
    """A delete the database protects (a rack that still holds devices, a port with an optic in it, a NIC
    that still has ports) answers 409 with what is in the way instead of a 500."""

    def perform_destroy(self, instance):
        try:
            instance.delete()
        except (ProtectedError, RestrictedError) as exc:
            in_the_way = exc.protected_objects if isinstance(exc, ProtectedError) else exc.restricted_objects
            blockers = sorted({str(obj) for obj in in_the_way})
            shown = ", ".join(blockers[:5]) + (" ..." if len(blockers) > 5 else "")
            raise StillInUse(f"{instance} is still used by: {shown}. Remove or move those first.") from exc


class InventoryViewSet(DeletesSafelyMixin, ProjectScopedViewSet):
    """Subclasses define scoped_queryset() from a selector. After a write the row is read back
    through it, so the response carries the same computed fields (power, port counts) as a list."""

    def scoped_queryset(self):
        raise NotImplementedError

    def get_queryset(self):
        # The selectors already scope to the user's projects; scoping twice would join twice.
        return self.scoped_queryset()

    def perform_create(self, serializer):
        super().perform_create(serializer)
        self._read_back(serializer)

    def perform_update(self, serializer):
        super().perform_update(serializer)
        self._read_back(serializer)

    def _read_back(self, serializer):
        serializer.instance = self.get_queryset().get(pk=serializer.instance.pk)


class SiteViewSet(InventoryViewSet):
    serializer_class = SiteSerializer
    filterset_class = SiteFilterSet

    def scoped_queryset(self):
        # No selector holds sites yet: the one-hop scope is all a site list needs.
        return scope_to_user(Site.objects.select_related("project"), self.request.user).order_by("name")


class RackViewSet(InventoryViewSet):
    """Racks with their power: used, budget, headroom and the flag for less than 20% headroom."""

    serializer_class = RackSerializer
    filterset_class = RackFilterSet

    def scoped_queryset(self):
        return selectors.rack_list(user=self.request.user)


def _port_count(*, lanes: bool) -> Coalesce:
    """A device's physical ports (or lanes), counted for that row only: a subquery the database runs for
    the rows of the page, where a JOIN with GROUP BY counted every port of every device before the page
    was cut (103,000 ports for a page of 100 devices)."""
    counted = (Port.objects.filter(device=OuterRef("pk"), parent__isnull=not lanes).order_by()
               .values("device").annotate(n=Count("pk")).values("n"))
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


class DeviceViewSet(InventoryViewSet):
    """Creating a device makes its NICs, ports and breakout lanes from its hardware model."""

    serializer_class = DeviceSerializer
    filterset_class = DeviceFilterSet
    pagination_class = BigListPagination

    def scoped_queryset(self):
        return selectors.device_list(user=self.request.user).annotate(
            port_count=_port_count(lanes=False), lane_count=_port_count(lanes=True),
        ).order_by("id")


class NicViewSet(InventoryViewSet):
    serializer_class = NicSerializer
    filterset_class = NicFilterSet
    pagination_class = BigListPagination
    project_path = "device__project"

    def scoped_queryset(self):
        return selectors.nic_list(user=self.request.user)


class PortViewSet(InventoryViewSet):
    """Physical ports and their breakout lanes (`parent`, `lane`, `plane`)."""

    serializer_class = PortSerializer
    filterset_class = PortFilterSet
    pagination_class = BigListPagination
    project_path = "device__project"

    def scoped_queryset(self):
        return selectors.port_list(user=self.request.user)


class OpticViewSet(InventoryViewSet):
    """Optics; setting `port` seats one (one optic per port), setting it to null takes it out."""

    serializer_class = OpticSerializer
    filterset_class = OpticFilterSet
    pagination_class = BigListPagination

    def scoped_queryset(self):
        return selectors.optic_list(user=self.request.user)


class IsStaffOrReadOnly(permissions.BasePermission):
    """The hardware catalogue is shared by every project: anyone signed in reads, staff write."""

    def has_permission(self, request, view):
        return request.method in permissions.SAFE_METHODS or request.user.is_staff


class HardwareModelViewSet(DeletesSafelyMixin, viewsets.ModelViewSet):
    """The hardware catalogue. The detail lists the NICs and ports a device of the model gets."""

    permission_classes = [permissions.IsAuthenticated, IsStaffOrReadOnly]
    filterset_class = HardwareModelFilterSet

    def get_queryset(self):
        models = selectors.hardware_model_list()
        if self.action == "list":
            return models
        templates = PortTemplate.objects.select_related("nic_template").order_by("id")
        return models.prefetch_related("nic_templates", Prefetch("port_templates", queryset=templates))

    def get_serializer_class(self):
        return HardwareModelSerializer if self.action == "list" else HardwareModelDetailSerializer


def register(router) -> None:
    router.register("sites", SiteViewSet, basename="site")
    router.register("racks", RackViewSet, basename="rack")
    router.register("hardware-models", HardwareModelViewSet, basename="hardware-model")
    router.register("devices", DeviceViewSet, basename="device")
    router.register("nics", NicViewSet, basename="nic")
    router.register("ports", PortViewSet, basename="port")
    router.register("optics", OpticViewSet, basename="optic")
