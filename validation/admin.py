from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from .models import AcceptanceProfile, CheckResult, CheckRun


@admin.register(AcceptanceProfile)
class AcceptanceProfileAdmin(SimpleHistoryAdmin):
    list_display = [
        "project",
        "effective_ber_fail",
        "symbol_ber_fail",
        "gpu_rdma_fail_fraction",
        "cpu_bw_fail_gbps",
        "nccl_busbw_fail_gbs",
        "updated_at",
    ]
    search_fields = ["project__code"]
    autocomplete_fields = ["project"]


class CheckResultInline(admin.TabularInline):
    model = CheckResult
    extra = 0
    can_delete = False
    show_change_link = True
    fields = ["target_key", "round", "status", "verdict", "attempt", "finished_at"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(CheckRun)
class CheckRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "project",
        "kind",
        "runner",
        "status",
        "progress_done",
        "progress_total",
        "requested_by",
        "created_at",
    ]
    list_filter = ["kind", "status", "runner", "project"]
    search_fields = ["project__code"]
    readonly_fields = [
        "project",
        "kind",
        "runner",
        "status",
        "options",
        "progress_total",
        "progress_done",
        "progress_step",
        "errors",
        "current_round",
        "requested_by",
        "parent",
        "created_at",
        "started_at",
        "finished_at",
        "log",
    ]
    inlines = [CheckResultInline]


@admin.register(CheckResult)
class CheckResultAdmin(admin.ModelAdmin):
    """Results are evidence: readable here, written only by the engine."""

    list_display = ["id", "run", "target_key", "status", "verdict", "attempt", "finished_at"]
    list_filter = ["verdict", "status", "run__kind"]
    search_fields = ["target_key", "run__project__code"]
    list_select_related = ["run__project"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False
