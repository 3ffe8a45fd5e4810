"""Redis goes down: staff can still log in and reset a password.

The login and password-reset rate limits live in the cache; with Redis down
they fail open (and say so in the log) instead of refusing everyone as "too
many failed login attempts" or with 429.
"""

import logging
import shutil
import time

import pytest
from django.core import mail
from django.urls import reverse

from tests.faults.redis_server import ThrowawayRedis
from tests.personas import PASSWORD
from tests.services import require_services

BREAKER_SECONDS = 1  # the cache skips Redis this long after it failed


@pytest.fixture
def redis_cache(tmp_path, settings):
    """The production cache setup, on a Redis of the test's own that it can stop."""
    if not shutil.which("redis-server"):
        if require_services():
            pytest.fail("this fault test needs redis-server")
        pytest.skip("needs redis-server (runs in CI)")
    server = ThrowawayRedis(tmp_path)
    server.start()
    settings.CACHES = server.cache_settings(breaker_seconds=BREAKER_SECONDS)
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"  # as in production
    yield server
    server.stop()


def _log_in(client, password=PASSWORD):
    return client.post(
        reverse("account_login"), {"login": "coord-a@example.org", "password": password}
    )


def test_staff_log_in_while_redis_is_down(client, personas, redis_cache, caplog):
    redis_cache.stop()

    with caplog.at_level(logging.ERROR, logger="shs_platform.cache"):
        response = _log_in(client)

    assert response.status_code == 302, response.content.decode()[-2000:]
    assert client.get(reverse("surveys:study_list")).status_code == 200
    assert "rate limits are OFF" in caplog.text  # loud, so that operators notice


def test_a_wrong_password_is_still_refused_while_redis_is_down(client, personas, redis_cache):
    redis_cache.stop()

    page = _log_in(client, password="not-the-password").content.decode()

    assert "_auth_user_id" not in client.session
    assert "you specified are not correct" in page


def test_password_reset_works_while_redis_is_down(client, personas, redis_cache):
    redis_cache.stop()

    response = client.post(reverse("account_reset_password"), {"email": "exp-a@example.org"})

    assert response.status_code == 302
    assert [message.to for message in mail.outbox] == [["exp-a@example.org"]]


def test_the_limits_hold_again_once_redis_is_back(client, personas, redis_cache):
    redis_cache.stop()
    _log_in(client, password="wrong")
    redis_cache.start()
    time.sleep(BREAKER_SECONDS + 0.2)  # the cache tries Redis again after this pause

    for _ in range(5):
        _log_in(client, password="wrong")
    page = _log_in(client).content.decode()

    assert "Too many failed login attempts" in page
    assert "_auth_user_id" not in client.session
