"""The public link against someone who knows a panel id, reuses a personal
link at the same moment or sends many participant codes at once
(docs/design/remote.md §11.2-11.4, §11.6), on PostgreSQL and Redis as in CI."""

import threading
import time

import pytest
from django.conf import settings as django_settings
from django.db import close_old_connections
from django.test import Client

import surveys.views.remote as remote_view
from surveys.models import PersonalLink, Study, StudySession
from surveys.models.studies import hash_token
from surveys.views.personal_links import personal_links_create
from tests.services import database_is_postgres, redis_available, require_services
from tests.surveys.remote import make_remote_study, sessions_of, take_url
from tests.surveys.test_concurrency import _in_threads

PID = "5f3a9c2e1b7d4e6fa0c8b912"
ADDRESS = "203.0.113.57"


@pytest.fixture
def postgres_and_redis():
    """The limits' counts are only as atomic as the cache that keeps them."""
    uses_redis = "redis" in django_settings.CACHES["default"]["BACKEND"].lower()
    if not (database_is_postgres() and uses_redis and redis_available()):
        if require_services():
            pytest.fail("this test needs PostgreSQL and Redis")
        pytest.skip("needs DATABASE_URL=postgres://... and REDIS_URL (runs in CI)")


@pytest.fixture
def study(db, settings):
    settings.REMOTE_CODE_ATTEMPTS_PER_WINDOW = 3
    # No chat in these tests: the systems are only connected, never called.
    return make_remote_study("http://127.0.0.1:9/v1", panel_parameter="PROLIFIC_PID")


def start(client, study, language="en", panel_id=PID):
    data = {"action": "start", "language": language, "panel_id": panel_id}
    response = client.post(take_url(study), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return StudySession.objects.get(token=response.url.rstrip("/").rsplit("/", 1)[-1])


# -- a panel id is no key to a running session ----------------------------------------


def test_a_panel_id_alone_does_not_open_a_running_session_elsewhere(study):
    session = start(Client(), study, language="de")
    other = Client(HTTP_ACCEPT_LANGUAGE="en")

    response = other.get(take_url(study), {"PROLIFIC_PID": PID})

    assert response.status_code == 409
    assert "shs_participant" not in response.cookies and session.token not in str(response)
    page = response.content.decode()
    # In the participant's language: where the session runs and how to continue it.
    assert "läuft auf einem anderen Gerät" in page and "Teilnahmecode" in page
    assert 'value="resume"' in page and 'value="start"' not in page
    assert other.get(f"/sessions/{session.token}/").status_code in (302, 404)
    resumed = other.post(take_url(study), {"action": "resume", "code": session.participant.code})
    assert resumed.status_code == 302 and resumed.url == f"/sessions/{session.token}/"


def test_a_start_posted_with_a_known_panel_id_opens_nothing(study):
    session = start(Client(), study)

    posted = Client().post(take_url(study), {"action": "start", "language": "en", "panel_id": PID})

    assert posted.status_code == 409 and "shs_participant" not in posted.cookies
    assert session.token not in str(posted) and sessions_of(study).count() == 1


def test_panel_id_lookups_count_with_wrong_codes(study):
    prober = Client(REMOTE_ADDR=ADDRESS)
    for number in range(2):
        assert prober.get(take_url(study), {"PROLIFIC_PID": f"guess{number}"}).status_code == 200
    wrong = prober.post(take_url(study), {"action": "resume", "code": "P-AAAAAAAA"})
    assert wrong.status_code == 400

    refused = prober.get(take_url(study), {"PROLIFIC_PID": "guess3"})

    assert refused.status_code == 429 and "guess3" not in refused.content.decode()
    # Another client is not held up by the prober's count.
    assert Client().get(take_url(study), {"PROLIFIC_PID": "guess3"}).status_code == 200


def test_a_panel_participant_who_starts_costs_one_count(study):
    household = Client(REMOTE_ADDR=ADDRESS)
    for number in range(2):  # the page and the start; the start gives its count back
        assert household.get(take_url(study), {"PROLIFIC_PID": f"p{number}"}).status_code == 200
        start(Client(REMOTE_ADDR=ADDRESS), study, panel_id=f"p{number}")

    wrong = household.post(take_url(study), {"action": "resume", "code": "P-AAAAAAAA"})
    again = household.post(take_url(study), {"action": "resume", "code": "P-AAAAAAAA"})

    assert (wrong.status_code, again.status_code) == (400, 429)
    assert sessions_of(study).count() == 2


# -- a personal link used twice at the same moment ------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_personal_link_used_at_once_answers_410_to_every_loser(postgres_only, settings):
    settings.REMOTE_STARTS_PER_WINDOW = 100
    # A quota: the 410 page shows whether the study is full, which is a query.
    study = make_remote_study("http://127.0.0.1:9/v1", quota_per_system=50)
    for round_ in range(3):
        [token] = personal_links_create(study=study, count=1, created_by=None)
        path = f"/take/{study.public_code}/p/{token}/"
        responses = []

        def use(_index, path=path, responses=responses):
            close_old_connections()
            responses.append(Client().post(path, {"action": "start", "language": "en"}))

        assert _in_threads(4, use) == [], round_
        assert sorted(r.status_code for r in responses) == [302, 410, 410, 410], round_
        link = PersonalLink.objects.get(token_hash=hash_token(token))
        [started] = [r for r in responses if r.status_code == 302]
        assert started.url == f"/sessions/{link.session.token}/"
        refused = [r.content.decode() for r in responses if r.status_code == 410]
        assert all("has been used already" in page for page in refused)
    assert sessions_of(study).count() == 3


# -- guesses arriving together ---------------------------------------------------------


def _slowed(monkeypatch, name):
    """Wrap a lookup of the view so that it takes a moment and is counted:
    requests arriving together all reach the limit check before any lookup ends."""
    original = getattr(remote_view, name)
    calls = []
    lock = threading.Lock()

    def slow(*args, **kwargs):
        with lock:
            calls.append(args)
        time.sleep(0.05)
        return original(*args, **kwargs)

    monkeypatch.setattr(remote_view, name, slow)
    return calls


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("guess", ["participant code", "panel id"])
def test_guesses_arriving_together_pass_the_limit_never(
    guess, postgres_and_redis, settings, monkeypatch
):
    settings.REMOTE_CODE_ATTEMPTS_PER_WINDOW = 10
    study = make_remote_study("http://127.0.0.1:9/v1")
    Study.objects.filter(pk=study.pk).update(panel_parameter="PROLIFIC_PID")
    if guess == "participant code":
        lookups = _slowed(monkeypatch, "participant_code_as_given")
    else:
        lookups = _slowed(monkeypatch, "_panel_entry")
    statuses = []

    def send(index):
        close_old_connections()
        client = Client(REMOTE_ADDR=ADDRESS)
        if guess == "participant code":
            response = client.post(take_url(study), {"action": "resume", "code": f"P-{index:08d}"})
        else:
            response = client.get(take_url(study), {"PROLIFIC_PID": f"guess{index}"})
        statuses.append(response.status_code)

    assert _in_threads(40, send) == []

    assert len(lookups) == 10
    assert statuses.count(429) == 30
