"""Admin for cables and their ends, with change history (django-simple-history).

Cables come from plan_apply; the admin is for looking things up and fixing a stray row, so the ends
are edited inline on their cable (the port's database-unique constraint still refuses a second cable).
"""

from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from .models import Cable, CableEnd, FabricPlan, LabelSheetExport, ScanEvent, Swap


class CableEndInline(admin.TabularInline):
    model = CableEnd
    extra = 0
    fields = ["side", "position", "port", "confirmed_at", "confirmed_by"]
    raw_id_fields = ["port", "confirmed_by"]  # a project has tens of thousands of ports: no select box


@admin.register(Cable)
class CableAdmin(SimpleHistoryAdmin):
    list_display = ["label", "project", "network", "plane", "cable_type", "length_m", "speed_gbps", "status",
                    "verified_at"]
    list_filter = ["status", "fabric_state", "network", "cable_type", "project"]
    search_fields = ["label", "project__code", "part_number", "serial"]
    list_select_related = ["project"]
    autocomplete_fields = ["project"]
    inlines = [CableEndInline]


@admin.register(CableEnd)
class CableEndAdmin(SimpleHistoryAdmin):
    list_display = ["cable", "side", "position", "port"]
    list_filter = ["side", "cable__network"]
    search_fields = ["cable__label", "port__name", "port__device__name"]
    list_select_related = ["cable", "port__device"]
    raw_id_fields = ["cable", "port"]


@admin.register(FabricPlan)
class FabricPlanAdmin(admin.ModelAdmin):
    """Plans are previewed and applied on the project's Plan page; here they are only looked up."""

    list_display = ["pk", "project", "name", "source", "status", "requested_by", "created_at", "applied_at"]
    list_filter = ["status", "source", "project"]
    search_fields = ["name", "project__code"]
    list_select_related = ["project", "requested_by"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(LabelSheetExport)
class LabelSheetExportAdmin(admin.ModelAdmin):
    """Exports are started and downloaded on the project's label exports page; here they are only looked up."""

    list_display = ["pk", "project", "scope", "rack", "network", "stock", "status", "requested_by", "created_at"]
    list_filter = ["status", "scope", "stock", "project"]
    search_fields = ["project__code", "rack"]
    list_select_related = ["project", "requested_by"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class LookedUpOnly:
    """For rows written by a service only (scans, swaps): the admin looks them up, never adds, edits or
    deletes one."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ScanEvent)
class ScanEventAdmin(LookedUpOnly, admin.ModelAdmin):
    """Scans are kept forever as they were recorded (cabling.services.scan_record): looked up here, never
    added, changed or deleted."""

    list_display = ["created_at", "project", "user", "action", "raw_code", "result", "reason", "source"]
    list_filter = ["result", "action", "source", "project"]
    search_fields = ["raw_code", "reason", "idempotency_key", "user__username", "project__code"]
    list_select_related = ["project", "user"]
    date_hierarchy = "created_at"


@admin.register(Swap)
class SwapAdmin(LookedUpOnly, SimpleHistoryAdmin):
    """Swaps are recorded on the floor (cabling.swaps.services: it moves the optics and sends the cable back
    through verification) and their RMA moved on on the swap's page; here they are only looked up."""

    list_display = ["recorded_at", "project", "kind", "old_serial", "new_serial", "rma_case", "rma_state",
                    "recorded_by"]
    list_filter = ["kind", "rma_state", "project"]
    search_fields = ["old_serial", "new_serial", "rma_case", "cable__label", "project__code"]
    list_select_related = ["project", "recorded_by"]
    date_hierarchy = "recorded_at"
