from django.urls import path

from . import views

app_name = "delivery"

urlpatterns = [
    path("", views.ProjectListView.as_view(), name="project-list"),
    path("p/<str:code>/", views.ProjectHomeView.as_view(), name="project-home"),
]
