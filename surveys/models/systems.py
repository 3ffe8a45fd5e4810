"""The LLM systems under test in a study (docs/design/systems.md §10.1)."""

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from surveys.models.connection_fields import ConnectionFields
from surveys.models.studies import Study, validate_env_name


class LLMSystem(ConnectionFields):
    """An LLM system under test in one study (paper Table 3).

    External systems are used in their own interface (the paper's design) and
    their transcripts are imported; connected systems are an OpenAI-compatible
    chat endpoint the platform calls from its built-in chat (docs/design/systems.md §10).
    The API key never enters the database: only the *name* of the environment
    variable that holds it.
    """

    class Kind(models.TextChoices):
        EXTERNAL = "external", _("external (its own interface; transcript imported)")
        CONNECTED = "connected", _("connected (built-in chat, OpenAI-compatible API)")

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="systems")
    kind = models.CharField(_("kind"), max_length=10, choices=Kind.choices, default=Kind.EXTERNAL)
    base_url = models.CharField(_("API base URL"), max_length=300, blank=True)
    model_name = models.CharField(_("model name (as the API knows it)"), max_length=200, blank=True)
    api_key_env = models.CharField(
        _("environment variable holding the API key"),
        max_length=100,
        blank=True,
        validators=[validate_env_name],
    )
    system_prompt = models.TextField(_("system prompt"), blank=True)
    temperature = models.FloatField(_("temperature"), null=True, blank=True)
    max_tokens = models.PositiveIntegerField(_("maximum tokens per answer"), null=True, blank=True)
    is_demo = models.BooleanField(_("demo model (not a real LLM)"), default=False)
    name = models.CharField(_("name"), max_length=100)
    vendor = models.CharField(_("vendor"), max_length=100, blank=True)
    model_version = models.CharField(_("model / version"), max_length=100, blank=True)
    access_mode = models.CharField(_("access mode"), max_length=200, blank=True)
    access_url = models.URLField(_("URL where participants reach it"), blank=True)
    collection_start = models.DateField(_("collection window start"), null=True, blank=True)
    collection_end = models.DateField(_("collection window end"), null=True, blank=True)
    active = models.BooleanField(_("active (receives new participants)"), default=True)

    class Meta:
        verbose_name = _("LLM system")
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="unique_system_name_per_study"),
            models.CheckConstraint(condition=~models.Q(name=""), name="system_name_not_empty"),
            models.CheckConstraint(
                condition=models.Q(kind="external")
                | (~models.Q(base_url="") & ~models.Q(model_name="")),
                name="connected_system_has_endpoint",
            ),
            models.CheckConstraint(
                condition=models.Q(temperature__isnull=True)
                | models.Q(temperature__gte=0, temperature__lte=2),
                name="system_temperature_in_range",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        if self.collection_start and self.collection_end:
            if self.collection_end < self.collection_start:
                raise ValidationError(
                    {"collection_end": _("The collection window ends before it starts.")}
                )
        if self.kind == self.Kind.CONNECTED:
            missing = {
                field: _("A connected system needs this.")
                for field in ("base_url", "model_name")
                if not getattr(self, field).strip()
            }
            if missing:
                raise ValidationError(missing)

    @property
    def is_connected(self) -> bool:
        return self.kind == self.Kind.CONNECTED
