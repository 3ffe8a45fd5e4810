"""The public link is rate-limited per client, and the client's address is
kept nowhere: only a keyed hash of it, in the cache, expiring with its window
(docs/design/remote.md §11.3)."""

import logging

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client

from surveys.client_limits import client_key
from surveys.models import Participant, StudySession
from tests.surveys.remote import make_remote_study, take_url

ADDRESS = "203.0.113.57"


@pytest.fixture
def study(db, settings):
    settings.REMOTE_STARTS_PER_WINDOW = 2
    settings.REMOTE_CODE_ATTEMPTS_PER_WINDOW = 3
    # No chat in these tests: the systems are only connected, never called.
    return make_remote_study("http://127.0.0.1:9/v1")


def start(client, study):
    return client.post(take_url(study), {"action": "start", "language": "en"})


def test_starts_past_the_limit_answer_429_and_start_nothing(study, caplog):
    caplog.set_level(logging.DEBUG)
    for _ in range(2):
        assert start(Client(REMOTE_ADDR=ADDRESS), study).status_code == 302

    refused = start(Client(REMOTE_ADDR=ADDRESS), study)

    assert refused.status_code == 429
    assert "Too many attempts" in refused.content.decode()
    assert StudySession.objects.filter(study=study).count() == 2
    # Another client is not held up by the first one's count.
    assert start(Client(REMOTE_ADDR="198.51.100.4"), study).status_code == 302
    assert ADDRESS not in caplog.text


def test_nothing_address_like_is_stored(study):
    start(Client(REMOTE_ADDR=ADDRESS), study)

    key = client_key(Client(REMOTE_ADDR=ADDRESS).get("/").wsgi_request)
    assert ADDRESS not in key and len(key) == 32
    assert cache.get(f"client-limit:remote-start:{key}") == 1
    with connection.cursor() as cursor:
        for table in ("surveys_studysession", "surveys_participant", "django_session"):
            cursor.execute(f"SELECT * FROM {table}")  # noqa: S608 - fixed table names
            dumped = repr(cursor.fetchall())
            assert ADDRESS not in dumped and key not in dumped, table


def test_the_hash_is_keyed_with_the_secret(study, settings):
    request = Client(REMOTE_ADDR=ADDRESS).get("/").wsgi_request
    first = client_key(request)
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40

    assert client_key(request) != first


def test_wrong_codes_past_the_limit_answer_429_even_for_a_right_one(study):
    start(Client(REMOTE_ADDR="198.51.100.9"), study)
    code = Participant.objects.get(study=study).code
    guesser = Client(REMOTE_ADDR=ADDRESS)
    for _ in range(3):
        wrong = guesser.post(take_url(study), {"action": "resume", "code": "P-AAAAAAAA"})
        assert wrong.status_code == 400

    refused = guesser.post(take_url(study), {"action": "resume", "code": code})

    assert refused.status_code == 429
    # A right code from another client still resumes.
    other_client = Client(REMOTE_ADDR="192.0.2.1")
    other = other_client.post(take_url(study), {"action": "resume", "code": code})
    assert other.status_code == 302


def test_right_codes_are_never_counted(study):
    start(Client(REMOTE_ADDR="198.51.100.9"), study)
    code = Participant.objects.get(study=study).code
    for _ in range(5):
        response = Client(REMOTE_ADDR=ADDRESS).post(
            take_url(study), {"action": "resume", "code": code}
        )
        assert response.status_code == 302
