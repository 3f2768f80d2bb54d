"""Admin for every inventory model, with change history (django-simple-history).

Devices are created and moved through inventory.services so their NICs, ports, lanes and rack-unit
claims stay right; DeviceUnit rows are only ever written by those services, so they are read-only here.
"""

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from simple_history.admin import SimpleHistoryAdmin

from . import services
from .models import (
    Device,
    DeviceUnit,
    HardwareModel,
    ImportJob,
    Nic,
    NicTemplate,
    Optic,
    Port,
    PortTemplate,
    Rack,
    Site,
)


class ProjectFixedForm(forms.ModelForm):
    """A form for rows whose project is read-only on change. Django leaves a field that is not on the
    form out of validation, and with it every constraint naming the field, so (project, name) would only
    be checked by the database (a 500); the project is put back in."""

    def _get_validation_exclusions(self):
        return super()._get_validation_exclusions() - {"project"}


class ProjectFixedOnChangeMixin:
    """A row's project is chosen when it is made and never changes: moving a site, rack or optic to
    another project would leave its devices, ports and history pointing across tenants."""

    form = ProjectFixedForm

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "project"] if obj is not None else fields


@admin.register(Site)
class SiteAdmin(ProjectFixedOnChangeMixin, SimpleHistoryAdmin):
    list_display = ["name", "project", "address"]
    list_filter = ["project"]
    search_fields = ["name", "address", "project__code"]
    list_select_related = ["project"]


@admin.register(Rack)
class RackAdmin(ProjectFixedOnChangeMixin, SimpleHistoryAdmin):
    list_display = ["name", "project", "site", "row", "position", "height_u", "power_budget_w", "status"]
    list_filter = ["status", "project", "row"]
    search_fields = ["name", "project__code", "site__name"]
    list_select_related = ["project", "site"]
    autocomplete_fields = ["project", "site"]


class NicTemplateInline(admin.TabularInline):
    model = NicTemplate
    extra = 0


class PortTemplateInline(admin.TabularInline):
    model = PortTemplate
    extra = 0
    fields = ["name", "nic_template", "kind", "speed_gbps", "network", "breakout_lanes", "lane_speed_gbps",
              "planes_per_lane"]


@admin.register(HardwareModel)
class HardwareModelAdmin(SimpleHistoryAdmin):
    list_display = ["vendor", "model", "part_number", "kind", "height_u", "max_power_w", "is_full_depth"]
    list_filter = ["kind", "vendor", "is_full_depth"]
    search_fields = ["vendor", "model", "part_number"]
    inlines = [NicTemplateInline, PortTemplateInline]


# The device fields services.device_create takes; project and model come first as the form needs them.
DEVICE_CREATE_FIELDS = ["project", "hardware_model", "name", "rack", "position_u", "face", "role", "serial",
                        "asset_tag", "oob_address", "status"]


@admin.register(Device)
class DeviceAdmin(SimpleHistoryAdmin):
    list_display = [
        "name", "project", "hardware_model", "role", "rack", "position_u", "face", "status", "serial",
    ]
    list_filter = ["status", "role", "hardware_model__kind", "project"]
    search_fields = ["name", "serial", "asset_tag", "project__code", "rack__name"]
    list_select_related = ["project", "hardware_model", "rack"]
    autocomplete_fields = ["project", "rack", "hardware_model"]
    fields = DEVICE_CREATE_FIELDS
    form = ProjectFixedForm

    def get_readonly_fields(self, request, obj=None):
        # Ports, NICs and lanes were built from the model's templates for this project; changing either
        # would leave them wrong, so an existing device keeps both (delete and re-create instead).
        return ["project", "hardware_model"] if obj else []

    def save_model(self, request, obj, form, change):
        """Adds build NICs/ports/lanes from the model's templates; changes re-claim the rack units.
        The form has already run Device.clean() (overlap, fit), so the service's check passes too."""
        if change:
            services.device_update(device=obj)
            return
        created = services.device_create(**{name: getattr(obj, name) for name in DEVICE_CREATE_FIELDS})
        # The admin goes on with `obj` (log entry, redirect), so make it the saved row.
        obj.pk = created.pk
        obj._state.adding = False
        obj._state.db = created._state.db


@admin.register(DeviceUnit)
class DeviceUnitAdmin(admin.ModelAdmin):
    """Read-only: a claim is written by the services with its device. Deleting a device still deletes
    its claims (so the delete permission stays), but a claim cannot be deleted on its own."""

    list_display = ["rack", "unit", "face", "device"]
    list_filter = ["face", "rack__project"]
    search_fields = ["rack__name", "device__name"]
    list_select_related = ["rack", "device"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def delete_view(self, request, object_id, extra_context=None):
        raise PermissionDenied("Unit claims are freed by moving or deleting their device.")


@admin.register(Nic)
class NicAdmin(SimpleHistoryAdmin):
    list_display = ["device", "slot", "model", "part_number", "serial", "firmware", "guid_mac"]
    list_filter = ["model", "device__project"]
    search_fields = ["device__name", "serial", "guid_mac", "part_number"]
    list_select_related = ["device"]
    autocomplete_fields = ["device"]


@admin.register(Port)
class PortAdmin(SimpleHistoryAdmin):
    list_display = ["__str__", "nic", "kind", "speed_gbps", "network", "plane", "lane", "status"]
    list_filter = ["kind", "network", "status", "plane", "device__project"]
    search_fields = ["device__name", "name", "guid_mac"]
    list_select_related = ["device", "nic", "nic__device"]
    autocomplete_fields = ["device", "nic", "parent"]


@admin.register(Optic)
class OpticAdmin(ProjectFixedOnChangeMixin, SimpleHistoryAdmin):
    list_display = [
        "serial", "part_number", "vendor", "form_factor", "speed_gbps", "status", "port", "project",
    ]
    list_filter = ["status", "form_factor", "speed_gbps", "project"]
    search_fields = ["serial", "part_number", "vendor", "port__device__name"]
    list_select_related = ["project", "port", "port__device"]
    autocomplete_fields = ["project", "port"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    """To look at an upload and its errors; jobs are created and run by the import pages and tasks."""

    list_display = ["__str__", "project", "status"]
    list_filter = ["status", "project"]
    search_fields = ["original_name", "project__code"]
    list_select_related = ["project"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
