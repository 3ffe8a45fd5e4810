import hashlib
import re
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from scoring.scores.quality import DEFAULT_SPEEDING_SECONDS
from surveys.models.protocol_fields import ProtocolVariantFields
from surveys.models.remote_fields import (
    new_public_code,
    panel_parameter_field,
    panel_retention_days_field,
    quota_per_system_field,
    remote_hold_minutes_field,
    validate_completion_url,
)
from surveys.models.validation_fields import ValidationFields
from surveys.steps import DEFAULT_TARGET_MINUTES, TIMED_STEPS

LANGUAGE_CODES = [code for code, _name in settings.LANGUAGES]
MIN_INACTIVITY_MINUTES = 10


def new_random_seed() -> int:
    return secrets.randbits(31)


def validate_single_line(value: str) -> None:
    """A title goes into e-mail subjects and table cells: one line, no breaks."""
    if value.splitlines() not in ([], [value]):
        raise ValidationError(_("Use a single line, without line breaks."), code="line_break")


# The protocol variant: docs/design/remote.md §11.5; the validation programme:
# docs/design/validation.md §14.
class Study(ProtocolVariantFields, ValidationFields):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        ACTIVE = "active", _("Active")
        CLOSED = "closed", _("Closed")

    class Mode(models.TextChoices):
        SUPERVISED = "supervised", _("supervised (an experimenter runs each session)")
        REMOTE = "remote", _("remote (participants take part from a public link)")

    title = models.CharField(_("title"), max_length=200, validators=[validate_single_line])
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    description = models.TextField(_("description"), blank=True)
    languages = models.JSONField(
        _("languages offered"),
        default=list,
        help_text=_("Languages in which participants may take part."),
    )
    fluency_languages = models.JSONField(
        _("eligibility: languages a participant must be fluent in"),
        default=list,
        blank=True,
        help_text=_(
            "The screening asks whether the person is fluent in one of these. "
            "None chosen: the languages offered."
        ),
    )
    random_seed = models.BigIntegerField(
        _("random seed"),
        default=new_random_seed,
        help_text=_("Makes the allocation of systems reproducible."),
    )
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.DRAFT
    )
    prompting_regime = models.TextField(
        _("prompting regime"),
        default=(
            "Supervised two-category prompt protocol (Verified Knowledge / Glatteis), "
            "designed to elicit hallucination-prone behaviour."
        ),
        help_text=_("Stated next to every score in reports and exports."),
    )
    min_verified_prompts = models.PositiveSmallIntegerField(
        _("minimum Verified Knowledge prompts per block"), default=3
    )
    min_glatteis_prompts = models.PositiveSmallIntegerField(
        _("minimum Glatteis prompts per block"), default=3
    )
    # The paper's recipe asks for at least 30 users; below this the report and
    # the analysis print a caution next to alpha, correlations and normality tests.
    small_sample_evaluations = models.PositiveIntegerField(
        _("small-sample threshold (evaluations)"),
        default=30,
        validators=[MinValueValidator(1), MaxValueValidator(100_000)],
        help_text=_(
            "Below this many evaluations, reliability, correlations and normality tests "
            "are shown with a caution."
        ),
    )
    # An SHS submitted faster than this is flagged "speeding" in exports and the
    # report (docs/design/analysis.md §8.10); the default allows 2 s per item.
    speeding_seconds = models.PositiveSmallIntegerField(
        _("speeding threshold (seconds per SHS form)"),
        default=DEFAULT_SPEEDING_SECONDS,
        validators=[MaxValueValidator(600)],
        help_text=_(
            "An SHS form submitted in fewer seconds than this is flagged as speeding in "
            "exports and the study report (0 turns the flag off)."
        ),
    )
    step_targets = models.JSONField(
        _("target minutes per step"),
        default=dict,
        blank=True,
        help_text=_("Steps not listed use the protocol's default target."),
    )
    # A session idle this long is abandoned (docs/design/protocol.md §4.1): a
    # timeout of 0 would abandon every session at the next sweep.
    inactivity_timeout_minutes = models.PositiveIntegerField(
        _("inactivity timeout (minutes)"),
        default=90,
        validators=[
            MinValueValidator(
                MIN_INACTIVITY_MINUTES,
                _("The inactivity timeout must be at least 10 minutes."),
            )
        ],
    )
    allow_pilot_sessions = models.BooleanField(_("pilot sessions allowed"), default=True)
    require_coordinator_mfa = models.BooleanField(
        _("coordinators must use a second factor (TOTP)"), default=False
    )
    blind_system_names = models.BooleanField(
        _("show systems to participants as “System A” and “System B”"),
        default=False,
        help_text=_("A and B follow the block order; the experimenter still sees the real names."),
    )
    participant_time_hint = models.BooleanField(
        _("show participants a neutral “about N minutes” hint"),
        default=False,
        help_text=_("Participants never see a countdown or an overrun warning."),
    )
    # Remote studies (docs/design/remote.md §11).
    mode = models.CharField(_("mode"), max_length=10, choices=Mode.choices, default=Mode.SUPERVISED)
    public_code = models.CharField(max_length=32, unique=True, default=new_public_code)
    completion_url = models.CharField(
        _("completion URL (remote studies)"),
        max_length=500,
        blank=True,
        validators=[validate_completion_url],
        help_text=_(
            "Where the end page sends the participant, e.g. an online panel's completion "
            "page; {code} is replaced by the completion code. https only."
        ),
    )
    # Panel ids and quotas (docs/design/remote.md §11.6, §11.7).
    panel_parameter = panel_parameter_field()
    panel_retention_days = panel_retention_days_field()
    quota_per_system = quota_per_system_field()
    remote_hold_minutes = remote_hold_minutes_field()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("study")
        verbose_name_plural = _("studies")
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    def clean(self):
        if not self.languages:
            raise ValidationError({"languages": _("Offer at least one language.")})
        for name in ("languages", "fluency_languages"):
            unknown = [code for code in getattr(self, name) if code not in LANGUAGE_CODES]
            if unknown:
                raise ValidationError(
                    {name: _("Unknown language code(s): %s") % ", ".join(unknown)}
                )
        bad_steps = [key for key in self.step_targets if key not in TIMED_STEPS]
        if bad_steps:
            raise ValidationError({"step_targets": _("Unknown step(s): %s") % bad_steps})

    @property
    def is_remote(self) -> bool:
        return self.mode == self.Mode.REMOTE

    @property
    def eligibility_languages(self) -> list[str]:
        """The languages of the screening question on fluency (paper: German or English)."""
        return list(self.fluency_languages or self.languages)

    def target_minutes(self, step: str) -> int | None:
        if step not in DEFAULT_TARGET_MINUTES:
            return None
        return int(self.step_targets.get(step, DEFAULT_TARGET_MINUTES[step]))


