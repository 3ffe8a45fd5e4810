"""Codes and checks of remote studies (docs/design.md §11): kept apart from the
study and session models so that those stay readable."""

import secrets
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.utils.translation import gettext_lazy as _

# Unambiguous characters for codes a person may read aloud or type (no 0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
COMPLETION_CODE_LENGTH = 10
CODE_PLACEHOLDER = "{code}"


def new_public_code() -> str:
    # 96 random bits, not derived from any id: the link names no study and
    # cannot be found by counting.
    return secrets.token_urlsafe(12)


def new_completion_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(COMPLETION_CODE_LENGTH))


def validate_completion_url(value: str) -> None:
    """An https URL; `{code}` (optional) is replaced by the completion code."""
    probe = value.replace(CODE_PLACEHOLDER, "CODE")
    URLValidator(schemes=["https"])(probe)
    if urlsplit(probe).username or urlsplit(probe).password:
        raise ValidationError(_("A completion URL may not hold a user name or password."))
    if "{" in probe or "}" in probe:
        raise ValidationError(_("The only placeholder a completion URL may hold is {code}."))


def completion_url_with(url: str, code: str) -> str:
    return url.replace(CODE_PLACEHOLDER, code)
