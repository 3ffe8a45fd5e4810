"""The form that creates a personal API token (docs/design/api.md §16.2)."""

from datetime import date, datetime, timedelta

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from api.models import ApiToken
from api.tokens import DEFAULT_LIFETIME, LONGEST_LIFETIME
from surveys.models import Study


def _default_expiry() -> date:
    return timezone.localdate() + DEFAULT_LIFETIME


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=80,
        help_text=_("What the token is for, so that you can tell your tokens apart."),
    )
    studies = forms.ModelMultipleChoiceField(
        label=_("Studies"),
        queryset=Study.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("The token reaches only these, and only while you are a member of them."),
        error_messages={
            # A study offered to nobody here is one the user is not a member of
            # (or a made-up id): say so, without saying whether it exists.
            "invalid_choice": _("Choose only studies you are a member of."),
        },
    )
    access = forms.ChoiceField(
        label=_("Access"),
        choices=ApiToken.Access.choices,
        initial=ApiToken.Access.READ,
        widget=forms.RadioSelect,
        help_text=_("Never more than your own role allows in each study."),
    )
    expires = forms.DateField(
        label=_("Expiry date"),
        initial=_default_expiry,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_(
            "At most 366 days from today. The token stops working on that day, "
            "at the time of day you create it."
        ),
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        studies = self.fields["studies"]
        assert isinstance(studies, forms.ModelMultipleChoiceField)
        # Checked again at every call (api/access.py); here so that nobody
        # names a study of which they are not a member.
        studies.queryset = Study.objects.filter(memberships__user=user).order_by("title", "pk")

    def clean_expires(self) -> date:
        expires = self.cleaned_data["expires"]
        today = timezone.localdate()
        if expires <= today:
            raise forms.ValidationError(_("Choose a day after today."))
        if expires > today + LONGEST_LIFETIME:
            raise forms.ValidationError(_("Choose a day at most 366 days from today."))
        return expires

    def expires_at(self) -> datetime:
        """The moment the token stops working: the chosen day, at this time of
        day, so that the default and the longest lifetime are exactly those of
        api/tokens.py."""
        days = (self.cleaned_data["expires"] - timezone.localdate()).days
        return timezone.now() + timedelta(days=days)
