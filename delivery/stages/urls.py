"""Mounted under /p/<code>/stages/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import path

from delivery.stages import views

app_name = "stages"

urlpatterns = [
    path("", views.StageListView.as_view(), name="list"),
    path("create/", views.StagesCreateView.as_view(), name="create"),
    path("recompute/", views.StagesRecomputeView.as_view(), name="recompute"),
    path("<slug:key>/", views.StageDetailView.as_view(), name="detail"),
    path("<slug:key>/start/", views.StageStartView.as_view(), name="start"),
    path("<slug:key>/complete/", views.StageCompleteView.as_view(), name="complete"),
    path("<slug:key>/skip/", views.StageSkipView.as_view(), name="skip"),
    path("<slug:key>/waive/", views.StageWaiveView.as_view(), name="waive"),
    path("<slug:key>/checklist/<int:pk>/confirm/", views.ChecklistConfirmView.as_view(), name="checklist-confirm"),
]
