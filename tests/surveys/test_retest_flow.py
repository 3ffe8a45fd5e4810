"""The retest wave (docs/design/validation.md §14.2): scheduled when the participant's
part of a session ends, its link shown once with the date, the page before
the date, the two SHS forms and the thank-you page, in the session's language."""

import hashlib
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from scoring.instruments.shs import CREDIT
from surveys.models import Evaluation, Retest, RetestEvaluation, Study
from surveys.steps import Step
from tests.scoring.examples import ANSWERS
from tests.surveys.remote import RemoteRun
from tests.surveys.retests import RetestVisit, link_on, make_due, with_retest
from tests.surveys.runner import SessionRun

# tests/scoring/examples.py, worked by hand: FA (2, -1), SR (1, 1), LC (0, -2),
# DP (-1, 0), RG (1, -1) give s = 0.75, 0, 0.5, -0.25, 0.5, SHS 0.3, SHS100 65,
# band moderate, c = 0.25, 0.5, -0.5, -0.25, 0: SR and LC flagged.
WORKED = tuple(ANSWERS[f"q{number}"] for number in range(1, 11))
WORKED_SCORES = {
    "s_FA": 0.75,
    "s_SR": 0.0,
    "s_LC": 0.5,
    "s_DP": -0.25,
    "s_RG": 0.5,
    "c_FA": 0.25,
    "c_SR": 0.5,
    "c_LC": -0.5,
    "c_DP": -0.25,
    "c_RG": 0.0,
    "shs": 0.3,
    "shs100": 65.0,
    "band": "moderate",
    "flagged_pairs": "SR;LC",
}
OTHER = (1, -1, 1, -1, 1, -1, 1, -1, 1, -1)


@pytest.fixture
def retest_study(study_a):
    return with_retest(study_a, days=14)


def supervised_until_handback(client, study, language="en"):
    """A supervised session up to the hand-back after the demographics."""
    run = SessionRun(client, study, language=language)
    run.advance_to(Step.FEEDBACK)
    return run


def test_a_supervised_participant_is_given_the_link_and_date_on_the_hand_back_page(
    retest_study, client_for
):
    # Given a study whose participants come back after 14 days
    run = supervised_until_handback(client_for("experimenter_a"), retest_study)
    before_page = timezone.now()

    # When the participant has answered the demographics and sees the hand-back page
    page = run.get()

    # Then it shows the retest link, the date and the way by participant code
    content = page.content.decode()
    path, token = link_on(page)
    retest = Retest.objects.get(session=run.session)
    assert "To come back, your participant code is enough" in content
    assert "Your second rating" in content
    # Due 14 days after the participant's last answer; only the token's hash is stored.
    assert abs(retest.due_at - (before_page + timedelta(days=14))) < timedelta(minutes=1)
    assert retest.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in repr(Retest.objects.values().get())
    assert retest.step == Retest.Step.BLOCK1_SHS

    # And once the experimenter takes the device back, the link is gone from it
    run.hand_back()
    assert "/retest/" not in run.get().content.decode()
    assert run.feedback().status_code == 302
    assert run.session.step == Step.COMPLETE
    assert "/retest/" not in run.get().content.decode()


def test_the_hand_back_page_is_in_the_participants_language(retest_study, client_for):
    run = supervised_until_handback(client_for("experimenter_a"), retest_study, language="de")
    content = run.get().content.decode()
    link_on(run.get())
    assert "Um wiederzukommen, genügt Ihr Teilnehmendencode" in content


def test_before_the_due_date_the_link_says_when_to_come_back_and_stores_nothing(
    retest_study, client_for
):
    run = supervised_until_handback(client_for("experimenter_a"), retest_study)
    path, _token = link_on(run.get())
    retest = Retest.objects.get()

    page = Client().get(path)

    assert page.status_code == 200
    assert "Not yet" in page.content.decode()
    assert "Your assessment" not in page.content.decode()
    assert not RetestEvaluation.objects.exists()
    retest.refresh_from_db()
    assert retest.started_at is None

    # A form posted before the date is refused: nothing stored
    refused = Client().post(path, {"step": "block1_shs", **_form(WORKED)})
    assert refused.status_code == 409
    assert not RetestEvaluation.objects.exists()


def _form(values) -> dict[str, str]:
    return {f"q{number}": str(value) for number, value in enumerate(values, start=1)}


def test_a_retest_rates_both_systems_again_and_stores_the_engines_scores(retest_study, client_for):
    # Given a completed supervised session and its link, after the due date
    run = supervised_until_handback(client_for("experimenter_a"), retest_study)
    path, _token = link_on(run.get())
    run.hand_back()
    run.feedback()
    session = run.session
    make_due()
    visit = RetestVisit(path)

    # When the participant opens the link from home and rates block 1's system
    first = visit.get()
    assert first.status_code == 200
    first_page = first.content.decode()
    assert session.first_system.name in first_page
    assert CREDIT["en"] in first_page
    assert visit.post("block1_shs", **_form(WORKED)).status_code == 302
    second = visit.get()
    assert session.second_system.name in second.content.decode()
    assert visit.post("block2_shs", **_form(OTHER)).status_code == 302

    # Then the thank-you page, and both ratings stored with the engine's scores
    assert "You have rated both systems again." in visit.get().content.decode()
    retest = Retest.objects.get(session=session)
    assert retest.step == Retest.Step.COMPLETE
    assert retest.started_at is not None and retest.completed_at >= retest.started_at
    block1, block2 = RetestEvaluation.objects.order_by("block")
    assert (block1.system, block2.system) == (session.first_system, session.second_system)
    assert block1.language == "en" and block1.submitted_at is not None
    assert tuple(block1.answers.values()) == WORKED
    assert tuple(block2.answers.values()) == OTHER
    for column, expected in WORKED_SCORES.items():
        assert getattr(block1, column) == pytest.approx(expected), column
    # OTHER: every pair (1, -1) gives s = 0.5 and c = 0, SHS 0.5, SHS100 75.
    assert block2.shs == pytest.approx(0.5) and block2.shs100 == pytest.approx(75.0)
    assert block2.flagged_pairs == "" and block2.scored_at is not None
    # The first SHS is untouched by its retest
    assert Evaluation.objects.filter(session=session, submitted_at__isnull=False).count() == 2


