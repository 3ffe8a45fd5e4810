"""The ASGI entry point of the uvicorn workers (shs_platform/gunicorn_conf.py).

Only the chat's views are asynchronous: they await a connected system's
answer for seconds, and must not hold a worker meanwhile (docs/design/transcripts.md
§10.3). Django's ASGI handler runs every other, synchronous, request with
several hops between the event loop and a thread (the request signals, the
middleware chain, the view), which cost about 5 ms of CPU per request more
than a sync worker (docs/benchmarks.md). So a request for an async
view goes to Django's ASGI handler, and every other request to Django's WSGI
handler, run on a small thread pool by a2wsgi: one hop per request.
"""

import os

from a2wsgi import WSGIMiddleware
from asgiref.sync import iscoroutinefunction
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application
from django.urls import Resolver404, resolve

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shs_platform.settings")

django_asgi = get_asgi_application()
# Threads for the synchronous requests of one worker process; with the chat's
# own thread they stay within the process's connection pool (DB_POOL_MAX_SIZE).
SYNC_THREADS = int(os.environ.get("WEB_SYNC_THREADS") or 3)
# django-stubs types the handler's answer as a response, not as the iterable of bytes it is.
django_wsgi = WSGIMiddleware(get_wsgi_application(), workers=SYNC_THREADS)  # type: ignore[arg-type]


def is_async_view(path: str) -> bool:
    # The async views all live under a session's chat URL; any other path
    # skips the second URL lookup.
    if "/chat/" not in path:
        return False
    try:
        return iscoroutinefunction(resolve(path).func)
    except Resolver404:
        return False


async def application(scope, receive, send):
    if scope["type"] == "http" and not is_async_view(scope["path"]):
        await django_wsgi(scope, receive, send)
    else:
        await django_asgi(scope, receive, send)
