from django.contrib import admin

from exports.models import ExportEvent, ExportJob


class ExportEventInline(admin.TabularInline):
    model = ExportEvent
    extra = 0
    can_delete = False
    readonly_fields = ("created_at", "kind", "attempt", "actor", "message")


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    """Read-only: jobs change state only through their task, with an event each time."""

    list_display = ("study", "format", "status", "progress", "attempts", "created_at", "expires_at")
    list_filter = ("status", "format")
    exclude = ("report_data",)
    inlines = [ExportEventInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
