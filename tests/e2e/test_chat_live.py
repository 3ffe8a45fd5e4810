"""The remote chat on a 390 px phone (docs/design/transcripts.md §10.3,
docs/design/remote.md §11.5): the block's counters ("Messages", "Still
needed") follow each answer, with the page's script (no reload) and without
JavaScript (the page the form comes back to); after the system fails, the
failed message is kept, offered for a retry and cannot be tagged until a
retry answers it."""

import pytest

from surveys.models import LLMSystem, StudySession, Turn
from tests.e2e.participant import AGREE, PHONE, agree, interactive, tap_answer
from tests.surveys.remote import make_remote_study, take_url
from tests.surveys.test_chat_answers import _closed_port_url
from tests.surveys.test_protocol_variants import NATURALISTIC, block_started_ago

pytestmark = pytest.mark.e2e

MIN_TARGET = 44  # CSS px, as the other phone tests


@pytest.fixture
def phone_context(browser, live_server, settings):
    """phone_context(javascript=True) -> a page on a 390 px phone, its own cookies."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    settings.LLM_MAX_RETRIES = 0
    contexts = []

    def build(javascript: bool = True):
        context = browser.new_context(
            base_url=live_server.url,
            viewport=PHONE,
            is_mobile=True,
            has_touch=True,
            locale="en-GB",
            java_script_enabled=javascript,
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield build
    for context in contexts:
        context.close()


def _take_part(page, study):
    """From the public link to the first chat."""
    page.goto(take_url(study))
    tap_answer(page, "language", "en")
    page.get_by_role("button", name="Start", exact=True).tap()
    page.wait_for_selector(AGREE)
    agree(page)
    interactive(page, "#chat-text")


def _send(page, text: str):
    page.fill("#chat-text", text)
    page.get_by_role("button", name="Send", exact=True).tap()


def _answered(page, answers: int, errors: int = 0):
    """The stored turns are in place and the page is no longer busy."""
    page.wait_for_function(
        "([a, e]) => document.querySelectorAll('#chat li.turn-assistant[id]').length === a"
        " && document.querySelectorAll('#chat li.turn-error[id]').length === e"
        " && document.querySelector('#chat').getAttribute('aria-busy') !== 'true'",
        arg=[answers, errors],
    )


def _counters(page) -> tuple[str, str, str]:
    warning = page.locator("[data-progress-warning]")
    still_needed = warning.inner_text() if warning.count() and warning.is_visible() else ""
    return (
        page.locator("#count-turns").inner_text(),
        page.locator("#count-minutes").inner_text(),
        still_needed,
    )


def _session(study) -> StudySession:
    return StudySession.objects.get(study=study)


@pytest.fixture
def naturalistic_study(db, llm_server):
    return make_remote_study(llm_server, slug="remote-live", **NATURALISTIC)


def test_the_counters_follow_each_answer_without_a_reload(phone_context, naturalistic_study):
    page = phone_context()
    _take_part(page, naturalistic_study)
    turns, minutes, still_needed = _counters(page)
    assert (turns, minutes) == ("0", "0")
    assert "Still needed: 2 more messages, 5 more minutes." in still_needed
    page.evaluate("() => { window.notReloaded = true; }")

    _send(page, "Which museums open on Sundays?")
    _answered(page, 1)
    turns, minutes, still_needed = _counters(page)
    assert (turns, minutes) == ("1", "0")
    assert "Still needed: 1 more message, 5 more minutes." in still_needed

    # Five minutes on: the next answer brings the minutes too.
    block_started_ago(_session(naturalistic_study), 5)
    _send(page, "And on Mondays?")
    _answered(page, 2)
    assert _counters(page) == ("2", "5", "")
    assert page.evaluate("() => window.notReloaded") is True

    page.get_by_role("button", name="Continue to the questionnaire").tap()
    page.wait_for_selector("#shs-form")


def test_without_javascript_the_page_after_each_message_shows_the_counts(
    phone_context, naturalistic_study
):
    page = phone_context(javascript=False)
    _take_part(page, naturalistic_study)
    assert _counters(page)[0] == "0"

    _send(page, "Which museums open on Sundays?")
    page.wait_for_selector("#chat li.turn-assistant")
    turns, minutes, still_needed = _counters(page)
    assert (turns, minutes) == ("1", "0")
    assert "Still needed: 1 more message, 5 more minutes." in still_needed

    block_started_ago(_session(naturalistic_study), 5)
    _send(page, "And on Mondays?")
    page.wait_for_selector("#chat li.turn-assistant >> nth=1")
    assert _counters(page) == ("2", "5", "")


def test_a_failed_message_is_retried_then_tagged_on_a_phone(phone_context, llm_server):
    study = make_remote_study(llm_server, slug="remote-retry")
    page = phone_context()
    _take_part(page, study)
    LLMSystem.objects.filter(study=study).update(base_url=_closed_port_url())

    _send(page, "What is the area of Austria?")
    _answered(page, 0, errors=1)

    chat = page.locator("#chat")
    assert "The system could not be reached" in chat.inner_text()
    failed = page.locator("#chat .turn-user").last
    assert "What is the area of Austria?" in failed.inner_text()  # kept, not retyped
    assert failed.locator("form.tag-form").count() == 0
    assert "cannot be tagged" in failed.inner_text()
    retry = page.locator("#chat .retry-form button")
    assert retry.inner_text().strip() == "Try again"
    box = retry.bounding_box()
    assert box["width"] >= MIN_TARGET and box["height"] >= MIN_TARGET
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]

    # The system is back: the retry answers the kept message, which can now be tagged.
    LLMSystem.objects.filter(study=study).update(base_url=llm_server)
    retry.tap()
    _answered(page, 1, errors=1)
    assert page.locator("#chat .retry-form").count() == 0
    assert page.locator("#chat .turn-user").count() == 1
    answered = page.locator("#chat .turn-user").last
    assert "cannot be tagged" not in answered.inner_text()
    answered.locator("form.tag-form button[value=verified]").tap()
    page.wait_for_selector("#chat .turn-user .turn-tag")
    assert page.locator("#count-verified").inner_text() == "1"

    turns = Turn.objects.filter(transcript__interaction__session=_session(study))
    assert [t.role for t in turns] == ["user", "error", "assistant"]
    assert turns.get(role="user").prompt.category == "verified"
