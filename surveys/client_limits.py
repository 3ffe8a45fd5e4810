"""Rate limits of the public pages of remote studies (docs/design/remote.md §11.3),
counted per client without storing the client's address.

The address is reduced to a keyed hash (HMAC-SHA256 with SECRET_KEY, cut to
128 bits) that lives only as part of a cache key expiring with its window:
the database and the logs never see it, and without the key the hash does
not lead back to an address (the IPv4 space is small enough to hash whole).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from contextlib import suppress

from allauth.account.adapter import get_adapter
from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)


def client_key(request) -> str:
    # allauth's reading of the address follows TRUSTED_PROXY_COUNT, as the login limits do.
    address = get_adapter(request).get_client_ip(request) or ""
    digest = hmac.new(settings.SECRET_KEY.encode(), address.encode(), hashlib.sha256)
    return digest.hexdigest()[:32]


def _key(request, action: str) -> str:
    return f"client-limit:{action}:{client_key(request)}"


def limit_reached(request, action: str, *, limit: int) -> bool:
    """Whether this client's window has `limit` counts of `action` already (counts nothing)."""
    return (cache.get(_key(request, action)) or 0) >= limit


def over_limit(request, action: str, *, limit: int, window_seconds: int) -> bool:
    """Count one `action` of this client; True when the window's count passes `limit`.

    Count before acting, not after: the increment is atomic in the cache, so
    of many requests arriving together at most `limit` get False, where a
    read first and a count after let every request that read in between pass.
    """
    try:
        count = window_count(_key(request, action), window_seconds=window_seconds)
    except Exception as error:  # noqa: BLE001 - the cache is down: fail open, as the login limits
        logger.warning("rate limit %s not counted: cache unavailable (%s)", action, type(error))
        return False
    return count > limit


def window_count(key: str, *, window_seconds: int) -> int:
    """Count one under `key` in the cache, atomically; the count so far in its window."""
    cache.add(key, 0, timeout=window_seconds)  # the window starts with the first count
    try:
        return cache.incr(key)
    except ValueError:  # expired between the two calls: a new window
        cache.set(key, 1, timeout=window_seconds)
        return 1


def limit_give_back(request, action: str) -> None:
    """Take back one count of `action` (one that turned out not to count, such
    as a right participant code); nothing if the window has passed or the cache
    is down."""
    with suppress(Exception):  # expired, or the cache is down: nothing to take back
        cache.decr(_key(request, action))
