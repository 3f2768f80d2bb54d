"""The floor: the technician's tablet pages (worklists per rack, network and plane; scan to rack a
device, seat an optic, confirm a cable's ends), usable offline. Mounted under /p/<code>/floor/ by
bringup/urls.py, so every pattern receives the project `code`; the service worker's URL is here too, so
that its scope is these pages."""
from django.urls import path

from . import views

app_name = "floor"

urlpatterns = [
    path("", views.FloorHomeView.as_view(), name="home"),
    path("scan/", views.ScanView.as_view(), name="scan"),
    path("rows/<str:row>/", views.RowView.as_view(), name="row"),
    path("racks/<int:pk>/", views.RackWorklistView.as_view(), name="rack"),
    path("racks/<int:pk>/data.json", views.RackDataView.as_view(), name="rack-data"),
    path("devices/<int:pk>/", views.DeviceWorklistView.as_view(), name="device"),
    path("networks/<str:network>/", views.NetworkWorklistView.as_view(), name="network"),
    path("sw.js", views.ServiceWorkerView.as_view(), name="service-worker"),
]
