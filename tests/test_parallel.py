"""The test run on several cores: each worker has its own test database, Redis
database, Celery queue and private storage (tests/parallel.py)."""

import tempfile
from pathlib import Path

import pytest
from django.db import connection

from tests.parallel import redis_database, worker_environment
from tests.services import database_is_postgres


def test_each_worker_moves_the_redis_database_on_by_its_number():
    assert redis_database("redis://127.0.0.1:6379/0", 0) == "redis://127.0.0.1:6379/0"
    assert redis_database("redis://127.0.0.1:6379/9", 1) == "redis://127.0.0.1:6379/10"
    assert redis_database("redis://:secret@cache:6380", 2) == "redis://:secret@cache:6380/2"


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/15", "unix:///run/redis.sock?db=0"])
def test_a_redis_database_that_cannot_be_moved_on_is_refused(url):
    with pytest.raises(pytest.UsageError):
        redis_database(url, 1)


def test_a_worker_gets_a_queue_and_folders_of_its_own(tmp_path):
    environ = {"REDIS_URL": "redis://127.0.0.1:6379/4", "CELERY_QUEUE": "shs-ci-7"}
    assert worker_environment("gw1", tmp_path, environ) == {
        "REDIS_URL": "redis://127.0.0.1:6379/5",
        "CELERY_QUEUE": "shs-ci-7-gw1",
        "PRIVATE_STORAGE_ROOT": str(tmp_path / "gw1" / "private"),
        "TMPDIR": str(tmp_path / "gw1" / "tmp"),
    }
    assert (tmp_path / "gw1" / "tmp").is_dir()
    # No Redis: tasks run in-process and the cache is the process's own.
    assert worker_environment("gw0", tmp_path, {}) == {
        "CELERY_QUEUE": "celery-gw0",
        "PRIVATE_STORAGE_ROOT": str(tmp_path / "gw0" / "private"),
        "TMPDIR": str(tmp_path / "gw0" / "tmp"),
    }


@pytest.mark.django_db
def test_this_worker_uses_what_its_environment_names(request, settings):
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    if worker is None:
        pytest.skip("runs on one of several workers (make test)")
    if database_is_postgres():
        assert connection.settings_dict["NAME"].endswith(f"_{worker}")
    assert settings.CELERY_TASK_DEFAULT_QUEUE.endswith(f"-{worker}")
    assert Path(settings.PRIVATE_STORAGE_ROOT).parent.name == worker
    assert Path(tempfile.gettempdir()).parent.name == worker
    if settings.REDIS_URL:
        assert settings.CACHES["default"]["LOCATION"] == settings.REDIS_URL
        assert settings.CELERY_BROKER_URL == settings.REDIS_URL
