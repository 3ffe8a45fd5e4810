"""The pages the browser suite visits pass axe-core with no violation of any
impact (the participant's pages, the remote chat with its counters, the staff
pages and their tables), every page has its icon, and the SHS can be
completed with the keyboard alone."""

import json
import re

import pytest
from django.test import Client
from django.utils import timezone

from exports.models import ExportJob
from surveys.invitations import invitation_create
from surveys.models import ConsentText, PromptEntry, StudySession, User
from surveys.protocol import flow
from surveys.steps import Step
from tests.e2e.conftest import log_in, violations
from tests.e2e.participant import AGREE, SCREENING, agree, press, tap_answer
from tests.personas import PASSWORD
from tests.surveys.remote import make_remote_study, take_url
from tests.surveys.runner import SessionRun

pytestmark = pytest.mark.e2e
ELIGIBLE = {
    "adult": True,
    "fluent": True,
    "ai_professional": False,
    "earlier_shs_study": False,
    "llm_company": False,
}


def _start(page, study):
    log_in(page, "exp-a@example.org", PASSWORD)
    page.goto(f"/studies/{study.slug}/")
    page.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))
    return StudySession.objects.get(study=study)


def _to_step(session, step):
    if step == Step.CONSENT:
        return
    flow.consent_submit(
        session_id=session.pk,
        eligibility=ELIGIBLE,
        consented=True,
        shown_text=ConsentText.current(session.study_id, session.language).fingerprint,
    )
    path = [
        (Step.BLOCK1_INTERACTION, lambda: flow.interaction_finish(
            session_id=session.pk, step=Step.BLOCK1_INTERACTION, override_reason="test")),
        (Step.BLOCK1_SHS, lambda: flow.shs_submit(
            session_id=session.pk, step=Step.BLOCK1_SHS, responses=_answers())),
        (Step.BLOCK2_INTERACTION, lambda: flow.interaction_finish(
            session_id=session.pk, step=Step.BLOCK2_INTERACTION, override_reason="test")),
        (Step.BLOCK2_SHS, lambda: flow.shs_submit(
            session_id=session.pk, step=Step.BLOCK2_SHS, responses=_answers())),
    ]  # fmt: skip
    for name, action in path:
        if name == step:
            return
        action()


def _answers():
    return {f"q{i}": 1 for i in range(1, 11)}


@pytest.mark.parametrize("step", [Step.CONSENT, Step.BLOCK1_SHS, Step.DEMOGRAPHICS])
def test_participant_pages_have_no_violation(step, axe_page, personas, study_a):
    session = _start(axe_page, study_a)
    _to_step(session, step)
    axe_page.reload()
    assert violations(axe_page) == []


def test_the_end_and_withdrawal_pages_have_no_violation(axe_page, personas, study_a):
    session = _start(axe_page, study_a)
    axe_page.goto(f"/sessions/{session.token}/withdraw/")
    assert violations(axe_page) == []
    axe_page.get_by_role("button", name=re.compile("withdraw", re.I)).click()
    axe_page.wait_for_selector("h1")
    assert violations(axe_page) == []


def test_the_shs_can_be_completed_with_the_keyboard_alone(axe_page, personas, study_a):
    session = _start(axe_page, study_a)
    _to_step(session, Step.BLOCK1_SHS)
    page = axe_page
    page.reload()
    page.wait_for_selector("#shs-form")

    for _ in range(30):  # Tab from the top of the page to the first answer
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "q1":
            break
    for number in range(1, 11):
        assert page.evaluate("document.activeElement.name") == f"q{number}"
        page.keyboard.press("ArrowRight")  # selects the second option, -1
        page.keyboard.press("Tab")  # on to the next question
    assert page.evaluate("document.activeElement.type") == "submit"
    page.keyboard.press("Enter")
    # The hand-back page, also by keyboard, and as accessible as the forms.
    page.wait_for_selector("form.handback")
    assert violations(page) == []
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('form.handback') !== null"):
            break
    page.keyboard.press("Enter")
    page.wait_for_selector("#prompt-form")

    evaluation = session.evaluations.get(block=1)
    assert evaluation.is_submitted
    assert set(evaluation.answers.values()) == {-1}
    assert json.dumps(evaluation.answers)  # stored as plain numbers


def _tab_to(page, selector: str):
    """Tab from where the focus is until it is on the element selector names."""
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reaches {selector}")


def test_consent_is_given_by_its_button_with_the_keyboard(axe_page, personas, study_a):
    """Enter in an answer posts nothing (it would press the form's first button);
    "I agree and continue", reached by Tab, consents with Enter."""
    session = _start(axe_page, study_a)
    page = axe_page
    for key, answer in SCREENING:
        tap_answer(page, key, answer, touch=False)
    page.locator("input[name=llm_company][value='0']").focus()
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)  # time for a post the page must not send
    assert not page.locator(".errors").count()
    _tab_to(page, AGREE)
    page.keyboard.press("Enter")
    page.wait_for_selector("form.handback")
    session.refresh_from_db()
    assert session.step == Step.BLOCK1_INTERACTION
    assert session.consent.consent_text == ConsentText.current(study_a.pk, "en")


