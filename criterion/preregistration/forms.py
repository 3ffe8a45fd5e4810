"""The coordinator's form of the pre-registration (docs/design/criterion.md §13.1).

Its fields are the model's registered fields, with the model's ranges as the
browser's limits; the values are checked once more by the service, which is
what every other caller goes through too.
"""

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.forms.models import fields_for_model
from django.utils.translation import gettext_lazy as _

from criterion.models import REGISTERED_FIELDS, PreRegistration
from criterion.preregistration.services import validate_registration

# The paper's wording (section 8.2) beside the value it sets; where the paper
# names no value, the help says the default is the platform's.
HELP_TEXTS = {
    "h1_threshold": _(
        "H1 (paper 8.2): “Overall SHS correlates positively with factual-precision rate, "
        "r ≥ .40.” The paper's value is 0.40."
    ),
    "falsification_threshold": _(
        "Falsification criterion (paper 8.2): “If overall SHS fails to correlate with "
        "factual precision at r ≥ .20, the instrument does not measure what its name "
        "implies and should be renamed or restructured.” The paper's value is 0.20; it "
        "cannot exceed H1's threshold."
    ),
    "alpha": _(
        "The significance level of the tests of H1–H3, at least 0.0001 and below 0.5. The paper "
        "names none; 0.05 is the platform's default."
    ),
    "sidedness": _(
        "H1–H3 each predict a direction: a one-sided test follows the prediction. The "
        "paper names none; one-sided is the platform's default."
    ),
    "planned_n": _(
        "Paired design (paper 8.2): “Collect N ≥ 200 human–LLM interactions”, each rated "
        "with SHS by the participant. The paper's value is 200."
    ),
    "primary_analysis": _(
        "Each participant rates two systems, so their two evaluations are not "
        "independent: the clustered analysis resamples participants, not evaluations."
    ),
    "bootstrap_seed": _(
        "Fixes the bootstrap's random draws: anyone who re-runs the analysis gets the "
        "same intervals."
    ),
    "bootstrap_resamples": _("From 200 to 20 000; the platform's default is 2000."),
    "h3_predictor": _(
        "H3 asks whether what factual precision leaves unexplained follows how the output "
        "was presented. DP is one of the five dimensions of SHS, so its test compares the "
        "observed slope with the slope when factual precision carries no information; "
        "the stronger form needs annotators to rate each transcript's presentation "
        "(measure “presentation”, 0–1)."
    ),
    "text": _(
        "What the fields do not hold: how H2 and H3 are tested, exclusions, the "
        "annotation protocol. H2 (paper 8.2): “The Source Reliability dimension "
        "correlates more strongly with citation-support rate than does any other "
        "dimension.” H3: “The residual of SHS on factual precision is predicted by the "
        "Deceptiveness dimension—that is, users systematically over-rate systems whose "
        "errors are confidently framed.”"
    ),
}


def _with_model_limits(model_field, **kwargs):
    """The model's range validators as the form field's min and max, so the
    browser shows them and an out-of-range value fails before the service."""
    for validator in model_field.validators:
        if isinstance(validator, MinValueValidator):
            kwargs.setdefault("min_value", validator.limit_value)
        elif isinstance(validator, MaxValueValidator):
            kwargs.setdefault("max_value", validator.limit_value)
    return model_field.formfield(**kwargs)


class PreRegistrationForm(forms.Form):
    # The state of the registration the coordinator saw (see state_token): a
    # freeze in between re-shows the form with its warning instead of saving.
    seen = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields.update(
            fields_for_model(
                PreRegistration,
                fields=REGISTERED_FIELDS,
                help_texts=HELP_TEXTS,
                formfield_callback=_with_model_limits,
            )
        )
        self.fields["text"].widget.attrs["rows"] = 10
        self.registered: dict = {}

    def clean(self):
        cleaned = super().clean()
        if not self.errors:
            try:
                self.registered = validate_registration(
                    {name: cleaned[name] for name in REGISTERED_FIELDS}
                )
            except ValidationError as error:
                self.add_error(None, error)
        return cleaned


def state_token(current: PreRegistration | None, editable: bool) -> str:
    """What saving would do, as the page showed it: correct version N in place,
    or create the next one."""
    if current is None:
        return "new-1"
    return f"edit-{current.version}" if editable else f"new-{current.version + 1}"
