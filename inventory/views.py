"""Inventory pages under /p/<code>/: racks (with elevation), devices (with a small edit form) and
optics. Every view goes through delivery.access.ProjectViewMixin, reads through inventory.selectors
and writes through inventory.services."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View
from django.views.generic import DetailView, ListView

from delivery.access import Capability, ProjectViewMixin, can

from .choices import DeviceStatus, Face
from .elevation import Placement, rack_elevation
from .filters import DeviceFilterSet, OpticFilterSet, RackFilterSet
from .forms import DeviceForm
from .models import Device, Rack
from .selectors import (
    device_detail,
    device_list,
    is_power_flagged,
    optic_list,
    power_headroom,
    rack_devices,
    rack_list,
)
from .services import device_update

PAGE_SIZE = 50
HISTORY_LIMIT = 50  # newest entries shown on an object's page; the admin has the full trail
HISTORY_KINDS = {"+": "Created", "~": "Changed", "-": "Deleted"}


# --- Power -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PowerSummary:
    used_w: int
    budget_w: int
    headroom: float | None
    flagged: bool

    @property
    def headroom_pct(self) -> int | None:
        return None if self.headroom is None else round(self.headroom * 100)

    @property
    def bar_pct(self) -> int:
        """Width of the 'used' bar; capped at 100 so an over-budget rack fills it rather than overflows."""
        if not self.budget_w:
            return 100
        return min(100, round(self.used_w * 100 / self.budget_w))


def power_summary(rack: Rack) -> PowerSummary:
    """The rack must come from selectors.with_power (it carries power_used_w)."""
    used, budget = rack.power_used_w, rack.power_budget_w
    return PowerSummary(
        used_w=used, budget_w=budget, headroom=power_headroom(used_w=used, budget_w=budget),
        flagged=is_power_flagged(used_w=used, budget_w=budget),
    )


def min_headroom_pct() -> int:
    return round(settings.RACK_POWER_HEADROOM * 100)


# --- History -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str
    new: str


@dataclass(frozen=True)
class HistoryRow:
    date: datetime
    user: str
    kind: str
    changes: list[FieldChange]


def _display(field, value, related: dict) -> str:
    if value is None or value == "":
        return "—"
    if field.is_relation:
        return str(related.get((field.related_model, value), f"#{value} (deleted)"))
    if field.choices:
        return str(dict(field.flatchoices).get(value, value))
    return str(value)


def _related_objects(history_model, deltas) -> dict:
    """Foreign keys in a diff are raw ids; fetch each related model once for all of them."""
    wanted: dict[type, set] = {}
    for delta in deltas:
        for change in delta.changes if delta else ():
            field = history_model._meta.get_field(change.field)
            if field.is_relation:
                wanted.setdefault(field.related_model, set()).update(
                    v for v in (change.old, change.new) if v is not None
                )
    return {
        (model, pk): obj
        for model, pks in wanted.items()
        # select_related(): their __str__ may name a parent (a port prints as "device:port").
        for pk, obj in model._default_manager.select_related().in_bulk(pks).items()
    }


def history_rows(history: QuerySet, *, limit: int = HISTORY_LIMIT) -> list[HistoryRow]:
    """Newest first: who, when, and what changed against the record before (one query for the
    records, one per kind of foreign key that changed)."""
    newest_first = history.select_related("history_user").order_by("-history_date", "-history_id")
    records = list(newest_first[: limit + 1])  # one extra: the record the oldest shown one is diffed against
    pairs = list(zip(records[:limit], [*records[1:], None], strict=False))
    deltas = [
        newer.diff_against(older) if older and newer.history_type == "~" else None for newer, older in pairs
    ]
    related = _related_objects(history.model, deltas)
    rows = []
    for (record, _), delta in zip(pairs, deltas, strict=True):
        changes = []
        for change in delta.changes if delta else ():
            field = history.model._meta.get_field(change.field)
            changes.append(
                FieldChange(
                    field=str(field.verbose_name),
                    old=_display(field, change.old, related),
                    new=_display(field, change.new, related),
                )
            )
        user = record.history_user.get_username() if record.history_user else "system"
        rows.append(HistoryRow(date=record.history_date, user=user, kind=HISTORY_KINDS[record.history_type],
                               changes=changes))
    return rows


# --- Lists -------------------------------------------------------------------------------------


class FilteredListView(ProjectViewMixin, ListView):
    """A project list page filtered by the same FilterSet the API uses, then paginated."""

    filterset_class: type
    paginate_by = PAGE_SIZE

    def base_queryset(self) -> QuerySet:
        raise NotImplementedError

    def get_queryset(self):
        self.filterset = self.filterset_class(self.request.GET or None, queryset=self.base_queryset())
        return self.filterset.qs

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["filterset"] = self.filterset
        return context


class RackListView(FilteredListView):
    template_name = "inventory/rack_list.html"
    context_object_name = "racks"
    filterset_class = RackFilterSet

    def base_queryset(self):
        return rack_list(user=self.request.user, project=self.project)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        for rack in context["racks"]:
            rack.power = power_summary(rack)
        context["min_headroom_pct"] = min_headroom_pct()
        return context


class DeviceListView(FilteredListView):
    template_name = "inventory/device_list.html"
    context_object_name = "devices"
    filterset_class = DeviceFilterSet

    def base_queryset(self):
        return device_list(user=self.request.user, project=self.project).order_by("name")


class OpticListView(FilteredListView):
    template_name = "inventory/optic_list.html"
    context_object_name = "optics"
    filterset_class = OpticFilterSet

    def base_queryset(self):
        return optic_list(user=self.request.user, project=self.project).order_by("part_number", "serial")


# --- Detail pages ------------------------------------------------------------------------------


def placement_of(device: Device) -> Placement:
    model = device.hardware_model
    return Placement(
        pk=device.pk, name=device.name, status=device.status, position_u=device.position_u,
        height_u=model.height_u, face=device.face, full_depth=model.is_full_depth,
    )


class RackDetailView(ProjectViewMixin, DetailView):
    template_name = "inventory/rack_detail.html"
    context_object_name = "rack"

    def get_object(self, queryset=None):
        racks = rack_list(user=self.request.user, project=self.project)
        return get_object_or_404(racks, pk=self.kwargs["pk"])

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        rack = self.object
        devices = list(rack_devices(rack=rack))
        context["devices"] = devices
        context["faces"] = rack_elevation(
            rack_height_u=rack.height_u, placements=[placement_of(d) for d in devices], faces=Face.choices
        )
        context["statuses"] = DeviceStatus.choices
        context["power"] = power_summary(rack)
        context["min_headroom_pct"] = min_headroom_pct()
        context["history"] = history_rows(rack.history.all())
        return context


class DeviceDetailView(ProjectViewMixin, DetailView):
    template_name = "inventory/device_detail.html"
    context_object_name = "device"

    def get_object(self, queryset=None):
        return device_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if context["can_edit_inventory"]:
            context["form"] = DeviceForm(instance=self.object, project=self.project)
        context["history"] = history_rows(self.object.history.all())
        return context


class DeviceEditView(ProjectViewMixin, View):
    """GET shows the form on its own page; POST saves through services.device_update, which checks the
    rack space again and rewrites the device's unit claims. Errors come back on the form."""

    required_capability = Capability.EDIT_INVENTORY
    template_name = "inventory/device_edit.html"

    def get_device(self) -> Device:
        devices = device_list(user=self.request.user, project=self.project)
        return get_object_or_404(devices, pk=self.kwargs["pk"])

    def render_form(self, device: Device, form: DeviceForm):
        context = {
            "project": self.project, "role": self.role, "device": device, "form": form,
            "can_edit_inventory": True,
            "can_manage_project": can(self.request.user, Capability.MANAGE_PROJECT, self.project),
        }
        return render(self.request, self.template_name, context)

    def get(self, request, code, pk):
        device = self.get_device()
        return self.render_form(device, DeviceForm(instance=device, project=self.project))

    def post(self, request, code, pk):
        device = self.get_device()
        form = DeviceForm(request.POST, instance=device, project=self.project)
        if form.is_valid():
            try:
                device_update(device=device, **form.service_fields())
            except ValidationError as exc:  # e.g. a U claimed by someone else since the form was checked
                add_service_errors(form, exc)
            else:
                messages.success(request, f"{device.name} saved.")
                return redirect("inventory:device-detail", self.project.code, device.pk)
        return self.render_form(device, form)