def test_without_javascript_enter_in_an_answer_still_never_consents(
    browser, live_server, personas, study_a
):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    session = _start(page, study_a)
    for key, answer in SCREENING:
        page.locator(f"input[name={key}][value='{answer}']").check()
    page.locator("input[name=llm_company][value='0']").press("Enter")
    page.wait_for_selector("text=Consent is required to take part.")
    session.refresh_from_db()
    assert session.step == Step.CONSENT
    context.close()


def test_the_prompt_log_has_no_violation_and_logs_by_keyboard(axe_page, personas, study_a):
    """One button per category: Tab to it and Enter logs one prompt of it, with
    the ticks beside it; Enter on a tick logs nothing."""
    session = _start(axe_page, study_a)
    _to_step(session, Step.BLOCK1_INTERACTION)
    page = axe_page
    page.reload()
    page.wait_for_selector("#prompt-form")
    assert violations(page) == []
    page.locator("#prompt-form input[name=is_source_request]").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    assert not PromptEntry.objects.filter(interaction__session=session).exists()
    _tab_to(page, "#prompt-form button[value=glatteis]")
    page.keyboard.press("Enter")
    page.wait_for_selector("#count-glatteis:text-is('1')")
    assert page.locator("#count-verified").inner_text() == "0"
    prompt = PromptEntry.objects.get(interaction__session=session)
    assert (prompt.category, prompt.is_source_request) == ("glatteis", True)
    assert violations(page) == []  # with the log below the form


def test_the_monitor_with_a_pilot_request_has_no_violation(axe_page, personas, study_a):
    experimenter = User.objects.get(email="exp-a@example.org")
    client = Client()
    client.force_login(experimenter)
    run = SessionRun(client, study_a)
    StudySession.objects.filter(token=run.token).update(
        pilot_requested_by=experimenter, pilot_requested_at=timezone.now()
    )
    log_in(axe_page, "coord-a@example.org", PASSWORD)
    axe_page.goto(f"/studies/{study_a.slug}/monitor/")
    axe_page.wait_for_selector(".pilot-requests table")
    assert violations(axe_page) == []


def test_the_exports_list_has_no_violation(axe_page, personas, study_a):
    coordinator = User.objects.get(email="coord-a@example.org")
    ExportJob.objects.create(study=study_a, format="csv", requested_by=coordinator)
    ExportJob.objects.create(study=study_a, format="xlsx", status=ExportJob.Status.FAILED)
    log_in(axe_page, "coord-a@example.org", PASSWORD)
    axe_page.goto(f"/studies/{study_a.slug}/exports/")
    assert axe_page.locator("main table tbody tr").count() == 2
    assert violations(axe_page) == []


def test_the_remote_chat_with_its_counter_has_no_violation(axe_page, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server, protocol="naturalistic", min_turns=2, min_minutes=0)
    axe_page.goto(take_url(study))
    tap_answer(axe_page, "language", "en", touch=False)
    press(axe_page.get_by_role("button", name="Start", exact=True), touch=False)
    axe_page.wait_for_selector(AGREE)
    assert violations(axe_page) == []  # the remote participant's consent page
    agree(axe_page, touch=False)
    axe_page.wait_for_selector("#chat-text")
    assert axe_page.locator("table.prompt-counts #count-turns").inner_text() == "0"
    assert violations(axe_page) == []


@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/calculator/"])
def test_every_page_links_an_icon_the_server_serves(path, axe_page, db):
    """Browsers ask for /favicon.ico whatever the page says; the page links the
    hashed copy, which may be cached for good."""
    axe_page.goto(path)
    linked = axe_page.locator("link[rel=icon]").get_attribute("href")
    for url in (linked, "/favicon.ico"):
        response = axe_page.request.get(url)
        assert response.status == 200, url
        assert response.headers["content-type"].startswith("image/"), url
        assert response.body()[:4] == b"\x00\x00\x01\x00", url  # an ICO file's header


@pytest.mark.parametrize(
    "page_path",
    ["/studies/", "/studies/{slug}/", "/studies/{slug}/members/", "/studies/{slug}/consent/",
     "/studies/{slug}/edit/", "/studies/new/", "/studies/{slug}/systems/new/", "/calculator/"],
)  # fmt: skip
def test_the_staff_pages_the_suite_visits_have_no_violation(page_path, axe_page, personas, study_a):
    """At desktop width, as a coordinator sees them; the team page with a member
    and an invitation, whose rows end in buttons."""
    coordinator = User.objects.get(email="coord-a@example.org")
    invitation_create(
        study=study_a, email="invited@example.org", role="experimenter", invited_by=coordinator
    )
    log_in(axe_page, "coord-a@example.org", PASSWORD)
    axe_page.goto(page_path.format(slug=study_a.slug))
    assert violations(axe_page) == []


def test_the_missing_page_has_no_violation(axe_page, db):
    response = axe_page.goto("/no/such/page/")
    assert response.status == 404
    assert axe_page.locator("h1").inner_text() == "Page not found"
    assert violations(axe_page) == []
