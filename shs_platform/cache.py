"""A Redis cache that degrades to "no cache" when Redis is unreachable.

Sessions (cached_db) fall back to the database on a miss, so a Redis outage
must not turn every request into an error: reads miss, writes are skipped,
and a warning is logged. Login rate limits then fail open until Redis is
back (logged as an error on every check), which is the lesser harm next to
locking every experimenter out mid-session.
"""

import logging

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


def _fail_open(default):
    def wrap(method):
        def guarded(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except RedisError as error:
                logger.warning("cache unavailable (%s); continuing without it", error)
                return default() if callable(default) else default

        guarded.__name__ = method.__name__
        return guarded

    return wrap


class ReusedRedisClients(RedisCacheClient):
    """One `redis.Redis` per connection pool, not one per cache operation.

    Django builds a new client for every get and set; building one copies
    redis-py's table of response callbacks, which cost more CPU than the
    round trip to Redis (a fifth of a millisecond per request that loads a
    session; issue 17). A client is thread-safe and its pool fork-safe.
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
        super().__init__(server, params)
        self._class = ReusedRedisClients

    get_many = _fail_open(dict)(RedisCache.get_many)
    has_key = _fail_open(False)(RedisCache.has_key)
    set = _fail_open(None)(RedisCache.set)
    set_many = _fail_open(list)(RedisCache.set_many)
    touch = _fail_open(False)(RedisCache.touch)
    delete = _fail_open(False)(RedisCache.delete)
    delete_many = _fail_open(None)(RedisCache.delete_many)
    clear = _fail_open(False)(RedisCache.clear)

    def get(self, key, default=None, version=None):
        try:
            return super().get(key, default, version)
        except RedisError as error:
            logger.warning("cache unavailable (%s); continuing without it", error)
            return default

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        # allauth takes `add` as the lock around every rate limit check, and
        # reads "not added" as "someone holds it", then, after a second, as
        # "over the limit": with Redis down every login and password reset was
        # refused. Nobody holds a lock in a cache that is down, so report it
        # taken; the count itself then reads empty and the limit fails open.
        try:
            return super().add(key, value, timeout, version)
        except RedisError as error:
            logger.error(
                "cache unavailable (%s): login and password-reset rate limits are OFF "
                "until Redis is back",
                error,
            )
            return True

    def incr(self, key, delta=1, version=None):
        try:
            return super().incr(key, delta, version)
        except RedisError as error:
            logger.warning("cache unavailable (%s); continuing without it", error)
            raise ValueError(f"Key {key!r} not available (cache down)") from error
