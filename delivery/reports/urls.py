"""Mounted under /p/<code>/reports/ by bringup/urls.py, so every pattern receives the project `code`."""

from django.urls import path

from delivery.reports import views

app_name = "reports"

urlpatterns = [
    path("", views.ReportListView.as_view(), name="list"),
    path("generate/", views.ReportGenerateView.as_view(), name="generate"),
    path("check/", views.ReportCheckView.as_view(), name="check"),
    path("v<int:number>/", views.ReportVersionView.as_view(), name="version"),
    path("v<int:number>/issue/", views.ReportIssueView.as_view(), name="issue"),
    path("v<int:number>/sign/", views.ReportSignView.as_view(), name="sign"),
    path("v<int:number>/reject/", views.ReportRejectView.as_view(), name="reject"),
    path("v<int:number>/files/<slug:kind>/", views.ReportFileView.as_view(), name="file"),
]