def test_a_blinded_study_shows_the_systems_as_it_does_in_the_session(retest_study, client_for):
    Study.objects.filter(pk=retest_study.pk).update(blind_system_names=True)
    run = supervised_until_handback(client_for("experimenter_a"), retest_study)
    path, _token = link_on(run.get())
    make_due()
    visit = RetestVisit(path)

    page = visit.get().content.decode()
    assert "System A" in page and run.session.first_system.name not in page
    visit.post("block1_shs", **_form(WORKED))
    assert "System B" in visit.get().content.decode()


def test_the_retest_speaks_the_sessions_language(retest_study, client_for):
    run = supervised_until_handback(client_for("experimenter_a"), retest_study, language="fr")
    path, _token = link_on(run.get())
    make_due()

    page = Client().get(path)

    assert page["Content-Language"] == "fr"
    assert CREDIT["fr"] in page.content.decode()


def test_no_retest_for_a_pilot_or_a_study_without_one(study_a, client_for):
    # A study without a retest wave
    run = supervised_until_handback(client_for("experimenter_a"), study_a)
    assert "/retest/" not in run.get().content.decode()
    # A pilot session of a study with one
    with_retest(study_a)
    pilot = SessionRun(client_for("coordinator_a"), study_a, is_pilot=True)
    pilot.advance_to(Step.FEEDBACK)
    assert pilot.session.is_pilot
    assert "/retest/" not in pilot.get().content.decode()
    assert not Retest.objects.exists()


def test_a_remote_participant_gets_the_link_on_the_end_page_without_leaving_at_once(
    remote_study,
):
    # Given a remote study with a retest that sends completed sessions to a panel
    Study.objects.filter(pk=remote_study.pk).update(
        retest_after_days=7, completion_url="https://panel.example/done?c={code}"
    )
    run = RemoteRun(remote_study)

    # When the participant completes it
    session = run.complete()
    end = run.get()

    # Then the end page shows the code and the retest link, and waits for them
    content = end.content.decode()
    assert session.completion_code in content
    path, _token = link_on(end)
    assert 'http-equiv="refresh"' not in content
    assert "https://panel.example/done?c=" in content  # the panel link, to follow by hand
    assert "your participant code is enough" not in content
    retest = Retest.objects.get(session=session)
    assert abs(retest.due_at - (session.ended_at + timedelta(days=7))) < timedelta(seconds=5)

    # And after seven days the link opens the retest on any device
    make_due()
    RetestVisit(path).complete(block1=WORKED, block2=OTHER)
    assert Retest.objects.get().step == Retest.Step.COMPLETE


def test_a_remote_end_page_without_a_retest_still_leaves_for_the_panel(remote_study):
    Study.objects.filter(pk=remote_study.pk).update(
        completion_url="https://panel.example/done?c={code}"
    )
    run = RemoteRun(remote_study)
    run.complete()
    assert 'http-equiv="refresh"' in run.get().content.decode()


def test_a_lost_link_is_replaced_by_the_participant_code_at_the_lab(retest_study, client_for):
    # Given a completed session whose participant lost the link
    run = supervised_until_handback(client_for("experimenter_a"), retest_study)
    run.hand_back()
    run.feedback()
    code = run.session.participant.code
    make_due()
    experimenter = client_for("experimenter_a")

    # When the experimenter enters the code as the participant quotes it
    quoted = f"  {code.lower().replace('p-', '')} "
    url = reverse("surveys:retest_start", args=[retest_study.slug])
    start = experimenter.post(url, {"code": quoted})

    # Then the retest runs on the lab's device
    retest = Retest.objects.get()
    assert start.status_code == 302
    assert start.url == reverse("surveys:retest_staff", args=[retest_study.slug, retest.pk])
    RetestVisit(start.url, experimenter).complete()
    done = experimenter.get(start.url).content.decode()
    assert "Please hand the device back to the experimenter." in done
    assert RetestEvaluation.objects.filter(submitted_at__isnull=False).count() == 2


def test_an_unknown_code_says_so_and_starts_nothing(retest_study, client_for):
    url = reverse("surveys:retest_start", args=[retest_study.slug])
    response = client_for("coordinator_a").post(url, {"code": "P-XXXXXXXX"}, follow=True)
    assert "No retest of this study is scheduled for this code." in response.content.decode()
    assert not RetestEvaluation.objects.exists()
