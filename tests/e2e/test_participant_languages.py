"""Every participant page in the participant's language, whatever the browser's
(docs/design/protocol.md §4.11): a whole remote session and a whole supervised
session in each offered language, on a 390 px phone whose browser asks for
another language. No piece of another language's wording (tests/e2e/
foreign_strings.py) on any page the participant reads; the experimenter's own
pages in the experimenter's language."""

import re

import pytest
from django.utils import translation

from surveys.models import Study, StudyMembership
from surveys.protocol.variants import missing_text
from tests.e2e.conftest import log_in
from tests.e2e.foreign_strings import PAGE_TEXT, foreign_strings, normalised
from tests.e2e.participant import (
    AGREE,
    DEMOGRAPHICS,
    PHONE,
    SCREENING,
    agree,
    interactive,
    press,
    tap_answer,
)
from tests.personas import PASSWORD, make_user
from tests.surveys.remote import make_remote_study, take_url

pytestmark = pytest.mark.e2e

# The browser's language for each participant's language: always another one.
BROWSER = {"en": "de-DE", "de": "fr-FR", "fr": "en-GB"}
OWN_NAMES = ["English", "Deutsch", "Français"]
SHS_ANSWERS = [2, -2, 1, -1, 0, 0, 1, -1, 2, -2]
SUBMIT = "main form.stacked button[type=submit]"
# The step's own form posts to the session's page: the others name their action.
FINISH = "main form.stacked:not([action]) button[type=submit]"


