import os

from django.conf import settings


def require_services() -> bool:
    return os.environ.get("SHS_REQUIRE_SERVICES") == "1"


def database_is_postgres() -> bool:
    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"


def redis_available() -> bool:
    if not settings.REDIS_URL:
        return False
    import redis

    try:
        return bool(redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False
