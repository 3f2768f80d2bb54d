"""Cabling pages under /p/<code>/cabling/: the cable list and a cable's page (its plan, optics, scans,
status changes and the panels other apps add), the downloads (cut sheet, label sheet), the label sheet
exports, the fabric view, a port's trace, the search that resolves any code in one step, and the
project manager's view of the floor (progress). Every member may read and download (customers
included); outsiders get 404 through projects.access.ProjectViewMixin; starting a label sheet export
takes the inventory editors' capability. Downloads take the list's filters, so "what I
see" is "what I download"; a filter that does not parse is a 400 naming it, never a silently larger
file. A label sheet too large for one download is a label sheet export, rendered in the background."""

from __future__ import annotations

import re
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.views import View
from django.views.generic import DetailView, FormView, TemplateView

from core.choices import JobStatus
from core.forms import add_service_errors
from core.history import history_rows
from core.http import attachment
from core.panels import panels_for
from core.spreadsheets import XLSX_CONTENT_TYPE
from core.views import FilteredListView
from inventory.choices import Network
from projects.access import Capability, ProjectViewMixin

from .choices import PHYSICAL_CABLE_STATUSES, CableStatus, LabelScope, Side
from .codes import CodeError
from .exports.cutsheet import cutsheet_xlsx
from .exports.fabric_svg import (
    FABRIC_STATES,
    HEAT_STEPS,
    SVG_CONTENT_TYPE,
    fabric_svg,
    fabric_views,
    rack_heatmap_svg,
)
from .exports.labels_pdf import DEFAULT_STOCK, MAX_LABELS, PDF_CONTENT_TYPE, STOCKS, labels_pdf
from .filters import CableFilterSet
from .forms import LabelSheetExportForm
from .search import Match, resolve_code, search_text
from .selectors import (
    RECENT_EXPORTS,
    SCANS_PER_PAGE,
    STAGES,
    cable_detail,
    cable_list,
    cable_list_with_ends,
    cable_scans,
    cable_status_changes,
    end_count,
    floor_progress,
    label_export_detail,
    label_export_list,
    page_end_tag,
    port_trace,
    recent_scans,
    work_since,
)
from .services import label_sheet_export_start

DOWNLOAD_FILTERS = ("network", "plane", "rack", "device", "status", "type", "q")
# ASCII digits only, and few: str.isdigit() takes "²" (and int() then raises), and int() refuses strings
# of more than 4,300 digits.
PLANE_NUMBER = re.compile(r"[0-9]{1,4}")


def _tag_ends(cables) -> None:
    for cable in cables:
        for end in cable.end_list:
            end.tag = page_end_tag(end)


def _download_query(request) -> str:
    """The list's current filters, to carry over to the download links."""
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


class CableListView(ProjectViewMixin, FilteredListView):
    template_name = "cabling/cable_list.html"
    context_object_name = "cables"
    filterset_class = CableFilterSet

    def base_queryset(self):
        return cable_list_with_ends(user=self.request.user, project=self.project)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        _tag_ends(context["cables"])
        context["download_query"] = _download_query(self.request)
        context["stocks"] = list(STOCKS)
        context["max_labels"] = MAX_LABELS
        return context


class CableDetailView(ProjectViewMixin, DetailView):
    """A cable's plan (both ends, type, length, the optics each end needs and those seated), its
    verification, every scan (newest first, paginated by `?scans_page=`), every status change with its
    cause, the panels other apps register for "cabling.cable", and its history."""

    template_name = "cabling/cable_detail.html"
    context_object_name = "cable"

    def get_object(self, queryset=None):
        cable = cable_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        _tag_ends([cable])
        for end in cable.end_list:
            end.optic_part = cable.optic_part_a if end.side == Side.A else cable.optic_part_b
            # A lane's transceiver sits in the cage of its physical port.
            parent = end.port.parent
            end.optic = getattr(end.port, "optic", None) or (parent and getattr(parent, "optic", None))
        return cable

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        cable = self.object
        scans = Paginator(cable_scans(user=self.request.user, cable=cable), SCANS_PER_PAGE)
        context["scans"] = scans.get_page(self.request.GET.get("scans_page"))
        context["status_changes"] = cable_status_changes(cable=cable)
        context["optics_needed"] = sum(end.optic_count for end in cable.end_list if end.optic_part)
        context["panels"] = panels_for("cabling.cable", request=self.request, obj=cable, project=self.project)
        context["history"] = history_rows(cable.history.all())
        context["cable_in_place"] = cable.status in PHYSICAL_CABLE_STATUSES  # what a swap may replace
        return context


# --- Downloads ---------------------------------------------------------------------------------


