"""The coordinator's form for an LLM system under test (docs/design/systems.md §10.1):
what it is, and for a connected one how to reach its API."""

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.translation import gettext_lazy as _

from llm.endpoints import UnsafeEndpoint, check_base_url
from llm.keys import RefusedKeyVariable, check_key_variable
from surveys.llm_policy import call_policy, key_refusal_message, url_refusal_message
from surveys.models import LLMSystem, Study
from surveys.models.studies import validate_env_name
from surveys.system_presets import apply_preset, clean_extra_body

# The fields that only a connected system uses, shown together.
CONNECTION_FIELDS = (
    "base_url",
    "model_name",
    "api_key_env",
    "system_prompt",
    "temperature",
    "max_tokens",
    # How this server wants the request (surveys/system_presets.py).
    "server_preset",
    "token_parameter",
    "stream_usage",
    "extra_body",
    "idle_timeout_seconds",
    "answer_timeout_seconds",
    "max_answer_chars",
)


class LLMSystemForm(forms.ModelForm):
    """A system under test; a connected one also says how to reach its API (§10.1)."""

    access_url = forms.URLField(
        label=_("URL where participants reach it"), required=False, assume_scheme="https"
    )

    class Meta:
        model = LLMSystem
        fields = [
            "name",
            "vendor",
            "model_version",
            "access_mode",
            "access_url",
            "collection_start",
            "collection_end",
            "active",
            "kind",
            *CONNECTION_FIELDS,
        ]
        widgets = {
            "collection_start": forms.DateInput(attrs={"type": "date"}),
            "collection_end": forms.DateInput(attrs={"type": "date"}),
            "kind": forms.RadioSelect,
            "base_url": forms.TextInput(attrs={"placeholder": "https://api.example.org/v1"}),
            "system_prompt": forms.Textarea(attrs={"rows": 4}),
            "extra_body": forms.Textarea(attrs={"rows": 2, "placeholder": '{"top_p": 0.9}'}),
        }
        help_texts = {
            "base_url": _(
                "The OpenAI-compatible API's base URL, ending before /chat/completions. "
                "Only https, and no private network addresses."
            ),
            "model_name": _("The model as the API names it, e.g. gpt-4o or llama3.1:8b."),
            "api_key_env": _(
                "The API key stays in the server's environment: give only the NAME of the "
                "variable that holds it, never the key itself. The platform's operator decides "
                "which variables a study may use. Leave empty for a local server that needs no "
                "key."
            ),
            "system_prompt": _("Sent before every conversation; participants do not see it."),
            "temperature": _("From 0 to 2. Empty: the API's default."),
            "max_tokens": _("Empty: the API's default."),
            "server_preset": _(
                "Fills in the fields below that you leave alone with what this server is known "
                "to accept."
            ),
            "token_parameter": _(
                "OpenAI's newer models want max_completion_tokens; most other servers max_tokens."
            ),
            "stream_usage": _(
                "Off for servers that refuse stream_options (older Azure API versions, some "
                "gateways); the token counts are then not recorded."
            ),
            "extra_body": _(
                "Further fields sent with every request, e.g. top_p; at most 20, 2 KB. The "
                "conversation, streaming and the answer length are set by the platform."
            ),
            "idle_timeout_seconds": _("Empty: the platform's default."),
            "answer_timeout_seconds": _("Empty: the platform's default."),
        }

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.study = study
        # What the stored system's preset filled in counts as left alone (apply_preset).
        self.stored_preset = self.instance.server_preset if self.instance.pk else None
        # A form that says nothing about the kind describes an external system.
        self.fields["kind"].required = False
        # Left out of a post (an older form, a script): the system keeps its values.
        for name in _KEPT_WHEN_MISSING:
            self.fields[name].required = False
        # The API's own range; the database holds the same bounds.
        _bound(self.fields["temperature"], 0, 2, step="0.01")
        _bound(self.fields["max_tokens"], 1, 1_000_000, step="1")

    def clean_kind(self):
        return self.cleaned_data["kind"] or LLMSystem.Kind.EXTERNAL

    def _clean_kept(self, name: str):
        value = self.cleaned_data.get(name)
        return getattr(self.instance, name) if value in (None, "") else value

    def clean_server_preset(self):
        return self._clean_kept("server_preset")

    def clean_token_parameter(self):
        return self._clean_kept("token_parameter")

    def clean_max_answer_chars(self):
        return self._clean_kept("max_answer_chars")

    def description_fields(self) -> list:
        return [field for field in self if field.name not in CONNECTION_FIELDS]

    def connection_fields(self) -> list:
        return [field for field in self if field.name in CONNECTION_FIELDS]

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError(_("A system needs a name."))
        duplicate = LLMSystem.objects.filter(study=self.instance.study, name__iexact=name)
        if self.instance.pk:
            duplicate = duplicate.exclude(pk=self.instance.pk)
        if duplicate.exists():
            raise forms.ValidationError(_("This study already has a system with this name."))
        return name

    def clean_api_key_env(self):
        name = self.cleaned_data["api_key_env"].strip()
        try:
            validate_env_name(name) if name else None
        except forms.ValidationError:
            # Whatever was typed may be the key itself: never show it again.
            self.data = self.data.copy()
            self.data["api_key_env"] = ""
            raise
        if name:
            try:
                check_key_variable(name, self.instance.study.slug, policy=call_policy())
            except RefusedKeyVariable as refusal:
                # The same words whether the variable is set or not (llm/keys.py).
                raise forms.ValidationError(key_refusal_message(refusal)) from None
        return name

    def clean_extra_body(self):
        return clean_extra_body(self.cleaned_data.get("extra_body"))

    def clean(self):
        cleaned = super().clean()
        base_url = (cleaned.get("base_url") or "").strip()
        cleaned["base_url"] = base_url
        if cleaned.get("kind") == LLMSystem.Kind.CONNECTED and base_url:
            try:
                check_base_url(base_url, policy=call_policy())
            except UnsafeEndpoint as refusal:
                self.add_error("base_url", url_refusal_message(refusal))
        apply_preset(cleaned, previous=self.stored_preset)
        return cleaned


_KEPT_WHEN_MISSING = ("server_preset", "token_parameter", "max_answer_chars")


def _bound(field: forms.Field, lowest, highest, *, step: str) -> None:
    field.validators += [MinValueValidator(lowest), MaxValueValidator(highest)]
    field.widget.attrs.update(min=lowest, max=highest, step=step)
