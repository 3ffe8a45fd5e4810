import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from surveys.models.studies import ConsentText, Study
from surveys.models.systems import LLMSystem
from surveys.steps import ENDED, HOLDS_ALLOCATION, PARTICIPANT_STEPS, Step

# Unambiguous characters for codes a person may read aloud (no 0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


PARTICIPANT_CODE_LENGTH = 8  # after "P-"


def new_participant_code() -> str:
    return "P-" + "".join(secrets.choice(CODE_ALPHABET) for _ in range(PARTICIPANT_CODE_LENGTH))


def new_session_token() -> str:
    # 32 random bytes = 256 bits: session URLs cannot be guessed or enumerated.
    return secrets.token_urlsafe(32)


class Participant(models.Model):
    """A participant: a random code and nothing else about them (no name, e-mail or IP)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    code = models.CharField(max_length=12, unique=True, default=new_participant_code)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.code


class StudySessionQuerySet(models.QuerySet):
    def holding_allocation(self):
        """Sessions whose two systems count for the balance of the allocation."""
        return self.filter(step__in=HOLDS_ALLOCATION, is_pilot=False)

    def in_progress(self):
        return self.exclude(step__in=ENDED)

    def counted(self):
        """Sessions that enter counts, analyses and exports by default (pilot left out)."""
        return self.filter(is_pilot=False)


class StudySession(models.Model):
    """One supervised session: one participant, two systems, two SHS blocks.

    `step` is the single source of truth for where the session is; every
    request for the session is routed to the page of this step.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="sessions")
    participant = models.OneToOneField(
        Participant, on_delete=models.SET_NULL, null=True, blank=True, related_name="session"
    )
    # None for a remote session: the participant runs it alone (docs/design/remote.md §11).
    experimenter = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="run_sessions",
    )
    remote = models.BooleanField(_("remote"), default=False)
    # Given at completion of a remote session; an online panel checks it.
    completion_code = models.CharField(_("completion code"), max_length=16, blank=True)
    token = models.CharField(max_length=64, unique=True, default=new_session_token)
    language = models.CharField(_("language"), max_length=5, choices=settings.LANGUAGES)
    step = models.CharField(max_length=24, choices=Step.choices, default=Step.CONSENT)
    first_system = models.ForeignKey(
        LLMSystem, on_delete=models.PROTECT, related_name="+", verbose_name=_("system, block 1")
    )
    second_system = models.ForeignKey(
        LLMSystem, on_delete=models.PROTECT, related_name="+", verbose_name=_("system, block 2")
    )
    # Position of this allocation in the study's sequence (reproducibility).
    allocation_number = models.PositiveIntegerField()
    is_pilot = models.BooleanField(_("pilot session"), default=False)
    # An experimenter asks for a session to be a pilot; it counts until a
    # coordinator approves, so no real session leaves the analyses unseen.
    pilot_requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("pilot requested by"),
    )
    pilot_requested_at = models.DateTimeField(_("pilot requested at"), null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    step_entered_at = models.DateTimeField(default=timezone.now)
    last_activity_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)

    objects = StudySessionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(first_system=models.F("second_system")),
                name="two_distinct_systems",
            ),
            # Only a remote session runs without an experimenter.
            models.CheckConstraint(
                condition=models.Q(remote=True) | models.Q(experimenter__isnull=False),
                name="supervised_has_experimenter",
            ),
        ]
        indexes = [models.Index(fields=["study", "step"])]

    def __str__(self) -> str:
        return f"session {self.pk} ({self.get_step_display()})"

    @property
    def is_ended(self) -> bool:
        return self.step in ENDED

    @property
    def participant_holds_device(self) -> bool:
        # A remote participant acts on every step: there is no one else.
        return self.step in PARTICIPANT_STEPS or (self.remote and not self.is_ended)

    def system_for_block(self, block: int) -> LLMSystem:
        return self.first_system if block == 1 else self.second_system


class StepRecord(models.Model):
    """When a session entered and left a step, against the step's target."""

    session = models.ForeignKey(StudySession, on_delete=models.CASCADE, related_name="step_records")
    step = models.CharField(max_length=24, choices=Step.choices)
    entered_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)
    target_minutes = models.PositiveSmallIntegerField(null=True)

    class Meta:
        ordering = ["entered_at"]
        constraints = [
            models.UniqueConstraint(fields=["session", "step"], name="one_record_per_step")
        ]

    def __str__(self) -> str:
        return f"{self.step} of session {self.session_id}"

    @property
    def duration_seconds(self) -> float | None:
        if self.completed_at is None:
            return None
        return (self.completed_at - self.entered_at).total_seconds()

    @property
    def overran(self) -> bool:
        duration = self.duration_seconds
        return bool(duration and self.target_minutes and duration > self.target_minutes * 60)


class ConsentRecord(models.Model):
    """The participant consented to this version of the consent text.

    `version` and `language` are copied from the text, so the record reads the
    same without it; the text itself is kept (RESTRICT) for the printable record.
    A pilot session run before any text was written has no text.
    """

    session = models.OneToOneField(StudySession, on_delete=models.CASCADE, related_name="consent")
    consent_text = models.ForeignKey(
        ConsentText, on_delete=models.RESTRICT, null=True, blank=True, related_name="records"
    )
    version = models.CharField(max_length=40)
    language = models.CharField(max_length=5)
    consented_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"consent v{self.version} ({self.language}) of session {self.session_id}"


class InteractionBlock(models.Model):
    """One block's interaction with its system, and the prompt log."""

    session = models.ForeignKey(StudySession, on_delete=models.CASCADE, related_name="blocks")
    block = models.PositiveSmallIntegerField(choices=[(1, "1"), (2, "2")])
    system = models.ForeignKey(LLMSystem, on_delete=models.PROTECT, related_name="+")
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    # Set when the experimenter ended the block below the study minimum.
    override_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["block"]
        constraints = [
            models.UniqueConstraint(fields=["session", "block"], name="one_interaction_per_block")
        ]

    def __str__(self) -> str:
        return f"block {self.block} of session {self.session_id}"


class PromptEntry(models.Model):
    class Category(models.TextChoices):
        VERIFIED = "verified", _("Verified Knowledge")
        GLATTEIS = "glatteis", _("Glatteis (trap)")

    interaction = models.ForeignKey(
        InteractionBlock, on_delete=models.CASCADE, related_name="prompts"
    )
    category = models.CharField(_("category"), max_length=10, choices=Category.choices)
    text = models.TextField(_("prompt text (optional)"), blank=True)
    is_follow_up = models.BooleanField(_("follow-up"), default=False)
    is_source_request = models.BooleanField(_("source request"), default=False)
    is_challenge = models.BooleanField(_("challenge"), default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.get_category_display()} prompt {self.pk}"


class SessionErasure(models.Model):
    """A participant who had finished asked for their data to be deleted, and a
    coordinator did so (docs/design/protocol.md §4.8: withdrawal at any point). The participant's
    data is gone; this says who deleted it, when, and from which end state."""

    session = models.OneToOneField(StudySession, on_delete=models.CASCADE, related_name="erasure")
    step_before = models.CharField(max_length=24, choices=Step.choices)
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    erased_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"erasure of session {self.session_id}"