def add_service_errors(form, exc: ValidationError) -> None:
    """Put a service's errors on the form's fields, or on the form when the field is not on it."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for field, errors in exc.error_dict.items():
        form.add_error(field if field in form.fields else None, [m for e in errors for m in e.messages])


class OpticDetailView(ProjectViewMixin, DetailView):
    template_name = "inventory/optic_detail.html"
    context_object_name = "optic"

    def get_object(self, queryset=None):
        optics = optic_list(user=self.request.user, project=self.project)
        return get_object_or_404(optics, pk=self.kwargs["pk"])

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["dom_lanes"] = dom_lanes(self.object)
        context["history"] = history_rows(self.object.history.all())
        return context


def dom_lanes(optic) -> list[dict]:
    """Per-lane DOM readings side by side; the three lists may differ in length (a missing reading)."""
    readings = (optic.dom_tx_power_dbm, optic.dom_rx_power_dbm, optic.dom_bias_ma)
    columns = [values if isinstance(values, list) else [] for values in readings]
    count = max(len(c) for c in columns)
    return [
        {"lane": i, "tx": _at(columns[0], i), "rx": _at(columns[1], i), "bias": _at(columns[2], i)}
        for i in range(count)
    ]


def _at(values: list, index: int):
    return values[index] if index < len(values) else None
