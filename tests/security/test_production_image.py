"""The production image, as far as this machine (no container engine) can run it.

The smoke test repeats the Dockerfile's build step in a copy of the build
context, then runs the compose file's migrate command and starts its web
command (gunicorn) with the compose file's environment and DEBUG=0, and fetches every public
page, the static files they use and a login, as a browser behind the TLS proxy
would. It once caught every page failing with "Missing staticfiles manifest
entry" (the static files had been collected with DEBUG=1).
"""

import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from django.conf import settings
from django.urls import reverse

from tests.security.production import (
    BUILD_STEP,
    ROOT,
    compose_environment,
    compose_service,
    copy_build_context,
    dockerfile_run_steps,
    process_env,
)
from tests.services import database_is_postgres

HOST = "localhost"  # allowed by the compose file's default ALLOWED_HOSTS
PUBLIC_PAGES = [
    "home",
    "scoring:calculator",
    "account_login",
    "account_reset_password",
    "admin:login",
]
HASHED_NAME = re.compile(r"\.[0-9a-f]{12}\.\w+$")
STAFF_EMAIL, STAFF_PASSWORD = "smoke@example.org", "a-smoke-test-password-7163"


def _run(command, *, cwd, env, timeout=300):
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return result.stdout


def _manage(*args, env):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=process_env(env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_dockerfile_builds_with_the_tested_script():
    assert BUILD_STEP in dockerfile_run_steps()
    assert not [step for step in dockerfile_run_steps() if "collectstatic" in step]


def test_the_compose_defaults_pass_the_deploy_check():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=compose_environment())
    assert result.returncode == 0, result.stdout + result.stderr


def test_plain_http_is_one_switch_for_a_local_trial():
    code = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, "
        "s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS]))"
    )
    result = _manage(
        "shell", "--no-imports", "-c", code, env=compose_environment({"PLAIN_HTTP": "1"})
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[false, false, false, 0]"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def fresh_database_url(tmp_path):
    """An empty database for the server to migrate, on PostgreSQL when the tests have it."""
    if not database_is_postgres():
        yield f"sqlite://{tmp_path / 'smoke.sqlite3'}"
        return
    import psycopg

    db = settings.DATABASES["default"]
    server = {
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
        "user": db["USER"],
        "password": db["PASSWORD"],
    }
    name = f"shs_smoke_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    credentials = server["user"] + (f":{server['password']}" if server["password"] else "")
    yield f"postgres://{credentials}@{server['host']}:{server['port']}/{name}"
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Browser:
    """A client behind the TLS-terminating proxy: https as the proxy tells it, cookies kept."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(self, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {
            "Host": HOST,
            "X-Forwarded-Proto": "https",
            "X-Forwarded-For": "203.0.113.9",
            **(headers or {}),
        }
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            content = response.read().decode("utf-8", "replace")
        finally:
            connection.close()
        for cookie in response.headers.get_all("Set-Cookie") or []:
            name, _, value = cookie.split(";")[0].partition("=")
            self.cookies[name] = value
        return response, content


def _start_web(app: Path, env: dict, port: int, log: Path) -> subprocess.Popen:
    """The compose migrate service's command, then the web service's, bound to
    127.0.0.1 only."""
    _run(["sh", "-c", compose_service("migrate")["command"]], cwd=app, env=env)
    command = compose_service("web")["command"]
    assert "--bind 0.0.0.0:8000" in command
    command = command.replace("--bind 0.0.0.0:8000", f"--bind 127.0.0.1:{port}")
    with log.open("w") as output:
        return subprocess.Popen(
            ["sh", "-c", command],
            cwd=app,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # one process group: sh, gunicorn and its workers
        )


def _wait_until_healthy(server, browser, log: Path):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text()[-4000:]
        try:
            if browser.request("GET", "/healthz")[0].status == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    pytest.fail("the web service did not become healthy:\n" + log.read_text()[-4000:])


def _static_files(page: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/static/[^"]+)"', page)


def _log_in(browser) -> str:
    login = reverse("account_login")
    _response, page = browser.request("GET", login)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    body = urlencode(
        {"csrfmiddlewaretoken": token, "login": STAFF_EMAIL, "password": STAFF_PASSWORD}
    )
    response, page = browser.request(
        "POST",
        login,
        body=body,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": f"https://{HOST}",
            "Referer": f"https://{HOST}{login}",
        },
    )
    assert response.status == 302, page[-2000:]
    return urlsplit(response.headers["Location"]).path


def test_the_production_build_serves_every_public_page(fresh_database_url, tmp_path):
    started = time.monotonic()
    app = copy_build_context(tmp_path / "app")
    # The build step sees no runtime configuration, as in `docker build`.
    _run(BUILD_STEP.split(), cwd=app, env=process_env({}))
    assert (app / "staticfiles" / "staticfiles.json").is_file()

    env = process_env(
        compose_environment()
        | {
            "DATABASE_URL": fresh_database_url,
            "REDIS_URL": settings.REDIS_URL,
            "PRIVATE_STORAGE_ROOT": str(tmp_path / "private"),
            "CELERY_QUEUE": os.environ.get("CELERY_QUEUE", "shs-smoke"),
        }
    )
    assert env["DEBUG"] == "0"
    code = "from django.conf import settings; print(settings.BASE_DIR)"
    assert _run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code], cwd=app, env=env
    ).strip() == (str(app))  # the server runs the copy, not the checkout

    port, log = _free_port(), tmp_path / "web.log"
    server = _start_web(app, env, port, log)
    browser = Browser(port)
    try:
        _wait_until_healthy(server, browser, log)
        static = set()
        for name in PUBLIC_PAGES:
            response, page = browser.request("GET", reverse(name))
            assert response.status == 200, (name, page[-2000:], log.read_text()[-3000:])
            static.update(_static_files(page))

        assert static, "the pages use no static files"
        for path in sorted(static):
            assert HASHED_NAME.search(path), path
            response, _content = browser.request("GET", path)
            assert response.status == 200, path
            assert "immutable" in response.headers["Cache-Control"], path
        # Asked for by browsers at the root whatever a page links (WHITENOISE_ROOT).
        response, _content = browser.request("GET", "/favicon.ico")
        assert (response.status, response.headers["Content-Type"]) == (200, "image/x-icon")

        create_staff = {"DJANGO_SUPERUSER_PASSWORD": STAFF_PASSWORD}
        _run(
            [sys.executable, "manage.py", "createsuperuser", "--noinput", "--email", STAFF_EMAIL],
            cwd=app,
            env=env | create_staff,
        )
        landing = _log_in(browser)
        response, page = browser.request("GET", landing)
        assert response.status == 200, page[-2000:]
        assert STAFF_EMAIL in page or "logout" in page
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    print(f"production smoke test: {time.monotonic() - started:.1f} s")
