"""A Redis cache that degrades to "no cache" when Redis is unreachable or hangs.

Sessions (cached_db) fall back to the database on a miss, so a Redis outage
must not turn every request into an error: reads miss, writes are skipped,
and a warning is logged. Login rate limits then fail open until Redis is
back (logged as an error on every check), which is the lesser harm next to
locking every experimenter out mid-session.

A Redis that is down refuses connections at once; one that hangs (paused,
swapping, a half-open network) makes every call wait its socket timeout. A
login makes more than fifteen cache calls, so at two seconds each gunicorn
killed the worker before it answered. Hence a circuit breaker, one per Redis
address and process (Django builds a cache object per thread, and the
threads of a worker share one Redis): after a connection error or a timeout
the cache skips Redis for `breaker_seconds` (OPTIONS; 10 by default), then
lets one call through as a probe while the others still skip; the probe's
success closes the breaker, its failure opens it again. A hanging Redis so
costs a request at most one timeout, and most requests none.
"""

import logging
import threading
import time

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

BREAKER_SECONDS = 10


class RedisSkipped(RedisError):
    """Raised instead of calling Redis while its breaker is open."""


class CircuitBreaker:
    def __init__(self, open_seconds: float):
        self.open_seconds = open_seconds
        self._lock = threading.Lock()
        self._open_until: float | None = None  # monotonic time; None while closed
        self._probing = False

    def allow(self) -> bool:
        """Whether this call may go to Redis: always while closed, one probe after a pause."""
        if self._open_until is None:
            return True
        with self._lock:
            if self._open_until is None:
                return True
            if self._probing or time.monotonic() < self._open_until:
                return False
            self._probing = True
            return True

    def succeeded(self) -> None:
        if self._open_until is not None:
            with self._lock:
                self._open_until, self._probing = None, False
            logger.warning("cache reachable again; using Redis")

    def failed(self, error: Exception) -> None:
        with self._lock:
            self._open_until = time.monotonic() + self.open_seconds
            self._probing = False
        logger.warning("cache unavailable (%s); skipping Redis for %s s", error, self.open_seconds)


_breakers: dict[str, CircuitBreaker] = {}
_breakers_lock = threading.Lock()


def breaker_for(location: str, open_seconds: float = BREAKER_SECONDS) -> CircuitBreaker:
    with _breakers_lock:
        breaker = _breakers.get(location)
        if breaker is None or breaker.open_seconds != open_seconds:
            breaker = _breakers[location] = CircuitBreaker(open_seconds)
        return breaker


def _guarded(method, on_failure):
    """`method` through the breaker; on any Redis error, what `on_failure` makes of it."""

    def guarded(self, *args, **kwargs):
        if not self._breaker.allow():
            return on_failure(RedisSkipped("breaker open"), *args, **kwargs)
        try:
            result = method(self, *args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError) as error:
            self._breaker.failed(error)
            return on_failure(error, *args, **kwargs)
        except RedisError as error:  # Redis answered, with an error: no need to pause
            self._breaker.succeeded()
            logger.warning("cache error (%s); continuing without it", error)
            return on_failure(error, *args, **kwargs)
        self._breaker.succeeded()
        return result

    guarded.__name__ = method.__name__
    return guarded


def _fail_open(default):
    def on_failure(error, *args, **kwargs):
        return default() if callable(default) else default

    return on_failure


def _get_default(error, key, default=None, version=None):
    return default


def _add_taken(error, *args, **kwargs):
    # allauth takes `add` as the lock around every rate limit check, and
    # reads "not added" as "someone holds it", then, after a second, as
    # "over the limit": with Redis down every login and password reset was
    # refused. Nobody holds a lock in a cache that is down, so report it
    # taken; the count itself then reads empty and the limit fails open.
    logger.error(
        "cache unavailable (%s): login and password-reset rate limits are OFF until Redis is back",
        error,
    )
    return True


def _no_count(error, key, *args, **kwargs):
    raise ValueError(f"Key {key!r} not available (cache down)") from error


class ReusedRedisClients(RedisCacheClient):
    """One `redis.Redis` per connection pool, not one per cache operation.

    Django builds a new client for every get and set; building one copies
    redis-py's table of response callbacks, which cost more CPU than the
    round trip to Redis (a fifth of a millisecond per request that loads a
    session). A client is thread-safe and its pool fork-safe.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._client(connection_pool=self._get_connection_pool(write))
            self._clients[index] = client
        return client


class ResilientRedisCache(RedisCache):
    def __init__(self, server, params):
        options = dict(params.get("OPTIONS", {}))
        open_seconds = options.pop("breaker_seconds", BREAKER_SECONDS)
        super().__init__(server, {**params, "OPTIONS": options})
        self._class = ReusedRedisClients
        self._breaker = breaker_for(str(server), open_seconds)

    get = _guarded(RedisCache.get, _get_default)
    get_many = _guarded(RedisCache.get_many, _fail_open(dict))
    has_key = _guarded(RedisCache.has_key, _fail_open(False))
    set = _guarded(RedisCache.set, _fail_open(None))
    set_many = _guarded(RedisCache.set_many, _fail_open(list))
    touch = _guarded(RedisCache.touch, _fail_open(False))
    delete = _guarded(RedisCache.delete, _fail_open(False))
    delete_many = _guarded(RedisCache.delete_many, _fail_open(None))
    clear = _guarded(RedisCache.clear, _fail_open(False))
    add = _guarded(RedisCache.add, _add_taken)
    incr = _guarded(RedisCache.incr, _no_count)

    def decr(self, key, delta=1, version=None):
        # Django's own decr bypasses `incr` (it calls the client directly).
        return self.incr(key, -delta, version)
