"""Mounted under /p/<code>/handover/ by delivery/urls.py, so every pattern receives the project `code`;
names are "delivery:handover:<name>"."""

from django.urls import path

from delivery.handover import views

app_name = "handover"

urlpatterns = [
    path("", views.HandoverView.as_view(), name="home"),
    path("netbox-import.zip", views.HandoverDownloadView.as_view(), name="download"),
    path("pushes/<int:pk>/", views.NetBoxPushDetailView.as_view(), name="push-detail"),
]
