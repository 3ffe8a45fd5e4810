"""The protocol variant a study runs its interaction blocks under (docs/design/remote.md
§11.5): kept apart from the study model so that it stays readable."""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _


class Protocol(models.TextChoices):
    TWO_CATEGORY = "two_category", _("two-category (Verified Knowledge and Glatteis prompts)")
    NATURALISTIC = "naturalistic", _("naturalistic (a task, a minimum of turns and of minutes)")


PROTOCOL_LENGTH = 14


class ProtocolVariantFields(models.Model):
    """The study's protocol and what the naturalistic variant asks of a block."""

    Protocol = Protocol  # as Study.Protocol

    protocol = models.CharField(
        _("protocol"),
        max_length=PROTOCOL_LENGTH,
        choices=Protocol.choices,
        default=Protocol.TWO_CATEGORY,
        help_text=_("Cannot change once sessions other than pilots have started."),
    )
    # The task is written per language (TaskText, surveys/models/task_texts.py).
    min_turns = models.PositiveSmallIntegerField(
        _("minimum messages per block (naturalistic protocol)"),
        default=5,
        validators=[MaxValueValidator(200)],
    )
    min_minutes = models.PositiveSmallIntegerField(
        _("minimum minutes per block (naturalistic protocol)"),
        default=10,
        validators=[MaxValueValidator(120)],
        help_text=_("Counted from the moment the block opens."),
    )
    # Anyone holding a remote study's public link can send messages on the
    # study's paid key: a block's chat is bounded.
    chat_max_turns_per_block = models.PositiveSmallIntegerField(
        _("most messages a participant may send per block"),
        default=100,
        validators=[MinValueValidator(1), MaxValueValidator(1000)],
    )
    chat_max_chars_per_block = models.PositiveIntegerField(
        _("most characters a participant may send per block"),
        default=100_000,
        validators=[MinValueValidator(1000), MaxValueValidator(10_000_000)],
    )

    class Meta:
        abstract = True

    @property
    def is_naturalistic(self) -> bool:
        return self.protocol == Protocol.NATURALISTIC
