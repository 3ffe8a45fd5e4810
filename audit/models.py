"""The audit log: one row per staff action that changes or reveals study data
(docs/design/audit.md §15.1). Rows are only ever added, by `audit.log.record`.

Studies and people are held as plain ids, not foreign keys: a cascade from a
deleted study or user would have to delete or update audit rows, which the
log refuses, and the row must say who acted even after that person is gone.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

SITE_CHAIN = "site"


def study_chain(study_id: int) -> str:
    """The name of a study's chain; the site's is SITE_CHAIN."""
    return f"study:{int(study_id)}"


class AppendOnly(Exception):
    """An audit row was to be changed or deleted: the log only grows."""


class AuditEntryQuerySet(models.QuerySet):
    # The database refuses these on PostgreSQL too (a trigger, migration 0002);
    # here they fail before any SQL, on every database.
    def update(self, **kwargs):
        raise AppendOnly("audit rows are never updated")

    def delete(self):
        raise AppendOnly("audit rows are never deleted")

    def bulk_create(self, *args, **kwargs):
        raise AppendOnly("audit rows are added one by one by audit.log.record")

    def bulk_update(self, *args, **kwargs):
        raise AppendOnly("audit rows are never updated")


class AuditEntry(models.Model):
    class Kind(models.TextChoices):
        # The site's chain.
        LOGIN = "login", _("Logged in")
        LOGIN_FAILED = "login_failed", _("Failed login")
        MFA_ADDED = "mfa_added", _("Second factor added")
        MFA_REMOVED = "mfa_removed", _("Second factor removed")
        MFA_RESET = "mfa_reset", _("Recovery codes regenerated")
        API_TOKEN_CREATED = "api_token_created", _("API token created")
        API_TOKEN_REVOKED = "api_token_revoked", _("API token revoked")
        STUDY_CHAIN_DELETED = "study_chain_deleted", _("A deleted study's audit log deleted")
        # A study's chain.
        STUDY_CREATED = "study_created", _("Study created")
        STUDY_CHANGED = "study_changed", _("Study settings changed")
        SYSTEM_ADDED = "system_added", _("System added")
        SYSTEM_CHANGED = "system_changed", _("System settings changed")
        CONSENT_VERSION = "consent_version", _("Consent text saved")
        TASK_VERSION = "task_version", _("Task text saved")
        MEMBER_ADDED = "member_added", _("Team member added")
        MEMBER_REMOVED = "member_removed", _("Team member removed")
        MEMBER_ROLE_CHANGED = "member_role_changed", _("Team member's role changed")
        INVITATION_SENT = "invitation_sent", _("Invitation sent")
        INVITATION_REVOKED = "invitation_revoked", _("Invitation revoked")
        PREREGISTRATION_VERSION = "preregistration_version", _("Pre-registration saved")
        ANSWER_CORRECTED = "answer_corrected", _("Answer corrected")
        TRANSCRIPT_REDACTED = "transcript_redacted", _("Transcript redacted")
        TRANSCRIPT_IMPORTED = "transcript_imported", _("Transcript imported")
        ANNOTATIONS_IMPORTED = "annotations_imported", _("Annotations imported")
        PARTICIPANT_ERASED = "participant_erased", _("Participant's data erased")
        WITHDRAWAL_PROCESSED = "withdrawal_processed", _("Withdrawal processed")
        PILOT_APPROVED = "pilot_approved", _("Pilot approved")
        PILOT_UNMARKED = "pilot_unmarked", _("Pilot mark removed")
        EXPORT_CREATED = "export_created", _("Export started")
        EXPORT_DOWNLOADED = "export_downloaded", _("Export downloaded")
        REPORT_CREATED = "report_created", _("Report requested")
        REPORT_DOWNLOADED = "report_downloaded", _("Report downloaded")
        # Each call made with a token, on the chain of the study it reads or changes.
        API_TOKEN_USED = "api_token_used", _("API token used")

    created_at = models.DateTimeField()
    # "site" or "study:<id>"; seq counts the rows of one chain from 1.
    chain = models.CharField(max_length=32)
    seq = models.PositiveBigIntegerField()
    study_id = models.BigIntegerField(null=True, blank=True)
    # Who acted, as they were then: the id and e-mail address of the moment.
    actor_id = models.BigIntegerField(null=True, blank=True)
    actor_label = models.CharField(max_length=254, blank=True)
    kind = models.CharField(max_length=40, choices=Kind.choices)
    target = models.CharField(max_length=254, blank=True)
    details = models.JSONField(default=dict, blank=True)
    previous_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        constraints = [
            # Two rows can never claim the same place in a chain, whatever the lock did.
            models.UniqueConstraint(fields=["chain", "seq"], name="audit_one_row_per_place"),
        ]
        indexes = [
            models.Index(fields=["chain", "created_at"], name="audit_chain_time"),
            models.Index(fields=["study_id"], name="audit_study"),
        ]

    def __str__(self) -> str:
        return f"{self.chain} #{self.seq} {self.kind}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnly("audit rows are never updated")
        # Never an UPDATE, not even of a row built with the id of another.
        kwargs.update(force_insert=True, force_update=False)
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("audit rows are never deleted")
