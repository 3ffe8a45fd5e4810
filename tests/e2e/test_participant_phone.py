"""The participant's pages on a 390 x 844 phone (docs/design/protocol.md §4.10): a
supervised session walked by tapping, from the consent through a connected
block's chat with one streamed answer and the SHS to the demographics and the
last pages. On every page: no sideways scrolling, answer targets of at least
44 x 44 CSS px, inputs at 16 px or more (iOS zooms into smaller ones), the
five response labels of each SHS item fully visible, the chat's box and send
button on screen and a long URL in an answer wrapped."""

import re

import pytest

from surveys.models import ConsentText, LLMSystem, StudySession
from surveys.steps import Step
from tests.e2e.conftest import log_in
from tests.e2e.participant import (
    AGREE,
    DEMOGRAPHICS,
    PHONE,
    SCREENING,
    agree,
    interactive,
    read,
    tap_answer,
)
from tests.personas import PASSWORD
from tests.surveys.remote import make_remote_study, take_url

pytestmark = pytest.mark.e2e

MIN_TARGET = 44  # CSS px: WCAG 2.5.5 (AAA) and Apple's HIG
MIN_FONT = 16  # CSS px: iOS zooms into a focused input set smaller
# One word of 160 characters, no hyphen to break at.
LONG_URL = "https://example.org/" + "averylongpathsegmentwithoutanybreak" * 4
SCALE_LABELS = ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"]

# One measure of a page, read in one go: a reload between two reads cannot mix pages.
LAYOUT = """() => {
  const visible = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const px = e => parseFloat(getComputedStyle(e).fontSize);
  // The fields one types into or picks from: iOS zooms into these when they are small.
  const typed = 'input:not([type=hidden]):not([type=radio]):not([type=checkbox])';
  const fields = [...document.querySelectorAll(typed + ', textarea, select')];
  const texts = [...document.querySelectorAll('main p, main li, main legend, main label')];
  return {
    scrollWidth: document.documentElement.scrollWidth,
    bodyWidth: document.body.scrollWidth,
    innerWidth: window.innerWidth,
    bodyFont: px(document.body),
    smallFields: fields.filter(visible).filter(e => px(e) < %(font)d)
      .map(e => (e.name || e.id) + ' ' + px(e)),
    smallTexts: texts.filter(visible).filter(e => !e.closest('.credit'))
      .filter(e => px(e) < %(font)d).map(e => e.textContent.trim().slice(0, 40) + ' ' + px(e)),
  };
}""" % {"font": MIN_FONT}  # noqa: UP031 (JavaScript braces)

BOXES = """els => els.filter(e => e.getClientRects().length).map(e => {
  const r = e.getBoundingClientRect();
  return {text: e.textContent.trim(), left: r.left, right: r.right, width: r.width,
          height: r.height, clipped: e.scrollWidth > e.clientWidth + 1};
})"""


def _boxes(page, selector: str) -> list[dict]:
    return read(page, lambda p: p.locator(selector).evaluate_all(BOXES))


def _assert_phone_layout(page, name: str, shots):
    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
    layout = read(page, lambda p: p.evaluate(LAYOUT))
    assert layout["innerWidth"] == PHONE["width"]
    assert layout["scrollWidth"] <= layout["innerWidth"], f"{name} scrolls sideways"
    assert layout["bodyWidth"] <= layout["innerWidth"], f"{name} scrolls sideways"
    assert layout["bodyFont"] >= MIN_FONT
    assert layout["smallFields"] == [], f"{name}: inputs below {MIN_FONT} px"
    assert layout["smallTexts"] == [], f"{name}: text below {MIN_FONT} px"


def _assert_tappable(page, selector: str, expected: int):
    """Each answer target is on screen and at least 44 x 44, its text whole."""
    boxes = _boxes(page, selector)
    assert len(boxes) == expected
    for box in boxes:
        assert box["width"] >= MIN_TARGET and box["height"] >= MIN_TARGET, box
        assert box["left"] >= 0 and box["right"] <= PHONE["width"], box
        assert not box["clipped"], box


def _on_screen(page, selector: str):
    box = _boxes(page, selector)[0]
    assert box["left"] >= 0 and box["right"] <= PHONE["width"], box


@pytest.fixture
def shots(tmp_path_factory):
    """Screenshots under pytest's own temporary folder, for a person to look at."""
    return tmp_path_factory.mktemp("phone")


@pytest.fixture
def connected_study(study_a, personas, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    LLMSystem.objects.filter(study=study_a).update(
        kind=LLMSystem.Kind.CONNECTED, base_url=llm_server, model_name="demo", is_demo=True
    )
    ConsentText.objects.filter(study=study_a, language="en").update(
        information_sheet="What the study is about.\nMore at " + LONG_URL,
    )
    return study_a


@pytest.fixture
def phone(browser, live_server):
    context = browser.new_context(
        base_url=live_server.url,
        viewport=PHONE,
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
        locale="en-GB",
    )
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def _start(page, study, *, logged_in=False):
    if not logged_in:
        log_in(page, "exp-a@example.org", PASSWORD)
    page.goto(f"/studies/{study.slug}/")
    page.select_option('form[action$="/sessions/start/"] select[name=language]', "en")
    page.get_by_role("button", name="Start session").tap()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))
    page.wait_for_selector(AGREE)


def _consent(page, shots):
    _assert_phone_layout(page, "1-consent", shots)
    _assert_tappable(page, ".likert label", 2 * len(SCREENING))
    _assert_tappable(page, AGREE, 1)
    agree(page)
    _hand_back(page)


