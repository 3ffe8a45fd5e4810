"""The live study monitor and the coordinator's session tools."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from surveys.models import Evaluation, EvaluationCorrection
from surveys.steps import TIMED_STEPS, Step
from tests.surveys.bulk import add_sessions
from tests.surveys.runner import SessionRun


def _queries(client, url):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured)


def test_monitor_issues_the_same_queries_for_10_or_300_sessions(study_a, personas, client_for):
    client = client_for("coordinator_a")
    url = reverse("surveys:monitor", args=[study_a.slug])
    experimenters = [personas["experimenter_a"], personas["coordinator_a"]]

    add_sessions(study_a, experimenters, 10)
    client.get(url)  # warm caches (session, content types)
    few = _queries(client, url)
    add_sessions(study_a, experimenters, 290)
    many = _queries(client, url)

    assert few == many


@pytest.mark.parametrize("step", TIMED_STEPS)
def test_step_pages_issue_the_same_queries_for_10_or_300_sessions(
    step, study_a, personas, client_for
):
    client = client_for("experimenter_a")
    run = SessionRun(client, study_a)
    run.advance_to(step)
    run.get()
    add_sessions(study_a, [personas["experimenter_a"]], 10)
    few = _queries(client, run.url)
    add_sessions(study_a, [personas["experimenter_a"]], 290)
    many = _queries(client, run.url)
    assert few == many


def test_monitor_shows_states_systems_and_experimenters(study_a, client_for, personas):
    experimenter = client_for("experimenter_a")
    SessionRun(experimenter, study_a).complete()
    in_progress = SessionRun(experimenter, study_a)
    in_progress.advance_to(Step.BLOCK1_SHS)
    SessionRun(experimenter, study_a).consent(adult="0")
    # A pilot session straight away is a coordinator's (an experimenter only asks).
    SessionRun(client_for("coordinator_a"), study_a, is_pilot=True).complete()

    page = client_for("coordinator_a").get(reverse("surveys:monitor", args=[study_a.slug]))
    html = page.content.decode()

    assert 'data-state="complete">1<' in html  # the pilot session is not counted
    assert 'data-state="block1_shs">1<' in html
    assert 'data-state="ineligible">1<' in html
    assert 'data-state="pilot">1<' in html
    figures = page.context["figures"]
    assert sum(system.evaluation_count for system in figures.systems) == 2
    assert figures.experimenters[0]["experimenter__email"] == personas["experimenter_a"].email
    assert figures.experimenters[0]["complete"] == 1
    assert figures.experimenters[0]["evaluations"] == 2  # the pilot session's are left out
    assert [session.step for session in figures.in_progress] == [Step.BLOCK1_SHS]
    assert "Block 1: SHS" in html


def test_monitor_counts_submitted_evaluations_per_experimenter(study_a, client_for, personas):
    # Given: the experimenter completes one session and submits block 1 of another,
    # the coordinator completes one, and a pilot session adds nothing.
    experimenter = client_for("experimenter_a")
    SessionRun(experimenter, study_a).complete()
    SessionRun(experimenter, study_a).advance_to(Step.BLOCK2_INTERACTION)
    # A pilot session straight away is a coordinator's (an experimenter only asks).
    SessionRun(client_for("coordinator_a"), study_a, is_pilot=True).complete()
    coordinator = client_for("coordinator_a")
    SessionRun(coordinator, study_a).complete()

    # When: the coordinator opens the monitor.
    page = coordinator.get(reverse("surveys:monitor", args=[study_a.slug]))

    # Then: each experimenter's row counts their submitted evaluations, and the
    # join with the evaluations does not count a session twice.
    rows = {row["experimenter__email"]: row for row in page.context["figures"].experimenters}
    mine = rows[personas["experimenter_a"].email]
    assert (mine["evaluations"], mine["complete"], mine["in_progress"]) == (3, 1, 1)
    theirs = rows[personas["coordinator_a"].email]
    assert (theirs["evaluations"], theirs["complete"], theirs["in_progress"]) == (2, 1, 0)
    html = page.content.decode()
    assert f'data-experimenter="{personas["experimenter_a"].email}">3<' in html
    assert page.context["figures"].totals["evaluations"] == 5


def test_monitor_fragment_refreshes_without_the_layout(study_a, client_for):
    response = client_for("coordinator_a").get(
        reverse("surveys:monitor", args=[study_a.slug]) + "?fragment=1"
    )
    assert response.status_code == 200
    assert b"<html" not in response.content
    assert b"Sessions by state" in response.content


def test_coordinator_marks_and_unmarks_a_pilot_session(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.complete()
    coordinator = client_for("coordinator_a")
    url = reverse("surveys:session_pilot", args=[study_a.slug, run.token])

    coordinator.post(url, {"is_pilot": "1"})
    assert run.session.is_pilot
    figures = coordinator.get(reverse("surveys:monitor", args=[study_a.slug])).context["figures"]
    assert figures.totals["complete"] == 0
    assert figures.totals["evaluations"] == 0

    response = coordinator.post(url, {"is_pilot": "0", "next": "https://evil.example.org/"})
    assert not run.session.is_pilot
    # A `next` of another site is not followed: back to the monitor instead.
    assert response.status_code == 302
    assert response["Location"] == reverse("surveys:monitor", args=[study_a.slug])


def test_marking_a_pilot_returns_to_the_page_it_was_made_from(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.complete()
    record = reverse("surveys:session_record", args=[study_a.slug, run.token])
    url = reverse("surveys:session_pilot", args=[study_a.slug, run.token])

    response = client_for("coordinator_a").post(url, {"is_pilot": "1", "next": record})

    assert response.status_code == 302
    assert response["Location"] == record


def test_a_coordinator_correction_keeps_the_old_value(
    study_a, client_for, personas, django_capture_on_commit_callbacks
):
    run = SessionRun(client_for("experimenter_a"), study_a)
    with django_capture_on_commit_callbacks(execute=True):
        run.complete()
    evaluation = Evaluation.objects.get(session=run.session, block=1)
    assert evaluation.q1 == 2
    url = reverse("surveys:evaluation_correct", args=[study_a.slug, evaluation.pk])

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for("coordinator_a").post(
            url, {"item": "q1", "new_value": "-2", "reason": "Participant ticked the wrong box"}
        )

    assert response.status_code == 302
    evaluation.refresh_from_db()
    assert evaluation.q1 == -2
    assert evaluation.s_FA == 0.0  # (a - b) / 4 with a=-2, b=-2
    correction = EvaluationCorrection.objects.get()
    assert (correction.old_value, correction.new_value) == (2, -2)
    assert correction.corrected_by == personas["coordinator_a"]
    record = client_for("coordinator_a").get(
        reverse("surveys:session_record", args=[study_a.slug, run.token])
    )
    assert "Participant ticked the wrong box" in record.content.decode()


def test_a_correction_without_reason_or_with_a_bad_value_changes_nothing(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.complete()
    evaluation = Evaluation.objects.get(session=run.session, block=1)
    url = reverse("surveys:evaluation_correct", args=[study_a.slug, evaluation.pk])
    client = client_for("coordinator_a")
    client.post(url, {"item": "q1", "new_value": "-2", "reason": ""})
    client.post(url, {"item": "q1", "new_value": "3", "reason": "x"})
    client.post(url, {"item": "q11", "new_value": "1", "reason": "x"})
    assert Evaluation.objects.get(pk=evaluation.pk).q1 == 2
    assert not EvaluationCorrection.objects.exists()


def test_consent_texts_are_edited_per_language(study_a, client_for):
    client = client_for("coordinator_a")
    url = reverse("surveys:consent_text_edit", args=[study_a.slug, "fr"])
    response = client.post(url, {"information_sheet": "Notice", "consent_text": "J'accepte"})
    assert response.status_code == 302
    # No one consented to the fixture's 1.0 yet: it is corrected in place.
    text = study_a.consent_texts.get(language="fr")
    assert (text.version, text.consent_text) == ("1.0", "J'accepte")
    study_a.languages = ["en"]
    study_a.save()
    assert client.get(url).status_code == 404
