"""Django admin for superusers: every model registered, read-mostly for protocol data.

Except the transcripts (Transcript, Turn, TurnRedaction): a turn's text
changes only by a coordinator's audited redaction (docs/design/transcripts.md §10.2),
which an admin form would bypass; they are read on the session pages."""

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from surveys.models import (
    ConsentRecord,
    ConsentText,
    DemographicsResponse,
    Evaluation,
    EvaluationCorrection,
    FeedbackResponse,
    InteractionBlock,
    Invitation,
    LLMSystem,
    Participant,
    PromptEntry,
    SessionErasure,
    StepRecord,
    Study,
    StudyMembership,
    StudySession,
    User,
)


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "first_name", "last_name", "is_staff", "is_superuser", "is_active"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name")}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")},
        ),
        ("Important dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)


class LLMSystemInline(admin.TabularInline):
    model = LLMSystem
    extra = 0


class MembershipInline(admin.TabularInline):
    model = StudyMembership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "status", "created_at"]
    list_filter = ["status"]
    search_fields = ["title", "slug"]
    prepopulated_fields = {"slug": ["title"]}
    inlines = [LLMSystemInline, MembershipInline]


@admin.register(LLMSystem)
class LLMSystemAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "vendor", "model_version", "active"]
    list_filter = ["study", "active"]


@admin.register(StudyMembership)
class StudyMembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "study", "role", "created_at"]
    list_filter = ["role", "study"]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["email", "study", "role", "created_at", "expires_at", "accepted_at"]
    readonly_fields = ["token_hash"]


@admin.register(ConsentText)
class ConsentTextAdmin(admin.ModelAdmin):
    list_display = ["study", "language", "version", "updated_at"]

    def get_readonly_fields(self, request, obj=None):
        # A version someone consented to never changes (surveys/consent.py).
        if obj is not None and obj.records.exists():
            return ["study", "language", "version", "information_sheet", "consent_text"]
        return []


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ["code", "study", "created_at"]
    list_filter = ["study"]


class StepRecordInline(admin.TabularInline):
    model = StepRecord
    extra = 0


@admin.register(StudySession)
class StudySessionAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "study",
        "step",
        "language",
        "first_system",
        "second_system",
        "is_pilot",
        "created_at",
    ]
    list_filter = ["study", "step", "is_pilot"]
    readonly_fields = ["token"]
    inlines = [StepRecordInline]


for model in (
    StepRecord,
    ConsentRecord,
    InteractionBlock,
    PromptEntry,
    EvaluationCorrection,
    FeedbackResponse,
    DemographicsResponse,
):
    admin.site.register(model)


@admin.register(SessionErasure)
class SessionErasureAdmin(admin.ModelAdmin):
    """An audit record: shown, never added or changed by hand (it goes with its session)."""

    list_display = ["session", "step_before", "erased_by", "erased_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ["pk", "session", "block", "system", "language", "submitted_at", "shs", "band"]
    list_filter = ["system__study", "block", "language"]
