"""A JSON body handed to a page's Django form (docs/design/api.md §16.1), so that
the API validates what the page validates, in the page's words.

The form gets what a browser would send from the page: the page's initial
value for each field the body leaves out (a browser submits a field as the
page filled it in), and one value per field, never a list or an object.
"""

from typing import NoReturn

from django import forms
from django.utils.translation import gettext as _
from rest_framework import serializers

from api.problems import Refused, field_errors


def bound_form(form_class, data, *, aliases: dict[str, str] | None = None, **options):
    """`form_class` bound to the JSON body `data`, or Refused if the body is not
    an object or a field holds a list or an object. `aliases` maps the API's
    name of a field to the form's ({"format": "fmt"})."""
    if not isinstance(data, dict):
        message = serializers.Serializer.default_error_messages["invalid"]
        _refuse([{"field": None, "message": str(message).format(datatype=type(data).__name__)}])
    blank = form_class(**options)
    values = {
        name: blank.get_initial_for_field(field, name) for name, field in blank.fields.items()
    }
    form_name = {_api_name(name, aliases): name for name in values}
    errors = []
    for api_name, value in data.items():
        if api_name not in form_name:
            continue  # as a page ignores a field it does not have
        if isinstance(value, list | dict):
            errors.append(
                {"field": api_name, "message": _("Enter a single value, not a list or an object.")}
            )
        values[form_name[api_name]] = value
    if errors:
        _refuse(errors)
    return form_class(values, **options)


def refuse_form(form: forms.BaseForm, *, aliases: dict[str, str] | None = None) -> NoReturn:
    """Refused, each of the form's errors named by the API's name of its field."""
    errors = field_errors(form.errors)
    for entry in errors:
        if entry["field"] is not None:
            entry["field"] = _api_name(entry["field"], aliases)
    _refuse(errors)


def _api_name(name: str, aliases: dict[str, str] | None) -> str:
    return next((api for api, form in (aliases or {}).items() if form == name), name)


def _refuse(errors: list[dict]) -> NoReturn:
    raise Refused(_("Nothing was stored: the request has errors."), errors=errors)
