"""The sentences of the validation section in the report's language.

The analyses (scoring/) write their reasons, problems, verdicts and warnings
in English for the JSON, and keep beside each the template (marked with
gettext_noop) and its parameters: {"message": ..., "params": {...}}. `explain`
translates the template and fills it, the numbers written by scoring.web.numbers
in the active language under the rules of scoring.stats.caveats.written."""

from django import template
from django.utils.translation import gettext

from scoring.stats.caveats import decimals
from scoring.web import numbers

register = template.Library()


def _param(key: str, value) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if key == "p":
            return numbers.p_statement(value)
        if key.startswith("delta"):
            return numbers.signed(value, 3)
        return numbers.fixed(value, decimals(value))
    if isinstance(value, dict):
        # A nested sentence (a fit's own problem inside a warning).
        found = [key for key in ("problem", "reason", "text") if value.get(key)]
        return explain(value, found[0] if found else "reason")
    # A word the catalogue knows ("the SHS") is translated; gettext("") would
    # return the catalogue's header, so an empty text stays empty.
    return gettext(value) if isinstance(value, str) and value else str(value or "")


@register.filter
def explain(value, fallback: str = "reason") -> str:
    """A {message, params} dict as its translated, filled sentence; a plain string
    (or, for a dict without a template, its `fallback` key) through gettext."""
    if isinstance(value, dict):
        message = value.get("message")
        if message:
            params = {key: _param(key, v) for key, v in (value.get("params") or {}).items()}
            translated = gettext(message)
            try:
                text = translated.format(**params)
            except (KeyError, IndexError, ValueError):
                # A translation that lost a placeholder: the English sentence, filled.
                translated, text = message, message.format(**params)
            # A sentence that opens with a filled-in name ("the SHS and ...") opens
            # with a capital, as the English text of the JSON does.
            return text[:1].upper() + text[1:] if translated.startswith("{") else text
        value = value.get(fallback)
    if not value:
        return ""
    return gettext(str(value))
