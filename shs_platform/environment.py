"""Reading the environment for shs_platform.settings: small helpers, and the
DATABASES entry a DATABASE_URL stands for."""

import os
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured


# An empty variable counts as unset: docker-compose passes `${NAME:-}` through
# as an empty string when the operator did not set it.
def envbool(name: str, default: str = "0") -> bool:
    return (os.environ.get(name) or default).strip().lower() in ("1", "true", "yes", "on")


def envint(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


def envlist(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def database_from_url(url: str) -> dict:
    """Translate DATABASE_URL into a Django DATABASES entry (postgres or sqlite)."""
    parts = urlsplit(url)
    if parts.scheme in ("postgres", "postgresql", "pgsql"):
        options: dict[str, object] = dict(parse_qsl(parts.query))
        # A connection pool per process (psycopg_pool): under ASGI each request's
        # synchronous work runs on a thread of its own, where a persistent
        # connection would be opened anew per request (Django's documentation
        # says to use a pool there); the same works for WSGI and the worker.
        pool = envbool("DB_POOL", "1")
        # Server-side binding and prepared statements: a statement a pooled connection
        # has run five times is prepared, so PostgreSQL stops parsing and planning the
        # same few queries on every request (its CPU per request halved). Django turns
        # them off by default for external poolers (PgBouncer); DB_PREPARED=0 for those.
        if envbool("DB_PREPARED", "1"):
            options.update(server_side_binding=True, prepare_threshold=5)
        if pool:
            options["pool"] = {"min_size": 1, "max_size": envint("DB_POOL_MAX_SIZE", 4)}
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            # Health checks let a worker or web process recover after the
            # database connection was dropped, without a restart (with the
            # pool, the pool checks a connection before handing it out).
            "CONN_MAX_AGE": 0 if pool else envint("DB_CONN_MAX_AGE", 60),
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
    if parts.scheme == "sqlite":
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": unquote(parts.path) or ":memory:"}
    raise ImproperlyConfigured(f"DATABASE_URL scheme {parts.scheme!r} is not supported")
