"""The flows people click through: setting up a study, inviting an experimenter,
running complete sessions in German, English and French (participant pages
without countdown, the hand-back page, the feedback after the demographics),
resuming after a reload, autosaving rapid changes."""

import re

import pytest
from django.core import mail

from surveys.models import ConsentText, Evaluation, StudySession, User
from surveys.steps import Step
from tests.e2e.conftest import log_in
from tests.e2e.participant import AGREE, interactive
from tests.personas import PASSWORD

pytestmark = pytest.mark.e2e

Q1 = {
    "de": "Die Antwort war sachlich zuverlässig.",
    "en": "The response was factually reliable.",
    "fr": "La réponse était factuellement fiable.",
}
# The response labels of the published SHS in each language, -2 to +2.
SCALE_LABELS = {
    "de": ["Stimme gar nicht zu", "Stimme nicht zu", "Neutral", "Stimme zu", "Stimme voll zu"],
    "en": ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"],
    "fr": ["Pas du tout d'accord", "Pas d'accord", "Neutre", "D'accord", "Tout à fait d'accord"],
}
HAND_BACK = {
    "de": "Bitte geben Sie das Gerät an die Versuchsleitung zurück.",
    "en": "Please hand the device back to the experimenter.",
    "fr": "Veuillez rendre l'appareil à la personne responsable de la séance.",
}
ANSWERED = {"de": "10 von 10 Items beantwortet", "en": "10 of 10 items answered",
            "fr": "Réponses\u202f: 10 sur 10 items"}  # fmt: skip


def _answer_all(page, values):
    for number, value in enumerate(values, start=1):
        page.locator(f"input[name=q{number}][value='{value}']").check()


def _assert_participant_page(page, language):
    """The participant holds the device: their language, nothing of the experimenter's."""
    assert page.locator("html").get_attribute("lang") == language
    assert page.locator(".countdown").count() == 0
    assert page.locator("nav").count() == 0
    assert page.locator("form[action*='logout']").count() == 0
    assert page.locator("a[href*='/studies/']").count() == 0


def _hand_back(page, language):
    """The hand-back page stands between the participant and the experimenter's page."""
    page.wait_for_selector("form.handback")
    assert HAND_BACK[language] in page.locator("main").inner_text()
    _assert_participant_page(page, language)
    page.locator("form.handback button").click()
    page.wait_for_load_state()


def _run_session(page, study, language, screenshot):
    page.goto(f"/studies/{study.slug}/")
    page.select_option('form[action$="/sessions/start/"] select[name=language]', language)
    page.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))

    # Consent: the participant holds the tablet.
    screenshot(page, f"{language}-1-consent")
    _assert_participant_page(page, language)
    for key, answer in (
        ("adult", "1"),
        ("fluent", "1"),
        ("ai_professional", "0"),
        ("earlier_shs_study", "0"),
        ("llm_company", "0"),
    ):
        page.locator(f"input[name={key}][value='{answer}']").check()
    page.locator(AGREE).click()
    _hand_back(page, language)

    for block in (1, 2):
        # Interaction: the experimenter logs the prompts, against the countdown.
        page.wait_for_selector("#prompt-form")
        assert page.locator(".countdown").count() == 1
        for category in ["verified"] * 3 + ["glatteis"] * 3:
            page.locator(f"#prompt-form button[name=category][value={category}]").click()
            page.wait_for_load_state()
        page.get_by_role("button", name=re.compile("SHS")).click()
        # SHS: the participant answers in their language.
        page.wait_for_selector("#shs-form")
        assert Q1[language] in page.content()
        _assert_participant_page(page, language)
        labels = page.locator("#fieldset-q1 .likert label").all_inner_texts()
        assert [label.strip() for label in labels] == SCALE_LABELS[language]
        screenshot(page, f"{language}-{block + 1}-shs-block{block}")
        _answer_all(page, [2, -2, 1, -1, 0, 0, 1, -1, 2, -2])
        assert page.locator("#shs-progress").inner_text() == ANSWERED[language]
        page.locator("#shs-form button[type=submit]").click()
        if block == 1:
            _hand_back(page, language)

    # Demographics follow the second SHS: the participant keeps the device.
    page.wait_for_selector("input[name=age_band]")
    _assert_participant_page(page, language)
    screenshot(page, f"{language}-4-demographics")
    for key in ("age_band", "gender", "education", "first_language", "llm_use"):
        page.locator(f"input[name={key}][value='9']").check()
    page.locator("main form button[type=submit]").first.click()
    code = StudySession.objects.get(study=study).participant.code
    page.wait_for_selector("form.handback")
    assert code in page.locator("main").inner_text()
    screenshot(page, f"{language}-5-hand-back")
    _hand_back(page, language)

    # The administrator feedback, now that the demographics have happened.
    page.wait_for_selector("input[name=clarity]")
    for key in ("clarity", "relevance", "response_options", "explanation_needed"):
        page.locator(f"input[name={key}][value='1']").check()
    page.locator("input[name=demographics_length][value='1']").check()
    page.locator("main form button[type=submit]").first.click()
    page.wait_for_url(f"**/studies/{study.slug}/")
    assert code in page.locator(".messages").inner_text()


