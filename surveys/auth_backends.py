"""The authentication backends of settings.AUTHENTICATION_BACKENDS: Django's
and allauth's, with the user of a logged-in browser session read by a
prepared lookup (surveys/prepared.py). Every staff request loads that user,
and compiling its query was a tenth of an autosave's CPU.
Everything else, the session hash check included, is Django's own."""

from allauth.account.auth_backends import AuthenticationBackend as AllauthBackend
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend as DjangoModelBackend

from surveys.prepared import PreparedLookup

USER_BY_ID = PreparedLookup(lambda pk: get_user_model()._default_manager.filter(pk=pk), pk=int)


class _PreparedUser:
    def get_user(self, user_id):
        try:
            pk = int(user_id)
        except (TypeError, ValueError):
            return None
        user = USER_BY_ID.one(pk=pk)
        return user if user is not None and self.user_can_authenticate(user) else None


class ModelBackend(_PreparedUser, DjangoModelBackend):
    """Django's ModelBackend."""


class AuthenticationBackend(_PreparedUser, AllauthBackend):
    """allauth's backend (log in by e-mail)."""