@pytest.fixture
def phone(browser, live_server):
    """phone(locale) -> a page on a 390 px touch screen whose browser asks for `locale`."""
    contexts = []

    def build(locale: str):
        context = browser.new_context(
            base_url=live_server.url, viewport=PHONE, is_mobile=True, has_touch=True, locale=locale
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield build
    for context in contexts:
        context.close()


def assert_reads_only(page, language: str, where: str):
    """The page the participant reads: in their language, nothing of another."""
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == language, where
    assert foreign_strings(page.evaluate(PAGE_TEXT), language) == [], where


def _expected(language: str, make) -> str:
    with translation.override(language):
        return normalised(str(make()))


# -- the remote session -------------------------------------------------------------


def _chat_block(page, language: str, block: int):
    interactive(page, "#chat-text")
    still_needed = _expected(language, lambda: missing_text({"turns": 1}))
    assert still_needed in normalised(page.evaluate(PAGE_TEXT))
    assert_reads_only(page, language, f"chat {block}")
    page.fill("#chat-text", f"Message about the task in block {block}")
    press(page.locator("form.compose-form button[type=submit]"))
    page.wait_for_function(
        "() => document.querySelectorAll('#chat .turn-assistant').length === 1"
        " && document.querySelector('#chat').getAttribute('aria-busy') === 'false'"
    )
    # The stored turns and the progress came with the stream: still their language.
    assert_reads_only(page, language, f"chat {block}, answered")
    press(page.locator(FINISH))


def _shs(page, language: str, where: str):
    interactive(page, "#shs-form")
    assert_reads_only(page, language, where)
    for number, value in enumerate(SHS_ANSWERS, start=1):
        with page.expect_response(re.compile(r"/answer/$")):
            tap_answer(page, f"q{number}", value)
    assert_reads_only(page, language, f"{where}, answered")
    press(page.locator("#shs-form button[type=submit]"))


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_a_remote_session_speaks_the_participants_language(phone, llm_server, settings, language):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(
        llm_server, protocol=Study.Protocol.NATURALISTIC, min_turns=1, min_minutes=0
    )
    page = phone(BROWSER[language])

    page.goto(take_url(study))
    # Each language offered in its own name, not in the browser's.
    names = page.locator("input[name=language] + span").all_inner_texts()
    assert sorted(names) == sorted(OWN_NAMES)
    tap_answer(page, "language", language)
    press(page.locator("form:has(input[name=action][value=start]) button[type=submit]"))

    page.wait_for_selector(AGREE)
    assert_reads_only(page, language, "consent")
    agree(page)

    page.wait_for_selector("#chat-text")
    session_url = page.url
    page.locator("p.withdraw a").click()
    page.wait_for_selector("form.actions button.danger")
    assert_reads_only(page, language, "withdrawal")
    page.locator("form.actions a.button").click()  # no, continue
    page.wait_for_url(session_url)

    for block in (1, 2):
        _chat_block(page, language, block)
        _shs(page, language, f"SHS {block}")
    page.wait_for_selector("input[name=age_band]")
    assert_reads_only(page, language, "demographics")
    for key in DEMOGRAPHICS:
        tap_answer(page, key, 9)
    press(page.locator(SUBMIT).first)
    page.wait_for_selector(".completion-code")
    assert_reads_only(page, language, "end")


# -- the supervised session -----------------------------------------------------------


def _hand_back(page, language: str, where: str):
    page.wait_for_selector("form.handback")
    assert_reads_only(page, language, where)
    page.locator("form.handback button").click()
    page.wait_for_load_state()


def _experimenters_block(page, experimenter: str):
    """The experimenter's step, in the experimenter's language: one prompt of each kind."""
    page.wait_for_selector("#prompt-form")
    assert page.locator("html").get_attribute("lang") == experimenter
    for category in ("verified", "glatteis"):
        page.locator(f"#prompt-form button[name=category][value={category}]").click()
        page.wait_for_load_state()
    page.locator(FINISH).click()


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_a_supervised_session_speaks_the_participants_language(phone, db, language):
    study = make_remote_study("http://127.0.0.1:9/v1", slug="lab")  # its prompts are logged
    Study.objects.filter(pk=study.pk).update(mode=Study.Mode.SUPERVISED)
    StudyMembership.objects.create(
        user=make_user("exp@example.org"), study=study, role=StudyMembership.Role.EXPERIMENTER
    )
    study.systems.update(kind="external", base_url="", model_name="")
    experimenter = BROWSER[language][:2]
    page = phone(BROWSER[language])
    log_in(page, "exp@example.org", PASSWORD)

    page.goto(f"/studies/{study.slug}/")
    page.select_option('form[action$="/sessions/start/"] select[name=language]', language)
    page.locator('form[action$="/sessions/start/"] button[type=submit]').click()
    page.wait_for_selector(AGREE)
    assert_reads_only(page, language, "consent")
    for key, answer in SCREENING:
        page.locator(f"input[name={key}][value='{answer}']").check()
    page.locator(AGREE).click()
    _hand_back(page, language, "hand-back after the consent")

    for block in (1, 2):
        _experimenters_block(page, experimenter)
        page.wait_for_selector("#shs-form")
        assert_reads_only(page, language, f"SHS {block}")
        for number, value in enumerate(SHS_ANSWERS, start=1):
            page.locator(f"input[name=q{number}][value='{value}']").check()
        page.locator("#shs-form button[type=submit]").click()
        if block == 1:
            _hand_back(page, language, "hand-back after SHS 1")

    page.wait_for_selector("input[name=age_band]")
    assert_reads_only(page, language, "demographics")
    for key in DEMOGRAPHICS:
        page.locator(f"input[name={key}][value='9']").check()
    page.locator(SUBMIT).first.click()
    _hand_back(page, language, "hand-back after the demographics")

    # The administrator feedback, with the participant beside the experimenter.
    page.wait_for_selector("input[name=clarity]")
    assert_reads_only(page, language, "administrator feedback")
    for key in ("clarity", "relevance", "response_options", "explanation_needed"):
        page.locator(f"input[name={key}][value='1']").check()
    page.locator("input[name=demographics_length][value='1']").check()
    page.locator(SUBMIT).first.click()
    page.wait_for_url(f"**/studies/{study.slug}/")
    assert page.locator("html").get_attribute("lang") == experimenter
    assert_reads_only(page, experimenter, "the experimenter's study page")
