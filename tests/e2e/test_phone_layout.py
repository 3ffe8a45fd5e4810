"""On a 390 px phone the study page, the monitor and the calculator fit the
screen: wide tables scroll inside their own box, the page itself never
scrolls sideways."""

import pytest

from surveys.models import StudyMembership
from surveys.steps import Step
from tests.e2e.conftest import log_in
from tests.personas import PASSWORD, make_study, make_user
from tests.surveys.runner import SessionRun

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}


def _page_width(page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth")


@pytest.fixture
def busy_study(db, client):
    """A study with long names and sessions in every table of its pages."""
    study = make_study("a-study-with-a-rather-long-slug-for-phones")
    study.title = "Perceived reliability of assistants in clinical documentation, wave two"
    study.save()
    for system in study.systems.all():
        system.vendor = "A vendor with a long name, Incorporated"
        system.model_version = "model-2026-11-30-preview-long-version-name"
        system.access_mode = "Web chat interface in a kiosk browser"
        system.save()
    coordinator = make_user("a.coordinator.with.a.long.address@university-hospital.example.org")
    StudyMembership.objects.create(user=coordinator, study=study, role="coordinator")
    client.force_login(coordinator)
    SessionRun(client, study).complete()
    SessionRun(client, study).advance_to(Step.BLOCK1_SHS)
    return study, coordinator


@pytest.mark.parametrize("where", ["study", "monitor", "team"])
def test_staff_pages_fit_a_phone(where, busy_study, browser, live_server, screenshot):
    study, coordinator = busy_study
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    log_in(page, coordinator.email, PASSWORD)
    suffix = {"study": "", "monitor": "monitor/", "team": "members/"}[where]
    page.goto(f"/studies/{study.slug}/{suffix}")
    screenshot(page, f"phone-{where}")
    assert _page_width(page) <= PHONE["width"]
    context.close()


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_the_calculator_with_its_result_fits_a_phone(
    language, browser, live_server, db, screenshot
):
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    page.goto(f"/{language}/calculator/")
    assert _page_width(page) <= PHONE["width"]
    for number, value in enumerate([2, -2, 1, 1, 0, 0, -1, 2, 2, -2], start=1):
        page.locator(f"input[name=q{number}][value='{value}']").check()
    page.locator("[data-figure=shs]").wait_for()
    screenshot(page, f"phone-calculator-{language}")
    assert _page_width(page) <= PHONE["width"]
    context.close()
