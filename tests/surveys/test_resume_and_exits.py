"""Reloads, crashed browsers and early exits: nothing given is lost, nothing
withdrawn is kept."""

import itertools
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from surveys.models import (
    ConsentRecord,
    DemographicsResponse,
    Evaluation,
    FeedbackResponse,
    InteractionBlock,
    Participant,
    PromptEntry,
    StepRecord,
    StudySession,
)
from surveys.protocol.sweeps import sessions_mark_abandoned
from surveys.steps import TIMED_STEPS, Step, hands_back_after
from surveys.tasks import mark_abandoned_sessions
from tests.surveys.runner import SessionRun

_SEQUENCE = itertools.count(1)


def _autosave(run, item, value, step="block1_shs", sequence=None):
    """One autosave as the page's script sends it, numbered in the order sent."""
    sequence = next(_SEQUENCE) if sequence is None else sequence
    return run.client.post(
        reverse("surveys:session_answer", args=[run.token]),
        {"step": step, "item": item, "value": value, "sequence": sequence},
    )


def test_answers_given_before_a_reload_are_still_there(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    assert _autosave(run, "q1", "2").json() == {"saved": True, "superseded": False, "item": "q1"}
    assert _autosave(run, "q4", "-1").status_code == 200

    # The browser crashes; a new tab opens the same session URL.
    page = run.get().content.decode()

    assert 'id="q1_5" name="q1" value="2" checked' in page
    assert 'id="q4_2" name="q4" value="-1" checked' in page
    assert page.count(" checked") == 2
    evaluation = Evaluation.objects.get(session=run.session)
    assert (evaluation.q1, evaluation.q4, evaluation.submitted_at) == (2, -1, None)


def test_first_display_time_survives_a_reload(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    first = Evaluation.objects.get(session=run.session).first_displayed_at
    run.get()
    assert Evaluation.objects.get(session=run.session).first_displayed_at == first


def test_autosave_refuses_bad_values(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    assert _autosave(run, "q1", "3").status_code == 400
    assert _autosave(run, "q11", "1").status_code == 400
    assert _autosave(run, "q1", "1", step="block2_shs").status_code == 409
    for bad_sequence in ("", "0", "-3", "1.5", "x", str(2**53 + 1)):
        refused = _autosave(run, "q1", "1", sequence=bad_sequence)
        assert refused.status_code == 400
        assert "sequence number" in refused.json()["error"]
    assert Evaluation.objects.get(session=run.session).answers["q1"] is None


def test_an_older_autosave_arriving_late_leaves_the_newer_answer(study_a, client_for):
    # Given the participant clicks q1 = +1, then q1 = -2 a few ms later,
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    # when the second save overtakes the first on the way to the server,
    newer = _autosave(run, "q1", "-2", sequence=2)
    older = _autosave(run, "q1", "1", sequence=1)
    replayed = _autosave(run, "q1", "1", sequence=2)

    # then the later answer stays, and the page shows it after a reload.
    assert newer.json() == {"saved": True, "superseded": False, "item": "q1"}
    assert older.status_code == 200
    assert older.json() == {"saved": False, "superseded": True, "item": "q1"}
    assert replayed.json()["saved"] is False
    evaluation = Evaluation.objects.get(session=run.session)
    assert evaluation.q1 == -2
    assert evaluation.answer_sequence == {"q1": 2}
    assert 'id="q1_1" name="q1" value="-2" checked' in run.get().content.decode()
    # Each item keeps its own sequence: an answer to q2 numbered 1 is still new.
    assert _autosave(run, "q2", "0", sequence=1).json()["saved"] is True
    assert _autosave(run, "q1", "2", sequence=3).json()["saved"] is True
    assert Evaluation.objects.get(pk=evaluation.pk).answers["q1"] == 2


def test_the_step_after_a_reload_is_the_step_before_it(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    finish_step = {
        Step.CONSENT: run.consent,
        Step.BLOCK1_INTERACTION: lambda: run.interaction(1),
        Step.BLOCK1_SHS: lambda: run.shs(1),
        Step.BLOCK2_INTERACTION: lambda: run.interaction(2),
        Step.BLOCK2_SHS: lambda: run.shs(2),
        Step.FEEDBACK: run.feedback,
        Step.DEMOGRAPHICS: run.demographics,
    }
    previous = None
    for step in TIMED_STEPS:
        assert run.session.step == step
        if previous and hands_back_after(previous):
            # A reload does not skip the hand-back page; only the experimenter lifts it.
            for _reload in range(2):
                assert 'name="step" value="handback"' in run.get().content.decode()
            assert run.hand_back().status_code == 302
        for _reload in range(2):
            assert f'name="step" value="{step}"' in run.get().content.decode()
        assert run.session.step == step
        assert finish_step[step]().status_code == 302
        previous = step
    assert run.session.step == Step.COMPLETE


def test_a_second_tab_shows_the_current_step(study_a, client_for):
    from django.test import Client

    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK2_INTERACTION)
    second_tab = Client()
    second_tab.cookies = run.client.cookies
    # The same device: the hand-back after the SHS holds in every tab until lifted.
    assert 'name="step" value="handback"' in second_tab.get(run.url).content.decode()
    run.hand_back()
    page = second_tab.get(run.url).content.decode()
    assert 'name="step" value="block2_interaction"' in page


def test_withdrawal_deletes_the_participants_data_and_keeps_a_count(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.FEEDBACK)
    participant_id = run.session.participant_id

    confirm = run.client.get(reverse("surveys:session_withdraw", args=[run.token]))
    done = run.client.post(reverse("surveys:session_withdraw", args=[run.token]))

    assert confirm.status_code == 200
    assert done.status_code == 302
    session = StudySession.objects.get(token=run.token)
    assert session.step == Step.WITHDRAWN
    assert session.participant is None
    assert not Participant.objects.filter(pk=participant_id).exists()
    for model in (Evaluation, ConsentRecord, StepRecord, InteractionBlock, FeedbackResponse):
        assert not model.objects.filter(session=session).exists()
    assert not PromptEntry.objects.exists()
    assert not DemographicsResponse.objects.exists()
    assert StudySession.objects.filter(study=study_a, step=Step.WITHDRAWN).count() == 1


def test_withdrawal_is_possible_at_every_step(study_a, client_for):
    for step in TIMED_STEPS:
        run = SessionRun(client_for("experimenter_a"), study_a)
        run.advance_to(step)
        run.client.post(reverse("surveys:session_withdraw", args=[run.token]))
        assert run.session.step == Step.WITHDRAWN


def test_an_ended_session_cannot_be_posted_to(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.complete()
    response = run.post("demographics", age_band="1")
    assert response.status_code == 409
    assert "Nothing was saved" in response.content.decode()
    assert DemographicsResponse.objects.get(session=run.session).age_band == 2


def test_inactive_sessions_become_abandoned(study_a, client_for):
    study_a.inactivity_timeout_minutes = 30
    study_a.save()
    idle = SessionRun(client_for("experimenter_a"), study_a)
    idle.advance_to(Step.BLOCK1_SHS)
    busy = SessionRun(client_for("experimenter_a"), study_a)
    done = SessionRun(client_for("experimenter_a"), study_a)
    done.complete()
    long_ago = timezone.now() - timedelta(minutes=31)
    StudySession.objects.filter(pk__in=[idle.session.pk, done.session.pk]).update(
        last_activity_at=long_ago
    )

    assert mark_abandoned_sessions.delay().get() == 1

    assert idle.session.step == Step.ABANDONED
    assert idle.session.ended_at is not None
    assert busy.session.step == Step.CONSENT
    assert done.session.step == Step.COMPLETE
    assert sessions_mark_abandoned() == 0
