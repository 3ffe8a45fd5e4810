"""Errors as problem details (RFC 9457): every refusal of the API is a JSON
object with `type`, `title`, `status` and `detail`, and, where input was
refused, `errors`: one entry per field or row, worded as the pages word it.

Nothing is half done on a refusal: the views validate everything before they
store anything, as the pages do.
"""

from http import HTTPStatus

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

CONTENT_TYPE = "application/problem+json"
# No page documents each kind of problem: "about:blank" says the status says it all.
ABOUT_BLANK = "about:blank"


class Refused(exceptions.APIException):
    """Input refused as a whole: `errors` name each field or row and say why."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "refused"

    def __init__(self, detail: str, errors: list[dict] | None = None, status_code: int = 400):
        super().__init__(detail)
        self.errors = errors or []
        self.status_code = status_code


def field_errors(form_errors) -> list[dict]:
    """A Django form's errors (form.errors), one entry per message, with the field
    named (`null` for the form as a whole), in the form's own words."""
    return [
        {"field": None if field == "__all__" else field, "message": str(message)}
        for field, messages in form_errors.items()
        for message in messages
    ]


def problem(status_code: int, detail: str, errors: list[dict] | None = None, headers=None):
    body = {
        "type": ABOUT_BLANK,
        "title": HTTPStatus(status_code).phrase,
        "status": status_code,
        "detail": detail,
    }
    if errors:
        body["errors"] = errors
    return Response(body, status=status_code, content_type=CONTENT_TYPE, headers=headers)


def problem_handler(exc, context):
    """DRF's exception handler, its answers rewritten as problem details."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(_("Not found, or not yours to see."))
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None:
        return None  # an error of ours: Django's 500 page and the error log
    errors = getattr(exc, "errors", None)
    if errors is None and isinstance(exc, exceptions.ValidationError):
        errors = _validation_errors(exc.detail)
    detail = _detail_text(exc)
    headers = {name: value for name, value in response.items() if name != "Content-Type"}
    return problem(response.status_code, detail, errors, headers=headers)


def _detail_text(exc) -> str:
    if isinstance(exc, exceptions.ValidationError):
        return _("Nothing was stored: the request has errors.")
    return str(exc.detail)


def _validation_errors(detail, field=None) -> list[dict]:
    if isinstance(detail, dict):
        return [
            entry
            for key, value in detail.items()
            for entry in _validation_errors(value, None if key == "non_field_errors" else key)
        ]
    if isinstance(detail, list):
        return [entry for value in detail for entry in _validation_errors(value, field)]
    return [{"field": field, "message": str(detail)}]
