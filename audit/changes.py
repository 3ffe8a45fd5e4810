"""A settings form's changes as an audit row's details (docs/design/audit.md
§15.3): each changed field with its old and new value, except those whose
value the log must not keep (free text, a secret, or a name the guard in
audit.details refuses), which are listed by name only.

Read before the form is saved: a ModelForm's `initial` holds what the object
held when the page was posted, its `cleaned_data` what it will hold.
"""

from django import forms
from django.db import models, transaction

from audit.details import UnsafeDetails, checked_details
from audit.log import record

# Widgets whose fields hold prose or a secret, never a setting's value.
WITHOUT_VALUES = (forms.Textarea, forms.PasswordInput)


def form_changes(form: forms.BaseForm) -> dict:
    """{"fields": {name: {"old", "new"}}, "fields_without_values": [name]}
    for the fields of a valid form whose value changes; {} when none does."""
    values: dict = {}
    names_only: list[str] = []
    for name, field in form.fields.items():
        if name not in form.cleaned_data:
            continue
        old = _plain(form.get_initial_for_field(field, name))
        new = _plain(form.cleaned_data[name])
        if old == new or (old in (None, "") and new in (None, "")):
            continue
        change = {name: {"old": old, "new": new}}
        if isinstance(field.widget, WITHOUT_VALUES) or not _loggable(change):
            names_only.append(name)
        else:
            values.update(change)
    if not values and not names_only:
        return {}
    return {"fields": values, "fields_without_values": names_only}


def _loggable(change: dict) -> bool:
    try:
        checked_details(change)
    except UnsafeDetails:
        return False
    return True


def _plain(value):
    """Objects by their id, sets of them as sorted ids: what compares equal
    before and after a save compares equal here."""
    if isinstance(value, models.Model):
        return value.pk
    if isinstance(value, models.QuerySet):
        return sorted(value.values_list("pk", flat=True))
    if isinstance(value, list | tuple) and any(isinstance(item, models.Model) for item in value):
        return sorted(item.pk for item in value)
    if isinstance(value, list | tuple):
        return list(value)
    return value


def save_recording_changes(form: forms.ModelForm, kind: str, *, actor, study_id: int, target: str):
    """Save a settings form and, when it changed something, record one audit
    row listing the changes, in one transaction: a save that changes nothing
    is no action."""
    changes = form_changes(form)
    with transaction.atomic():
        saved = form.save()
        if changes:
            record(kind, actor=actor, study_id=study_id, target=target, details=changes)
    return saved
