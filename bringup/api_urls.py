"""One API router for every app, so /api/ lists everything."""

from rest_framework.routers import DefaultRouter

from delivery.api.views import MembershipViewSet, ProjectViewSet

router = DefaultRouter()
router.register("projects", ProjectViewSet, basename="project")
router.register("memberships", MembershipViewSet, basename="membership")

try:  # the inventory API registers itself once it exists
    from inventory.api.views import register as register_inventory

    register_inventory(router)
except ImportError:  # pragma: no cover
    pass

urlpatterns = router.urls
