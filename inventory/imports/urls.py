from django.urls import path

from . import views

app_name = "imports"

urlpatterns = [
    path("", views.ImportPageView.as_view(), name="page"),
    path("export/", views.ExportView.as_view(), name="export"),
    path("jobs/<int:pk>/", views.ImportJobView.as_view(), name="job"),
    path("jobs/<int:pk>/confirm/", views.ImportJobConfirmView.as_view(), name="job-confirm"),
]
