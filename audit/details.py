"""What an audit row may hold (docs/design/audit.md §15.3): names, ids, settings
and their old and new values, but never a secret, a participant's answer or
free text. The log is shown to coordinators and handed to ethics boards, and
it is never deleted: whatever it holds stays.

The guard refuses rather than trims: a caller that passes a password or a
paragraph is a bug to fix, and a test of that action shows it.
"""

import re
from datetime import date, datetime
from decimal import Decimal

# Keys that name a secret, at any depth of the details.
SECRET_KEY = re.compile(
    r"passw|passphrase|passcode|token|secret|api[_-]?key|private[_-]?key|credential"
    r"|signature|recovery[_-]?code|session[_-]?key|cookie",
    re.IGNORECASE,
)
# Keys that name a participant's answer or free text.
FREE_TEXT_KEY = re.compile(
    r"answer|response|free[_-]?text|comment|reason|note|message|transcript|prompt",
    re.IGNORECASE,
)
# A setting's value, a name, an e-mail address fit; a paragraph does not.
MAX_TEXT = 254
MAX_ITEMS = 50
MAX_DEPTH = 3


class UnsafeDetails(ValueError):
    """The details of an audit row hold what the log must never keep."""


def checked_text(value: str, where: str = "text") -> str:
    if len(value) > MAX_TEXT:
        raise UnsafeDetails(f"{where}: {len(value)} characters is free text, not a value")
    # PostgreSQL stores no NUL in text or JSON; nor is one ever a value.
    if "\x00" in value:
        raise UnsafeDetails(f"{where}: holds a NUL character")
    return value


def checked_details(details: dict) -> dict:
    """The details as they will be stored and hashed, or UnsafeDetails.

    Numbers that are not whole (a temperature, a threshold) become their text,
    dates their ISO form: the stored JSON then reads back exactly as hashed,
    whatever the database does with decimals.
    """
    if not isinstance(details, dict):
        raise UnsafeDetails("details are a dict")
    return _checked(details, "details", 0)


def _checked(value, where: str, depth: int):
    if isinstance(value, dict | list | tuple) and depth > MAX_DEPTH:
        raise UnsafeDetails(f"{where}: nested too deep")
    if isinstance(value, dict):
        if len(value) > MAX_ITEMS:
            raise UnsafeDetails(f"{where}: too many keys")
        return {
            _key(key, where, flag=isinstance(item, bool)): _checked(
                item, f"{where}.{key}", depth + 1
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        if len(value) > MAX_ITEMS:
            raise UnsafeDetails(f"{where}: too many items")
        return [_checked(item, f"{where}[]", depth + 1) for item in value]
    return _scalar(value, where)


def _key(key, where: str, *, flag: bool) -> str:
    if not isinstance(key, str):
        raise UnsafeDetails(f"{where}: keys are text")
    if SECRET_KEY.search(key):
        raise UnsafeDetails(f"{where}.{key}: a secret is never logged")
    # A yes or no ("include_free_text": false) holds no text and no answer.
    if FREE_TEXT_KEY.search(key) and not flag:
        raise UnsafeDetails(f"{where}.{key}: answers and free text are never logged")
    return checked_text(key, where)


def _scalar(value, where: str):
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        return checked_text(value, where)
    if isinstance(value, float | Decimal):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise UnsafeDetails(f"{where}: a {type(value).__name__} is not a value the log keeps")
