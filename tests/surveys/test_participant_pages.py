"""What the participant sees while holding the device: no countdown, no staff
navigation, their own language on every page (also when the session has
ended), the SHS progress, and blinded system names when the study asks."""

import re

import pytest
from django.urls import reverse

from surveys.models import StudySession
from surveys.protocol.sweeps import sessions_mark_abandoned
from surveys.steps import Step
from tests.surveys.runner import SessionRun

PARTICIPANT_STEPS = [Step.CONSENT, Step.BLOCK1_SHS, Step.DEMOGRAPHICS]


def _main(page) -> str:
    return page.content.decode().split("<main", 1)[1]


def _participant_page(run, step):
    run.advance_to(step)
    if step != Step.CONSENT:
        run.hand_back()  # lifts the hand-back page left by the previous participant step
    return run.get()


def _assert_nothing_for_staff(page):
    content = page.content.decode()
    assert "<nav" not in content
    assert reverse("account_logout") not in content
    assert "/studies/" not in content
    assert "Log out" not in content


@pytest.mark.parametrize("step", PARTICIPANT_STEPS)
def test_participants_never_see_a_countdown(step, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    page = _participant_page(run, step)
    content = page.content.decode()
    assert f'name="step" value="{step}"' in content
    assert "countdown" not in content
    assert "Target time" not in content
    assert "time-hint" not in content  # the study has not turned the hint on


@pytest.mark.parametrize("step", [Step.BLOCK1_INTERACTION, Step.FEEDBACK])
def test_the_experimenter_keeps_the_countdown(step, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(step)
    run.hand_back()
    content = run.get().content.decode()
    assert f'name="step" value="{step}"' in content
    assert 'class="countdown"' in content
    target_seconds = study_a.target_minutes(step) * 60
    assert f'data-target="{target_seconds}"' in content


def test_a_study_may_show_participants_a_neutral_time_hint(study_a, client_for):
    study_a.participant_time_hint = True
    study_a.step_targets = {Step.DEMOGRAPHICS: 3}
    study_a.save()
    run = SessionRun(client_for("experimenter_a"), study_a, language="de")
    content = _participant_page(run, Step.DEMOGRAPHICS).content.decode()
    assert "Dieser Teil dauert etwa 3 Minuten." in content
    assert "countdown" not in content


@pytest.mark.parametrize("step", PARTICIPANT_STEPS)
def test_participant_pages_have_no_staff_navigation(step, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    _assert_nothing_for_staff(_participant_page(run, step))


def test_the_hand_back_page_has_no_staff_navigation(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a, language="fr")
    run.advance_to(Step.BLOCK2_INTERACTION)
    page = run.get()
    _assert_nothing_for_staff(page)
    assert "Responsable de séance\u202f: continuer" in page.content.decode()
    assert page["Content-Language"] == "fr"


def test_a_posted_hand_back_changes_no_step(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.hand_back()
    assert run.session.step == Step.BLOCK1_SHS
    assert run.hand_back().status_code == 302  # nothing pending: nothing happens
    assert 'id="shs-form"' in run.get().content.decode()


WITHDRAWN = {
    "de": "Sie haben Ihre Teilnahme widerrufen",
    "fr": "Vous avez retiré votre participation",
}


@pytest.mark.parametrize("language", ["de", "fr"])
def test_the_withdrawn_page_is_in_the_participants_language(language, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a, language=language)
    run.advance_to(Step.BLOCK1_SHS)
    run.client.post(reverse("surveys:session_withdraw", args=[run.token]))
    page = run.get()
    assert page["Content-Language"] == language
    assert WITHDRAWN[language] in page.content.decode()
    _assert_nothing_for_staff(page)


def test_every_ended_page_is_in_the_participants_language(study_a, client_for):
    complete = SessionRun(client_for("experimenter_a"), study_a, language="de")
    complete.complete()
    ineligible = SessionRun(client_for("experimenter_a"), study_a, language="de")
    ineligible.consent(ai_professional="1")
    abandoned = SessionRun(client_for("experimenter_a"), study_a, language="de")
    StudySession.objects.filter(token=abandoned.token).update(
        last_activity_at=abandoned.session.created_at.replace(year=2000)
    )
    sessions_mark_abandoned()
    assert abandoned.session.step == Step.ABANDONED

    for run, text in (
        (complete, "Vielen Dank!"),
        (ineligible, "Leider können Sie an dieser Studie nicht teilnehmen."),
        (abandoned, "Diese Sitzung ist beendet"),
    ):
        page = run.get()
        assert page["Content-Language"] == "de"
        assert text in page.content.decode()
        _assert_nothing_for_staff(page)
        refused = run.post("feedback")  # a stale form: refused, in the same language
        assert refused.status_code == 409
        assert refused["Content-Language"] == "de"


def test_the_shs_shows_how_many_items_are_answered(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a, language="de")
    run.advance_to(Step.BLOCK1_SHS)
    run.hand_back()
    assert "0 von 10 Items beantwortet" in run.get().content.decode()
    for sequence, item in enumerate(("q1", "q2", "q7"), start=1):
        run.client.post(
            reverse("surveys:session_answer", args=[run.token]),
            {"step": Step.BLOCK1_SHS, "item": item, "value": "1", "sequence": sequence},
        )
    content = run.get().content.decode()
    assert "3 von 10 Items beantwortet" in content
    # The page's script counts on from the same template as the calculator's.
    assert 'data-template="{answered} von {total} Items beantwortet"' in content


def _shs_intro(run) -> str:
    return re.search(r"<h1>.*?</p>", _main(run.get()), re.S).group(0)


def test_system_names_are_shown_unless_the_study_blinds_them(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.hand_back()
    assert run.session.first_system.name in _shs_intro(run)
    assert "System A" not in _shs_intro(run)


@pytest.mark.parametrize("language, label", [("en", "System"), ("fr", "Système")])
def test_a_blinded_study_shows_system_a_and_b_in_block_order(language, label, study_a, client_for):
    study_a.blind_system_names = True
    study_a.save()
    run = SessionRun(client_for("experimenter_a"), study_a, language=language)
    first, second = run.session.first_system.name, run.session.second_system.name

    run.advance_to(Step.BLOCK1_INTERACTION)
    run.hand_back()
    experimenter_page = _main(run.get())
    # The experimenter still sees the real name, and what the participant is shown.
    assert first in experimenter_page
    assert "System A" in experimenter_page

    run.interaction(1)
    block1 = _shs_intro(run)
    assert f"{label} A" in block1 and first not in block1
    run.shs(1)
    run.hand_back()
    run.interaction(2)
    block2 = _shs_intro(run)
    assert f"{label} B" in block2 and second not in block2


def test_a_stale_participant_form_is_refused_on_the_hand_back_page(study_a, client_for):
    # Given the participant submitted the SHS and still holds the device,
    run = SessionRun(client_for("experimenter_a"), study_a, language="de")
    run.advance_to(Step.BLOCK1_SHS)
    run.shs(1)
    # when they go back and send other answers,
    refused = run.post(Step.BLOCK1_SHS, **{f"q{i}": "-2" for i in range(1, 11)})

    # then nothing changes, and the device still shows the hand-back page, not
    # the experimenter's prompt log.
    content = refused.content.decode()
    assert refused.status_code == 409
    assert 'name="step" value="handback"' in content
    assert 'id="prompt-form"' not in content
    assert 'role="alert"' in content
    assert run.session.evaluations.get(block=1).q1 == 2


@pytest.mark.parametrize("step", [Step.CONSENT, Step.BLOCK1_INTERACTION, Step.DEMOGRAPHICS])
def test_the_participant_is_offered_to_withdraw_while_in_the_session(step, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    page = _participant_page(run, step)
    assert f'name="step" value="{step}"' in page.content.decode()
    withdraw = reverse("surveys:session_withdraw", args=[run.token])
    assert f'href="{withdraw}"' in page.content.decode()


def test_the_administrator_feedback_offers_no_withdrawal_once_the_participant_has_left(
    study_a, client_for
):
    # Given a session whose participant has given their last answer and left
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.FEEDBACK)
    run.hand_back()

    # When the experimenter opens the administrator feedback
    page = run.get()

    # Then it offers no "Withdraw from the study": that link is the participant's
    content = page.content.decode()
    assert 'name="step" value="feedback"' in content
    assert reverse("surveys:session_withdraw", args=[run.token]) not in content
    assert "Withdraw from the study" not in content
