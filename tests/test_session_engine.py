"""The session engine used with Redis (shs_platform/sessions.py): Django's
cached_db, an existing session's write as one UPDATE."""

import pytest
from django.conf import settings
from django.contrib.sessions.backends.base import UpdateError
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from shs_platform.sessions import SessionStore


@pytest.fixture
def stored(db):
    store = SessionStore()
    store["handback_tokens"] = ["first"]
    store.create()
    return store.session_key


def test_a_change_reaches_the_database_in_one_statement(stored):
    store = SessionStore(stored)
    store["handback_tokens"] = ["first", "second"]
    with CaptureQueriesContext(connection) as captured:
        store.save()
    statements = [q["sql"] for q in captured.captured_queries]
    assert len(statements) == 1 and statements[0].startswith("UPDATE")
    # As with Redis restarted: the database has the change, and the expiry.
    cache.clear()
    assert SessionStore(stored)["handback_tokens"] == ["first", "second"]
    row = Session.objects.get(session_key=stored)
    assert row.get_decoded()["handback_tokens"] == ["first", "second"]
    left = (row.expire_date - timezone.now()).total_seconds()
    assert settings.SESSION_COOKIE_AGE - 60 < left <= settings.SESSION_COOKIE_AGE


def test_a_session_whose_row_is_gone_is_not_written_again(stored):
    store = SessionStore(stored)
    store["handback_tokens"] = []
    Session.objects.filter(session_key=stored).delete()
    with pytest.raises(UpdateError):
        store.save()
    assert not Session.objects.filter(session_key=stored).exists()


def test_a_new_session_is_created_as_django_does(db):
    store = SessionStore()
    store["handback_tokens"] = ["new"]
    store.save()
    assert Session.objects.get(session_key=store.session_key).get_decoded() == {
        "handback_tokens": ["new"]
    }
