from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("bringup.api_urls")),
    path("p/<str:code>/import/", include("inventory.imports.urls")),
    path("p/<str:code>/cabling/", include("cabling.urls")),
    path("p/<str:code>/floor/", include("cabling.floor.urls")),
    path("p/<str:code>/plan/", include("cabling.plan_urls")),
    path("p/<str:code>/checks/", include("validation.urls")),
    path("p/<str:code>/uploads/", include("validation.uploads.urls")),
    path("p/<str:code>/tokens/", include("projects.urls")),
    path("p/<str:code>/stages/", include("delivery.stages.urls")),
    path("p/<str:code>/punch/", include("delivery.punch.urls")),
    path("p/<str:code>/reports/", include("delivery.reports.urls")),
    path("p/<str:code>/", include("inventory.urls")),
    path("", include("delivery.urls")),
]
