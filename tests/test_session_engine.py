"""The browser session with Redis: Django's cached_db, so reads come from
Redis and every write reaches the database too, and a restarted Redis logs
nobody out."""

from importlib import import_module

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.cache import cache

from tests.services import redis_available, require_services

pytestmark = pytest.mark.services


@pytest.fixture
def engine():
    if not redis_available():
        if require_services():
            pytest.fail("this test needs Redis")
        pytest.skip("needs REDIS_URL (runs in CI)")
    return import_module(settings.SESSION_ENGINE)


def test_a_session_outlives_a_restarted_redis(db, engine):
    store = engine.SessionStore()
    store["note"] = "kept"
    store.create()
    store["note"] = "changed"
    store.save()
    cache.clear()  # as with Redis restarted
    assert engine.SessionStore(store.session_key)["note"] == "changed"
    assert Session.objects.get(session_key=store.session_key).get_decoded() == {"note": "changed"}
