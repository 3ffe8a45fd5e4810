"""A throwaway production-like stack for load benchmarks: a fresh PostgreSQL
database, gunicorn serving the app with DEBUG off, and a Celery worker."""

import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from http.cookiejar import Cookie, CookieJar
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
POSTGRES = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")


def services_missing() -> str | None:
    import psycopg
    import redis

    try:
        psycopg.connect(POSTGRES + "/postgres", connect_timeout=3).close()
    except psycopg.Error:
        return f"PostgreSQL is not reachable at {POSTGRES}"
    try:
        redis.Redis.from_url(REDIS, socket_connect_timeout=2).ping()
    except redis.RedisError:
        return f"Redis is not reachable at {REDIS}"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES + "/postgres", autocommit=True) as connection:
        connection.execute(sql)


# The server as the image runs it (shs_platform/gunicorn_conf.py); BENCH_APP
# picks the WSGI or the ASGI entry point, BENCH_WORKERS overrides the count.
APP = os.environ.get("BENCH_APP", "shs_platform.wsgi")


@contextmanager
def stack(workers: int | None = None, app: str = APP, *, proxy: bool = False):
    """Yields (base_url, env); the environment points at the throwaway database.

    With `proxy`, the compose file's topology (docs/design/deployment.md §12.2): nginx
    with deploy/nginx.conf in front of sync workers for every request but the
    chat's answers, which go to uvicorn workers (`CHAT_CONCURRENCY`, 4).
    """
    name = f"shs_bench_{os.getpid()}"
    private = tempfile.mkdtemp(prefix="shs-bench-private-")
    _admin(f"DROP DATABASE IF EXISTS {name}")
    _admin(f"CREATE DATABASE {name}")
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
        "DATABASE_URL": f"{POSTGRES}/{name}",
        "REDIS_URL": REDIS,
        "CELERY_QUEUE": f"bench-{os.getpid()}",
        "LOG_LEVEL": "WARNING",
        # Export files of the throwaway study go to a throwaway folder.
        "PRIVATE_STORAGE_ROOT": private,
        "DJANGO_SETTINGS_MODULE": "shs_platform.settings",
    }
    if app.endswith(".wsgi"):
        # The image's default worker is uvicorn's, for the ASGI app; the WSGI
        # app needs one of gunicorn's own.
        env.setdefault("WEB_WORKER_CLASS", "sync")
    workers = workers or os.environ.get("BENCH_WORKERS")
    if workers:
        env["WEB_CONCURRENCY"] = str(workers)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "collectstatic", "--no-input", "-v0"], cwd=ROOT, env=env, check=True)
    port = _free_port()
    servers = [(app, port, {})]
    if proxy:
        chat = str(os.environ.get("CHAT_CONCURRENCY", 4))
        uvicorn = {"WEB_WORKER_CLASS": "uvicorn_worker.UvicornWorker", "WEB_CONCURRENCY": chat}
        servers = [("shs_platform.wsgi", port, {"WEB_WORKER_CLASS": "sync"}),
                   ("shs_platform.asgi", _free_port(), uvicorn)]  # fmt: skip
    processes = [_gunicorn(name, bound, {**env, **extra}) for name, bound, extra in servers]
    processes += [
        subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "shs_platform", "worker", "--pool=solo",
             "--loglevel=WARNING", "-Q", env["CELERY_QUEUE"], "--without-gossip",
             "--without-mingle"],
            cwd=ROOT, env=env,
        ),
    ]  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    # The system's own processes, for a CPU meter that counts nothing else.
    env["BENCH_SERVER_PIDS"] = ",".join(str(process.pid) for process in processes)
    try:
        for _app, server_port, _extra in servers:
            _wait_for(f"http://127.0.0.1:{server_port}")
        if proxy:
            from tests.bench.proxy import running_proxy

            upstreams = {"web": servers[0][1], "chat": servers[1][1]}
            with running_proxy(upstreams) as (proxy_base, nginx):
                env["BENCH_PROXY_PID"] = str(nginx.pid)
                yield proxy_base, env
        else:
            yield base, env
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        shutil.rmtree(private, ignore_errors=True)


def _gunicorn(app: str, port: int, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "--bind", f"127.0.0.1:{port}",
         "--config", "python:shs_platform.gunicorn_conf", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip


def _wait_for(base: str) -> None:
    for _ in range(100):
        try:
            urllib.request.urlopen(base + "/healthz", timeout=2)
            return
        except OSError:
            time.sleep(0.2)


def manage_shell(env, code: str, *args: str) -> str:
    """Run Python in the app's context against the stack's database; the last output line."""
    script = f"import sys; sys.argv = ['x', *{list(args)!r}]\n" + code
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


# Logs a user in without a password round trip: a database session for them.
LOGIN_CODE = """
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore


def session_cookie(user):
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "surveys.auth_backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return store.session_key
"""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None

    def http_error_302(self, req, fp, code, msg, headers):
        return fp


class Browser:
    """One person's browser: cookies, CSRF token, and the time of every request by kind."""

    def __init__(self, base: str, session_cookie: str):
        self.base = base
        self.jar = CookieJar()
        self.jar.set_cookie(
            Cookie(0, "sessionid", session_cookie, None, False, "127.0.0.1", False, False, "/",
                   True, False, None, False, None, None, {})
        )  # fmt: skip
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()
        )
        self.timings: list[tuple[str, float, int]] = []

    def _csrf(self) -> str:
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def request(self, kind: str, path: str, data: dict | None = None) -> tuple[int, bytes, str]:
        """Returns status, body and the Location header (for redirects)."""
        body = None
        if data is not None:
            body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": self._csrf()}).encode()
        url = path if path.startswith("http") else self.base + path
        started = time.perf_counter()
        content, location = b"", ""
        try:
            response = self.opener.open(urllib.request.Request(url, data=body), timeout=60)
            status = response.status
            location = response.headers.get("Location", "")
            content = response.read()
        except urllib.error.HTTPError as error:
            status = error.code
        except OSError:
            status = 0
        self.timings.append((kind, time.perf_counter() - started, status))
        return status, content, location


def percentile(values, fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def report(label: str, timings, elapsed: float, kinds=None) -> tuple[dict, int]:
    """Print p50/p95 per kind of request; returns the p95s and the error count."""
    print(f"{label}: {len(timings)} requests in {elapsed:.1f} s")
    kinds = kinds or sorted({kind for kind, _t, _s in timings})
    p95s = {}
    for kind in kinds:
        values = [t * 1000 for k, t, _s in timings if k == kind]
        if values:
            p95s[kind] = percentile(values, 0.95)
            print(
                f"  {kind:18s} n={len(values):5d}  p50 {statistics.median(values):7.1f} ms  "
                f"p95 {p95s[kind]:7.1f} ms  max {max(values):7.1f} ms"
            )
    errors = [t for t in timings if t[2] not in (200, 302)]
    print(f"  errors: {len(errors)}" + (f" {sorted({e[2] for e in errors})}" if errors else ""))
    return p95s, len(errors)
