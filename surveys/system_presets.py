"""What a server preset fills in on the system form, and which extra request
fields a coordinator may add (docs/design/systems.md §10.1).

The presets hold what each kind of server is known to accept: OpenAI's newer
models refuse `max_tokens`; older Azure API versions and LiteLLM-style
gateways refuse `stream_options`; a local model on a lab GPU may think for
two minutes before its first token, where a hosted API answers in seconds.
"""

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from surveys.models.connection_fields import ServerPreset, TokenParameter

# Hosted APIs answer quickly, but a reasoning model may think a minute first.
_HOSTED = {"idle_timeout_seconds": 60, "answer_timeout_seconds": 300}
# A local model at ten tokens a second: a long wait, and minutes per answer.
_LOCAL = {"idle_timeout_seconds": 120, "answer_timeout_seconds": 600}
_LOCAL_SERVER = {
    "token_parameter": TokenParameter.MAX_TOKENS,
    "stream_usage": True,
    **_LOCAL,
}

PRESETS: dict[str, dict] = {
    ServerPreset.OPENAI: {
        "token_parameter": TokenParameter.MAX_COMPLETION_TOKENS,
        "stream_usage": True,
        **_HOSTED,
    },
    ServerPreset.AZURE: {
        "token_parameter": TokenParameter.MAX_TOKENS,
        "stream_usage": False,
        **_HOSTED,
    },
    ServerPreset.VLLM: _LOCAL_SERVER,
    ServerPreset.LLAMACPP: _LOCAL_SERVER,
    ServerPreset.OLLAMA: _LOCAL_SERVER,
    # A gateway may front a local model: the local waits.
    ServerPreset.GATEWAY: {
        "token_parameter": TokenParameter.MAX_TOKENS,
        "stream_usage": False,
        **_LOCAL,
    },
    ServerPreset.OTHER: {},
}

# A field at its model default counts as left alone.
FIELD_DEFAULTS = {
    "token_parameter": TokenParameter.MAX_TOKENS,
    "stream_usage": True,
    "idle_timeout_seconds": None,
    "answer_timeout_seconds": None,
}


def apply_preset(cleaned: dict, *, previous: str | None) -> None:
    """Give each field the coordinator left alone the chosen preset's value.

    Only when the preset is new (a new system, or another server chosen): a
    field then counts as left alone when it holds its default or what the
    previous preset had put there; a value typed by hand is kept."""
    preset = cleaned.get("server_preset")
    if not preset or preset == previous:
        return
    before = PRESETS.get(previous, {}) if previous else {}
    for name, value in PRESETS.get(preset, {}).items():
        if name not in cleaned:
            continue  # refused by its own validation: its error stays
        left_alone = cleaned[name] == FIELD_DEFAULTS[name]
        if left_alone or (name in before and cleaned[name] == before[name]):
            cleaned[name] = value


# What the platform itself sends: extra fields must not change the protocol
# of the call (the conversation, streaming, the answer's length), which the
# transcript records as the platform sent it.
RESERVED_FIELDS = frozenset(
    {"model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "n"}
)
EXTRA_BODY_MAX_BYTES = 2048
EXTRA_BODY_MAX_KEYS = 20


def clean_extra_body(value) -> dict:
    """The extra request fields as a dict, or a ValidationError saying what is wrong."""
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise forms.ValidationError(
            _('Give a JSON object, e.g. {"top_p": 0.9}, or leave the field empty.')
        )
    if len(value) > EXTRA_BODY_MAX_KEYS:
        raise forms.ValidationError(
            _("At most %(count)d extra fields.") % {"count": EXTRA_BODY_MAX_KEYS}
        )
    reserved = sorted(RESERVED_FIELDS.intersection(value))
    if reserved:
        raise forms.ValidationError(
            _("The platform sets %(fields)s itself; remove them here.")
            % {"fields": ", ".join(reserved)}
        )
    if len(json.dumps(value, ensure_ascii=False).encode()) > EXTRA_BODY_MAX_BYTES:
        raise forms.ValidationError(
            _("The extra fields may take at most %(bytes)d bytes as JSON.")
            % {"bytes": EXTRA_BODY_MAX_BYTES}
        )
    return value
