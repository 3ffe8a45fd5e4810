"""The test run on several cores (pytest-xdist, `make test`): what each worker
process has of its own, so that no two workers share state.

- The test database: pytest-django names it after the worker
  (test_shs_gw0, test_shs_gw1...); the subprocesses a test starts take the
  name from the connection (tests/worker.py, `_database_url`). With SQLite
  each worker's test database is in its own memory.
- Redis: a database of its own, the number in REDIS_URL plus the worker's
  (gw0 the number itself, gw1 the next...). Every test empties the cache
  (tests/conftest.py), and that flushes a whole Redis database.
- The Celery queue: CELERY_QUEUE followed by the worker's id.
- Private storage (the export files): a folder of its own. Two workers'
  databases hand out the same ids, so their files would have the same names.
- The system's temporary folder (TMPDIR): one of its own, so a test that
  looks for files left there sees only its worker's. pytest gives each
  worker its own tmp_path as well.
- Ports: every server a test starts is given one the system reports free.

What all workers share is written before they start: the controller
compiles the translations (tests/conftest.py, `pytest_sessionstart`).

The controller writes these into each worker's environment before the worker
starts (tests/conftest.py, `pytest_xdist_setupnodes`), so Django's settings
read them as in any other process, and every subprocess a test starts
inherits them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

# Redis's default number of databases (`databases` in redis.conf).
REDIS_DATABASES = 16


def worker_number(worker_id: str) -> int:
    """gw0 -> 0, gw1 -> 1..."""
    return int(worker_id.removeprefix("gw"))


def worker_environment(
    worker_id: str, run_folder: Path, environ: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """The variables that give worker `worker_id` its own Redis database,
    Celery queue, private storage and temporary folder, the folders made in
    `run_folder`."""
    folder = run_folder / worker_id
    # Python ignores a TMPDIR that does not exist.
    (folder / "tmp").mkdir(parents=True)
    env = {
        "CELERY_QUEUE": f"{environ.get('CELERY_QUEUE') or 'celery'}-{worker_id}",
        "PRIVATE_STORAGE_ROOT": str(folder / "private"),
        "TMPDIR": str(folder / "tmp"),
    }
    if environ.get("REDIS_URL"):
        env["REDIS_URL"] = redis_database(environ["REDIS_URL"], worker_number(worker_id))
    return env


def redis_database(url: str, offset: int) -> str:
    """REDIS_URL with its database number moved on by `offset`."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        raise pytest.UsageError(
            f"REDIS_URL={url!r}: a run on several workers needs a redis:// address "
            "(or run on one: -n0)"
        )
    number = int(parts.path.strip("/") or 0) + offset
    if number >= REDIS_DATABASES:
        raise pytest.UsageError(
            f"REDIS_URL={url!r}: worker {offset} would use Redis database {number}, "
            f"past the last ({REDIS_DATABASES - 1}); use a lower database number in "
            "REDIS_URL or fewer workers (-n)"
        )
    return urlunsplit(parts._replace(path=f"/{number}"))


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")
