"""The server model (docs/design/transcripts.md §10.3): gunicorn with uvicorn workers serving
the ASGI app by default, gunicorn's own workers and the WSGI app when
WEB_WORKER_CLASS says so."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
READ_CONFIG = """
import json, runpy
config = runpy.run_path("shs_platform/gunicorn_conf.py")
print(json.dumps({"worker_class": config["worker_class"], "app": config["wsgi_app"]}))
"""


def gunicorn_config(**env) -> dict:
    clean = {
        k: v for k, v in os.environ.items() if k not in ("WEB_WORKER_CLASS", "DB_POOL_MAX_SIZE")
    }
    result = subprocess.run(
        [sys.executable, "-c", READ_CONFIG],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_by_default_uvicorn_workers_serve_the_asgi_app():
    assert gunicorn_config() == {
        "worker_class": "uvicorn_worker.UvicornWorker",
        "app": "shs_platform.asgi:application",
    }


def test_the_uvicorn_workers_run_on_uvloop_with_httptools():
    """The worker asks for "auto" and takes what is installed: the compiled
    event loop and HTTP parser, or asyncio and h11 at several times the CPU
    per streamed piece (docs/benchmarks.md, "The built-in chat under load")."""
    from uvicorn.config import Config
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    from uvicorn_worker import UvicornWorker

    config = Config(app="shs_platform.asgi:application", **UvicornWorker.CONFIG_KWARGS)
    config.load()

    assert config.http_protocol_class is HttpToolsProtocol
    assert config.get_loop_factory().__module__.startswith("uvloop")


@pytest.mark.parametrize("worker", ["sync", "gthread"])
def test_gunicorns_own_workers_serve_the_wsgi_app(worker):
    assert gunicorn_config(WEB_WORKER_CLASS=worker) == {
        "worker_class": worker,
        "app": "shs_platform.wsgi:application",
    }


def test_the_image_and_compose_let_the_configuration_choose_the_app():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    compose = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    for text in (dockerfile, compose):
        assert "shs_platform.wsgi" not in text and "shs_platform.asgi" not in text
        assert "python:shs_platform.gunicorn_conf" in text
    assert "WEB_WORKER_CLASS: ${WEB_WORKER_CLASS:-uvicorn_worker.UvicornWorker}" in compose


def test_only_async_views_go_to_djangos_asgi_handler(db):
    from shs_platform.asgi import is_async_view

    # The chat's two async views (docs/design/transcripts.md §10.3)...
    assert is_async_view("/sessions/some-token/chat/")
    assert is_async_view("/sessions/some-token/chat/retry/")
    # ...and nothing else: those run through the WSGI handler on a thread.
    tag = "/sessions/some-token/chat/turns/1/tag/"
    for path in ("/sessions/some-token/", "/sessions/some-token/answer/", tag, "/healthz", "/x/"):
        assert not is_async_view(path), path


async def _get(path: str) -> tuple[int, bytes]:
    from asgiref.testing import ApplicationCommunicator

    from shs_platform.asgi import application

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": [(b"host", b"localhost")],
             "client": ("127.0.0.1", 1234), "server": ("localhost", 80)}  # fmt: skip
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(timeout=20)
    body = b""
    while True:
        message = await communicator.receive_output(timeout=20)
        body += message.get("body", b"")
        if not message.get("more_body"):
            return start["status"], body


@pytest.mark.django_db(transaction=True)
def test_both_handlers_answer_through_the_asgi_application(settings):
    from asgiref.sync import async_to_sync

    settings.ALLOWED_HOSTS = ["localhost"]
    # A synchronous view through the WSGI handler on a thread...
    status, body = async_to_sync(_get)("/healthz")
    assert status == 200 and json.loads(body)["status"] == "ok"
    # ...and the chat's async view through Django's ASGI handler: an anonymous
    # visitor is sent to the login page, as by every staff page.
    status, _body = async_to_sync(_get)("/sessions/no-such-token/chat/")
    assert status == 302


def test_the_server_writes_no_access_log_unless_asked():
    # Its lines would hold client addresses and the tokens of session and
    # retest paths (docs/design/anonymisation.md §6.1).
    read = "import runpy; print(runpy.run_path('shs_platform/gunicorn_conf.py')['accesslog'])"

    def accesslog(**env) -> str:
        clean = {k: v for k, v in os.environ.items() if k != "WEB_ACCESS_LOG"}
        command = [sys.executable, "-c", read]
        result = subprocess.run(
            command, cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, check=True
        )
        return result.stdout.strip()

    assert accesslog() == "None"
    assert accesslog(WEB_ACCESS_LOG="1") == "-"
