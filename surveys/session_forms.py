"""Forms of the session protocol. Questionnaire forms are built from the
instrument definitions in scoring.instruments, in the participant's language."""

import functools
from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from scoring.instruments.common import Questionnaire
from scoring.instruments.eligibility import YES_NO, eligibility_criteria, is_eligible
from scoring.instruments.shs import INSTRUMENT_VERSION, ITEM_KEYS, ITEMS, SCALE
from surveys.models import PromptEntry, Study


def questionnaire_form(questionnaire: Questionnaire, language: str, data=None) -> forms.Form:
    """A form with one required radio question per item of the questionnaire."""
    fields = {
        question.key: forms.TypedChoiceField(
            label=question.text_in(language),
            choices=question.choices(language),
            coerce=int,
            widget=forms.RadioSelect,
            error_messages={"required": _("Please choose an answer.")},
        )
        for question in questionnaire
    }
    form_class = type(f"{questionnaire.key.title()}Form", (forms.Form,), fields)
    return form_class(data=data)


class ConsentForm(forms.Form):
    consent = forms.BooleanField(required=False)
    # The fingerprint of the consent text shown (ConsentText.fingerprint).
    shown_text = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(
        self,
        *args,
        language: str,
        consent_statement: str,
        shown_text: str = "",
        fluency_languages=("de", "en"),
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.criteria = eligibility_criteria(fluency_languages)
        for criterion in self.criteria:
            self.fields[criterion.key] = forms.TypedChoiceField(
                label=criterion.text_in(language),
                choices=[(option.code, option.label_in(language)) for option in YES_NO],
                coerce=lambda value: bool(int(value)),
                widget=forms.RadioSelect,
                error_messages={"required": _("Please answer this question.")},
            )
        self.fields["consent"].label = consent_statement
        self.fields["shown_text"].initial = shown_text
        # Consent comes after the screening questions on the page.
        self.order_fields([c.key for c in self.criteria] + ["consent"])

    def clean(self):
        cleaned = super().clean()
        # An ineligible person is stopped whether or not they ticked consent;
        # an eligible one cannot go on without it.
        screened = all(criterion.key in cleaned for criterion in self.criteria)
        if screened and is_eligible(self.eligibility()) and not cleaned.get("consent"):
            self.add_error("consent", _("Consent is required to take part."))
        return cleaned

    def eligibility(self) -> dict[str, bool]:
        return {criterion.key: self.cleaned_data[criterion.key] for criterion in self.criteria}

    def screening_fields(self):
        return [self[criterion.key] for criterion in self.criteria]


class StartSessionForm(forms.Form):
    language = forms.ChoiceField(label=_("Participant's language"))
    is_pilot = forms.BooleanField(
        label=_("Pilot session (self-test, left out of analyses)"), required=False
    )

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        names = dict(settings.LANGUAGES)
        self.fields["language"].choices = [(code, names[code]) for code in study.languages]
        if not study.allow_pilot_sessions:
            del self.fields["is_pilot"]


class PromptForm(forms.Form):
    category = forms.ChoiceField(
        label=_("Category"), choices=PromptEntry.Category.choices, widget=forms.RadioSelect
    )
    text = forms.CharField(
        label=_("Prompt text (optional)"),
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    is_follow_up = forms.BooleanField(label=_("Follow-up"), required=False)
    is_source_request = forms.BooleanField(label=_("Source request"), required=False)
    is_challenge = forms.BooleanField(label=_("Challenge"), required=False)


class FinishInteractionForm(forms.Form):
    override_reason = forms.CharField(
        label=_("Reason for continuing below the minimum"),
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class CorrectionForm(forms.Form):
    item = forms.ChoiceField(label=_("Item"), choices=[(key, key.upper()) for key in ITEM_KEYS])
    new_value = forms.TypedChoiceField(
        label=_("Corrected answer"),
        choices=[(option.code, f"{option.code:+d} {option.label_in('en')}") for option in SCALE],
        coerce=int,
    )
    reason = forms.CharField(
        label=_("Reason"), max_length=1000, widget=forms.Textarea(attrs={"rows": 2})
    )


class ErasureForm(forms.Form):
    participant_code = forms.CharField(
        label=_("The participant's code, as they quoted it"), max_length=20
    )


# The SHS items as the participant's page shows them, built in Python rather
# than through the template language: ten items of five radios each were half
# the CPU of the page. What never changes between requests (the
# published wording, answer labels, ids) is built once per process and
# language; a request only picks the checked radio and the error variants.


@dataclass(frozen=True)
class _ItemHtml:
    key: str
    fieldset: tuple[str, str]  # opening tag: without, with the error class
    legend: str
    radios: tuple[tuple[int, str, str], ...]  # (code, unchecked, checked)
    error: str  # the error message shown under an unanswered item


@functools.cache
def _shs_items_html(language: str, instrument_version: str) -> tuple[_ItemHtml, ...]:
    # instrument_version is part of the key: a new version must never reuse
    # the wording of an old one.
    with translation.override(language):
        error = format_html(
            '\n    <div class="errors" role="alert">{}</div>', _("Please choose an answer.")
        )
    return tuple(_item_html(item, language, error) for item in ITEMS)


def _item_html(item, language: str, error: str) -> _ItemHtml:
    radio = (
        '\n      <label for="{0}_{1}"><input type="radio" id="{0}_{1}" name="{0}" value="{2}"'
        "{3} required> <span>{4}</span></label>"
    )
    return _ItemHtml(
        key=item.key,
        fieldset=tuple(
            format_html('\n  <fieldset class="question{}" id="fieldset-{}">', css, item.key)
            for css in ("", " has-errors")
        ),
        legend=format_html(
            '\n    <legend><span class="item-number">{}.</span> {}</legend>'
            '\n    <div class="likert" role="radiogroup">',
            item.number,
            item.text_in(language),
        ),
        radios=tuple(
            (
                option.code,
                *(
                    format_html(radio, item.key, n, option.code, checked, option.label_in(language))
                    for checked in ("", mark_safe(" checked"))
                ),
            )
            for n, option in enumerate(SCALE, start=1)
        ),
        error=error,
    )


def shs_fieldsets(language: str, answers: dict, problems=()) -> str:
    """The SHS items' fieldsets, with the saved answers checked and the
    unanswered items of a refused submission marked."""
    errors = {problem.field for problem in problems}
    parts: list[str] = []
    for item in _shs_items_html(language, INSTRUMENT_VERSION):
        value, has_error = answers.get(item.key), item.key in errors
        parts += (item.fieldset[has_error], item.legend)
        parts += (checked if value == code else plain for code, plain, checked in item.radios)
        parts += ("\n    </div>", item.error if has_error else "", "\n  </fieldset>")
    return mark_safe("".join(parts))


def companion_items(scale, language: str, given: dict, problems: dict) -> list[dict]:
    """A companion scale's items as its page shows them, with the answers of a
    refused form checked again and each problem (missing, invalid) marked."""
    return [
        {
            "key": item.key,
            "number": item.number,
            "text": item.text_in(language),
            "options": [
                (code, label, given.get(item.key) == str(code))
                for code, label in scale.choices(language)
            ],
            "problem": problems.get(item.key, ""),
        }
        for item in scale.items
    ]


def own_name(language: str) -> str:
    """The language's name in itself, capitalised as a choice stands alone."""
    return capfirst(translation.get_language_info(language)["name_local"])


class RemoteStartForm(forms.Form):
    """The public link's start: the participant picks the language of the study."""

    language = forms.ChoiceField(label=_("Language"), widget=forms.RadioSelect)

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        # Each language in its own name ("Français", not the browser's
        # "Französisch"): the participant looks for the one they read.
        self.fields["language"].choices = [(code, own_name(code)) for code in study.languages]
        if len(study.languages) == 1:
            self.fields["language"].initial = study.languages[0]


class ResumeForm(forms.Form):
    """Another device: the participant code shown at the start resumes the session."""

    code = forms.CharField(label=_("Your participant code"), max_length=40)
