from django.urls import path

from . import views

app_name = "uploads"

urlpatterns = [
    path("", views.ToolUploadListView.as_view(), name="list"),
    path("new/", views.ToolUploadCreateView.as_view(), name="create"),
    path("<int:pk>/", views.ToolUploadDetailView.as_view(), name="detail"),
    path("<int:pk>/file/", views.ToolUploadFileView.as_view(), name="file"),
    # The soak pages live here until the validation pages give them a home of their own.
    path("soak/", views.SoakListView.as_view(), name="soak-list"),
    path("soak/start/", views.SoakStartView.as_view(), name="soak-start"),
    path("soak/<int:pk>/", views.SoakDetailView.as_view(), name="soak-detail"),
    path("soak/<int:pk>/stop/", views.SoakStopView.as_view(), name="soak-stop"),
]
