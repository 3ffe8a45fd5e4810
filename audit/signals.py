"""The actions of the site's chain that Django and allauth announce by signal:
logins, failed logins and changes of a second factor (docs/design/audit.md §15.3).

A failed login keeps the e-mail address that was tried (only staff log in,
and a board asks whose account was tried), never the password: Django's
signal hands over the credentials with the password masked, and only the
address is read from them.
"""

from allauth.mfa import signals as mfa_signals
from django.contrib.auth import signals as auth_signals

from audit.details import MAX_TEXT
from audit.log import Kind, record

# allauth logs in by e-mail; Django's admin by the username field, the e-mail too.
_ADDRESS_KEYS = ("email", "username", "login")
# allauth's three changes of an authenticator, as the log's kinds.
_MFA_KINDS = {"added": Kind.MFA_ADDED, "removed": Kind.MFA_REMOVED, "reset": Kind.MFA_RESET}
_RECOVERY_CODES = "recovery_codes"


def connect() -> None:
    auth_signals.user_logged_in.connect(logged_in, dispatch_uid="audit_login")
    auth_signals.user_login_failed.connect(login_failed, dispatch_uid="audit_login_failed")
    mfa_signals.authenticator_added.connect(mfa_added, dispatch_uid="audit_mfa_added")
    mfa_signals.authenticator_removed.connect(mfa_removed, dispatch_uid="audit_mfa_removed")
    mfa_signals.authenticator_reset.connect(mfa_reset, dispatch_uid="audit_mfa_reset")
    mfa_signals.authentication_failed.connect(second_factor_failed, dispatch_uid="audit_mfa_failed")


def logged_in(sender, user, **kwargs) -> None:
    record(Kind.LOGIN, actor=user, target=f"user {user.pk}")


def login_failed(sender, credentials, **kwargs) -> None:
    tried = next((credentials[key] for key in _ADDRESS_KEYS if credentials.get(key)), "")
    address = str(tried)[:MAX_TEXT].replace("\x00", "")
    record(Kind.LOGIN_FAILED, actor=None, target=address)


def second_factor_failed(sender, user, reauthentication=False, **kwargs) -> None:
    """A wrong code from an authenticator app, after the right password."""
    step = "reauthentication" if reauthentication else "second factor"
    record(Kind.LOGIN_FAILED, actor=None, target=user.email, details={"step": step})


def mfa_added(sender, user, authenticator, **kwargs) -> None:
    _mfa_changed("added", user, authenticator)


def mfa_removed(sender, user, authenticator, **kwargs) -> None:
    _mfa_changed("removed", user, authenticator)


def mfa_reset(sender, user, authenticator, **kwargs) -> None:
    _mfa_changed("reset", user, authenticator)


def _mfa_changed(change: str, user, authenticator) -> None:
    # allauth adds recovery codes with a user's first authenticator app, and
    # removes them with the last, each by a signal of its own: one action, one row.
    implicit = authenticator.type == _RECOVERY_CODES and change in ("added", "removed")
    if implicit:
        return
    # The type only ("totp", "recovery_codes"): the authenticator's data is its secret.
    record(
        _MFA_KINDS[change],
        actor=user,
        target=f"user {user.pk}",
        details={"type": str(authenticator.type)},
    )
