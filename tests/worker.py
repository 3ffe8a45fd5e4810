"""A real Celery worker in a subprocess, against the real Redis and the test database."""

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.services import database_is_postgres, redis_available, require_services

ROOT = Path(__file__).resolve().parent.parent


def _database_url() -> str:
    db = connection.settings_dict
    credentials = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class WorkerProcess:
    """Start, stop or SIGKILL a `celery worker` that serves this test run's queue."""

    def __init__(self, log_dir: Path, extra_env: dict | None = None):
        self.log_dir = log_dir
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self, timeout: float = 60) -> None:
        self.starts += 1
        env = {
            **os.environ,
            "DATABASE_URL": _database_url(),
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
            "DJANGO_SETTINGS_MODULE": "shs_platform.settings",
            **self.extra_env,
        }
        log = open(self.log_dir / f"worker-{self.starts}.log", "w")
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "shs_platform", "worker",
                "--pool=solo", "--loglevel=INFO", "--without-gossip", "--without-mingle",
                "-Q", settings.CELERY_TASK_DEFAULT_QUEUE,
                "-n", f"test-{uuid.uuid4().hex[:8]}@%h",
            ],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited early; see {log.name}")
            try:
                if self.send("shs_platform.ping", "ready").get(timeout=5) == "ready":
                    return
            except Exception:
                time.sleep(0.5)
        raise RuntimeError(f"worker did not answer within {timeout} s; see {log.name}")

    @property
    def broker_url(self) -> str:
        return self.extra_env.get("REDIS_URL", settings.REDIS_URL)

    def send(self, task_name: str, *args):
        """Publish a task by name to this worker's broker and queue."""
        from celery import Celery

        from shs_platform.celery import app

        client = app
        if self.broker_url != settings.REDIS_URL:
            # Not the current app: shared tasks must keep publishing to the test's broker.
            client = Celery(
                "probe", broker=self.broker_url, backend=self.broker_url, set_as_current=False
            )
        return client.send_task(
            task_name, args=list(args), queue=settings.CELERY_TASK_DEFAULT_QUEUE
        )

    def kill(self) -> None:
        """SIGKILL the whole worker, as when a machine or container dies."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log_text(self) -> str:
        return "\n".join(p.read_text() for p in sorted(self.log_dir.glob("worker-*.log")))


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A running worker; the test's tasks are published to Redis and consumed by it."""
    if not (database_is_postgres() and redis_available()):
        if require_services():
            pytest.fail("a real worker needs PostgreSQL and Redis")
        pytest.skip("needs DATABASE_URL=postgres://... and REDIS_URL (runs in CI)")
    worker = WorkerProcess(tmp_path)
    worker.start()
    yield worker
    worker.stop()


@contextmanager
def export_worker_for(live_settings, tmp_path, *, tick_delay: str = "0"):
    """A real worker that writes export files where the live server (of this
    process, its settings `live_settings`) serves them: the server's jobs go
    through Redis to it. `tick_delay` pauses each progress tick (seconds)."""
    if not (database_is_postgres() and redis_available()):
        if require_services():
            pytest.fail("a live server's exports need PostgreSQL and Redis for a real worker")
        pytest.skip("needs DATABASE_URL=postgres://... and REDIS_URL (runs in CI)")
    from shs_platform.celery import app

    live_settings.PRIVATE_STORAGE_ROOT = tmp_path / "private"
    app.conf.task_always_eager = False
    worker = WorkerProcess(
        tmp_path,
        {
            "DJANGO_SETTINGS_MODULE": "tests.exports.worker_settings",
            "EXPORT_TICK_DELAY_SECONDS": tick_delay,
            "PRIVATE_STORAGE_ROOT": str(live_settings.PRIVATE_STORAGE_ROOT),
        },
    )
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()
