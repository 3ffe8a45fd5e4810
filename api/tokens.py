"""Issuing, finding and revoking personal API tokens (docs/design/api.md §16.2).

A token's secret is shown once, when it is issued, and never stored: only
its SHA-256. Issuing and revoking each write one audit row, to the site's chain (a
token may reach several studies, and one action writes one row); each call
made with it writes one to the chain of the study it reached (api/calls.py).
"""

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from api.models import ApiToken
from audit.log import record
from audit.models import AuditEntry
from shs_platform.log_filters import API_SECRET_PREFIX

# Marks a string as this platform's token, so a secret scanner can find one
# pasted into a repository and the log filter masks one quoted in a log line.
SECRET_PREFIX = API_SECRET_PREFIX
SECRET_BYTES = 32
DEFAULT_LIFETIME = timedelta(days=90)
LONGEST_LIFETIME = timedelta(days=366)


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@transaction.atomic
def api_token_issue(*, user, name: str, access: str, studies, expires_at) -> tuple[ApiToken, str]:
    """A new token of `user` and its secret, which nobody can read again."""
    secret = SECRET_PREFIX + secrets.token_urlsafe(SECRET_BYTES)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=secret[: len(SECRET_PREFIX) + 8],
        digest=digest_of(secret),
        access=access,
        expires_at=expires_at,
    )
    studies = list(studies)
    token.studies.set(studies)
    details = {
        "name": name,
        "access": access,
        "expires": expires_at.isoformat(timespec="seconds"),
        # The audit guard takes lists of at most 50: a longer scope is counted whole.
        "studies": sorted(study.slug for study in studies)[:50],
        "study_count": len(studies),
    }
    _record(AuditEntry.Kind.API_TOKEN_CREATED, token, details)
    return token, secret


@transaction.atomic
def api_token_revoke(*, token: ApiToken, user) -> bool:
    """Revoke the token now; False if it was revoked already."""
    locked = ApiToken.objects.select_for_update().get(pk=token.pk)
    if locked.revoked_at is not None:
        return False
    locked.revoked_at = timezone.now()
    locked.save(update_fields=["revoked_at"])
    token.revoked_at = locked.revoked_at
    _record(AuditEntry.Kind.API_TOKEN_REVOKED, locked, {"name": locked.name})
    return True


def _record(kind: str, token: ApiToken, details: dict) -> None:
    record(kind, actor=token.user, target=audit_target(token), details=details)


def audit_target(token: ApiToken) -> str:
    """How the audit log names a token: its number and its visible prefix."""
    return f"API token {token.pk} ({token.prefix}…)"


def usable_token(secret: str) -> ApiToken | None:
    """The token with this secret if it is neither revoked nor expired, with its
    owner, in one indexed read; None otherwise."""
    if not secret.startswith(SECRET_PREFIX) or len(secret) > 100:
        return None
    return ApiToken.objects.usable().select_related("user").filter(digest=digest_of(secret)).first()
