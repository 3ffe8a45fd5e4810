"""The sentences of the validation section in the report's language.

The analyses (scoring/) write their reasons, problems, verdicts and warnings
in English for the JSON, and keep beside each the template (marked with
gettext_noop) and its parameters: {"message": ..., "params": {...}}. `explain`
translates the template and fills it, the numbers written by scoring.web.numbers
in the active language under the rules of scoring.stats.caveats.written. The
method notes are plain English sentences marked for translation: `explain`
shows them in the report's language too. A group of the invariance analysis is
named by `group_label`, as the codebook labels the answer."""

from django import template
from django.conf import settings
from django.utils.translation import get_language, get_language_info, gettext, gettext_noop

from scoring.instruments.common import Option
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.stats.caveats import decimals
from scoring.web import numbers

register = template.Library()

# The heading over each grouping's invariance models: the demographic question
# by its topic, not its key ("age_band").
GROUPING_HEADINGS = {
    "language": gettext_noop("Across languages"),
    "age_band": gettext_noop("Across age bands"),
    "gender": gettext_noop("Across genders"),
    "education": gettext_noop("Across levels of education"),
    "first_language": gettext_noop("Across first languages"),
    "llm_use": gettext_noop("Across frequencies of LLM chat tool use"),
}
# The same groupings as a sentence names them ("groups of 100 or more evaluations by ...").
GROUPING_NOUNS = {
    "language": gettext_noop("language"),
    "age_band": gettext_noop("age band"),
    "gender": gettext_noop("gender"),
    "education": gettext_noop("education"),
    "first_language": gettext_noop("first language"),
    "llm_use": gettext_noop("use of LLM chat tools"),
}
# A demographic group is stored under the codebook's English label ("Female",
# validation.dataset); apart from the shared "Prefer not to say" the English
# labels of the demographics are distinct, so one label names one answer.
_OPTIONS_BY_ENGLISH = {
    option.label["en"]: option for question in DEMOGRAPHICS for option in question.options
}


def _option(label: str, grouping: str) -> Option | None:
    if grouping in DEMOGRAPHICS.keys:
        # A report stored before groups had labels holds the code ("1").
        for option in DEMOGRAPHICS.question(grouping).options:
            if label in (option.label["en"], str(option.code)):
                return option
        return None
    return _OPTIONS_BY_ENGLISH.get(label)


@register.filter
def group_label(label, grouping: str = "") -> str:
    """An invariance group in the report's language: a demographic answer by the
    codebook's label, a language by its name; any other label (a file's own) as it is."""
    text = str(label)
    if grouping in ("", "language") and text in dict(settings.LANGUAGES):
        return str(get_language_info(text)["name_translated"])
    option = _option(text, grouping)
    if option is None:
        return text
    return option.label_in((get_language() or "en").split("-")[0])


@register.filter
def grouping_heading(grouping: str) -> str:
    """ "Across genders"; a grouping of an answer file's own column by its name."""
    if grouping in GROUPING_HEADINGS:
        return gettext(GROUPING_HEADINGS[grouping])
    return gettext("Across %(grouping)s") % {"grouping": grouping}


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
    if key == "group":
        return group_label(value)
    if key == "grouping" and value in GROUPING_NOUNS:
        return gettext(GROUPING_NOUNS[value])
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
