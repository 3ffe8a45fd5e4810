"""What the browser tests of the participant's pages share: the answers a
participant gives and the way a finger gives them (docs/design/protocol.md §4.10,
docs/design/remote.md §11)."""

from playwright.sync_api import Error as PlaywrightError

PHONE = {"width": 390, "height": 844}
SCREENING = (("adult", "1"), ("fluent", "1"), ("ai_professional", "0"),
             ("earlier_shs_study", "0"), ("llm_company", "0"))  # fmt: skip
DEMOGRAPHICS = ("age_band", "gender", "education", "first_language", "llm_use")
# The consent page's one button: it consents (consent=on) and goes on.
AGREE = "button[name=consent][value=on]"


def read(page, what):
    """what(page), again after a reload or navigation destroyed the page mid-read."""
    for _ in range(3):
        try:
            return what(page)
        except PlaywrightError:
            page.wait_for_load_state()
    return what(page)


def press(locator, touch: bool = True):
    """A tap where the context has touch, a click otherwise."""
    locator.tap() if touch else locator.click()


def tap_answer(page, name: str, value, touch: bool = True):
    """A tap on the answer's label, as a finger would give it."""
    press(page.locator(f"label:has(> input[name={name}][value='{value}'])"), touch)


def interactive(page, selector: str):
    """Wait for the element and for the page's scripts. They load with defer:
    the element is in the DOM while the page is still parsing, and a tap
    before they run meets the page without them (an SHS answer kept only by
    the form's POST, not autosaved; a message sent without streaming)."""
    page.wait_for_selector(selector)
    page.wait_for_load_state("domcontentloaded")


def agree(page, touch: bool = True):
    """The screening answers, then "I agree and continue"."""
    for key, answer in SCREENING:
        tap_answer(page, key, answer, touch)
    press(page.locator(AGREE), touch)
