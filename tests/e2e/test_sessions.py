"""The flows people click through: setting up a study, inviting an experimenter,
running complete sessions in German, English and French, resuming after a reload."""

import re

import pytest
from django.core import mail

from surveys.models import ConsentText, Evaluation, StudySession, User
from surveys.steps import Step
from tests.e2e.conftest import log_in
from tests.personas import PASSWORD

pytestmark = pytest.mark.e2e

Q1 = {
    "de": "Die Antwort war sachlich zuverlässig.",
    "en": "The response was factually reliable.",
    "fr": "La réponse était factuellement fiable.",
}


def _answer_all(page, values):
    for number, value in enumerate(values, start=1):
        page.locator(f"input[name=q{number}][value='{value}']").check()


def _run_session(page, study, language, screenshot):
    page.goto(f"/studies/{study.slug}/")
    page.select_option('form[action$="/sessions/start/"] select[name=language]', language)
    page.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))

    # Consent: the participant holds the tablet.
    screenshot(page, f"{language}-1-consent")
    for key, answer in (
        ("adult", "1"),
        ("fluent", "1"),
        ("ai_professional", "0"),
        ("earlier_shs_study", "0"),
        ("llm_company", "0"),
    ):
        page.locator(f"input[name={key}][value='{answer}']").check()
    page.locator("input[name=consent]").check()
    page.locator("main form button[type=submit]").first.click()

    for block in (1, 2):
        # Interaction: the experimenter logs the prompts.
        page.wait_for_selector("#prompt-form")
        for category in ["verified"] * 3 + ["glatteis"] * 3:
            page.locator(f"#prompt-form input[name=category][value={category}]").check()
            page.locator("#prompt-form button[type=submit]").click()
            page.wait_for_load_state()
        page.get_by_role("button", name=re.compile("SHS")).click()
        # SHS: the participant answers in their language.
        page.wait_for_selector("#shs-form")
        assert Q1[language] in page.content()
        screenshot(page, f"{language}-{block + 1}-shs-block{block}")
        _answer_all(page, [2, -2, 1, -1, 0, 0, 1, -1, 2, -2])
        page.locator("#shs-form button[type=submit]").click()

    page.wait_for_selector("input[name=clarity]")
    for key in ("clarity", "relevance", "response_options", "explanation_needed"):
        page.locator(f"input[name={key}][value='1']").check()
    page.locator("input[name=demographics_length][value='1']").check()
    page.locator("main form button[type=submit]").first.click()

    page.wait_for_selector("input[name=age_band]")
    screenshot(page, f"{language}-4-demographics")
    for key in ("age_band", "gender", "education", "first_language", "llm_use"):
        page.locator(f"input[name={key}][value='9']").check()
    page.locator("main form button[type=submit]").first.click()
    page.wait_for_selector("h1")
    screenshot(page, f"{language}-5-complete")


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
    page.goto(f"/studies/{study_a.slug}/")
    page.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))
    session = StudySession.objects.get(study=study_a)
    from surveys import protocol

    protocol.consent_submit(
        session_id=session.pk,
        eligibility={"adult": True, "fluent": True, "ai_professional": False,
                     "earlier_shs_study": False, "llm_company": False},
        consented=True,
        shown_text=ConsentText.current(study_a.pk, session.language).fingerprint,
    )  # fmt: skip
    protocol.interaction_finish(session_id=session.pk, step=Step.BLOCK1_INTERACTION,
                                override_reason="browser test")  # fmt: skip
    page.reload()
    page.wait_for_selector("#shs-form")
    for number, value in ((1, 2), (2, -1), (3, 0), (4, 1)):
        with page.expect_response(re.compile(r"/answer/$")):
            page.locator(f"input[name=q{number}][value='{value}']").check()

    page.reload()

    for number, value in ((1, 2), (2, -1), (3, 0), (4, 1)):
        assert page.locator(f"input[name=q{number}][value='{value}']").is_checked()
    assert not page.locator("input[name=q5]:checked").count()
    assert StudySession.objects.get(pk=session.pk).step == Step.BLOCK1_SHS


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
