"""Pilot marking: a coordinator decides; an experimenter asks, the
request is shown on the monitor, and the session counts until approved."""

import pytest
from django.urls import reverse

from surveys.models import StudySession
from surveys.steps import Step
from tests.surveys.runner import SessionRun


def _monitor(client, study):
    return client.get(reverse("surveys:monitor", args=[study.slug]))


def test_an_experimenters_pilot_start_is_a_request_and_the_session_counts(
    study_a, client_for, personas
):
    run = SessionRun(client_for("experimenter_a"), study_a, is_pilot=True)
    run.complete()

    session = run.session
    assert not session.is_pilot
    assert session.pilot_requested_by == personas["experimenter_a"]
    page = _monitor(client_for("coordinator_a"), study_a)
    assert page.context["figures"].totals["complete"] == 1
    assert [s.token for s in page.context["figures"].pilot_requests] == [run.token]
    assert "Pilot requests" in page.content.decode()


def test_a_coordinators_pilot_start_is_a_pilot(study_a, client_for):
    run = SessionRun(client_for("coordinator_a"), study_a, is_pilot=True)
    assert run.session.is_pilot
    assert run.session.pilot_requested_at is None


def test_in_a_draft_study_an_experimenter_still_runs_pilots(study_a, client_for):
    study_a.status = "draft"
    study_a.save()
    run = SessionRun(client_for("experimenter_a"), study_a, is_pilot=True)
    assert run.session.is_pilot


def test_an_experimenter_asks_after_the_session_and_the_coordinator_approves(
    study_a, client_for, personas
):
    experimenter = client_for("experimenter_a")
    run = SessionRun(experimenter, study_a)
    run.complete()
    study_page = experimenter.get(reverse("surveys:study_detail", args=[study_a.slug]))
    ask = reverse("surveys:session_pilot_request", args=[run.token])
    assert f'action="{ask}"' in study_page.content.decode()

    experimenter.post(ask)
    assert run.session.pilot_requested_by == personas["experimenter_a"]
    assert not run.session.is_pilot
    study_page = experimenter.get(reverse("surveys:study_detail", args=[study_a.slug]))
    assert "pilot requested" in study_page.content.decode()

    coordinator = client_for("coordinator_a")
    assert f"{run.session.participant.code}</a>" in _monitor(coordinator, study_a).content.decode()
    coordinator.post(
        reverse("surveys:session_pilot", args=[study_a.slug, run.token]), {"is_pilot": "1"}
    )
    session = run.session
    assert session.is_pilot and session.pilot_requested_at is None
    figures = _monitor(coordinator, study_a).context["figures"]
    assert figures.pilot_requests == []
    assert figures.totals["complete"] == 0


def test_the_coordinator_declines_and_the_session_stays_in(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a, is_pilot=True)
    run.advance_to(Step.BLOCK1_SHS)
    coordinator = client_for("coordinator_a")
    coordinator.post(
        reverse("surveys:session_pilot", args=[study_a.slug, run.token]), {"is_pilot": "0"}
    )
    session = run.session
    assert not session.is_pilot and session.pilot_requested_at is None
    assert _monitor(coordinator, study_a).context["figures"].pilot_requests == []


