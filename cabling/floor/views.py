"""The floor pages under /p/<code>/floor/: what a technician holds in a cold aisle. Every member reads
them (customers included, who see the work but are told they cannot scan); outsiders get 404 through
ProjectViewMixin. Nothing here writes: every scan goes to the scan API (POST /api/scans/), from the
scan page or from the tablet's offline queue, so a page, a script and a scanner app go through one
service.

- home: pick a rack (done / left / failed per rack; in a hall of more than RACKS_ON_ONE_PAGE racks, a
  row first), or a network or plane worklist (the racks, or rows, holding its cables);
- a rack's worklist: its devices top U down, each with its work (optionally one network/plane only);
- a device's worklist: its port row and its cable ends, a page at a time;
- the scan page: one scan field, the camera, the three flows (rack, optic, cable end);
- the rack's data as JSON, which the tablet keeps for scanning without the network;
- the service worker, served from here so that its scope covers the floor pages.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

from django.contrib.staticfiles import finders
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.templatetags.static import static
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.gzip import gzip_page
from django.views.generic import TemplateView

from inventory.choices import Network
from projects.access import Capability, ProjectViewMixin, can

from .selectors import (
    ENDS_PER_PAGE,
    PORT_FIELDS,
    RACK_DATA_VERSION,
    Scope,
    describe_ends,
    device_worklist,
    floor_networks,
    floor_racks,
    floor_rows,
    rack_count,
    rack_data,
    rack_worklist,
    scan_racks,
    unplaced_device_count,
)

PLANE = re.compile(r"[0-9]{1,4}")  # ASCII digits, few: int() of anything else is refused, never a 500
SCRIPTS = ("js/floor-queue.js", "js/floor-draw.js", "js/floor-camera.js", "js/floor-scan.js", "js/floor-page.js")
STYLES = ("css/bringup.css", "css/floor.css")
DECODER = "vendor/zxing/index.min.js"
SERVICE_WORKER = "js/floor-sw.js"
# More racks than this and the floor home (and a network's page) offers the hall's rows first: a page of 300
# rack tiles is not one thing per screen, and costs a second to count on a 1,024-server project.
RACKS_ON_ONE_PAGE = 36
# Bumped when what the service worker caches changes shape; the file's own content is hashed in too.
CACHE_GENERATION = 1


class BadFilter(Exception):
    pass


def parse_scope(query, *, network: str | None = None) -> Scope:
    """The network and plane a worklist is narrowed to, from the URL (BadFilter naming what is wrong)."""
    network = network if network is not None else (query.get("network") or None)
    if network is not None and network not in Network.values:
        raise BadFilter(f"network: no network {network!r}; choose one of {', '.join(Network.values)}")
    plane = query.get("plane") or None
    if plane is not None and not PLANE.fullmatch(plane):
        raise BadFilter(f"plane: {plane[:20]!r} is not a plane number")
    return Scope(network, int(plane) if plane is not None else None)


class FloorPageMixin(ProjectViewMixin):
    """What every floor page shows: whether this person may scan, and where the scan page and the
    service worker are."""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        code = self.project.code
        context["can_scan"] = can(self.request.user, Capability.EDIT_INVENTORY, self.project)
        context["floor_config"] = {
            "project": code,
            "home": reverse("floor:home", args=[code]),
            "scan": reverse("floor:scan", args=[code]),
            "serviceWorker": reverse("floor:service-worker", args=[code]),
            "scope": reverse("floor:home", args=[code]),
            "api": reverse("scan-list"),
            "rackData": reverse("floor:rack-data", args=[code, 0]).replace("/0/", "/{id}/"),
            "rackDataVersion": RACK_DATA_VERSION,
            "canScan": context["can_scan"],
            "user": self.request.user.get_username(),
        }
        return context

    def dispatch(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        except BadFilter as exc:
            return HttpResponseBadRequest(f"Bad filter: {exc}", content_type="text/plain")


def racks_or_rows(user, project, scope: Scope) -> dict:
    """The racks to pick from, or the hall's rows when there are too many racks for one screen."""
    if rack_count(user=user, project=project) > RACKS_ON_ONE_PAGE:
        return {"rows": floor_rows(user=user, project=project, scope=scope)}
    return {"racks": floor_racks(user=user, project=project, scope=scope)}


class FloorHomeView(FloorPageMixin, TemplateView):
    template_name = "floor/home.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        user, project = self.request.user, self.project
        context.update(racks_or_rows(user, project, Scope()))
        context["networks"] = floor_networks(user=user, project=project)
        context["unplaced"] = unplaced_device_count(user=user, project=project)
        return context


class NetworkWorklistView(FloorPageMixin, TemplateView):
    """The racks (or rows) holding cables of one network (or one plane of it: ?plane=N), with that work."""

    template_name = "floor/network.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        scope = parse_scope(self.request.GET, network=self.kwargs["network"])
        context.update(racks_or_rows(self.request.user, self.project, scope))
        context.update(scope=scope, scope_query=urlencode(scope.query))
        return context


