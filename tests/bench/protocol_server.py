"""A throwaway production-like stack for load benchmarks: a fresh PostgreSQL
database, gunicorn serving the app with DEBUG off, and a Celery worker."""

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
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


@contextmanager
def stack(workers: int = 5):
    """Yields (base_url, env); the environment points at the throwaway database."""
    name = f"shs_bench_{os.getpid()}"
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
        "DJANGO_SETTINGS_MODULE": "shs_platform.settings",
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "collectstatic", "--no-input", "-v0"], cwd=ROOT, env=env, check=True)
    port = _free_port()
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "shs_platform.wsgi", "--bind", f"127.0.0.1:{port}",
             "--workers", str(workers), "--log-level", "warning", "--preload"],
            cwd=ROOT, env=env,
        ),
        subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "shs_platform", "worker", "--pool=solo",
             "--loglevel=WARNING", "-Q", env["CELERY_QUEUE"], "--without-gossip",
             "--without-mingle"],
            cwd=ROOT, env=env,
        ),
    ]  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
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
