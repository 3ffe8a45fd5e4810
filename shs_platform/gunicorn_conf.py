"""Gunicorn settings of the image and the compose file's `web` service.

The server model: sync workers, one request per process at a time. A
participant request spends three quarters of its CPU in the app process
(Django, templates, ORM; docs/benchmarks.md, "Request cost profile") and
waits little on PostgreSQL or Redis, so threads would mostly queue on the
GIL; processes use both cores. Three workers on 2 cores: one more than the
cores so a worker waiting on the database or Redis leaves none idle, not
more because PostgreSQL, Redis and the Celery worker share those cores.
Both numbers can be set per host (WEB_CONCURRENCY, WEB_THREADS; threads
above 1 switch gunicorn to its gthread worker).
"""

import os

workers = int(os.environ.get("WEB_CONCURRENCY") or 3)
threads = int(os.environ.get("WEB_THREADS") or 1)
# Load the app once in the master and fork: workers share its memory and a
# broken configuration fails at start, not in the first request.
preload_app = True
accesslog = "-"
