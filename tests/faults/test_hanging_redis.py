"""Redis hangs (paused with SIGSTOP: connections are accepted, nothing is
answered): every cache call would wait its two-second socket timeout, and a
login makes more than fifteen. The cache's circuit breaker skips Redis after
the first timeout, process-wide, so logins, sessions (cached_db), the login
rate limits and the public link keep working at once; once Redis answers
again and the breaker's pause is over, the cache is used again.
"""

import logging
import shutil
import threading
import time

import pytest
import redis
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from tests.faults.redis_server import ThrowawayRedis
from tests.personas import PASSWORD
from tests.services import require_services
from tests.surveys.remote import RemoteRun, make_remote_study

BREAKER_SECONDS = 1.5  # short, so that the tests see it close


@pytest.fixture
def hanging_redis(tmp_path, settings):
    """The production cache and sessions on a Redis of the test's own, paused."""
    if not shutil.which("redis-server"):
        if require_services():
            pytest.fail("this fault test needs redis-server")
        pytest.skip("needs redis-server (runs in CI)")
    server = ThrowawayRedis(tmp_path)
    server.start()
    settings.CACHES = server.cache_settings(breaker_seconds=BREAKER_SECONDS)
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"  # as in production
    server.pause()
    yield server
    server.stop()


def _log_in(client, password=PASSWORD):
    return client.post(
        reverse("account_login"), {"login": "coord-a@example.org", "password": password}
    )


def _redis_keys(server) -> list[bytes]:
    return redis.Redis.from_url(server.url, socket_timeout=2).keys("*")


def test_a_login_and_its_pages_take_at_most_one_timeout(client, personas, hanging_redis):
    started = time.monotonic()
    response = _log_in(client)
    pages = [client.get(reverse("surveys:study_list")) for _ in range(5)]
    elapsed = time.monotonic() - started

    assert response.status_code == 302, response.content.decode()[-2000:]
    assert [page.status_code for page in pages] == [200] * 5
    assert elapsed < 5, f"took {elapsed:.1f} s"
    # The session went to the database (cached_db), so it survives the outage.
    assert Session.objects.filter(session_key=client.session.session_key).exists()


def test_the_breaker_holds_for_every_thread_of_the_process(hanging_redis):
    started = time.monotonic()
    assert cache.get("anything") is None  # the one timeout
    first = time.monotonic() - started

    def in_another_thread():
        # Django makes a cache object per thread: the breaker is per Redis.
        for _ in range(10):
            cache.set("other", 1)
            cache.get("other")

    worker = threading.Thread(target=in_another_thread)
    started = time.monotonic()
    worker.start()
    worker.join()

    assert 1.5 < first < 3
    assert time.monotonic() - started < 0.5


def test_login_limits_fail_open_loudly_and_hold_again_after_resume(
    client, personas, hanging_redis, caplog
):
    with caplog.at_level(logging.ERROR, logger="shs_platform.cache"):
        for _ in range(6):
            _log_in(Client(), password="wrong")
        assert _log_in(client).status_code == 302  # not locked out by a hanging cache
    assert "rate limits are OFF" in caplog.text
    client.logout()

    hanging_redis.resume()
    time.sleep(BREAKER_SECONDS + 0.2)
    for _ in range(5):
        _log_in(Client(), password="wrong")
    page = _log_in(client).content.decode()

    assert "Too many failed login attempts" in page
    assert "_auth_user_id" not in client.session


def test_the_cache_is_used_again_once_redis_answers(client, personas, hanging_redis):
    assert _log_in(client).status_code == 302
    hanging_redis.resume()
    assert _redis_keys(hanging_redis) == []  # nothing was written while it hung

    time.sleep(BREAKER_SECONDS + 0.2)
    cache.set("probe", 1)  # the probe closes the breaker
    assert _log_in(Client()).status_code == 302

    keys = _redis_keys(hanging_redis)
    assert b"shs:1:probe" in keys
    assert any(b"django.contrib.sessions.cached_db" in key for key in keys)


def test_the_public_link_starts_a_session_at_once(db, llm_server, settings, hanging_redis):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server)

    started = time.monotonic()
    run = RemoteRun(study)
    page = run.client.get(run.url)
    elapsed = time.monotonic() - started

    assert page.status_code == 200
    assert elapsed < 3, f"took {elapsed:.1f} s"