def test_coordinator_sets_up_a_study_and_invites_an_experimenter(new_page, personas, study_b):
    coordinator = new_page()
    log_in(coordinator, "coord-a@example.org", PASSWORD)
    coordinator.goto("/studies/new/")
    coordinator.fill("input[name=title]", "Browser study")
    coordinator.fill("input[name=slug]", "browser-study")
    coordinator.locator("input[name=languages][value=de]").check()
    coordinator.locator("input[name=languages][value=en]").check()
    coordinator.locator("form.stacked button[type=submit]").click()
    coordinator.wait_for_url("**/studies/browser-study/")
    for name in ("ChatGPT", "Claude"):
        coordinator.get_by_role("link", name="Add a system").click()
        coordinator.fill("input[name=name]", name)
        coordinator.locator("form.stacked button[type=submit]").click()
        coordinator.wait_for_url("**/studies/browser-study/")
    assert "Claude" in coordinator.content()
    coordinator.get_by_role("link", name="Team").click()
    coordinator.fill("input[name=email]", "new.experimenter@example.org")
    coordinator.get_by_role("button", name="Send invitation").click()
    coordinator.wait_for_selector("text=Invitation sent")

    link = re.search(r"https?://\S+/invitations/\S+/", mail.outbox[-1].body).group(0)
    path = "/" + link.split("/", 3)[3]
    experimenter = new_page()
    experimenter.goto(path)
    experimenter.fill("input[name=password1]", "a-fresh-password-2026")
    experimenter.fill("input[name=password2]", "a-fresh-password-2026")
    experimenter.get_by_role("button", name="Accept and join").click()
    experimenter.wait_for_url("**/studies/browser-study/")
    # Next day: the experimenter logs in with the new password and sees only that study.
    experimenter.get_by_role("button", name=re.compile("Log out")).click()
    experimenter.wait_for_load_state()
    log_in(experimenter, "new.experimenter@example.org", "a-fresh-password-2026")
    experimenter.goto("/studies/")
    assert "Browser study" in experimenter.content()
    assert study_b.title not in experimenter.content()
    experimenter.get_by_role("link", name="Browser study").click()
    assert experimenter.get_by_role("button", name="Start session").count() == 1
    assert User.objects.filter(email="new.experimenter@example.org").exists()


