"""Gunicorn settings of the image and the compose file's `web` service.

The server model: uvicorn workers running the ASGI app. A chat answer from a
connected system takes seconds (docs/design/transcripts.md §10.3); under ASGI it is
awaited on the worker's event loop, so a worker serves other participants
while it streams, where a sync worker would be held for the whole answer.
Everything else is unchanged: the ordinary views are synchronous and Django
runs them on a thread of the worker.

Three workers on 2 cores: one more than the cores so a worker waiting on the
database or Redis leaves none idle, not more because PostgreSQL, Redis and
the Celery worker share those cores. Per host: WEB_CONCURRENCY (processes),
WEB_WORKER_CLASS (`sync`, `gthread` or the default
`uvicorn_worker.UvicornWorker`; the matching entry point, WSGI or ASGI, is
chosen with it) and WEB_THREADS (threads of a gthread worker). Under ASGI a
worker takes any number of requests at once: the chat's on its event loop,
the synchronous ones on a small thread pool (shs_platform/asgi.py,
WEB_SYNC_THREADS); their database connections come from the process's pool
(DB_POOL, DB_POOL_MAX_SIZE in the settings), which bounds them.
"""

import os

from gunicorn.glogging import Logger

from shs_platform.log_filters import MaskTokens

UVICORN = "uvicorn_worker.UvicornWorker"

workers = int(os.environ.get("WEB_CONCURRENCY") or 3)
worker_class = os.environ.get("WEB_WORKER_CLASS") or UVICORN
threads = int(os.environ.get("WEB_THREADS") or 1)
# Seconds an idle client connection stays open (the uvicorn and gthread
# workers; a sync worker closes it after each response). Longer than the
# compose proxy's own idle limit for its connections to the workers
# (deploy/nginx.conf), so the proxy, not the worker, closes an idle one.
keepalive = 5
ASGI = "uvicorn" in worker_class.lower()
# The app when the command line names none: ASGI for the uvicorn worker, WSGI
# for gunicorn's own (the benchmarks name theirs: tests/bench/stack.py).
wsgi_app = "shs_platform.asgi:application" if ASGI else "shs_platform.wsgi:application"
# Load the app once in the master and fork: workers share its memory and a
# broken configuration fails at start, not in the first request.
preload_app = True
# No access log unless asked for (WEB_ACCESS_LOG=1, to stdout): gunicorn's
# line holds the client's address and the path, and a path holds a session's,
# a retest link's or an invitation's token, so the log would keep what the
# platform never stores (docs/design/anonymisation.md §6.1). Formatting it was also a
# twentieth of a participant request's CPU. The proxy logs none
# either (deploy/nginx.conf).
accesslog = "-" if os.environ.get("WEB_ACCESS_LOG") == "1" else None
# Gunicorn's own error log names a request's path when the request fails, and
# the access log (when on) names every path: both mask link tokens like the
# app's logs (shs_platform/log_filters.py). A subclass, so that handlers made
# again on a reload are masked too.
logger_class = "shs_platform.gunicorn_conf.TokenMaskingLogger"


class TokenMaskingLogger(Logger):
    def setup(self, cfg):
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.addFilter(MaskTokens())
