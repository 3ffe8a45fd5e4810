"""The platform's web process as it really runs, on the test database, and a
participant's browser that speaks to it over real HTTP.

Three ways the platform is served:
  asgi      production-like: the compose file's gunicorn command with the
            uvicorn worker (the default), DEBUG=0
  wsgi      the same with WEB_WORKER_CLASS=sync: gunicorn's own workers and
            the WSGI app, DEBUG=0
  make_run  what `make run` starts: Django's runserver (WSGI), DEBUG=1

Tests using them need `django_db(transaction=True)`: the web process reads
what the test committed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.cookiejar import CookieJar
from pathlib import Path

import pytest
from django.conf import settings

from surveys.views.chat import STREAM
from tests.llm_server import free_port
from tests.security.production import compose_service
from tests.services import database_is_postgres, redis_available, require_services
from tests.worker import ROOT, _database_url

KINDS = ("asgi", "wsgi", "make_run")
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class WebStack:
    def __init__(self, kind: str, log: Path, env: dict[str, str]):
        self.kind = kind
        self.log = log
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.secret_key = secrets.token_urlsafe(50)
        self.env = {**_inherited(), **_environment(kind, self.secret_key), **env}
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            _command(self.kind, self.port),
            cwd=ROOT,
            env=self.env,
            stdout=open(self.log, "w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.output()[-4000:]
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        pytest.fail(f"{self.kind} did not become healthy:\n{self.output()[-4000:]}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def _environment(kind: str, secret_key: str) -> dict[str, str]:
    env = {
        "SECRET_KEY": secret_key,
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": _database_url(),  # the test database
        "REDIS_URL": settings.REDIS_URL or "",
        "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
        "LLM_ALLOW_HTTP_LOOPBACK": "1",  # the test's LLM servers are on this machine
        "LOG_LEVEL": "INFO",
    }
    if kind == "make_run":
        # As the Makefile's DEMO_ENV, on the test's database.
        return {**env, "DEBUG": "1", "DEMO_SCHEDULER": "0"}
    return {
        **env,
        "DJANGO_SETTINGS_MODULE": "tests.scale.web_settings",
        "DEBUG": "0",
        "PLAIN_HTTP": "1",
        "TRUSTED_PROXY_COUNT": "0",
        "SECURE_PROXY_SSL_HEADER": "0",
        # Gunicorn's own workers serve one request each: a second tab's
        # message must be able to arrive while the first is answered.
        "WEB_CONCURRENCY": "3" if kind == "wsgi" else "1",
        "DB_POOL_MAX_SIZE": "4",
        "WEB_WORKER_CLASS": "sync" if kind == "wsgi" else "uvicorn_worker.UvicornWorker",
    }


def _command(kind: str, port: int) -> list[str]:
    if kind == "make_run":
        return [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    command = shlex.split(compose_service("web")["command"])
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    return [sys.executable, "-m", *command]


def _inherited() -> dict[str, str]:
    """This run's environment less the web tier's sizing and anything Django
    would read in place of what the stack sets."""
    dropped = ("WEB_", "DB_", "DJANGO_SETTINGS_MODULE", "DEBUG")
    return {k: v for k, v in os.environ.items() if not k.startswith(dropped)}


def services_or_fail() -> None:
    if not (database_is_postgres() and redis_available()):
        if require_services():
            pytest.fail("the web stack needs PostgreSQL and Redis")
        pytest.skip("needs DATABASE_URL=postgres://... and REDIS_URL (runs in CI)")


@contextlib.contextmanager
def running_web(kind: str, log_dir: Path, env: dict[str, str] | None = None) -> Iterator[WebStack]:
    services_or_fail()
    stack = WebStack(kind, log_dir / f"web-{kind}-{time.monotonic_ns()}.log", env or {})
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """Cookies, the CSRF token of the last page, no redirects followed."""

    def __init__(self, base: str):
        self.base = base
        self.token = ""
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(CookieJar()), _NoRedirect()
        )

    def request(self, path, data=None, *, accept="text/html", timeout=60):
        body = None
        if data is not None:
            body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": self.token}).encode()
        request = urllib.request.Request(self.base + path, body, {"Accept": accept})
        try:
            response = self.opener.open(request, timeout=timeout)
        except urllib.error.HTTPError as error:
            response = error
        with response:
            status, content = response.status, response.read().decode(errors="replace")
            location = response.headers.get("Location", "")
        if found := _CSRF.search(content):
            self.token = found[1]
        return status, content, location

    def page(self, path) -> str:
        status, content, _location = self.request(path)
        assert status == 200, (path, status, content[-2000:])
        return content

    def submit(self, path, data, *, status=302) -> str:
        code, content, location = self.request(path, data)
        assert code == status, (path, code, content[-2000:])
        return location

    def chat(self, url: str, text: str | None, *, timeout=60) -> tuple[int, list[dict]]:
        """A message (or, with None, "Try again") as the page's script sends it:
        the status and the JSON lines of the answer."""
        path, data = (url + "chat/retry/", {}) if text is None else (url + "chat/", {"text": text})
        status, body, _location = self.request(
            path, {"step": "block1_interaction", **data}, accept=STREAM, timeout=timeout
        )
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        return status, lines


def remote_participant(base: str, public_code: str, language: str = "en") -> tuple[Browser, str]:
    """A participant who took the study's public link and consented: at block 1's chat."""
    from tests.surveys.runner import ELIGIBLE

    browser = Browser(base)
    browser.page(f"/take/{public_code}/")
    url = browser.submit(f"/take/{public_code}/", {"action": "start", "language": language})
    consent = browser.page(url)
    shown = re.search(r'name="shown_text" value="([^"]+)"', consent)
    data = {"step": "consent", **ELIGIBLE, "consent": "on"}
    browser.submit(url, {**data, **({"shown_text": shown[1]} if shown else {})})
    browser.page(url)
    return browser, url
