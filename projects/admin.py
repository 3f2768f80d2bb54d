from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from projects.models import Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(SimpleHistoryAdmin):
    list_display = ["code", "name", "customer_name", "site", "status", "target_date"]
    list_filter = ["status"]
    search_fields = ["code", "name", "customer_name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(SimpleHistoryAdmin):
    list_display = ["project", "user", "role"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "project__code"]
    autocomplete_fields = ["user", "project"]
