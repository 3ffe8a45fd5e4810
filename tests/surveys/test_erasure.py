"""Withdrawal after the session (docs/design/protocol.md §4.8: withdrawal at any
point): a participant who has left quotes their code, and a coordinator
deletes everything they gave; the session stays only as a withdrawal."""

from datetime import timedelta

import pytest
from django.urls import reverse

from exports.dataset import build_dataset
from surveys.models import (
    ConsentRecord,
    DemographicsResponse,
    Evaluation,
    EvaluationCorrection,
    FeedbackResponse,
    InteractionBlock,
    Participant,
    PromptEntry,
    SessionErasure,
    StepRecord,
    StudySession,
)
from surveys.protocol.sweeps import sessions_mark_abandoned
from surveys.steps import Step
from tests.surveys.runner import SessionRun

GIVEN_BY_THE_PARTICIPANT = (
    Evaluation,
    ConsentRecord,
    StepRecord,
    InteractionBlock,
    FeedbackResponse,
    DemographicsResponse,
)


def _erase(client, study, run, code):
    return client.post(
        reverse("surveys:session_erase", args=[study.slug, run.token]),
        {"participant_code": code},
        follow=True,
    )


def _held(session) -> dict:
    """Everything stored for the session, to show that a refusal changes nothing."""
    held = {
        model.__name__: model.objects.filter(session=session).count()
        for model in GIVEN_BY_THE_PARTICIPANT
    }
    session = StudySession.objects.get(pk=session.pk)
    held.update(
        step=session.step,
        participant=session.participant_id,
        prompts=PromptEntry.objects.filter(interaction__session=session).count(),
        erasures=SessionErasure.objects.count(),
    )
    return held