FIRST_CONSENT_VERSION = "1.0"
_NUMBERED_VERSION = re.compile(r"^(\d+)\.(\d+)$")


def next_consent_version(version: str) -> str:
    """The version after `version`: 1.0 -> 1.1 -> 1.2 (a revised wording is a minor step).

    Versions written by hand before versions were numbered (e.g. "2024-03")
    continue as "2024-03.1".
    """
    numbered = _NUMBERED_VERSION.match(version)
    if numbered:
        return f"{numbered[1]}.{int(numbered[2]) + 1}"
    return f"{version}.1"


class ConsentTextInUse(Exception):
    """A participant consented to this version: its wording can no longer change."""


class ConsentText(models.Model):
    """One version of the information sheet and consent text of a language.

    A version is immutable once someone consented to it: revising its wording
    creates the next version (surveys/consent.py), and the participant's
    ConsentRecord keeps pointing at the words they agreed to. The newest
    version of a language is the one shown to participants.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="consent_texts")
    language = models.CharField(_("language"), max_length=5, choices=settings.LANGUAGES)
    version = models.CharField(_("version"), max_length=40, default=FIRST_CONSENT_VERSION)
    information_sheet = models.TextField(_("information sheet"))
    consent_text = models.TextField(_("consent statement"))
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["language", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "language", "version"], name="unique_consent_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.study} [{self.language}] v{self.version}"

    def save(self, *args, **kwargs):
        # The last line of defence (admin, shell): the service never gets here
        # with a consented version, it creates the next one instead.
        if self.pk and self.records.exists():
            stored = ConsentText.objects.get(pk=self.pk)
            if self.wording != stored.wording or self.version != stored.version:
                raise ConsentTextInUse(str(stored))
        super().save(*args, **kwargs)

    @property
    def wording(self) -> tuple[str, str]:
        return (self.information_sheet, self.consent_text)

    @property
    def fingerprint(self) -> str:
        """Names this version and its exact wording; the consent page posts it back,
        so a consent is recorded only for the words that were on the screen."""
        digest = hashlib.sha256("\x00".join(self.wording).encode()).hexdigest()[:16]
        return f"{self.pk}:{digest}"

    @classmethod
    def current(cls, study_id: int, language: str) -> "ConsentText | None":
        """The version participants are shown now (the newest of the language)."""
        return cls.objects.filter(study_id=study_id, language=language).order_by("-pk").first()


# Here, not beside LLMSystem: migrations name it by this module.
def validate_env_name(value: str) -> None:
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", value):
        raise ValidationError(
            _("Give the name of an environment variable (capitals, digits, underscores), "
              "never the key itself.")
        )  # fmt: skip


class StudyMembership(models.Model):
    class Role(models.TextChoices):
        COORDINATOR = "coordinator", _("Coordinator")
        EXPERIMENTER = "experimenter", _("Experimenter")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(_("role"), max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "study"], name="one_membership_per_study")
        ]

    def __str__(self) -> str:
        return f"{self.user} – {self.study} ({self.role})"


def hash_token(raw_token: str) -> str:
    return hashlib.sha256(raw_token.encode()).hexdigest()


class Invitation(models.Model):
    """A coordinator's invitation to join a study; the link carries a one-time token.

    Only the token's hash is stored, so a database dump does not contain
    working invitation links.
    """

    VALID_FOR = timedelta(days=7)

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(_("e-mail address"))
    role = models.CharField(
        max_length=20,
        choices=StudyMembership.Role.choices,
        default=StudyMembership.Role.EXPERIMENTER,
    )
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    # The e-mail goes out from a task after the invitation is committed
    # (surveys/invitations.py): `sent_at` is empty until it has gone out, and
    # `send_failed_at` says the last try failed (the mail server refused or could
    # not be reached, or the task could not be queued). The coordinator sees
    # both and sends it again. The error itself is only logged: it may hold addresses.
    sent_at = models.DateTimeField(null=True, blank=True)
    send_failed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} → {self.study}"

    @property
    def is_expired(self) -> bool:
        return timezone.now() >= self.expires_at

    @property
    def is_usable(self) -> bool:
        return self.accepted_at is None and not self.is_expired

    @classmethod
    def find_by_token(cls, raw_token: str):
        return cls.objects.select_related("study").filter(token_hash=hash_token(raw_token)).first()