class RowView(FloorPageMixin, TemplateView):
    """The racks of one row of the hall (optionally narrowed to a network/plane), each with its work."""

    template_name = "floor/row.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        scope = parse_scope(self.request.GET)
        row = self.kwargs["row"]
        racks = floor_racks(user=self.request.user, project=self.project, scope=scope, row=row)
        if not racks and not scope:
            raise Http404("No such row in this project.")
        context.update(row=row, racks=racks, scope=scope, scope_query=urlencode(scope.query))
        return context


class RackWorklistView(FloorPageMixin, TemplateView):
    template_name = "floor/rack.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        scope = parse_scope(self.request.GET)
        worklist = rack_worklist(user=self.request.user, project=self.project, pk=self.kwargs["pk"], scope=scope)
        context.update(worklist=worklist, rack=worklist.rack, work=worklist.work, scope=scope,
                       scope_query=urlencode(scope.query))
        context["floor_config"]["rack"] = {"id": worklist.rack.pk, "name": worklist.rack.name}
        return context


class DeviceWorklistView(FloorPageMixin, TemplateView):
    template_name = "floor/device.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        scope = parse_scope(self.request.GET)
        worklist = device_worklist(user=self.request.user, project=self.project, pk=self.kwargs["pk"], scope=scope)
        page = Paginator(worklist.ends, ENDS_PER_PAGE).get_page(self.request.GET.get("page"))
        describe_ends(page.object_list)
        device = worklist.device
        context.update(worklist=worklist, device=device, work=worklist.work, page_obj=page, ends=page.object_list,
                       paginator=page.paginator, is_paginated=page.has_other_pages(), scope=scope,
                       scope_query=urlencode(scope.query))
        context["port_row"] = {"device": {"id": device.pk, "name": device.name}, "fields": list(PORT_FIELDS),
                               "ports": worklist.ports}
        if device.rack_id:
            context["floor_config"]["rack"] = {"id": device.rack_id, "name": device.rack.name}
        return context


class ScanView(FloorPageMixin, TemplateView):
    """The scan page. It holds no form that posts here: the page's script sends each scan to the scan
    API (or keeps it on the tablet while the network is down). `?rack=<id>` says which rack the
    technician is in, `?device=<id>` which device's port row to offer, `?code=` a code to look up at once
    (a worklist's "scan" link)."""

    template_name = "floor/scan.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        racks = scan_racks(user=self.request.user, project=self.project)
        context["racks"] = racks
        config = context["floor_config"]
        config["racks"] = racks
        config["decoder"] = static(DECODER)
        for name in ("rack", "device"):
            value = self.request.GET.get(name, "")
            if value.isascii() and value.isdigit() and len(value) < 12:
                config[f"context_{name}"] = int(value)
        code = self.request.GET.get("code", "")
        if code and len(code) <= 512:
            config["startCode"] = code
        return context


@method_decorator(gzip_page, name="dispatch")
class RackDataView(FloorPageMixin, View):
    """The rack's devices, ports and cables as JSON (cabling.floor.selectors.rack_data), which the tablet
    keeps in IndexedDB so the scan page can resolve codes and show a port row without the network."""

    def get(self, request, *args, **kwargs):
        data = rack_data(user=request.user, project=self.project, pk=self.kwargs["pk"])
        response = JsonResponse(data)
        response["Cache-Control"] = "private, no-cache"
        return response


@method_decorator(never_cache, name="dispatch")
class ServiceWorkerView(FloorPageMixin, View):
    """The service worker script, served under /p/<code>/floor/ so that its scope is the floor pages of
    this project (a worker only controls pages at or below its own URL). It is static/js/floor-sw.js with
    its configuration in front: the project's floor URLs and the static files to keep, and a version that
    changes whenever one of them does, so a tablet picks up a new page script the next time it is online."""

    def get(self, request, *args, **kwargs):
        source = _static_text(SERVICE_WORKER)
        code = self.project.code
        precache = [reverse("floor:home", args=[code]), reverse("floor:scan", args=[code])]
        static_files = [static(path) for path in (*STYLES, *SCRIPTS)]
        fingerprint = _fingerprint([source, *(_static_text(path) for path in (*STYLES, *SCRIPTS))])
        config = {
            "version": f"{CACHE_GENERATION}-{fingerprint}",
            "project": code,
            "scope": reverse("floor:home", args=[code]),
            "pages": precache,
            "static": static_files,
            "lazyStatic": [static(DECODER)],
            "staticPrefix": static(""),
        }
        body = f"self.FLOOR_SW = {json.dumps(config)};\n{source}"
        response = HttpResponse(body, content_type="text/javascript; charset=utf-8")
        response["Service-Worker-Allowed"] = config["scope"]
        return response


def _static_text(path: str) -> str:
    found = finders.find(path)
    if not found:
        raise Http404(f"{path} is missing from the static files")
    with open(found, encoding="utf-8") as handle:
        return handle.read()


def _fingerprint(texts: list[str]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode())
    return digest.hexdigest()[:12]