def test_an_experimenter_cannot_mark_a_pilot_directly(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.complete()
    response = client_for("experimenter_a").post(
        reverse("surveys:session_pilot", args=[study_a.slug, run.token]), {"is_pilot": "1"}
    )
    assert response.status_code == 404
    assert not run.session.is_pilot


def test_no_request_when_the_study_allows_no_pilots(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    study_a.allow_pilot_sessions = False
    study_a.save()
    client_for("experimenter_a").post(reverse("surveys:session_pilot_request", args=[run.token]))
    assert run.session.pilot_requested_at is None


@pytest.mark.parametrize("persona", ["coordinator_b", "outsider"])
def test_outsiders_cannot_ask(study_a, client_for, persona):
    run = SessionRun(client_for("experimenter_a"), study_a)
    response = client_for(persona).post(reverse("surveys:session_pilot_request", args=[run.token]))
    assert response.status_code == 404
    assert run.session.pilot_requested_at is None


@pytest.mark.parametrize(
    ("language", "heading", "approve"),
    [
        ("de", "Anfragen für Pilotsitzungen", "Zustimmen: als Pilotsitzung markieren"),
        ("fr", "Demandes de session pilote", "Approuver : marquer comme pilote"),
    ],
)
def test_the_pilot_requests_read_in_the_coordinators_language(
    study_a, client_for, language, heading, approve
):
    SessionRun(client_for("experimenter_a"), study_a, is_pilot=True)
    coordinator = client_for("coordinator_a")
    coordinator.defaults["HTTP_ACCEPT_LANGUAGE"] = language
    page = _monitor(coordinator, study_a).content.decode()
    assert heading in page and approve in page
    assert "Pilot requests" not in page and "Approve" not in page


def test_the_session_record_shows_the_pending_request(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a, is_pilot=True)
    record = client_for("coordinator_a").get(
        reverse("surveys:session_record", args=[study_a.slug, run.token])
    )
    assert "exp-a@example.org asked on" in record.content.decode()


def _screened_out(run):
    run.consent(adult="0")


def _withdrawn(run):
    run.advance_to(Step.BLOCK1_SHS)
    run.client.post(reverse("surveys:session_withdraw", args=[run.token]))


@pytest.mark.parametrize(
    ("end", "step"), [(_screened_out, Step.INELIGIBLE), (_withdrawn, Step.WITHDRAWN)]
)
def test_no_pilot_request_for_a_session_that_kept_no_answers(study_a, client_for, end, step):
    # Given an experimenter's session that was screened out or withdrawn
    experimenter = client_for("experimenter_a")
    run = SessionRun(experimenter, study_a)
    end(run)
    assert run.session.step == step
    ask = reverse("surveys:session_pilot_request", args=[run.token])

    # Then the study page lists it without offering to ask for a pilot mark
    study_page = experimenter.get(reverse("surveys:study_detail", args=[study_a.slug]))
    assert run.session.get_step_display() in study_page.content.decode()
    assert f'action="{ask}"' not in study_page.content.decode()

    # And a request posted all the same is refused, clearly, and changes nothing
    refused = experimenter.post(ask, follow=True)
    assert "keeps no answers: there is nothing to mark as a pilot" in refused.content.decode()
    session = run.session
    assert session.pilot_requested_at is None and session.pilot_requested_by is None
    assert not session.is_pilot
    monitor = _monitor(client_for("coordinator_a"), study_a)
    assert monitor.context["figures"].pilot_requests == []


def test_an_abandoned_session_may_still_be_asked_about(study_a, client_for):
    # An abandoned session keeps its answers: a pilot mark leaves them out.
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    StudySession.objects.filter(pk=run.session.pk).update(step=Step.ABANDONED)
    client_for("experimenter_a").post(reverse("surveys:session_pilot_request", args=[run.token]))
    assert run.session.pilot_requested_at is not None


def test_a_request_made_before_the_withdrawal_leaves_the_monitor(study_a, client_for):
    # Asked about while it ran; then the participant withdrew and their answers went.
    experimenter = client_for("experimenter_a")
    run = SessionRun(experimenter, study_a)
    run.advance_to(Step.BLOCK1_SHS)
    experimenter.post(reverse("surveys:session_pilot_request", args=[run.token]))
    coordinator = client_for("coordinator_a")
    assert [s.token for s in _monitor(coordinator, study_a).context["figures"].pilot_requests] == [
        run.token
    ]

    experimenter.post(reverse("surveys:session_withdraw", args=[run.token]))

    assert run.session.step == Step.WITHDRAWN
    assert _monitor(coordinator, study_a).context["figures"].pilot_requests == []
