"""The built-in chat in the browser (docs/design/transcripts.md §10.3): the answer streams
into the page piece by piece, each message is tagged in one click, the tags
meet the study minimum, and the device goes to the participant for the SHS.
A failing answer shows its message and a retry that answers the kept message."""

import re

import pytest

from surveys.models import LLMSystem, StudySession, Turn
from tests.e2e.conftest import log_in
from tests.e2e.participant import AGREE, interactive
from tests.llm_server import running_demo_server
from tests.personas import PASSWORD

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def slow_llm_server():
    """Answers spread over 1.5 s, so the stream shows in the page."""
    with running_demo_server("--delay", "1.5") as server:
        yield server.base_url


@pytest.fixture
def connected_study(study_a, personas, slow_llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    settings.LLM_MAX_RETRIES = 0
    LLMSystem.objects.filter(study=study_a).update(
        kind=LLMSystem.Kind.CONNECTED, base_url=slow_llm_server, model_name="demo", is_demo=True
    )
    return study_a


def _start_session(page, study):
    log_in(page, "exp-a@example.org", PASSWORD)
    page.goto(f"/studies/{study.slug}/")
    page.select_option('form[action$="/sessions/start/"] select[name=language]', "en")
    page.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))
    for key, answer in (("adult", "1"), ("fluent", "1"), ("ai_professional", "0"),
                        ("earlier_shs_study", "0"), ("llm_company", "0")):  # fmt: skip
        page.locator(f"input[name={key}][value='{answer}']").check()
    page.locator(AGREE).click()
    page.wait_for_selector("form.handback")
    page.locator("form.handback button").click()
    interactive(page, "#chat")


def _send(page, text):
    page.fill("#chat-text", text)
    page.get_by_role("button", name="Send", exact=True).click()


def _wait_for_stored_turns(page, users):
    """The panel is read again from the server once the answer is stored."""
    page.wait_for_function(
        "n => document.querySelectorAll('#chat .turn-user form.tag-form').length === n "
        "&& document.querySelector('#chat').getAttribute('aria-busy') !== 'true'",
        arg=users,
    )


def test_a_streamed_chat_tagged_to_the_minimum_then_the_shs(new_page, connected_study, screenshot):
    page = new_page()
    _start_session(page, connected_study)
    assert "demo model, not a real LLM" in page.locator("#chat").inner_text()
    assert page.locator("#prompt-form").count() == 0

    _send(page, "What is the capital of Australia?")
    # Part of the answer is on the page while the rest is still coming.
    page.wait_for_function(
        "() => { const a = document.querySelector('#chat .turn-assistant[aria-busy=true]');"
        " return a && a.textContent.length > 0; }"
    )
    partial = page.locator("#chat .turn-assistant").last.inner_text()
    _wait_for_stored_turns(page, 1)
    answer = page.locator("#chat .turn-assistant").last.inner_text()
    assert answer.startswith('You wrote: "What is the capital of Australia?"')
    assert len(partial) < len(answer)
    screenshot(page, "chat-1-answer")

    for number in range(2, 7):
        _send(page, f"Question number {number}")
        _wait_for_stored_turns(page, number)

    # One click per message: the category button submits the flags beside it.
    for index, category in enumerate(["Verified Knowledge"] * 3 + ["Glatteis (trap)"] * 3):
        turn = page.locator("#chat .turn-user").nth(index)
        if index == 5:
            turn.get_by_label("Source request").check()
        turn.get_by_role("button", name=category).click()
        page.wait_for_load_state()
    assert page.locator("#count-verified").inner_text() == "3"
    assert page.locator("#count-glatteis").inner_text() == "3"
    assert page.locator(".message.warning").count() == 0
    screenshot(page, "chat-2-tagged")

    page.get_by_role("button", name=re.compile("SHS")).click()
    page.wait_for_selector("#shs-form")

    session = StudySession.objects.get(study=connected_study)
    assert session.step == "block1_shs"
    turns = Turn.objects.filter(transcript__interaction__session=session)
    assert [t.role for t in turns] == ["user", "assistant"] * 6
    tagged = turns.filter(prompt__isnull=False)
    assert tagged.count() == 6
    assert tagged.filter(prompt__is_source_request=True).get().text == "Question number 6"


def test_a_failed_answer_offers_a_retry_and_keeps_the_message(new_page, connected_study):
    page = new_page()
    _start_session(page, connected_study)

    _send(page, "Tell me about the Glatteis bridge [500]")
    page.wait_for_selector("#chat .retry-form")

    assert "The system had a problem answering" in page.locator("#chat").inner_text()
    assert "Tell me about the Glatteis bridge [500]" in page.locator("#chat").inner_text()
    assert page.locator("#chat-text").input_value() == ""  # stored, so not left in the box
    session = StudySession.objects.get(study=connected_study)
    turns = Turn.objects.filter(transcript__interaction__session=session)
    assert [(t.role, t.error_cause) for t in turns] == [("user", ""), ("error", "server_error")]

    # Asking again (the same message fails again here): the page shows the
    # stored turns, one message, two error turns, and still one retry.
    page.locator("#chat .retry-form button").click()
    page.wait_for_function(
        "() => document.querySelectorAll('#chat .turn-error').length === 2"
        " && document.querySelector('#chat').getAttribute('aria-busy') !== 'true'"
    )
    assert page.locator("#chat .retry-form").count() == 1
    assert page.locator("#chat .turn-user").count() == 1
    assert page.locator("#chat li.turn").count() == 3
