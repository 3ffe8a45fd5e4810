"""/healthz: database and (when configured) broker reachability, as JSON."""

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


def _check_database() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "not reachable"
        return False, exc.__class__.__name__
    return True, "ok"


def _check_broker() -> tuple[bool, str]:
    import redis

    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1
        )
        client.ping()
    except Exception as exc:
        return False, exc.__class__.__name__
    return True, "ok"


@never_cache
@require_GET
def healthz(request):
    checks = {}
    ok, detail = _check_database()
    checks["database"] = {"ok": ok, "detail": detail}
    if settings.REDIS_URL:
        ok, detail = _check_broker()
        checks["broker"] = {"ok": ok, "detail": detail}
    else:
        checks["broker"] = {"ok": True, "detail": "not configured (tasks run in-process)"}
    healthy = all(check["ok"] for check in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": checks},
        status=200 if healthy else 503,
    )
