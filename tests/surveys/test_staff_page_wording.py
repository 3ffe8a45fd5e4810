"""What the staff pages say in the cases the first walk through them met: an
invitation still out, an empty collection window, step times on the hour,
dates at the end of a sentence, an inactivity timeout of 0."""

from datetime import datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from surveys.models import Invitation, Retest, StepRecord, Study, StudyMembership
from surveys.steps import Step
from tests.surveys.retests import link_on, with_retest
from tests.surveys.runner import SessionRun
from tests.surveys.test_studies import _study_form


def _no_experimenter(study: Study) -> Study:
    study.memberships.filter(role=StudyMembership.Role.EXPERIMENTER).delete()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    return study


def _invite(study: Study, email: str, **fields) -> Invitation:
    values = {
        "study": study,
        "email": email,
        "role": StudyMembership.Role.EXPERIMENTER,
        "token_hash": email.ljust(64, "0")[:64],
        "expires_at": timezone.now() + Invitation.VALID_FOR,
    }
    return Invitation.objects.create(**{**values, **fields})


def _study_page(client, study: Study) -> str:
    return client.get(reverse("surveys:study_detail", args=[study.slug])).content.decode()


# -- readiness while an invitation is out ---------------------------------------------


def test_readiness_names_the_invitation_it_waits_for(study_a, client_for):
    study = _no_experimenter(study_a)
    _invite(study, "new@example.org")

    page = _study_page(client_for("coordinator_a"), study)

    assert (
        "✗ At least one experimenter: <strong>1 invitation pending (new@example.org): "
        "activate once it is accepted.</strong>"
    ) in page
    assert "Invite an experimenter" not in page


def test_readiness_counts_several_invitations_in_the_plural(study_a, client_for):
    study = _no_experimenter(study_a)
    _invite(study, "first@example.org")
    _invite(study, "second@example.org")

    page = _study_page(client_for("coordinator_a"), study)

    assert (
        "2 invitations pending (first@example.org, second@example.org): "
        "activate once one is accepted."
    ) in page


def test_an_expired_or_coordinator_invitation_is_not_waited_for(study_a, client_for):
    study = _no_experimenter(study_a)
    _invite(study, "late@example.org", expires_at=timezone.now() - timedelta(minutes=1))
    _invite(study, "boss@example.org", role=StudyMembership.Role.COORDINATOR)

    page = _study_page(client_for("coordinator_a"), study)

    assert "Invite an experimenter on the Team page." in page
    assert "pending" not in page


# -- the study page and the session record -------------------------------------------


def test_a_system_without_a_collection_window_says_so(study_a, client_for):
    study_a.systems.update(collection_start=None, collection_end=None)

    page = _study_page(client_for("coordinator_a"), study_a)

    assert "no collection window set" in page
    assert "– – –" not in page


def test_step_times_all_show_their_minutes(study_a, client_for, make_session):
    session = make_session()
    evening = datetime(2027, 3, 4, 21, 0, tzinfo=timezone.get_current_timezone())
    StepRecord.objects.create(session=session, step=Step.CONSENT, entered_at=evening)
    StepRecord.objects.create(
        session=session, step=Step.BLOCK1_INTERACTION, entered_at=evening + timedelta(minutes=3)
    )

    page = client_for("coordinator_a").get(
        reverse("surveys:session_record", args=[study_a.slug, session.token])
    )

    text = page.content.decode()
    assert "03/04/2027 21:00" in text and "03/04/2027 21:03" in text
    assert "p.m." not in text


def test_a_date_at_the_end_of_a_sentence_gets_no_second_period(study_a, client_for):
    # Given: a participant whose retest opens at 9 p.m. on the hour.
    run = SessionRun(client_for("experimenter_a"), with_retest(study_a), language="en")
    run.advance_to(Step.FEEDBACK)
    due = datetime(2030, 3, 4, 21, 0, tzinfo=timezone.get_current_timezone())
    Retest.objects.update(due_at=due)
    path, _token = link_on(run.get())

    # When: the hand-back page and the retest link are read before that day.
    pages = [run.get().content.decode(), Client().get(path).content.decode()]

    # Then: both give the time, and no sentence ends "p.m..".
    for page in pages:
        assert "March 4, 2030, 9 p.m." in page
        assert "p.m.." not in page


# -- the inactivity timeout -----------------------------------------------------------


def test_an_inactivity_timeout_of_0_is_refused_and_nothing_is_saved(study_a, client_for):
    client = client_for("coordinator_a")
    data = _study_form(
        title=study_a.title, slug=study_a.slug, languages=study_a.languages,
        inactivity_timeout_minutes=0,
    )  # fmt: skip

    response = client.post(reverse("surveys:study_edit", args=[study_a.slug]), data)

    assert response.status_code == 200
    assert "The inactivity timeout must be at least 10 minutes." in response.content.decode()
    study_a.refresh_from_db()
    assert study_a.inactivity_timeout_minutes == 90


def test_the_timeout_field_and_the_model_refuse_0_too(study_a, client_for):
    form = client_for("coordinator_a").get(reverse("surveys:study_edit", args=[study_a.slug]))
    assert 'name="inactivity_timeout_minutes" value="90" min="10"' in form.content.decode()

    # The admin and the shell validate with the model's own rule.
    study_a.inactivity_timeout_minutes = 0
    with pytest.raises(ValidationError, match="at least 10 minutes"):
        study_a.full_clean()