def _hand_back(page):
    page.wait_for_selector("form.handback")
    _assert_tappable(page, "form.handback button", 1)
    page.locator("form.handback button").tap()
    page.wait_for_load_state()


def _chat(page, block: int, shots, *, finish=True):
    interactive(page, "#chat-text")
    _on_screen(page, "#chat-text")
    _on_screen(page, ".compose-form button[type=submit]")
    page.fill("#chat-text", f"Please open {LONG_URL}")
    page.get_by_role("button", name="Send", exact=True).tap()
    page.wait_for_function(
        "() => document.querySelectorAll('#chat .turn-user form.tag-form').length === 1"
        " && document.querySelector('#chat').getAttribute('aria-busy') !== 'true'"
    )
    answer = page.locator("#chat .turn-assistant .turn-text").last
    assert LONG_URL[:40] in answer.inner_text()
    _assert_phone_layout(page, f"{block + 1}-chat-block{block}", shots)
    for selector in ("#chat .turn-assistant", "#chat .turn-user", "#chat-text"):
        _on_screen(page, selector)
    _assert_tappable(page, "#chat .tag-form button, .compose-form button[type=submit]", 3)
    _assert_tappable(page, "#chat .tag-form .flags label", 3)
    if finish:
        page.fill("textarea[name=override_reason]", "A layout test")
        page.get_by_role("button", name=re.compile("SHS")).tap()


def _shs(page, block: int, shots):
    interactive(page, "#shs-form")
    _assert_phone_layout(page, f"{block + 1}-shs-block{block}", shots)
    _assert_tappable(page, "#shs-form .likert label", 10 * len(SCALE_LABELS))
    labels = read(page, lambda p: p.locator("#fieldset-q1 .likert label").all_inner_texts())
    assert [label.strip() for label in labels] == SCALE_LABELS
    for number, value in enumerate([2, -2, 1, -1, 0, 0, 1, -1, 2, -2], start=1):
        with page.expect_response(re.compile(r"/answer/$")):
            tap_answer(page, f"q{number}", value)
    assert page.locator("#shs-progress").inner_text() == "10 of 10 items answered"
    _assert_phone_layout(page, f"{block + 1}-shs-block{block}-answered", shots)
    page.get_by_role("button", name="Submit").tap()


def test_a_supervised_session_on_a_phone(phone, connected_study, shots):
    page = phone
    _start(page, connected_study)
    _consent(page, shots)
    for block in (1, 2):
        _chat(page, block, shots)
        _shs(page, block, shots)
        if block == 1:
            _hand_back(page)

    page.wait_for_selector("input[name=age_band]")
    _assert_phone_layout(page, "4-demographics", shots)
    _assert_tappable(page, ".likert label", len(_boxes(page, ".likert label")))
    for key in DEMOGRAPHICS:
        tap_answer(page, key, 9)
    page.get_by_role("button", name="Finish").tap()
    page.wait_for_selector("form.handback")
    _assert_phone_layout(page, "5-hand-back", shots)

    session = StudySession.objects.get(study=connected_study)
    assert session.step == Step.FEEDBACK
    assert [e.answers["q1"] for e in session.evaluations.order_by("block")] == [2, 2]
    assert session.demographics.age_band == 9

    # The experimenter's feedback ends the session; its page then thanks the participant.
    _hand_back(page)
    for key in ("clarity", "relevance", "response_options", "explanation_needed"):
        tap_answer(page, key, 1)
    tap_answer(page, "demographics_length", 1)
    page.locator("main form button[type=submit]").first.tap()
    page.wait_for_url(f"**/studies/{connected_study.slug}/")
    page.goto(f"/sessions/{session.token}/")
    page.wait_for_selector("text=Thank you!")
    _assert_phone_layout(page, "6-ended-complete", shots)


def test_the_last_pages_on_a_phone(phone, connected_study, shots):
    """Not eligible, and withdrawn: the pages that end a session fit too."""
    page = phone
    _start(page, connected_study)
    tap_answer(page, "adult", "0")
    for key, answer in SCREENING[1:]:
        tap_answer(page, key, answer)
    page.locator(AGREE).tap()
    page.wait_for_selector("text=cannot take part")
    _assert_phone_layout(page, "7-ended-ineligible", shots)

    _start(page, connected_study, logged_in=True)
    page.get_by_role("link", name="Withdraw from the study").tap()
    page.wait_for_selector("form button.danger")
    _assert_phone_layout(page, "8-withdraw", shots)
    _assert_tappable(page, "main form .button", 2)
    page.locator("form button.danger").tap()
    page.wait_for_selector("text=You have withdrawn")
    _assert_phone_layout(page, "9-ended-withdrawn", shots)


def test_a_remote_participant_on_their_phone(phone, llm_server, settings, shots):
    """From the study's public link to the chat, on the participant's own phone."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    page = phone
    page.goto(take_url(make_remote_study(llm_server)))
    _assert_phone_layout(page, "r1-take", shots)
    _assert_tappable(page, "form .likert label", len(_boxes(page, "form .likert label")))
    page.locator("label:has(> input[name=language][value=en])").tap()
    page.get_by_role("button", name="Start").tap()
    page.wait_for_selector(AGREE)
    _assert_phone_layout(page, "r2-consent", shots)
    agree(page)
    _chat(page, 1, shots, finish=False)
