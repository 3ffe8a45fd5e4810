"""The calculator's form: the ten SHS items as radio groups, all required."""

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from scoring.instruments.shs import ITEM_KEYS, ITEMS, SCALE


class CalculatorForm(forms.Form):
    """One SHS administration; item text and answer labels in the instrument language."""

    def __init__(self, *args: Any, language: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.language = language
        choices = [(option.code, option.label_in(language)) for option in SCALE]
        for item in ITEMS:
            self.fields[item.key] = forms.TypedChoiceField(
                label=item.text_in(language),
                choices=choices,
                coerce=int,
                widget=forms.RadioSelect,
                error_messages={
                    "required": _("Please choose an answer for this item."),
                    "invalid_choice": _("Please choose one of the five answers."),
                },
            )

    @property
    def item_fields(self) -> list[forms.BoundField]:
        return [self[key] for key in ITEM_KEYS]

    def answers(self) -> tuple[int, ...]:
        return tuple(self.cleaned_data[key] for key in ITEM_KEYS)