class DownloadView(ProjectViewMixin, View):
    """A file built from the project's cables as filtered by the query string."""

    def filtered(self):
        """(filterset, None) or (None, a 400 response naming the bad filter)."""
        filterset = CableFilterSet(self.request.GET, queryset=cable_list(user=self.request.user, project=self.project))
        if not filterset.is_valid():
            problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in filterset.errors.items())
            return None, HttpResponseBadRequest(f"Bad filter: {problems}", content_type="text/plain")
        return filterset, None

    def filename(self, filterset, kind: str, extension: str) -> str:
        parts = [self.project.code, kind]
        parts += [slugify(str(filterset.form.cleaned_data[name]), allow_unicode=True) for name in DOWNLOAD_FILTERS
                  if filterset.form.cleaned_data.get(name) not in (None, "")]
        return "-".join(parts) + f".{extension}"

    def attachment(self, content: bytes, content_type: str, filename: str) -> HttpResponse:
        return attachment(HttpResponse(content, content_type=content_type), filename)


class CutSheetView(DownloadView):
    def get(self, request, *args, **kwargs):
        filterset, error = self.filtered()
        if error:
            return error
        content = cutsheet_xlsx(filterset.qs)
        return self.attachment(content, XLSX_CONTENT_TYPE, self.filename(filterset, "cutsheet", "xlsx"))


class LabelSheetView(DownloadView):
    def get(self, request, *args, **kwargs):
        filterset, error = self.filtered()
        if error:
            return error
        stock_name = request.GET.get("stock") or DEFAULT_STOCK
        if stock_name not in STOCKS:
            return HttpResponseBadRequest(
                f"Bad stock {stock_name!r}: choose one of {', '.join(STOCKS)}.", content_type="text/plain"
            )
        rack = filterset.form.cleaned_data.get("rack") or None
        count = end_count(filterset.qs, rack=rack)
        if count > MAX_LABELS:
            exports = request.build_absolute_uri(_exports_url(self.project, rack=rack,
                                                              network=filterset.form.cleaned_data.get("network")))
            return HttpResponseBadRequest(
                f"{count} labels selected; one download prints at most {MAX_LABELS}. "
                f"A label sheet export prints any number in the background: {exports} "
                "(or choose a rack, or a network and plane, and print them in turn).",
                content_type="text/plain",
            )
        title = f"{self.project.code} cable labels" + (f", rack {rack}" if rack else "")
        content = labels_pdf(filterset.qs, stock=STOCKS[stock_name], rack=rack, title=title)
        return self.attachment(content, PDF_CONTENT_TYPE, self.filename(filterset, "labels", "pdf"))


# --- Label sheet exports -----------------------------------------------------------------------


def _exports_url(project, *, rack: str | None = None, network: str | None = None) -> str:
    """The exports page, its form set to the rack or network of a selection."""
    url = reverse("cabling:label-exports", args=[project.code])
    if rack:
        return f"{url}?{urlencode({'rack': rack})}"
    return f"{url}?{urlencode({'network': network})}" if network else url


class LabelExportListView(ProjectViewMixin, FormView):
    """The project's label sheet exports with their progress and downloads; inventory editors start one."""

    template_name = "cabling/label_exports.html"
    form_class = LabelSheetExportForm
    write_capability = Capability.EDIT_INVENTORY  # every member reads the page; editors start exports

    def get_initial(self):
        """Set to the cable list's selection when coming from it (?rack= or ?network=)."""
        rack, network = self.request.GET.get("rack"), self.request.GET.get("network")
        if rack:
            return {"scope": LabelScope.RACK, "rack": rack}
        if network in Network.values:
            return {"scope": LabelScope.NETWORK, "network": network}
        return {}

    def form_valid(self, form):
        try:
            export = label_sheet_export_start(project=self.project, user=self.request.user, **form.cleaned_data)
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.form_invalid(form)
        messages.info(self.request, f"Label sheet {export.pk} ({export.scope_text}) started.")
        return redirect(reverse("cabling:label-exports", args=[self.project.code]))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["exports"] = label_export_list(user=self.request.user, project=self.project)[:RECENT_EXPORTS]
        context["statuses"] = JobStatus
        return context


class LabelExportDownloadView(ProjectViewMixin, View):
    """The PDF of a finished export, as an attachment named <CODE>-labels-<scope>-<stock>-<id>.pdf."""

    def get(self, request, *args, **kwargs):
        export = label_export_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        if export.status != JobStatus.DONE or not export.output:
            raise Http404("This label sheet is not ready.")
        try:
            pdf = export.output.open("rb")
        except FileNotFoundError as exc:
            raise Http404("The file of this label sheet is gone: start the export again.") from exc
        return FileResponse(pdf, as_attachment=True, filename=export.download_name, content_type=PDF_CONTENT_TYPE)


# --- Fabric view -------------------------------------------------------------------------------


def _network_param(request) -> str | None:
    network = request.GET.get("network") or None
    if network is not None and network not in Network.values:
        raise ValueError(f"Bad network {network!r}: choose one of {', '.join(Network.values)}.")
    return network


