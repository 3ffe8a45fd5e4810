from allauth.account.forms import AddEmailForm
from django import forms
from django.conf import settings
from django.contrib.auth import password_validation
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from surveys.models import ConsentText, Invitation, Study, StudyMembership, TaskText, User
from surveys.models.studies import MIN_INACTIVITY_MINUTES
from surveys.readiness import remote_systems_check
from surveys.steps import DEFAULT_TARGET_MINUTES, Step

# The system form lives with its presets (surveys/system_forms.py).
from surveys.system_forms import CONNECTION_FIELDS, LLMSystemForm  # noqa: F401
from surveys.validation_forms import ValidationSettingsFields


class StudyForm(ValidationSettingsFields, forms.ModelForm):
    """Study settings; the target minutes of every step appear as their own fields,
    the companion scales one field per position (surveys.validation_forms)."""

    languages = forms.MultipleChoiceField(
        label=_("Languages offered"),
        choices=settings.LANGUAGES,
        widget=forms.CheckboxSelectMultiple,
    )
    fluency_languages = forms.MultipleChoiceField(
        label=_("Eligibility: fluent in"),
        help_text=_(
            "The screening asks whether the person is fluent in one of these. "
            "None chosen: the languages offered."
        ),
        choices=settings.LANGUAGES,
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )

    class Meta:
        model = Study
        # The status changes on the study page, where activation is checked.
        fields = [
            "title",
            "slug",
            "description",
            "languages",
            "fluency_languages",
            "prompting_regime",
            "min_verified_prompts",
            "min_glatteis_prompts",
            # The protocol variant (docs/design/remote.md §11.5).
            "protocol",
            "min_turns",
            "min_minutes",
            "small_sample_evaluations",
            "speeding_seconds",
            "inactivity_timeout_minutes",
            "allow_pilot_sessions",
            "require_coordinator_mfa",
            "blind_system_names",
            "participant_time_hint",
            "mode",
            "completion_url",
            # Panel ids and quotas (docs/design/remote.md §11.6, §11.7).
            "panel_parameter",
            "panel_retention_days",
            "quota_per_system",
            "remote_hold_minutes",
            # The retest wave (docs/design/validation.md §14.2); the scales:
            # ValidationSettingsFields.
            "retest_after_days",
            "invariance_grouping",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "prompting_regime": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["mode"].required = False
        self.fields["panel_retention_days"].required = False
        self.fields["remote_hold_minutes"].required = False
        self.fields["remote_hold_minutes"].widget.attrs["min"] = 1
        # Left out of a post (an older form, a script): the study keeps its values.
        for name in ("protocol", "min_turns", "min_minutes"):
            self.fields[name].required = False
        # The browser refuses what the server would (clean_inactivity_timeout_minutes).
        self.fields["inactivity_timeout_minutes"].widget.attrs["min"] = MIN_INACTIVITY_MINUTES
        for step in DEFAULT_TARGET_MINUTES:
            self.fields[self._target_field(step)] = forms.IntegerField(
                label=_("Target minutes: %(step)s") % {"step": Step(step).label},
                min_value=1,
                max_value=240,
                initial=self.instance.target_minutes(step),
            )

    @staticmethod
    def _target_field(step: str) -> str:
        return f"target_{step}"

    def clean_min_verified_prompts(self):
        return self._check_minimum("min_verified_prompts")

    def clean_min_glatteis_prompts(self):
        return self._check_minimum("min_glatteis_prompts")

    def _check_minimum(self, name):
        value = self.cleaned_data[name]
        if value > 50:
            raise forms.ValidationError(_("At most 50 prompts per category."))
        return value

    def clean_mode(self):
        # Left out of a post (an older form, a script): the study keeps its mode.
        mode = self.cleaned_data.get("mode") or self.instance.mode
        if mode == Study.Mode.REMOTE and self.instance.status == Study.Status.ACTIVE:
            # Activation checks this; an active study must not slip past it.
            check = remote_systems_check(self.instance)
            if not check.ok:
                raise forms.ValidationError(f"{check.label}: {check.missing}")
        return mode

    def clean_panel_retention_days(self):
        # Left out of a post (an older form, a script): the study keeps its value.
        value = self.cleaned_data.get("panel_retention_days")
        return value or self.instance.panel_retention_days

    def clean_remote_hold_minutes(self):
        # Left out of a post (an older form, a script): the study keeps its value.
        # Only a missing value falls back: 0 is refused by the field's minimum.
        value = self.cleaned_data.get("remote_hold_minutes")
        return self.instance.remote_hold_minutes if value is None else value

    def clean_protocol(self):
        # Left out of a post: the study keeps its protocol.
        protocol = self.cleaned_data.get("protocol") or self.instance.protocol
        # The instance holds the stored protocol until the form is saved.
        changed = self.instance.pk and protocol != self.instance.protocol
        if changed and self.instance.sessions.counted().exists():
            raise forms.ValidationError(
                _(
                    "The protocol cannot change: this study has sessions other than pilots, "
                    "and their data was collected under the current protocol."
                )
            )
        return protocol

    def clean_min_turns(self):
        return _kept(self.cleaned_data.get("min_turns"), self.instance.min_turns)

    def clean_min_minutes(self):
        return _kept(self.cleaned_data.get("min_minutes"), self.instance.min_minutes)

    def clean_inactivity_timeout_minutes(self):
        value = self.cleaned_data["inactivity_timeout_minutes"]
        if value < MIN_INACTIVITY_MINUTES:
            raise forms.ValidationError(_("The inactivity timeout must be at least 10 minutes."))
        return value

    def save(self, commit=True):
        study = super().save(commit=False)
        study.step_targets = {
            step: self.cleaned_data[self._target_field(step)] for step in DEFAULT_TARGET_MINUTES
        }
        if commit:
            study.save()
        return study


def _kept(value, stored):
    return stored if value is None else value


class ConsentTextForm(forms.ModelForm):
    """The wording only: versions are numbered by the platform (surveys/consent.py)."""

    class Meta:
        model = ConsentText
        fields = ["information_sheet", "consent_text"]
        widgets = {
            "information_sheet": forms.Textarea(attrs={"rows": 8}),
            "consent_text": forms.Textarea(attrs={"rows": 4}),
        }


class TaskTextForm(forms.ModelForm):
    """The naturalistic task of one language (surveys/views/task_texts.py)."""

    class Meta:
        model = TaskText
        fields = ["text"]
        widgets = {"text": forms.Textarea(attrs={"rows": 6})}
        error_messages = {
            "text": {"required": _("Write the task participants read in this language.")}
        }


class InvitationForm(forms.Form):
    email = forms.EmailField(label=_("E-mail address"))
    role = forms.ChoiceField(
        label=_("Role"),
        choices=StudyMembership.Role.choices,
        initial=StudyMembership.Role.EXPERIMENTER,
    )

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        self.study = study

    def clean_email(self):
        email = self.cleaned_data["email"].strip().lower()
        if StudyMembership.objects.filter(study=self.study, user__email__iexact=email).exists():
            raise forms.ValidationError(_("This person is already a member of the study."))
        pending = [
            invitation
            for invitation in Invitation.objects.filter(
                study=self.study, email__iexact=email, accepted_at__isnull=True
            )
            # One whose e-mail never went out is replaced by inviting again.
            if invitation.is_usable and invitation.sent_at
        ]
        if pending:
            raise forms.ValidationError(
                _("An invitation to this address is still pending. Revoke it to send a new one.")
            )
        return email


class AcceptInvitationForm(forms.Form):
    """A new staff member sets their password when accepting an invitation."""

    password1 = forms.CharField(
        label=_("Password"), widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password2 = forms.CharField(
        label=_("Password (again)"),
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args, email: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.email = email

    def clean(self):
        cleaned = super().clean()
        first, second = cleaned.get("password1"), cleaned.get("password2")
        if first and second and first != second:
            raise forms.ValidationError(_("The two passwords differ."))
        if first:
            password_validation.validate_password(first, User(email=self.email))
        return cleaned


class StaffAddEmailForm(AddEmailForm):
    """allauth's form adding an address to one's account, refusing an address
    that a pending invitation was sent to: it joins only through that invitation."""

    def clean_email(self):
        email = super().clean_email()
        pending = Invitation.objects.filter(
            email__iexact=email, accepted_at__isnull=True, expires_at__gt=timezone.now()
        )
        if pending.exists():
            raise forms.ValidationError(
                _(
                    "This address has a pending invitation to a study; it can only be "
                    "used by accepting that invitation."
                )
            )
        return email
