"""What stays fixed once a retest wave has begun (docs/design/validation.md §14.2): its
interval, which participants were told; a retest erased while its form was
on the screen; and the lab's pages, held by the participant, lead nowhere
into the study."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from surveys.models import Retest, RetestEvaluation
from surveys.protocol.state import ProtocolError
from surveys.retest_steps import retest_submit
from tests.surveys.retests import RetestVisit, make_due, with_retest
from tests.surveys.runner import SessionRun, answers
from tests.surveys.test_companion_settings import _edit
from tests.surveys.test_retest_guards import completed  # noqa: F401 (a fixture)

# -- the interval ------------------------------------------------------------------


def test_the_interval_cannot_change_once_data_is_collected(study_a, client_for, make_session):
    with_retest(study_a, days=14)
    make_session(is_pilot=True)
    coordinator = client_for("coordinator_a")
    assert _edit(coordinator, study_a, retest_after_days=21).status_code == 302  # pilots only
    make_session()

    longer = _edit(coordinator, study_a, retest_after_days=28)
    switched_off = _edit(coordinator, study_a, retest_after_days="")

    for response in (longer, switched_off):
        assert response.status_code == 200
        assert "The retest interval cannot change" in response.content.decode()
    study_a.refresh_from_db()
    assert study_a.retest_after_days == 21
    # The interval left as it is is no change: other settings still save.
    assert _edit(coordinator, study_a, retest_after_days=21, title="New").status_code == 302


def test_a_study_with_sessions_cannot_add_a_wave_either(study_a, client_for, make_session):
    make_session()

    response = _edit(client_for("coordinator_a"), study_a, retest_after_days=14)

    assert "The retest interval cannot change" in response.content.decode()
    study_a.refresh_from_db()
    assert study_a.retest_after_days is None


# -- erased meanwhile --------------------------------------------------------------


def test_a_retest_erased_before_its_form_arrives_is_refused(completed):  # noqa: F811
    run, path = completed
    retest_id = Retest.objects.get().pk
    RetestVisit(path).get()  # the form is on the participant's screen
    Retest.objects.filter(pk=retest_id).delete()  # the coordinator erases their data

    with pytest.raises(ProtocolError, match="no longer exists"):
        retest_submit(retest_id=retest_id, step="block1_shs", responses=answers())

    assert not RetestEvaluation.objects.exists()
    # Its link, posted to now, answers 404 as for any unknown link.
    assert RetestVisit(path).post("block1_shs", **answers()).status_code == 404


# -- the lab's pages ---------------------------------------------------------------


def _staff_retest(study, client):
    run = SessionRun(client, study)
    run.advance_to("feedback")
    run.hand_back()
    run.feedback()
    retest = Retest.objects.get()
    return retest, reverse("surveys:retest_staff", args=[study.slug, retest.pk])


def test_the_lab_pages_hand_back_without_a_way_into_the_study(study_a, client_for):
    with_retest(study_a)
    experimenter = client_for("experimenter_a")
    retest, url = _staff_retest(study_a, experimenter)
    study_page = reverse("surveys:study_detail", args=[study_a.slug])
    Retest.objects.filter(pk=retest.pk).update(due_at=timezone.now() + timedelta(days=3))

    not_due = experimenter.get(url).content.decode()
    make_due(retest)
    RetestVisit(url, experimenter).complete()
    done = experimenter.get(url).content.decode()

    assert "Not yet" in not_due and "Thank you!" in done
    for page in (not_due, done):
        assert "Please hand the device back to the experimenter." in page
        assert f'href="{study_page}"' not in page
