"""The server model (docs/design.md §10.3): gunicorn with uvicorn workers serving
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
