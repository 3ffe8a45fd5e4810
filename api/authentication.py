"""Who calls the API: the owner of the personal token in the Authorization
header ("Bearer shs_..."), and nothing else.

The API reads no session cookie, so a call never needs a CSRF token and a
page open in the browser cannot make one; and no page reads this header,
so a token opens no page (docs/design/api.md §16.2).
"""

from django.utils.translation import gettext as _
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from api.tokens import usable_token

SCHEME = b"bearer"


class PersonalTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts:
            return None  # the permission check answers 401, naming the scheme
        if len(parts) != 2 or parts[0].lower() != SCHEME:
            raise AuthenticationFailed(_("Send the token as “Authorization: Bearer <token>”."))
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError:
            secret = ""
        token = usable_token(secret)
        if token is None or not token.user.is_active:
            raise AuthenticationFailed(
                _(
                    "This token is unknown, expired or revoked. "
                    "Create a new one on your account page."
                )
            )
        return token.user, token

    def authenticate_header(self, request) -> str:
        # With a WWW-Authenticate header a missing token answers 401, not 403.
        return 'Bearer realm="api"'
