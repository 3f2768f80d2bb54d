"""Reads of the inventory, always scoped to what the user may see, with the joins a page needs so
its query count does not grow with the data."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, IntegerField, Prefetch, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce

from projects.access import scope_to_user
from projects.models import Project

from .models import Device, HardwareModel, Nic, Optic, Port, Rack


def with_power(racks: QuerySet[Rack]) -> QuerySet[Rack]:
    """Annotate power_used_w (sum of the devices' nameplate maximum) and device_count."""
    return racks.annotate(
        power_used_w=Coalesce(Sum("devices__hardware_model__max_power_w"), Value(0), output_field=IntegerField()),
        device_count=Count("devices"),
    )


def power_headroom(*, used_w: int, budget_w: int) -> float | None:
    """Share of the budget left free (may be negative when over budget); None without a budget."""
    if not budget_w:
        return None
    return (budget_w - used_w) / budget_w


def is_power_flagged(*, used_w: int, budget_w: int) -> bool:
    headroom = power_headroom(used_w=used_w, budget_w=budget_w)
    return headroom is None or headroom < settings.RACK_POWER_HEADROOM


def rack_list(*, user, project: Project | None = None) -> QuerySet[Rack]:
    racks = scope_to_user(Rack.objects.all(), user)
    if project is not None:
        racks = racks.filter(project=project)
    return with_power(racks.select_related("site", "project")).order_by("row", "position", "name")


def device_list(*, user, project: Project | None = None) -> QuerySet[Device]:
    devices = scope_to_user(Device.objects.all(), user)
    if project is not None:
        devices = devices.filter(project=project)
    return devices.select_related("rack", "hardware_model", "project")


def rack_devices(*, rack: Rack) -> QuerySet[Device]:
    return rack.devices.select_related("hardware_model").order_by("-position_u")


def device_detail(*, user, project: Project, pk: int) -> Device:
    """One device with its NICs and how many ports and lanes it has (two queries). Its ports, with their
    cables, are a panel of their own, one page at a time (cabling registers it: core.panels)."""
    from django.shortcuts import get_object_or_404

    queryset = device_list(user=user, project=project).select_related("racked_by").prefetch_related(
        Prefetch("nics", queryset=Nic.objects.order_by("slot")),
    ).annotate(
        port_count=Count("ports", filter=Q(ports__parent__isnull=True)),
        lane_count=Count("ports", filter=Q(ports__parent__isnull=False)),
    )
    return get_object_or_404(queryset, pk=pk)


def optic_list(*, user, project: Project | None = None) -> QuerySet[Optic]:
    optics = scope_to_user(Optic.objects.all(), user)
    if project is not None:
        optics = optics.filter(project=project)
    return optics.select_related("port__device", "project")


def port_list(*, user, project: Project | None = None) -> QuerySet[Port]:
    ports = scope_to_user(Port.objects.all(), user, "device__project")
    if project is not None:
        ports = ports.filter(device__project=project)
    return ports.select_related("device", "nic", "parent")


def nic_list(*, user, project: Project | None = None) -> QuerySet[Nic]:
    nics = scope_to_user(Nic.objects.all(), user, "device__project")
    if project is not None:
        nics = nics.filter(device__project=project)
    return nics.select_related("device")


def hardware_model_list() -> QuerySet[HardwareModel]:
    """The catalogue is shared by every project and readable by any signed-in user."""
    return HardwareModel.objects.annotate(port_count=Count("port_templates")).order_by("vendor", "model")


__all__ = [
    "device_detail",
    "device_list",
    "hardware_model_list",
    "is_power_flagged",
    "nic_list",
    "optic_list",
    "port_list",
    "power_headroom",
    "rack_devices",
    "rack_list",
    "with_power",
]
