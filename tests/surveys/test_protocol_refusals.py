"""Wrong protocol state and tampered input are refused with a clear message and
change nothing (docs/design/protocol.md §4.2: a state cannot be skipped or revisited by URL
tampering)."""

import pytest
from django.urls import reverse

from surveys.models import (
    ConsentRecord,
    DemographicsResponse,
    Evaluation,
    FeedbackResponse,
    PromptEntry,
    StepRecord,
    StudySession,
)
from surveys.steps import TIMED_STEPS, Step
from tests.surveys.runner import DEMOGRAPHICS, ELIGIBLE, NEUTRAL_FEEDBACK, SessionRun, answers

# What a person's browser would post on each step's page. The SHS answers differ
# from those the runner submits, so a post for a finished block is not a mere replay.
OTHER_ANSWERS = answers(-2, 2, -2, 2, -2, 2, -2, 2, -2, 2)
FORM_OF_STEP = {
    Step.CONSENT: {**ELIGIBLE, "consent": "on"},
    Step.BLOCK1_INTERACTION: {},
    Step.BLOCK1_SHS: OTHER_ANSWERS,
    Step.BLOCK2_INTERACTION: {},
    Step.BLOCK2_SHS: OTHER_ANSWERS,
    Step.FEEDBACK: NEUTRAL_FEEDBACK,
    Step.DEMOGRAPHICS: DEMOGRAPHICS,
}


def snapshot(session: StudySession) -> tuple:
    """Everything a step could change, as comparable values."""
    session.refresh_from_db()
    return (
        session.step,
        session.step_entered_at,
        list(StepRecord.objects.filter(session=session).values_list("step", "completed_at")),
        ConsentRecord.objects.filter(session=session).count(),
        list(Evaluation.objects.filter(session=session).values()),
        PromptEntry.objects.filter(interaction__session=session).count(),
        FeedbackResponse.objects.filter(session=session).count(),
        DemographicsResponse.objects.filter(session=session).count(),
    )


CASES = [(at, posted) for at in TIMED_STEPS for posted in TIMED_STEPS if posted != at]


@pytest.mark.parametrize("current,posted", CASES)
def test_a_post_for_another_step_is_refused(current, posted, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(current)
    run.get()  # display the current page, as the person sees it
    before = snapshot(run.session)

    response = run.post(posted, **FORM_OF_STEP[posted])

    assert response.status_code == 409
    content = response.content.decode()
    assert "Nothing was saved" in content or "can no longer be changed" in content
    assert snapshot(run.session) == before


@pytest.mark.parametrize("current", [Step.CONSENT, Step.BLOCK1_SHS, Step.FEEDBACK])
def test_a_prompt_outside_an_interaction_is_refused(current, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(current)
    run.get()
    before = snapshot(run.session)
    response = run.log_prompt("block1_interaction", "verified")
    assert response.status_code == 409
    assert snapshot(run.session) == before


def test_a_prompt_of_block_1_is_refused_in_block_2(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK2_INTERACTION)
    before = snapshot(run.session)
    assert run.log_prompt("block1_interaction", "verified").status_code == 409
    assert snapshot(run.session) == before


@pytest.mark.parametrize(
    "tampered",
    [
        {"q3": "3"},
        {"q3": "-3"},
        {"q3": "1.5"},
        {"q3": "agree"},
        {"q3": ""},
    ],
)
def test_tampered_shs_answers_are_refused(tampered, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    before = snapshot(run.session)

    response = run.post("block1_shs", **{**answers(), **tampered})

    assert response.status_code == 400
    assert "Please answer every statement" in response.content.decode()
    if tampered["q3"] == "":
        # Only a missing answer: the nine given are kept, nothing is submitted.
        evaluation = Evaluation.objects.get(session=run.session)
        assert evaluation.submitted_at is None
        assert evaluation.q3 is None and evaluation.q1 == 2
    else:
        assert snapshot(run.session) == before


def test_a_missing_item_is_refused(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    form = answers()
    del form["q10"]
    response = run.post("block1_shs", **form)
    assert response.status_code == 400
    assert run.session.step == Step.BLOCK1_SHS
    assert not Evaluation.objects.submitted().exists()


@pytest.mark.parametrize(
    "step,field,value",
    [
        (Step.FEEDBACK, "clarity", "6"),
        (Step.FEEDBACK, "explanation_needed", "5"),
        (Step.DEMOGRAPHICS, "gender", "7"),
        (Step.DEMOGRAPHICS, "age_band", "x"),
        (Step.CONSENT, "adult", "2"),
    ],
)
def test_codes_outside_the_instrument_are_refused(step, field, value, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(step)
    run.get()
    before = snapshot(run.session)
    response = run.post(step, **{**FORM_OF_STEP[step], field: value})
    assert response.status_code == 400
    assert snapshot(run.session) == before


def test_an_unknown_prompt_category_is_refused(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_INTERACTION)
    run.log_prompt("block1_interaction", "rumour")
    assert not PromptEntry.objects.exists()


def test_a_system_id_of_another_study_cannot_be_injected(study_a, study_b, client_for):
    foreign = study_b.systems.first()
    client = client_for("experimenter_a")
    client.post(
        reverse("surveys:session_start", args=[study_a.slug]),
        {"language": "en", "first_system": foreign.pk, "second_system": foreign.pk},
    )
    session = study_a.sessions.get()
    assert session.first_system.study == study_a
    assert session.second_system.study == study_a
    assert not Evaluation.objects.filter(system=foreign).exists()


def test_a_language_the_study_does_not_offer_is_refused(study_a, client_for):
    study_a.languages = ["de"]
    study_a.save()
    client_for("experimenter_a").post(
        reverse("surveys:session_start", args=[study_a.slug]), {"language": "en"}
    )
    assert not study_a.sessions.exists()


def test_a_session_of_another_study_is_404(study_a, study_b, client_for):
    run_b = SessionRun(client_for("coordinator_b"), study_b)
    before = snapshot(run_b.session)
    client = client_for("experimenter_a")
    assert client.get(run_b.url).status_code == 404
    assert (
        client.post(run_b.url, {"step": "consent", **ELIGIBLE, "consent": "on"}).status_code == 404
    )
    assert snapshot(run_b.session) == before


def test_double_submission_stores_one_evaluation(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    first = run.shs(1)
    replay = run.post("block1_shs", **answers())
    assert (first.status_code, replay.status_code) == (302, 302)
    assert Evaluation.objects.filter(session=run.session).count() == 1
    assert run.session.step == Step.BLOCK2_INTERACTION


def test_submitted_answers_are_read_only(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.shs(1)
    evaluation = Evaluation.objects.get(session=run.session)

    changed = run.post("block1_shs", **answers(-2, 2, -2, 2, -2, 2, -2, 2, -2, 2))
    autosave = run.client.post(
        reverse("surveys:session_answer", args=[run.token]),
        {"step": "block1_shs", "item": "q1", "value": "-2", "sequence": "99"},
    )

    assert changed.status_code == 409
    assert "can no longer be changed" in changed.content.decode()
    assert autosave.status_code == 409
    assert Evaluation.objects.get(pk=evaluation.pk).answers == evaluation.answers
