"""The end of a supervised session in the browser (docs/design/validation.md §14.2,
docs/design/protocol.md §4.10): the lab participant reads first that their
participant code is enough to come back, and gets a printable slip with the
retest link and its QR code, which a phone's camera reads back as the link;
and the demographics' answers stay inside their boxes at desktop width."""

import io

import pytest
import zxingcpp
from django.urls import reverse
from PIL import Image

from surveys.steps import Step
from tests.e2e.conftest import log_in, serious_violations
from tests.e2e.participant import DEMOGRAPHICS, PHONE, press, tap_answer
from tests.personas import PASSWORD
from tests.surveys.retests import with_retest
from tests.surveys.runner import SessionRun

pytestmark = pytest.mark.e2e

DESKTOP = {"width": 1280, "height": 800}
BY_CODE = {
    "en": "To come back, your participant code is enough",
    "fr": "Pour revenir, votre code de participation suffit",
}


def _at_demographics(study, client_for, language="en") -> str:
    """A supervised session run by the experimenter up to the demographics; its URL."""
    run = SessionRun(client_for("experimenter_a"), study, language=language)
    run.advance_to(Step.DEMOGRAPHICS)
    return reverse("surveys:session", args=[run.token])


def _experimenters_device(browser, live_server, viewport, touch):
    context = browser.new_context(
        base_url=live_server.url, viewport=viewport, is_mobile=touch, has_touch=touch
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, "exp-a@example.org", PASSWORD)
    return context, page


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_lab_participant_prints_a_slip_whose_qr_code_reads_as_the_link(
    language, study_a, client_for, browser, live_server, screenshot, axe_page
):
    # Given a lab session of a study with a retest, at the demographics, on a phone-sized device
    with_retest(study_a, days=14)
    url = _at_demographics(study_a, client_for, language)
    context, page = _experimenters_device(browser, live_server, PHONE, touch=True)
    page.goto(url)

    # When the participant answers the demographics
    for key in DEMOGRAPHICS:
        tap_answer(page, key, 9)
    press(page.locator("form.stacked button[type=submit]"))
    page.wait_for_selector("section.retest-notice")

    # Then the hand-back page says first that the participant code is enough
    notice = page.locator("section.retest-notice").inner_text()
    link = page.locator("code.retest-link").inner_text().strip()
    assert BY_CODE[language] in notice
    assert notice.index(BY_CODE[language]) < notice.index(link)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    # And the slip opens in its own tab, on a 390 px screen without sideways scrolling
    with context.expect_page() as opened:
        press(page.locator("a.retest-slip-link"))
    slip = opened.value
    slip.wait_for_selector("figure.slip-qr svg")
    screenshot(slip, f"retest-slip-{language}")
    assert slip.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert slip.locator("html").get_attribute("lang") == language
    assert slip.locator("code.retest-link").inner_text().strip() == link
    code_box = slip.locator("code.retest-link").bounding_box()
    assert code_box["x"] >= 0 and code_box["x"] + code_box["width"] <= PHONE["width"]

    # And its QR code, as the screen shows it, decodes to the link
    image = Image.open(io.BytesIO(slip.locator("figure.slip-qr svg").screenshot()))
    decoded = [result.text for result in zxingcpp.read_barcodes(image)]
    assert decoded == [link]

    # And printed, only the slip is on the paper: no header, no button
    slip.emulate_media(media="print")
    assert slip.locator("section.retest-slip").is_visible()
    assert not slip.locator("header.participant-header").is_visible()
    assert not slip.locator(".no-print").first.is_visible()
    context.close()

    # And axe-core finds nothing serious on the slip
    axe_page.goto(slip.url)
    assert serious_violations(axe_page) == []


# The boxes of one question's answers, the question's frame and the form that
# holds the questions (as wide as the page's column). A fieldset grows to its
# content's least width by default, so the answers and their frame can run
# past the column together: the form is the measure.
ANSWER_BOXES = """fieldset => {
  const box = e => e.getBoundingClientRect();
  const column = box(fieldset.closest('form'));
  const frame = box(fieldset);
  return [...fieldset.querySelectorAll('.likert label')].map(label => {
    const r = box(label);
    return {text: label.textContent.trim(), left: r.left, right: r.right,
            frameLeft: frame.left, frameRight: frame.right,
            columnLeft: column.left, columnRight: column.right,
            clipped: label.scrollWidth > label.clientWidth + 1};
  });
}"""


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_the_demographics_answers_stay_in_their_boxes_at_desktop_width(
    language, study_a, client_for, browser, live_server, screenshot
):
    url = _at_demographics(study_a, client_for, language)
    context, page = _experimenters_device(browser, live_server, DESKTOP, touch=False)
    page.goto(url)
    page.wait_for_selector("input[name=education]")
    screenshot(page, f"demographics-desktop-{language}")

    for fieldset in page.locator("fieldset.question").all():
        for answer in fieldset.evaluate(ANSWER_BOXES):
            assert answer["left"] >= answer["frameLeft"] - 0.5, answer
            assert answer["right"] <= answer["frameRight"] + 0.5, answer
            assert answer["frameRight"] <= answer["columnRight"] + 0.5, answer
            assert not answer["clipped"], answer
    assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]
    context.close()
