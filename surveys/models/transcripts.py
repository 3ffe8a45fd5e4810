"""The transcript of a block: every turn of the exchange the participant rated.

A connected system's transcript is written by the built-in chat as it runs;
an external system's is imported by the experimenter after the block. Either
way it is one record per block (docs/design/systems.md §10), keyed for analysts by a
random code, exported as `transcript_id`, that is also a column of the
evaluation row.
"""

import secrets

from django.conf import settings
from django.db import models
from django.db.models.functions import Length, Substr
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from surveys.models.sessions import InteractionBlock, PromptEntry

# Crockford's base32 without the letters that read as digits: ids are read
# aloud and typed by annotators.
_ID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_transcript_id() -> str:
    """Random, not derived from any database id; unique by constraint."""
    return "T" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(11))


class Transcript(models.Model):
    class Source(models.TextChoices):
        CHAT = "chat", _("built-in chat")
        IMPORT = "import", _("imported")

    class Format(models.TextChoices):
        TEXT = "text", _("plain text (User: / Assistant: turns)")
        MARKDOWN = "markdown", _("Markdown")
        JSON = "json", _("JSON list of {role, content}")

    interaction = models.OneToOneField(
        InteractionBlock, on_delete=models.CASCADE, related_name="transcript"
    )
    # Exported as `transcript_id`: the key that joins annotations to ratings.
    code = models.CharField(max_length=12, unique=True, default=new_transcript_id)
    source = models.CharField(max_length=6, choices=Source.choices)
    import_format = models.CharField(max_length=8, choices=Format.choices, blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    imported_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Set while the system is answering a message of this block: one answer
    # in flight per session (docs/design/transcripts.md §10.3); cleared when it is stored.
    answer_pending_since = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.code


# A page shows this much of a turn and links to the rest: a model's answer
# may run to a million characters (connection_fields.DEFAULT_MAX_ANSWER_CHARS).
FOLD_CHARS = 20_000


class TurnQuerySet(models.QuerySet):
    def folded(self):
        """Turns as a page shows them: `shown` (the text up to FOLD_CHARS) and
        `text_length`, without reading a long text whole."""
        return self.defer("text").annotate(
            shown=Substr("text", 1, FOLD_CHARS), text_length=Length("text")
        )


class Turn(models.Model):
    """One turn; an error turn records a failed call to the system and its cause."""

    class Role(models.TextChoices):
        SYSTEM = "system", _("system prompt")
        USER = "user", _("user")
        ASSISTANT = "assistant", _("assistant")
        ERROR = "error", _("error")

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="turns")
    position = models.PositiveIntegerField()
    role = models.CharField(max_length=10, choices=Role.choices)
    text = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # Time to the first token and to the last, as the platform measured them.
    first_token_ms = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # As the API reported them (absent when it did not).
    model = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    error_cause = models.CharField(max_length=40, blank=True)
    # An answer or error turn: the user turn it answers, and the positions of
    # the turns sent to the system with that call (the system prompt, the
    # conversation, the message), so the transcript says exactly what the
    # model read.
    reply_to = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    sent_positions = models.JSONField(null=True, blank=True)
    # Control characters (NUL among them) taken out of the text before it was
    # stored: the database cannot hold NUL, and nothing may be lost silently.
    cleaned_chars = models.PositiveIntegerField(default=0)
    # A user turn tagged with the protocol's category is a prompt-log entry:
    # the log is derived from the transcript, never typed twice.
    prompt = models.OneToOneField(
        PromptEntry, on_delete=models.SET_NULL, null=True, blank=True, related_name="turn"
    )

    objects = TurnQuerySet.as_manager()

    class Meta:
        ordering = ["transcript", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "position"], name="one_turn_per_position"
            ),
            models.CheckConstraint(
                condition=models.Q(role="error") | models.Q(error_cause=""),
                name="only_error_turns_have_a_cause",
            ),
            models.CheckConstraint(
                condition=models.Q(prompt__isnull=True) | models.Q(role="user"),
                name="only_user_turns_are_prompts",
            ),
        ]

    def __str__(self) -> str:
        return f"turn {self.position} ({self.role}) of transcript {self.transcript_id}"


class TurnRedaction(models.Model):
    """Audit of a coordinator's redaction: who, when and why; never the old text."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="redactions")
    redacted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    redacted_at = models.DateTimeField(default=timezone.now)
    reason = models.TextField()

    class Meta:
        ordering = ["redacted_at"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(reason=""), name="redaction_has_a_reason")
        ]

    def __str__(self) -> str:
        return f"redaction of turn {self.turn_id}"
