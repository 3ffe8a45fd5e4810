"""A Redis cache that degrades to "no cache" when Redis is unreachable.

Sessions (cached_db) fall back to the database on a miss, so a Redis outage
must not turn every request into an error: reads miss, writes are skipped,
and a warning is logged. Login rate limits then fail open until Redis is
back, which is the lesser harm next to locking every experimenter out
mid-session.
"""

import logging

from django.core.cache.backends.redis import RedisCache
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


class ResilientRedisCache(RedisCache):
    get_many = _fail_open(dict)(RedisCache.get_many)
    has_key = _fail_open(False)(RedisCache.has_key)
    add = _fail_open(False)(RedisCache.add)
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

    def incr(self, key, delta=1, version=None):
        try:
            return super().incr(key, delta, version)
        except RedisError as error:
            logger.warning("cache unavailable (%s); continuing without it", error)
            raise ValueError(f"Key {key!r} not available (cache down)") from error
