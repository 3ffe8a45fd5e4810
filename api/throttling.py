"""Each token's calls per minute (API_CALLS_PER_MINUTE), counted in the shared
cache: Redis in production, so every web process counts the same calls."""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle


class PerTokenThrottle(SimpleRateThrottle):
    scope = "api-token"

    def get_rate(self) -> str:
        # Read on every call, not once at import: the setting is the operator's.
        return f"{settings.API_CALLS_PER_MINUTE}/min"

    def get_cache_key(self, request, view) -> str | None:
        token = request.auth
        if token is None:
            return None
        # The token's visible prefix is random and never reused, unlike its row id
        # (a test database starts again from 1 while the cache remembers).
        return self.cache_format % {"scope": self.scope, "ident": token.prefix}
