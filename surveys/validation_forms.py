"""The study settings of the validation programme (docs/design/validation.md §14): which
companion scales follow the SHS, in which order, and the retest wave.

A mixin of the study form, kept apart so that the form stays readable.
"""

from django import forms
from django.conf import settings
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from scoring.instruments.companions import COMPANION_SCALES, missing_languages
from scoring.instruments.demographics import DEMOGRAPHICS
from surveys.models import Study
from surveys.models.validation_fields import INVARIANCE_GROUPINGS


def _position_field(number: int) -> str:
    return f"companion_scale_{number}"


class ValidationSettingsFields:
    """One choice per position (first, second, ...) of a companion scale, so that
    the order is the coordinator's without any script; and the retest interval."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        language = get_language() or "en"
        choices = [("", _("none"))] + [
            (key, scale.label_in(language)) for key, scale in COMPANION_SCALES.items()
        ]
        chosen = list(self.instance.companion_scales)
        for number in range(1, len(COMPANION_SCALES) + 1):
            self.fields[_position_field(number)] = forms.ChoiceField(
                label=_("Companion scale %(number)d after the SHS") % {"number": number},
                choices=choices,
                required=False,
                initial=chosen[number - 1] if number <= len(chosen) else "",
            )
        self.fields[_position_field(1)].help_text = _(
            "Given after the SHS of each block, in this order; the SHS always comes first, "
            "so that no other scale can prime it."
        )
        # The grouping is named by its demographic question, as the participant saw it.
        self.fields["invariance_grouping"].choices = [("", _("languages only"))] + [
            (key, DEMOGRAPHICS.question(key).text_in(language)) for key in INVARIANCE_GROUPINGS
        ]
        self.fields["invariance_grouping"].required = False

    def _posted_companion_scales(self) -> list[str] | None:
        """The scales in the order posted; None when the post has none of the fields
        (an older form, a script: the study keeps its scales)."""
        names = [_position_field(n) for n in range(1, len(COMPANION_SCALES) + 1)]
        if not any(name in self.data for name in names):
            return None
        chosen = [self.cleaned_data.get(name, "") for name in names]
        filled = [key for key in chosen if key]
        if chosen[: len(filled)] != filled:
            raise forms.ValidationError(
                _("Choose the companion scales from the first position on, without gaps.")
            )
        if len(set(filled)) != len(filled):
            raise forms.ValidationError(_("Choose each companion scale once."))
        return filled

    def clean(self):
        cleaned = super().clean()
        try:
            scales = self._posted_companion_scales()
        except forms.ValidationError as error:
            self.add_error(_position_field(1), error)
            return cleaned
        stored = list(self.instance.companion_scales)
        scales = stored if scales is None else scales
        # The instance holds the stored scales until the form is saved.
        if self.instance.pk and scales != stored and self.instance.sessions.counted().exists():
            self.add_error(
                _position_field(1),
                _(
                    "The companion scales cannot change: this study has sessions other than "
                    "pilots, and their data was collected with the current scales."
                ),
            )
        cleaned["companion_scales"] = scales
        self._check_scales_fit_languages(scales, changed=scales != stored)
        return cleaned

    def _check_scales_fit_languages(self, scales: list[str], *, changed: bool) -> None:
        # Activation checks this; an active study must not slip past it.
        if self.instance.status != Study.Status.ACTIVE:
            return
        languages = self.cleaned_data.get("languages") or self.instance.languages
        known = [key for key in scales if key in COMPANION_SCALES]
        names = dict(settings.LANGUAGES)
        for key, lacking in missing_languages(known, languages).items():
            self.add_error(
                _position_field(1) if changed else "languages",
                _(
                    "%(scale)s has no published wording in %(languages)s: the study is "
                    "active, so remove these languages or the scale."
                )
                % {
                    "scale": COMPANION_SCALES[key].label_in(get_language() or "en"),
                    "languages": ", ".join(str(names.get(code, code)) for code in lacking),
                },
            )

    def clean_retest_after_days(self):
        # Left out of a post (an older form, a script): the study keeps its value.
        if "retest_after_days" not in self.data:
            return self.instance.retest_after_days
        days = self.cleaned_data.get("retest_after_days")
        # Participants consented to the wave as described when they took part.
        changed = self.instance.pk and days != self.instance.retest_after_days
        if changed and self.instance.sessions.counted().exists():
            raise forms.ValidationError(
                _(
                    "The retest interval cannot change: this study has sessions other than "
                    "pilots, and their participants were told the current one."
                )
            )
        return days

    def clean_invariance_grouping(self):
        if "invariance_grouping" not in self.data:
            return self.instance.invariance_grouping
        return self.cleaned_data.get("invariance_grouping", "")

    def save(self, commit=True):
        self.instance.companion_scales = self.cleaned_data["companion_scales"]
        return super().save(commit=commit)
