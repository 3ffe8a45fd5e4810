"""The form a coordinator records an automated factuality result with
(docs/design/criterion.md §13.4)."""

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from criterion.models import AutomatedResult


class AutomatedResultForm(forms.ModelForm):
    """One system's result on one benchmark. Django's fields already refuse a NUL
    character in the texts and a score that is not a finite number; the form adds
    what the check constraint holds (a scale with max > min and the score on it,
    said about the field that is wrong) and a date that is not in the future."""

    class Meta:
        model = AutomatedResult
        fields = [
            "benchmark",
            "score",
            "scale_min",
            "scale_max",
            "higher_is_better",
            "measured_on",
            "source",
        ]
        widgets = {"measured_on": forms.DateInput(attrs={"type": "date"})}
        labels = {
            "benchmark": _("Benchmark (fixed task set)"),
            "score": _("Score"),
            "scale_min": _("Scale minimum"),
            "scale_max": _("Scale maximum"),
            "higher_is_better": _("Higher is better"),
            "measured_on": _("Date measured"),
            "source": _("Source (paper, leaderboard, own run)"),
        }
        help_texts = {
            "benchmark": _("The fixed task set the score was measured on, e.g. FActScore."),
            "higher_is_better": _("Untick for a scale on which lower is better (an error rate)."),
            "source": _("Where the score comes from: a paper, a leaderboard, your own run."),
        }

    def clean_measured_on(self):
        day = self.cleaned_data["measured_on"]
        # The platform's calendar day (settings.TIME_ZONE), as in every date it shows.
        if day > timezone.localdate():
            raise forms.ValidationError(_("The date is in the future."))
        return day

    def clean(self):
        data = super().clean()
        low, high, score = data.get("scale_min"), data.get("scale_max"), data.get("score")
        if low is None or high is None:
            return data
        if high <= low:
            self.add_error("scale_max", _("The scale maximum must be above its minimum."))
        elif score is not None and not low <= score <= high:
            self.add_error(
                "score",
                _("The score must lie on its scale, from %(min)s to %(max)s.")
                % {"min": low, "max": high},
            )
        return data
