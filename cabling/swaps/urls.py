"""Included by cabling/urls.py under swaps/, in the cabling namespace (cabling:swap-list, ...)."""

from django.urls import path

from cabling.choices import SwapKind
from cabling.swaps import views

urlpatterns = [
    path("", views.SwapListView.as_view(), name="swap-list"),
    path("<int:pk>/", views.SwapDetailView.as_view(), name="swap-detail"),
    path("new/optic/<int:pk>/", views.SwapCreateView.as_view(kind=SwapKind.OPTIC), name="swap-optic"),
    path("new/cable/<int:pk>/", views.SwapCreateView.as_view(kind=SwapKind.CABLE), name="swap-cable"),
]
