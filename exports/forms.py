from django import forms
from django.utils.translation import gettext_lazy as _

from exports.models import ExportJob
from exports.writers.spss import spss_available


def export_format_choices() -> list[tuple[str, str]]:
    formats = [
        choice for choice in ExportJob.Format.choices if choice[0] != ExportJob.Format.REPORT
    ]
    if not spss_available():
        spss = (ExportJob.Format.SAV, ExportJob.Format.SAV_TABLES)
        formats = [choice for choice in formats if choice[0] not in spss]
    return formats


class ExportForm(forms.Form):
    format = forms.ChoiceField(label=_("Format"), widget=forms.RadioSelect, choices=())
    include_pilot = forms.BooleanField(
        label=_("Include pilot sessions"),
        required=False,
        help_text=_("Pilot sessions are coordinator self-tests; they are marked pilot = 1."),
    )
    include_free_text = forms.BooleanField(
        label=_("Include free text (prompt texts, override reasons, transcripts)"),
        required=False,
        help_text=_(
            "Warning: free text is exported exactly as typed and can contain names or other "
            "details that identify a person. Read it before you share the file."
        ),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = export_format_choices()
        self.fields["format"].initial = ExportJob.Format.XLSX

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("format") in ExportJob.FREE_TEXT_FORMATS and not cleaned.get(
            "include_free_text"
        ):
            self.add_error(
                "include_free_text",
                _(
                    "The transcripts file is free text as a whole: tick “Include free text” to "
                    "export it."
                ),
            )
        return cleaned