class FabricPageView(ProjectViewMixin, TemplateView):
    template_name = "cabling/fabric.html"

    def get(self, request, *args, **kwargs):
        try:
            self.network = _network_param(request)
        except ValueError as exc:
            return HttpResponseBadRequest(str(exc), content_type="text/plain")
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        views = fabric_views(user=self.request.user, project=self.project, network=self.network)
        for view in views:
            view.svg = fabric_svg(view)
        context["views"] = views
        context["states"] = FABRIC_STATES
        context["networks"] = Network.choices
        context["network"] = self.network or ""
        return context


class FabricSvgView(ProjectViewMixin, View):
    """One network and plane as an SVG file: ?network=compute&plane=0 (or plane=shared)."""

    def get(self, request, *args, **kwargs):
        try:
            network = _network_param(request)
        except ValueError as exc:
            return HttpResponseBadRequest(str(exc), content_type="text/plain")
        plane = request.GET.get("plane", "shared")
        if network is None or not (plane == "shared" or PLANE_NUMBER.fullmatch(plane)):
            return HttpResponseBadRequest(
                "Give a network and a plane: ?network=compute&plane=0 (or plane=shared).", content_type="text/plain"
            )
        wanted = None if plane == "shared" else int(plane)
        views = fabric_views(user=request.user, project=self.project, network=network)
        view = next((v for v in views if v.plane == wanted), None)
        if view is None:
            raise Http404(f"No {network} links in {plane} plane.")
        response = HttpResponse(fabric_svg(view), content_type=SVG_CONTENT_TYPE)
        return attachment(response, f"{self.project.code}-fabric-{network}-{view.plane_param}.svg")


# --- Trace, search, progress -------------------------------------------------------------------


class PortTraceView(ProjectViewMixin, TemplateView):
    """A port through its cable(s) to every far end: a GPU port through its breakout to each leaf lane."""

    template_name = "cabling/trace.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["trace"] = port_trace(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        return context


def match_url(match: Match, project) -> str:
    """Where a match opens: its page, the port shown in the device's ports panel, the end on its cable."""
    url = match.url(project)
    if match.kind == "port":
        return f"{url}?{urlencode({'ports_q': match.obj.name})}#port-{match.obj.pk}"
    if match.kind == "cable_end":
        return f"{url}#end-{match.obj.pk}"
    return url


KIND_LABELS = {"cable_end": "cable end", "cable": "cable", "port": "port", "device": "device", "optic": "optic"}


class SearchView(ProjectViewMixin, TemplateView):
    """The search box: any code the floor prints or a tool reports (serial, asset tag, device name, cable
    label, end code, end tag, device:port, GUID, MAC) resolved in one step by cabling.search, then what
    starts with or contains the text typed (cabling.search.search_text). A code naming exactly one object
    opens its page; otherwise the matches are listed, exact ones first; none says so. A code no label could
    hold is a 400 saying why."""

    template_name = "cabling/search.html"

    def get(self, request, *args, **kwargs):
        query = request.GET.get("q", "")
        context = self.get_context_data(search_query=query[:512], matches=None, error="")
        if not query.strip():
            return self.render_to_response(context)
        try:
            exact = resolve_code(user=request.user, project=self.project, code=query)
            matches = exact if len(exact) == 1 else search_text(user=request.user, project=self.project, text=query)
        except CodeError as exc:
            context["error"] = str(exc)
            return self.render_to_response(context, status=400)
        if len(exact) == 1:
            return redirect(match_url(exact[0], self.project))
        context["matches"] = [(match, match_url(match, self.project), KIND_LABELS.get(match.kind, match.kind))
                              for match in matches]
        return self.render_to_response(context)


def _choice_param(request, name: str, choices, default: str | None = None) -> str | None:
    value = request.GET.get(name) or default
    if value is not None and value not in choices:
        raise ValueError(f"Bad {name} {value[:40]!r}: choose one of {', '.join(choices)}.")
    return value


class ProgressView(ProjectViewMixin, TemplateView):
    """The project manager's view of the floor: progress per rack (a heat map and a table), per network
    and plane, and in all; the latest scans; what each person did today. Aggregates: the page costs the
    same queries for 2 racks or 300. `?network=` narrows it to one network; `?stage=` picks what the
    heat map colours (racked, optics, installed, verified)."""

    template_name = "cabling/progress.html"

    def get(self, request, *args, **kwargs):
        try:
            self.network = _choice_param(request, "network", Network.values)
            self.stage = _choice_param(request, "stage", STAGES, default="verified")
        except ValueError as exc:
            return HttpResponseBadRequest(str(exc), content_type="text/plain")
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        user, project = self.request.user, self.project
        progress = floor_progress(user=user, project=project, network=self.network)
        today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
        context.update(
            progress=progress,
            heatmap=rack_heatmap_svg(progress.racks, stage=self.stage,
                                     rack_url=lambda pk: reverse("inventory:rack-detail", args=[project.code, pk])),
            stage=self.stage, stage_label=STAGES[self.stage], stages=STAGES, network=self.network or "",
            networks=Network.choices, heat_steps=HEAT_STEPS,
            scans=recent_scans(user=user, project=project), today=today,
            people=work_since(user=user, project=project, since=today),
            cable_statuses=CableStatus,
        )
        return context