@pytest.fixture
def finished(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.complete()
    return run


def test_the_end_page_gives_the_participant_their_code(finished):
    page = finished.get().content.decode()
    assert f"<strong>{finished.session.participant.code}</strong>" in page


def test_a_coordinator_deletes_a_finished_participants_data(
    study_a, finished, client_for, personas
):
    session = finished.session
    code = session.participant.code
    participant_id = session.participant_id
    kept = SessionRun(client_for("experimenter_a"), study_a)
    kept.complete()
    Evaluation.objects.filter(session=session, block=1).update(q1=-2)
    EvaluationCorrection.objects.create(
        evaluation=Evaluation.objects.get(session=session, block=1),
        item="q1",
        old_value=2,
        new_value=-2,
        reason="typo",
    )

    # Read aloud and typed in lower case with spaces: still the same code.
    page = _erase(client_for("coordinator_a"), study_a, finished, f"  {code.lower()} ")

    assert "data is deleted" in page.content.decode()
    session.refresh_from_db()
    assert (session.step, session.participant) == (Step.WITHDRAWN, None)
    assert not Participant.objects.filter(pk=participant_id).exists()
    for model in GIVEN_BY_THE_PARTICIPANT:
        assert not model.objects.filter(session=session).exists(), model.__name__
    assert not PromptEntry.objects.filter(interaction__session=session).exists()
    assert not EvaluationCorrection.objects.exists()
    erasure = SessionErasure.objects.get(session=session)
    assert (erasure.step_before, erasure.erased_by) == (Step.COMPLETE, personas["coordinator_a"])
    # The record page says what happened; the other participant is untouched.
    record = client_for("coordinator_a").get(
        reverse("surveys:session_record", args=[study_a.slug, finished.token])
    )
    assert "deleted at their request" in record.content.decode()
    assert _held(kept.session)["Evaluation"] == 2
    # The session is a withdrawal now: out of the export, counted as one.
    dataset = build_dataset(study=study_a, include_pilot=False, include_free_text=False)
    assert len(dataset.sessions) == 1
    assert dataset.exclusions["withdrawn"] == 1
    assert len(list(dataset.table("evaluations").rows())) == 2  # the other participant's


def test_an_abandoned_session_can_be_erased_too(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK2_INTERACTION)
    StudySession.objects.filter(pk=run.session.pk).update(
        last_activity_at=run.session.last_activity_at - timedelta(days=1)
    )
    assert sessions_mark_abandoned() == 1

    _erase(client_for("coordinator_a"), study_a, run, run.session.participant.code)

    assert run.session.step == Step.WITHDRAWN
    assert SessionErasure.objects.get().step_before == Step.ABANDONED
    assert not Evaluation.objects.filter(session=run.session).exists()


@pytest.mark.parametrize("code", ["", "P-WRONGCDE", "P-"])
def test_a_wrong_code_deletes_nothing(study_a, finished, client_for, code):
    before = _held(finished.session)

    page = _erase(client_for("coordinator_a"), study_a, finished, code)

    assert "nothing was deleted" in page.content.decode()
    assert _held(finished.session) == before


def test_a_running_session_is_not_erased_from_the_monitor(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    before = _held(run.session)

    page = _erase(client_for("coordinator_a"), study_a, run, run.session.participant.code)

    assert "still running" in page.content.decode()
    assert _held(run.session) == before


def test_a_session_is_erased_once(study_a, finished, client_for):
    code = finished.session.participant.code
    coordinator = client_for("coordinator_a")
    _erase(coordinator, study_a, finished, code)

    page = _erase(coordinator, study_a, finished, code)

    assert "no participant data to delete" in page.content.decode()
    assert SessionErasure.objects.count() == 1


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider"])
def test_only_a_coordinator_of_the_study_can_erase(study_a, study_b, finished, client_for, persona):
    before = _held(finished.session)

    response = client_for(persona).post(
        reverse("surveys:session_erase", args=[study_a.slug, finished.token]),
        {"participant_code": finished.session.participant.code},
    )

    assert response.status_code == 404
    assert _held(finished.session) == before


@pytest.mark.parametrize(
    "quoted", ["{code}", " {lower} ", "{bare}", "p{bare}", "P - {spaced}"], ids=str
)
def test_a_code_is_recognised_however_it_is_quoted(study_a, finished, client_for, quoted):
    code = finished.session.participant.code
    bare = code.removeprefix("P-")
    text = quoted.format(code=code, lower=code.lower(), bare=bare, spaced=f"{bare[:4]} {bare[4:]}")

    _erase(client_for("coordinator_a"), study_a, finished, text)

    assert finished.session.step == Step.WITHDRAWN


def test_another_participants_code_deletes_nothing(study_a, study_b, finished, client_for):
    other = SessionRun(client_for("experimenter_a"), study_a)
    other.complete()
    elsewhere = SessionRun(client_for("coordinator_b"), study_b)
    elsewhere.complete()
    before = _held(finished.session)

    for session in (other.session, elsewhere.session):
        page = _erase(client_for("coordinator_a"), study_a, finished, session.participant.code)
        assert "does not match" in page.content.decode()

    assert _held(finished.session) == before
    assert other.session.step == elsewhere.session.step == Step.COMPLETE


def test_a_session_of_another_study_is_out_of_reach(study_a, study_b, finished, client_for):
    before = _held(finished.session)

    response = client_for("coordinator_b").post(
        reverse("surveys:session_erase", args=[study_b.slug, finished.token]),
        {"participant_code": finished.session.participant.code},
    )

    assert response.status_code == 404
    assert _held(finished.session) == before


def test_the_session_keeps_the_time_it_ended(study_a, finished, client_for):
    ended_at = finished.session.ended_at

    _erase(client_for("coordinator_a"), study_a, finished, finished.session.participant.code)

    session = finished.session
    assert session.ended_at == ended_at
    assert session.step_entered_at > ended_at


def test_the_record_page_offers_erasure_only_when_there_is_data_to_erase(study_a, client_for):
    coordinator = client_for("coordinator_a")
    running = SessionRun(client_for("experimenter_a"), study_a)
    running.advance_to(Step.BLOCK1_SHS)
    done = SessionRun(client_for("experimenter_a"), study_a)
    done.complete()
    screened_out = SessionRun(client_for("experimenter_a"), study_a)
    screened_out.consent(ai_professional="1")
    assert screened_out.session.step == Step.INELIGIBLE

    def offered(run) -> bool:
        url = reverse("surveys:session_record", args=[study_a.slug, run.token])
        erase = reverse("surveys:session_erase", args=[study_a.slug, run.token])
        return f'action="{erase}"' in coordinator.get(url).content.decode()

    assert offered(done)
    assert not offered(running)
    assert not offered(screened_out)
    _erase(coordinator, study_a, done, done.session.participant.code)
    assert not offered(done)


def test_a_coordinator_finds_a_session_by_the_code_quoted(study_a, study_b, finished, client_for):
    coordinator = client_for("coordinator_a")
    find = reverse("surveys:session_find", args=[study_a.slug])
    code = finished.session.participant.code

    found = coordinator.get(find, {"code": f" {code.lower()} "})
    assert found.status_code == 302
    assert found.url == reverse("surveys:session_record", args=[study_a.slug, finished.token])

    elsewhere = SessionRun(client_for("coordinator_b"), study_b)
    for missing in ("P-NOSUCH22", elsewhere.session.participant.code):
        page = coordinator.get(find, {"code": missing}, follow=True)
        assert "No session of this study has the participant code" in page.content.decode()
    assert client_for("coordinator_b").get(find, {"code": code}).status_code == 404
    assert client_for("experimenter_a").get(find, {"code": code}).status_code == 404


@pytest.mark.parametrize(
    "pasted",
    [
        '"{code}"',
        "“{code}”",
        "„{code}“",
        "« {code} »",
        "‹{code}›",
        "'{code}'.",
        "{code},",
        "({code});",
        "P-{code}",
        "{bare}!",
        "P–{bare}",
    ],
    ids=str,
)
def test_find_accepts_a_code_however_it_was_pasted(study_a, finished, client_for, pasted):
    code = finished.session.participant.code
    text = pasted.format(code=code, bare=code.removeprefix("P-"))
    found = client_for("coordinator_a").get(
        reverse("surveys:session_find", args=[study_a.slug]), {"code": text}
    )
    assert found.status_code == 302
    assert found.url == reverse("surveys:session_record", args=[study_a.slug, finished.token])


@pytest.mark.parametrize("pasted", ["«P-NOSUCH22»", "P-P-NOSUCH22", "“p-nosuch22”.", "NOSUCH22"])
def test_a_missing_code_is_named_once_with_its_prefix(study_a, client_for, personas, pasted):
    page = client_for("coordinator_a").get(
        reverse("surveys:session_find", args=[study_a.slug]), {"code": pasted}, follow=True
    )
    text = page.content.decode()
    assert "participant code P-NOSUCH22." in text
    assert "P-P-" not in text


def test_an_empty_code_asks_for_one(study_a, client_for, personas):
    page = client_for("coordinator_a").get(
        reverse("surveys:session_find", args=[study_a.slug]), {"code": " “” "}, follow=True
    )
    assert "Type the participant&#x27;s code to find their session." in page.content.decode()
