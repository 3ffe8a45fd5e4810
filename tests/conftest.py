"""Shared fixtures: services, personas and a real Celery worker.

Tests use PostgreSQL and Redis when DATABASE_URL / REDIS_URL point at them
and SQLite / in-process tasks otherwise. With SHS_REQUIRE_SERVICES=1 (CI) a
missing service ends the run with an error instead of skipping anything.
`make test` runs them on every core; tests/parallel.py says what each
worker has of its own.
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from tests import parallel
from tests.llm_server import running_demo_server
from tests.services import database_is_postgres, redis_available, require_services

pytest_plugins = ["tests.personas", "tests.worker"]


def pytest_sessionstart(session):
    problems = []
    if require_services():
        if not database_is_postgres():
            problems.append("DATABASE_URL must point at PostgreSQL")
        if not redis_available():
            problems.append(f"Redis is not reachable at REDIS_URL={os.environ.get('REDIS_URL')!r}")
    if problems:
        pytest.exit("SHS_REQUIRE_SERVICES=1 but " + "; ".join(problems), returncode=3)
    # Once, before any worker starts (a worker reading a catalogue while
    # another rewrites it would see half a file), and not in a run that a
    # test started: the run around it has compiled them.
    if not parallel.is_worker(session.config) and "PYTEST_CURRENT_TEST" not in os.environ:
        compile_translations()


def compile_translations():
    """UI translations must be compiled for the language tests."""
    from django.core.management import call_command

    with open(os.devnull, "w") as quiet:
        call_command("compile_translations", verbosity=0, stdout=quiet)


_run_folder = pytest.StashKey[Path]()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs):
    """Before the workers start (`make test`, -n): each gets its own Redis
    database, Celery queue, private storage and temporary folder in its
    environment, where Django's settings and every subprocess read them
    (tests/parallel.py)."""
    run_folder = Path(tempfile.mkdtemp(prefix="shs-tests-"))
    config.stash[_run_folder] = run_folder
    for spec in specs:
        spec.env.update(parallel.worker_environment(spec.id, run_folder))


def pytest_unconfigure(config):
    if run_folder := config.stash.get(_run_folder, None):
        shutil.rmtree(run_folder, ignore_errors=True)


def pytest_collection_modifyitems(session, config, items):
    """Browser tests run last: their event loop must not overlap other tests.
    On several workers too: pytest-xdist's `load` distribution (the default)
    hands the tests out in this order, so each worker runs its share in it."""
    items.sort(key=lambda item: "/e2e/" in str(item.path))


@pytest.fixture(autouse=True)
def tasks_run_in_process(request):
    """Ordinary tests run Celery tasks in-process; `real_worker` tests opt out."""
    from shs_platform.celery import app

    eager = "celery_worker_process" not in request.fixturenames
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = eager or not settings.REDIS_URL
    yield
    app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def default_language():
    """Each test starts in the default language: a request's LocaleMiddleware
    leaves its language active in the thread after the response."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # Hashing with production strength costs ~0.3 s per login; tests need no such work.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fresh_cache():
    """Rate limits live in the cache: start every test with an empty one."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def postgres_only():
    """For behaviour only PostgreSQL can show (row locks under concurrency)."""
    if not database_is_postgres():
        if require_services():
            pytest.fail("this test needs PostgreSQL")
        pytest.skip("needs DATABASE_URL=postgres://... (runs in CI)")


@pytest.fixture(scope="session")
def llm_server():
    """The shipped demo LLM server on a free loopback port: its base URL, as a
    connected system stores it (http://127.0.0.1:PORT/v1)."""
    with running_demo_server() as server:
        yield server.base_url


@pytest.fixture(scope="module")
def quirks():
    """The conformance LLM server (tests/llm_quirks.py), once per test module:
    `url(quirk)` is a system's base URL, `requests()` what it received."""
    from tests.llm_quirks_client import running_quirks_server

    with running_quirks_server() as server:
        yield server
