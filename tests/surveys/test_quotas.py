"""Quotas per system (docs/design/remote.md §11.7): a system is assigned until its
completed and running sessions reach the target; the study is full when no
system has a place. Running sessions may finish."""

from collections import Counter

import pytest
from django.db import close_old_connections
from django.test import Client
from django.urls import reverse

from surveys.assignment import QuotaFull
from surveys.models import Study, StudyMembership, StudySession
from surveys.protocol.flow import session_start
from surveys.quotas import quota_state
from surveys.steps import Step
from tests.personas import make_study
from tests.surveys.remote import RemoteRun, take_url
from tests.surveys.test_concurrency import _in_threads


def quota_study(slug="quota", systems=3, quota=2):
    study = make_study(slug, systems=systems)
    Study.objects.filter(pk=study.pk).update(quota_per_system=quota)
    study.refresh_from_db()
    return study


def start(study, experimenter, **options):
    return session_start(study=study, experimenter=experimenter, language="en", **options)


def uses_of(study) -> Counter:
    uses = Counter()
    pairs = study.sessions.holding_allocation().values_list("first_system", "second_system")
    for pair in pairs:
        uses.update(pair)
    return uses


def test_systems_fill_to_the_quota_then_the_study_is_full(db, personas):
    study = quota_study(systems=3, quota=2)
    for _ in range(3):
        start(study, personas["experimenter_a"])

    with pytest.raises(QuotaFull):
        start(study, personas["experimenter_a"])

    assert sorted(uses_of(study).values()) == [2, 2, 2]
    assert not quota_state(study).is_open


def test_an_odd_place_is_filled_beside_a_full_system(db, personas):
    study = quota_study(systems=3, quota=1)
    start(study, personas["experimenter_a"])
    start(study, personas["experimenter_a"])  # the third system's place

    with pytest.raises(QuotaFull):
        start(study, personas["experimenter_a"])
    assert sorted(uses_of(study).values()) == [1, 1, 2]


def test_a_session_that_ends_without_completing_frees_its_places(db, personas):
    study = quota_study(systems=2, quota=1)
    first = start(study, personas["experimenter_a"])
    with pytest.raises(QuotaFull):
        start(study, personas["experimenter_a"])

    StudySession.objects.filter(pk=first.pk).update(step=Step.ABANDONED)

    assert start(study, personas["experimenter_a"]).step == Step.CONSENT


def test_pilot_sessions_neither_count_nor_are_refused(db, personas):
    study = quota_study(systems=2, quota=1)
    start(study, personas["experimenter_a"])

    pilot = start(study, personas["experimenter_a"], is_pilot=True)

    assert pilot.is_pilot and quota_state(study).systems[0].running == 1


@pytest.mark.django_db(transaction=True)
def test_parallel_starts_never_overfill(postgres_only, personas):
    study = quota_study(systems=4, quota=3)  # 12 places: 6 sessions

    def work(_index):
        close_old_connections()
        try:
            start(study, personas["experimenter_a"])
        except QuotaFull:
            pass

    assert _in_threads(10, work) == []
    assert StudySession.objects.filter(study=study).count() == 6
    assert sorted(uses_of(study).values()) == [3, 3, 3, 3]


def test_a_full_remote_study_says_so_and_the_running_session_finishes(
    remote_study, personas, client_for
):
    Study.objects.filter(pk=remote_study.pk).update(quota_per_system=1)
    remote_study.refresh_from_db()
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=remote_study, role="coordinator"
    )
    run = RemoteRun(remote_study)  # takes both systems' only place

    page = Client().get(take_url(remote_study)).content.decode()
    refused = Client().post(take_url(remote_study), {"action": "start", "language": "en"})
    study_page = client_for("coordinator_a").get(
        reverse("surveys:study_detail", args=[remote_study.slug])
    )

    assert "This study is full" in page and 'value="start"' not in page
    assert refused.status_code == 409 and remote_study.sessions.count() == 1
    assert "Every place is taken" in study_page.content.decode()
    assert run.complete().step == Step.COMPLETE
    assert quota_state(remote_study).is_reached
    detail = client_for("coordinator_a").get(
        reverse("surveys:study_detail", args=[remote_study.slug])
    )
    assert "the study is full" in detail.content.decode()
