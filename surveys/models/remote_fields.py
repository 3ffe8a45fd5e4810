"""Codes and checks of remote studies (docs/design/remote.md §11): kept apart from the
study and session models so that those stay readable."""

import re
import secrets
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models
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


# -- panel ids and quotas (docs/design/remote.md §11.6, §11.7) ----------------------

PANEL_PARAMETER = re.compile(r"^[A-Za-z0-9_-]{1,40}\Z")
PANEL_ID_MAX_LENGTH = 100
# Panels' ids are letters, digits and a few separators (Prolific: 24 hex
# digits; others: e-mail-like or dashed ids); no spaces, no control characters,
# and a letter or digit first, so that no id reads as a spreadsheet formula.
PANEL_ID = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_.@:+-]{{0,{PANEL_ID_MAX_LENGTH - 1}}}\Z")


def validate_panel_parameter(value: str) -> None:
    if not PANEL_PARAMETER.match(value):
        raise ValidationError(_("A query parameter name: at most 40 letters, digits, “_” or “-”."))


def panel_id_or_none(value: str | None) -> str | None:
    """The panel id as given in the link, or None if it is missing or malformed."""
    if value and PANEL_ID.match(value):
        return value
    return None


def panel_parameter_field():
    return models.CharField(
        _("panel id parameter (remote studies)"),
        max_length=40,
        blank=True,
        validators=[validate_panel_parameter],
        help_text=_(
            "The query parameter of the public link that carries the panel's participant id "
            "(e.g. PROLIFIC_PID). Empty: no panel ids are kept."
        ),
    )


def panel_retention_days_field():
    return models.PositiveIntegerField(
        _("keep panel ids for (days)"),
        default=30,
        validators=[MinValueValidator(1), MaxValueValidator(365)],
        help_text=_("Panel ids are deleted automatically after this many days."),
    )


def remote_hold_minutes_field():
    # Shorter than the inactivity timeout on purpose: a panel link opened and
    # left should not keep a quota place for the hour and a half it takes to
    # be marked abandoned (docs/design/remote.md §11.7).
    return models.PositiveIntegerField(
        _("minutes an unfinished remote session keeps its place"),
        default=30,
        validators=[MinValueValidator(1), MaxValueValidator(1440)],
        help_text=_(
            "With a quota, a remote session without activity for this many minutes no "
            "longer takes a place; it may still finish if the participant comes back."
        ),
    )


def quota_per_system_field():
    return models.PositiveIntegerField(
        _("quota: completed sessions per system"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(100_000)],
        help_text=_(
            "A system is no longer assigned once it has this many completed or running "
            "sessions; the study is full when every system has. Empty: no quota."
        ),
    )
