"""The remote study page at desktop width (docs/design/remote.md §11.6): the coordinator
copies the public link and Prolific's ready-to-paste link with one click each, every
link fits its box, and there is no box to run a supervised session."""

import pytest
from django.urls import reverse

from surveys.models import Study
from tests.e2e.conftest import log_in, serious_violations
from tests.personas import PASSWORD

pytestmark = pytest.mark.e2e

DESKTOP = {"width": 1280, "height": 800}
COMPLETION = "https://app.prolific.com/submissions/complete?cc={code}"


@pytest.fixture
def remote_a(study_a, personas):
    fields = {"mode": "remote", "panel_parameter": "PROLIFIC_PID", "completion_url": COMPLETION}
    Study.objects.filter(pk=study_a.pk).update(**fields)
    study_a.refresh_from_db()
    return study_a


def _coordinators_page(browser, live_server, study, **options):
    context = browser.new_context(base_url=live_server.url, viewport=DESKTOP, **options)
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, "coord-a@example.org", PASSWORD)
    page.goto(reverse("surveys:study_detail", args=[study.slug]))
    return context, page


def test_the_coordinator_copies_the_panel_links_with_one_click(
    remote_a, browser, live_server, screenshot
):
    context, page = _coordinators_page(browser, live_server, remote_a)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    try:
        public = page.locator("#public-link").input_value()
        prolific = page.locator("#panel-link-PROLIFIC_PID")
        assert public == live_server.url + reverse(
            "surveys:remote_take", args=[remote_a.public_code]
        )
        assert prolific.input_value() == (
            f"{public}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
            "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        )

        for field in ("public-link", "panel-link-PROLIFIC_PID", "completion-url"):
            button = page.locator(f"button[data-copy='{field}']")
            button.click()
            copied = page.evaluate("() => navigator.clipboard.readText()")
            assert copied == page.locator(f"#{field}").input_value()
            assert button.inner_text() == "Copied"

        section = page.locator("section.remote-link").bounding_box()
        right_edge = section["x"] + section["width"]
        for field in page.locator("section.remote-link input.public-link").all():
            box = field.bounding_box()
            assert section["x"] <= box["x"] and box["x"] + box["width"] <= right_edge
        assert page.get_by_role("heading", name="Run a session").count() == 0
        assert page.locator("form[action$='/sessions/start/']").count() == 0
        screenshot(page, "remote-study-panel-links")
    finally:
        context.close()


def test_without_javascript_the_links_are_there_to_select(remote_a, browser, live_server):
    context, page = _coordinators_page(browser, live_server, remote_a, java_script_enabled=False)
    try:
        assert page.locator("#panel-link-PROLIFIC_PID").is_visible()
        assert not page.locator("button[data-copy]").first.is_visible()  # no dead buttons
    finally:
        context.close()


def test_the_remote_study_page_passes_axe(remote_a, axe_page):
    log_in(axe_page, "coord-a@example.org", PASSWORD)
    axe_page.set_viewport_size(DESKTOP)
    axe_page.goto(reverse("surveys:study_detail", args=[remote_a.slug]))

    assert serious_violations(axe_page) == []
