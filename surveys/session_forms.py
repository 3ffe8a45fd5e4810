"""Forms of the session protocol. Questionnaire forms are built from the
instrument definitions in scoring.instruments, in the participant's language."""

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from scoring.instruments.common import Questionnaire
from scoring.instruments.eligibility import YES_NO, eligibility_criteria, is_eligible
from scoring.instruments.shs import ITEM_KEYS, ITEMS, SCALE
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


def shs_items_context(language: str, answers: dict, problems=()) -> list[dict]:
    """The SHS items ready for the template: text, options, saved answer, error."""
    errors = {problem.field: problem.message for problem in problems}
    return [
        {
            "key": item.key,
            "number": item.number,
            "text": item.text_in(language),
            "value": answers.get(item.key),
            "error": errors.get(item.key),
            "options": [(option.code, option.label_in(language)) for option in SCALE],
        }
        for item in ITEMS
    ]
