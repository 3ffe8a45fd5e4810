"""The companion scales after each block's SHS (docs/design/validation.md §14.1, paper
section 10): the SHS first and on its own, then one page per scale in the
study's order, stored once and read-only, for supervised and remote sessions."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from scoring.instruments.companions import COMPANION_SCALES
from surveys.models import CompanionResponse, Evaluation, Study
from surveys.protocol.companions import companion_submit, companions_complete
from surveys.steps import Step
from tests.surveys.bulk import add_sessions
from tests.surveys.remote import RemoteRun, make_remote_study
from tests.surveys.runner import SessionRun, answers

SUS_KEYS = [f"sus{number}" for number in range(1, 11)]
# Odd items add (code - 1), even items (5 - code), times 2.5 (Brooke 1996):
# odd 3 + 4 + 3 + 3 + 4 = 17, even 3 + 4 + 3 + 4 + 3 = 17, (17 + 17) x 2.5 = 85.
MIXED = (4, 2, 5, 1, 4, 2, 4, 1, 5, 2)
MIXED_SCORE = 85.0


def sus(*codes) -> dict[str, str]:
    return {key: str(code) for key, code in zip(SUS_KEYS, codes or MIXED, strict=True)}


def post_sus(run, block, **answers_given):
    return run.post(f"block{block}_shs", scale="sus", **answers_given)


@pytest.fixture
def study(study_a):
    Study.objects.filter(pk=study_a.pk).update(companion_scales=["sus"])
    study_a.refresh_from_db()
    return study_a


@pytest.fixture
def at_companion(study, client_for):
    """A supervised session whose block 1 SHS is submitted: the SUS is due."""
    run = SessionRun(client_for("experimenter_a"), study)
    run.advance_to(Step.BLOCK1_SHS)
    assert run.shs(1).status_code == 302
    assert run.get().status_code == 200  # the redirect's page: the SUS first shown
    return run


def _response(run, block=1) -> CompanionResponse:
    return CompanionResponse.objects.get(evaluation__session=run.session, evaluation__block=block)


def test_a_supervised_session_gives_the_sus_after_each_shs(study, client_for):
    run = SessionRun(client_for("experimenter_a"), study)
    run.advance_to(Step.BLOCK1_SHS)

    assert run.shs(1).status_code == 302
    # The SHS is in and scored; the session stays on its step for the SUS.
    evaluation = Evaluation.objects.get(session=run.session, block=1)
    assert evaluation.is_submitted and evaluation.shs is not None
    assert run.session.step == Step.BLOCK1_SHS
    page = run.get().content.decode()
    assert "participant-mode" in page and "hand the device back" not in page
    assert COMPANION_SCALES["sus"].items[0].text["en"] in page
    assert "© Digital Equipment Corporation, 1986" in page
    assert 'name="scale" value="sus"' in page
    # Nothing of the SHS: no item, no answer, no score.
    assert 'name="q1"' not in page and "shs-form" not in page
    assert f"{evaluation.shs100}" not in page
    assert not companions_complete(evaluation, study)

    assert post_sus(run, 1, **sus()).status_code == 302

    assert run.session.step == Step.BLOCK2_INTERACTION
    assert "hand the device back" in run.get().content.decode()
    stored = _response(run)
    assert stored.answers == dict(zip(SUS_KEYS, MIXED, strict=True))
    assert stored.score == MIXED_SCORE
    assert stored.submitted_at >= stored.first_displayed_at
    assert companions_complete(evaluation, study)
    run.hand_back()
    assert run.interaction(2).status_code == 302
    assert run.shs(2).status_code == 302
    assert post_sus(run, 2, **sus(*[3] * 10)).status_code == 302  # all middle: 50
    assert run.demographics().status_code == 302
    assert run.feedback().status_code == 302
    assert run.session.step == Step.COMPLETE
    assert _response(run, 2).score == 50.0


def test_a_remote_participant_gets_the_sus_on_their_own_device(db, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server, companion_scales=["sus"])
    run = RemoteRun(study, language="en")
    run.consent()
    assert run.chat_block(1).status_code == 302
    assert run.shs(1).status_code == 302

    page = run.get()
    assert page.status_code == 200 and 'name="scale" value="sus"' in page.content.decode()
    assert post_sus(run, 1, **sus()).status_code == 302
    assert run.session.step == Step.BLOCK2_INTERACTION
    assert run.chat_block(2).status_code == 302
    assert run.shs(2).status_code == 302
    assert post_sus(run, 2, **sus(*[5, 1] * 5)).status_code == 302  # the best SUS: 100
    assert run.demographics().status_code == 302

    assert run.session.step == Step.COMPLETE
    scores = CompanionResponse.objects.filter(evaluation__session=run.session)
    assert sorted(scores.values_list("evaluation__block", "score")) == [
        (1, MIXED_SCORE),
        (2, 100.0),
    ]


def test_the_page_is_in_the_participants_language_with_its_published_wording(study, client_for):
    # The SUS is published in German (Rummel); the SCS in English only, which a
    # German pilot then reads as published (readiness and the session start stop a real one).
    Study.objects.filter(pk=study.pk).update(companion_scales=["sus", "scs"])
    run = SessionRun(client_for("coordinator_a"), study, language="de", is_pilot=True)
    run.advance_to(Step.BLOCK1_SHS)
    run.shs(1)

    response = run.get()
    assert post_sus(run, 1, **sus()).status_code == 302
    fallback = run.get().content.decode()

    assert response["Content-Language"] == "de"
    page = response.content.decode()
    sus_scale = COMPANION_SCALES["sus"]
    assert "Absenden" in page  # the page's own words in German
    assert sus_scale.items[1].text["de"] in page
    assert sus_scale.options[0].label["de"] in page
    assert sus_scale.attribution("de")["credit"] in page
    assert COMPANION_SCALES["scs"].items[1].text["en"] in fallback


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"sus3": ""}, "Please choose an answer."),
        ({"sus3": "6"}, "This is not one of the answers"),
        ({"sus3": "0"}, "This is not one of the answers"),
        ({"sus3": "-1"}, "This is not one of the answers"),
        ({"sus3": "four"}, "This is not one of the answers"),
        ({"sus3": "3.0"}, "This is not one of the answers"),
    ],
)
def test_missing_or_invalid_answers_store_nothing(at_companion, change, problem):
    response = post_sus(at_companion, 1, **{**sus(), **change})

    assert response.status_code == 400
    page = response.content.decode()
    assert problem in page and 'id="fieldset-sus3"' in page
    assert 'class="question has-errors" id="fieldset-sus3"' in page
    # The valid answers are checked again, so nothing given is lost.
    assert 'name="sus1" value="4" checked' in page
    stored = _response(at_companion)
    assert (stored.answers, stored.score, stored.submitted_at) == ({}, None, None)
    assert at_companion.session.step == Step.BLOCK1_SHS


def test_a_nul_character_is_refused_before_and_inside_the_service(at_companion):
    response = post_sus(at_companion, 1, **{**sus(), "sus3": "4\x00"})

    assert response.status_code == 400  # the middleware's refusal of every NUL
    assert _response(at_companion).submitted_at is None
    # The service refuses it too, should a caller reach it by another way.
    problems = companion_submit(
        session_id=at_companion.session.pk,
        step="block1_shs",
        scale_key="sus",
        responses={**sus(), "sus3": "4\x00"},
    )
    assert problems == {"sus3": "invalid"}
    assert _response(at_companion).submitted_at is None


def test_a_repeated_submission_changes_nothing_and_a_different_one_is_refused(at_companion):
    assert post_sus(at_companion, 1, **sus()).status_code == 302
    first = _response(at_companion)

    again = post_sus(at_companion, 1, **sus())
    other = post_sus(at_companion, 1, **sus(*[3] * 10))

    assert again.status_code == 302
    assert other.status_code == 409
    assert "can no longer be changed" in other.content.decode()
    stored = _response(at_companion)
    assert (stored.answers, stored.score, stored.submitted_at) == (
        first.answers,
        first.score,
        first.submitted_at,
    )
    assert CompanionResponse.objects.filter(evaluation__session=at_companion.session).count() == 1
    assert at_companion.session.step == Step.BLOCK2_INTERACTION


def test_the_submitted_shs_cannot_change_while_the_companion_page_is_open(at_companion):
    evaluation = Evaluation.objects.get(session=at_companion.session, block=1)
    autosave = at_companion.client.post(
        reverse("surveys:session_answer", args=[at_companion.token]),
        {"step": "block1_shs", "item": "q1", "value": "-2", "sequence": "99"},
    )
    changed = at_companion.post("block1_shs", **answers(*[0] * 10))
    repeated = at_companion.post("block1_shs", **answers())

    assert autosave.status_code == 400 and autosave.json()["saved"] is False
    assert changed.status_code == 409
    assert repeated.status_code == 302  # a double click on the SHS: nothing to do
    evaluation.refresh_from_db()
    assert evaluation.answers == {f"q{i}": int(v) for i, v in enumerate(answers().values(), 1)}
    assert at_companion.session.step == Step.BLOCK1_SHS
    assert 'name="scale" value="sus"' in at_companion.get().content.decode()


def test_no_companion_form_before_the_shs_and_none_for_a_scale_the_study_lacks(study, client_for):
    run = SessionRun(client_for("experimenter_a"), study)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()

    early = post_sus(run, 1, **sus())
    assert early.status_code == 409 and "submit your assessment first" in early.content.decode()
    run.shs(1)
    unknown = run.post("block1_shs", scale="nope", **sus())
    wrong_step = run.post("consent", scale="sus", **sus())
    other_block = post_sus(run, 2, **sus())

    assert [r.status_code for r in (unknown, wrong_step, other_block)] == [409] * 3
    assert "does not give that questionnaire" in unknown.content.decode()
    assert not CompanionResponse.objects.filter(submitted_at__isnull=False).exists()
    assert run.session.step == Step.BLOCK1_SHS


def test_a_study_without_companion_scales_moves_on_after_the_shs(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)

    assert run.shs(1).status_code == 302

    assert run.session.step == Step.BLOCK2_INTERACTION
    assert not CompanionResponse.objects.exists()
    refused = post_sus(run, 1, **sus())
    assert refused.status_code == 409


def test_a_scale_dropped_while_a_pilot_waits_lets_the_session_move_on(at_companion, study):
    Study.objects.filter(pk=study.pk).update(companion_scales=[])

    response = at_companion.get()

    assert response.status_code == 302
    assert at_companion.session.step == Step.BLOCK2_INTERACTION


def test_withdrawal_takes_the_companion_answers_with_the_evaluation(at_companion):
    post_sus(at_companion, 1, **sus())
    other = CompanionResponse.objects.count()
    assert other == 1

    response = at_companion.client.post(
        reverse("surveys:session_withdraw", args=[at_companion.token])
    )

    assert response.status_code == 302
    assert at_companion.session.step == Step.WITHDRAWN
    assert not CompanionResponse.objects.exists()


def complete_with_sus(run):
    for response in (
        run.consent(),
        run.interaction(1),
        run.shs(1),
        post_sus(run, 1, **sus()),
        run.hand_back(),
        run.interaction(2),
        run.shs(2),
        post_sus(run, 2, **sus()),
        run.demographics(),
        run.feedback(),
    ):
        assert response.status_code == 302, response.content.decode()[:2000]
    assert run.session.step == Step.COMPLETE


def test_erasure_after_the_session_takes_the_companion_answers(study, client_for):
    run = SessionRun(client_for("experimenter_a"), study)
    kept = SessionRun(client_for("experimenter_a"), study)
    complete_with_sus(run)
    complete_with_sus(kept)
    code = run.session.participant.code

    page = client_for("coordinator_a").post(
        reverse("surveys:session_erase", args=[study.slug, run.token]),
        {"participant_code": code},
        follow=True,
    )

    assert page.status_code == 200
    assert run.session.step == Step.WITHDRAWN
    remaining = CompanionResponse.objects.values_list("evaluation__session", flat=True)
    assert list(remaining) == [kept.session.pk] * 2


def _companion_page_queries(run) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = run.get()
    assert response.status_code == 200 and 'name="scale"' in response.content.decode()
    return len(captured)


def test_the_companion_page_costs_the_same_queries_however_large_the_study(
    at_companion, study, personas
):
    add_sessions(study, [personas["experimenter_a"]], 5)
    few = _companion_page_queries(at_companion)
    add_sessions(study, [personas["experimenter_a"]], 200)
    many = _companion_page_queries(at_companion)

    assert few == many
    assert few <= 8


def trust_mean(codes) -> float:
    """Jian et al. (2000): items 1-5 (distrust) turned round as 8 - code, then the mean."""
    keyed = [8 - code if number <= 5 else code for number, code in enumerate(codes, start=1)]
    return sum(keyed) / len(keyed)


def test_several_scales_come_one_page_each_in_the_studys_order(study, client_for):
    Study.objects.filter(pk=study.pk).update(companion_scales=["trust", "sus", "scs"])
    run = SessionRun(client_for("experimenter_a"), study)
    run.advance_to(Step.BLOCK1_SHS)
    run.shs(1)
    codes = [2, 1, 3, 2, 1, 6, 5, 7, 6, 5, 6, 4]
    trust = dict(zip([f"trust{n}" for n in range(1, 13)], codes, strict=True))
    scs = {f"scs{n}": 4 for n in range(1, 11)}  # 40 / 50 = 0.8 (Holzinger et al. 2020)

    first_page = run.get().content.decode()
    early = post_sus(run, 1, **sus())  # the study's second scale, before its first

    assert "Trust in Automation" in first_page and "Questionnaire 1 of 3" in first_page
    assert 'name="trust12" value="7"' in first_page  # seven points
    assert early.status_code == 409 and "in the order shown" in early.content.decode()
    assert run.post("block1_shs", scale="trust", **trust).status_code == 302
    assert run.session.step == Step.BLOCK1_SHS  # the SUS and the SCS are still due
    page = run.get().content.decode()
    assert "hand the device back" not in page
    assert "Questionnaire 2 of 3" in page and 'name="scale" value="sus"' in page
    again = run.post("block1_shs", scale="trust", **trust)
    assert again.status_code == 302 and run.session.step == Step.BLOCK1_SHS
    assert post_sus(run, 1, **sus()).status_code == 302
    assert "Questionnaire 3 of 3" in run.get().content.decode()
    assert run.post("block1_shs", scale="scs", **scs).status_code == 302
    assert run.session.step == Step.BLOCK2_INTERACTION
    stored = dict(
        CompanionResponse.objects.filter(evaluation__session=run.session).values_list(
            "scale", "score"
        )
    )
    assert stored["sus"] == MIXED_SCORE
    assert stored["scs"] == pytest.approx(0.8)
    # (6 + 7 + 5 + 6 + 7) + (6 + 5 + 7 + 6 + 5 + 6 + 4) = 31 + 39 = 70; 70 / 12
    assert stored["trust"] == pytest.approx(70 / 12) == pytest.approx(trust_mean(trust.values()))
