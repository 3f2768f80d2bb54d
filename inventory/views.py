"""Inventory pages under /p/<code>/: racks (with elevation), devices (with a small edit form) and
optics. Every view goes through projects.access.ProjectViewMixin, reads through inventory.selectors
and writes through inventory.services."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View
from django.views.generic import DetailView

from core.forms import add_service_errors
from core.history import history_rows
from core.panels import panels_for
from core.views import FilteredListView
from projects.access import Capability, ProjectViewMixin, can

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


# --- Lists -------------------------------------------------------------------------------------


class RackListView(ProjectViewMixin, FilteredListView):
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


class DeviceListView(ProjectViewMixin, FilteredListView):
    template_name = "inventory/device_list.html"
    context_object_name = "devices"
    filterset_class = DeviceFilterSet

    def base_queryset(self):
        return device_list(user=self.request.user, project=self.project).order_by("name")


class OpticListView(ProjectViewMixin, FilteredListView):
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
        # The form is on its own page (device-edit): its rack list alone took half this page's time at 300
        # racks, for a form most visits do not open.
        context["history"] = history_rows(self.object.history.all())
        # The apps above add theirs: the ports with their cables and far ends come from cabling.
        context["panels"] = panels_for("inventory.device", request=self.request, obj=self.object, project=self.project)
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
        # What upper apps add (cabling: the optic's swaps and its Replace button), without importing them.
        context["panels"] = panels_for("inventory.optic", request=self.request, obj=self.object, project=self.project)
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
