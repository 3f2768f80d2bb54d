from django.urls import path

from . import plan_views

app_name = "plans"

urlpatterns = [
    path("", plan_views.FabricPlanPageView.as_view(), name="page"),
    path("examples/<str:name>.yaml", plan_views.FabricPlanExampleView.as_view(), name="example"),
    path("<int:pk>/", plan_views.FabricPlanDetailView.as_view(), name="detail"),
    path("<int:pk>/confirm/", plan_views.FabricPlanConfirmView.as_view(), name="confirm"),
]
