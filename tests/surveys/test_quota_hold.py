"""Idle remote sessions and the quota (docs/design/remote.md §11.7): a remote session
without activity for longer than the study's hold takes no place, so links opened and
left do not fill the study; the quota table counts completed, running and idle apart."""

from datetime import timedelta

import pytest
import time_machine
from django.db import close_old_connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from surveys.assignment import QuotaFull
from surveys.models import Study, StudyMembership, StudySession
from surveys.protocol.flow import session_start
from surveys.quotas import places_taken, quota_state
from surveys.steps import Step
from tests.surveys.remote import RemoteRun, make_remote_study, take_url
from tests.surveys.test_concurrency import _in_threads
from tests.surveys.test_remote_study import edit


@pytest.fixture
def study(remote_study, personas):
    """Two systems with one place each: a single running session fills the study."""
    Study.objects.filter(pk=remote_study.pk).update(quota_per_system=1)
    remote_study.refresh_from_db()
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=remote_study, role="coordinator"
    )
    return remote_study


def started_minutes_ago(study, minutes, client=None) -> RemoteRun:
    """A participant who opened the link `minutes` ago and has done nothing since."""
    with time_machine.travel(timezone.now() - timedelta(minutes=minutes), tick=False):
        return RemoteRun(study, client=client)


def remote_start(study) -> StudySession:
    return session_start(study=study, experimenter=None, language="en", remote=True)


def test_a_session_left_beyond_the_hold_gives_its_place_to_the_next_participant(study):
    started_minutes_ago(study, 31)  # the hold is 30 minutes by default

    page = Client().get(take_url(study)).content.decode()
    RemoteRun(study)

    assert "This study is full" not in page and 'value="start"' in page
    assert study.sessions.count() == 2


def test_a_session_within_the_hold_keeps_its_place(study):
    started_minutes_ago(study, 29)

    page = Client().get(take_url(study)).content.decode()

    assert "This study is full" in page and 'value="start"' not in page
    with pytest.raises(QuotaFull):
        remote_start(study)


def test_the_hold_is_the_studys_setting(study):
    Study.objects.filter(pk=study.pk).update(remote_hold_minutes=5)
    study.refresh_from_db()
    started_minutes_ago(study, 6)

    assert remote_start(study).step == Step.CONSENT


def test_activity_renews_the_hold(study):
    client = Client()
    run = started_minutes_ago(study, 40, client=client)
    assert client.get(run.url).status_code == 200  # the participant comes back

    with pytest.raises(QuotaFull):
        remote_start(study)
    assert quota_state(study).systems[0].running == 1


def test_the_quota_counts_completed_running_and_idle_sessions_apart(study, client_for):
    Study.objects.filter(pk=study.pk).update(quota_per_system=5)
    study.refresh_from_db()
    RemoteRun(study).complete()
    started_minutes_ago(study, 10)
    started_minutes_ago(study, 45)
    started_minutes_ago(study, 120)

    state = quota_state(study)
    detail = client_for("coordinator_a").get(reverse("surveys:study_detail", args=[study.slug]))

    counts = [(s.completed, s.running, s.idle) for s in state.systems]
    assert counts == [(1, 1, 2), (1, 1, 2)]
    assert places_taken(study) == {system.pk: 2 for system in study.systems.all()}
    row = [state.systems[0].name, "1", "1", "2", "5"]
    assert "".join(f"<td>{cell}</td>" for cell in row) in detail.content.decode()
    assert '<th scope="col">Idle</th>' in detail.content.decode()


def test_a_completed_session_keeps_its_place_however_old(study):
    with time_machine.travel(timezone.now() - timedelta(days=3), tick=False):
        RemoteRun(study).complete()

    with pytest.raises(QuotaFull):
        remote_start(study)
    assert quota_state(study).is_reached


def test_an_idle_session_may_still_finish(study):
    client = Client()
    left = started_minutes_ago(study, 31, client=client)
    RemoteRun(study)  # took the place the idle session gave up

    assert left.complete().step == Step.COMPLETE


def test_the_hold_is_set_in_the_study_settings_and_is_at_least_a_minute(study, client_for):
    coordinator = client_for("coordinator_a")
    saved = edit(coordinator, study, mode="remote", remote_hold_minutes=12)
    refused = edit(coordinator, study, mode="remote", remote_hold_minutes=0)

    assert saved.status_code == 302 and refused.status_code == 200
    study.refresh_from_db()
    assert study.remote_hold_minutes == 12


@pytest.mark.django_db(transaction=True)
def test_parallel_starts_beside_idle_sessions_never_overfill(postgres_only, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server, slug="idle-race", quota_per_system=2)
    for _ in range(2):  # four places given up, for the balance still held
        started_minutes_ago(study, 60)

    def work(_index):
        close_old_connections()
        try:
            remote_start(study)
        except QuotaFull:
            pass

    assert _in_threads(8, work) == []
    # Two systems with two places each: two new sessions, whatever the order.
    assert study.sessions.count() == 4
    assert places_taken(study) == {system.pk: 2 for system in study.systems.all()}