@pytest.mark.parametrize("language", ["de", "en", "fr"])
def test_an_experimenter_runs_a_complete_session(language, new_page, personas, study_a, screenshot):
    ConsentText.objects.filter(study=study_a, language=language).update(
        information_sheet="Information", consent_text="Ich stimme zu / I agree / J'accepte"
    )
    page = new_page()
    log_in(page, "exp-a@example.org", PASSWORD)
    _run_session(page, study_a, language, screenshot)

    session = StudySession.objects.get(study=study_a)
    assert session.step == Step.COMPLETE
    evaluations = Evaluation.objects.filter(session=session).order_by("block")
    assert [e.language for e in evaluations] == [language, language]
    assert all(e.scored_at is not None for e in evaluations)
    assert evaluations[0].answers == {
        "q1": 2, "q2": -2, "q3": 1, "q4": -1, "q5": 0,
        "q6": 0, "q7": 1, "q8": -1, "q9": 2, "q10": -2,
    }  # fmt: skip


def test_a_participant_reloads_mid_shs_and_finds_their_answers(new_page, personas, study_a):
    page = new_page()
    log_in(page, "exp-a@example.org", PASSWORD)
    session = _open_shs(page, study_a)
    for number, value in ((1, 2), (2, -1), (3, 0), (4, 1)):
        with page.expect_response(re.compile(r"/answer/$")):
            page.locator(f"input[name=q{number}][value='{value}']").check()

    page.reload()

    for number, value in ((1, 2), (2, -1), (3, 0), (4, 1)):
        assert page.locator(f"input[name=q{number}][value='{value}']").is_checked()
    assert not page.locator("input[name=q5]:checked").count()
    assert StudySession.objects.get(pk=session.pk).step == Step.BLOCK1_SHS


def _open_shs(page, study):
    page.goto(f"/studies/{study.slug}/")
    page.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))
    session = StudySession.objects.get(study=study)
    from surveys.protocol import flow

    flow.consent_submit(
        session_id=session.pk,
        eligibility={"adult": True, "fluent": True, "ai_professional": False,
                     "earlier_shs_study": False, "llm_company": False},
        consented=True,
        shown_text=ConsentText.current(study.pk, session.language).fingerprint,
    )  # fmt: skip
    flow.interaction_finish(session_id=session.pk, step=Step.BLOCK1_INTERACTION,
                                override_reason="browser test")  # fmt: skip
    page.reload()
    interactive(page, "#shs-form")
    return session


def test_rapid_changes_keep_the_last_answer_whatever_order_saves_arrive(
    new_page, personas, study_a
):
    page = new_page()
    log_in(page, "exp-a@example.org", PASSWORD)
    session = _open_shs(page, study_a)
    held = []
    page.route(re.compile(r"/answer/$"), lambda route: held.append(route))  # hold each save

    # The participant changes their mind on Q1 four times within a few milliseconds.
    values = ["2", "-2", "1", "-1"]
    page.evaluate(
        """values => values.forEach(value => {
            document.querySelector(`input[name=q1][value='${value}']`).click();
        })""",
        values,
    )
    while len(held) < len(values):
        page.wait_for_timeout(20)
    # The saves reach the server newest first: every older one arrives after it.
    for route in reversed(held):
        with page.expect_response(lambda response, r=route: response.request == r.request):
            route.continue_()

    assert Evaluation.objects.get(session=session).q1 == -1
    page.unroute(re.compile(r"/answer/$"))
    page.reload()
    assert page.locator("input[name=q1][value='-1']").is_checked()


def test_the_monitor_shows_a_running_session(new_page, personas, study_a):
    experimenter = new_page()
    log_in(experimenter, "exp-a@example.org", PASSWORD)
    experimenter.goto(f"/studies/{study_a.slug}/")
    experimenter.get_by_role("button", name="Start session").click()
    experimenter.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))

    coordinator = new_page()
    log_in(coordinator, "coord-a@example.org", PASSWORD)
    coordinator.goto(f"/studies/{study_a.slug}/monitor/")
    assert coordinator.locator("[data-state=consent]").inner_text() == "1"
    assert "exp-a@example.org" in coordinator.content()
