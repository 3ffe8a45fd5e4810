"""How the platform talks to a connected system's API (docs/design/systems.md §10.1):
kept apart from the system model so that it stays readable.

Real OpenAI-compatible servers differ in what they accept: OpenAI's reasoning
models refuse `max_tokens`, older Azure API versions and strict gateways
refuse `stream_options`, a local model at ten tokens a second needs minutes
for an answer that a hosted API sends in seconds. A preset fills these in for
the common servers; the coordinator can change each.
"""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

# Well above a long real answer (a 210 KB answer passes whole), far below
# what would exhaust a worker's memory.
DEFAULT_MAX_ANSWER_CHARS = 1_000_000


class ServerPreset(models.TextChoices):
    OPENAI = "openai", _("OpenAI")
    AZURE = "azure", _("Azure OpenAI")
    VLLM = "vllm", _("vLLM")
    LLAMACPP = "llamacpp", _("llama.cpp server")
    OLLAMA = "ollama", _("Ollama")
    GATEWAY = "gateway", _("OpenAI-compatible gateway (e.g. LiteLLM)")
    OTHER = "other", _("other OpenAI-compatible server")


class TokenParameter(models.TextChoices):
    MAX_TOKENS = "max_tokens", "max_tokens"
    MAX_COMPLETION_TOKENS = "max_completion_tokens", "max_completion_tokens"


class ConnectionFields(models.Model):
    """Request mapping and limits of a connected system."""

    ServerPreset = ServerPreset
    TokenParameter = TokenParameter

    server_preset = models.CharField(
        _("server"), max_length=10, choices=ServerPreset.choices, default=ServerPreset.OTHER
    )
    token_parameter = models.CharField(
        _("name of the answer-length parameter"),
        max_length=24,
        choices=TokenParameter.choices,
        default=TokenParameter.MAX_TOKENS,
    )
    stream_usage = models.BooleanField(
        _("ask for token usage in the stream (stream_options)"), default=True
    )
    extra_body = models.JSONField(_("extra request fields (JSON object)"), default=dict, blank=True)
    idle_timeout_seconds = models.PositiveIntegerField(
        _("longest wait between two pieces of an answer (seconds)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(3600)],
    )
    answer_timeout_seconds = models.PositiveIntegerField(
        _("longest time for a whole answer (seconds)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(3600)],
    )
    max_answer_chars = models.PositiveIntegerField(
        _("longest answer kept (characters)"),
        default=DEFAULT_MAX_ANSWER_CHARS,
        validators=[MinValueValidator(1000), MaxValueValidator(20_000_000)],
    )

    class Meta:
        abstract = True
