"""The transcripts page with long turns (a pasted URL, a code answer) reads on
a 390 px phone and on a desktop: turns wrap inside their panel, the page never
scrolls sideways, and a code answer keeps its indentation (docs/design/transcripts.md §10.2)."""

import pytest

from surveys.models import Turn
from surveys.steps import Step
from tests.e2e.conftest import log_in
from tests.personas import PASSWORD
from tests.surveys.transcript_data import ended_block, stored_transcript

pytestmark = pytest.mark.e2e

LONG_URL = "https://example.org/" + "averylongpathsegment" * 60
CODE = "def area(r):\n    return 3.14159 * r * r"


@pytest.fixture
def long_turns(make_session, personas):
    session = make_session(step=Step.COMPLETE)
    transcript = stored_transcript(ended_block(session, 1), turns=4)
    Turn.objects.filter(transcript=transcript, position=1).update(text=f"See {LONG_URL} please")
    Turn.objects.filter(transcript=transcript, position=2).update(
        text=CODE + "\n\n" + "Long. " * 400
    )
    return session, personas["coordinator_a"]


@pytest.mark.parametrize(
    "viewport", [{"width": 390, "height": 844}, {"width": 1280, "height": 800}]
)
def test_long_turns_wrap_inside_the_page(long_turns, browser, live_server, viewport, screenshot):
    session, coordinator = long_turns
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    log_in(page, coordinator.email, PASSWORD)

    page.goto(f"/sessions/{session.token}/transcripts/")
    screenshot(page, f"transcripts-{viewport['width']}")

    assert page.evaluate("document.scrollingElement.scrollWidth") <= viewport["width"]
    # ... and a code answer keeps its indentation
    code = page.locator(".turn-text").nth(1)
    assert "    return 3.14159" in code.inner_text()
    context.close()
