"""The public calculator in three languages, with and without JavaScript."""

import pytest

from tests.e2e.conftest import serious_violations

pytestmark = pytest.mark.e2e

Q2 = {
    "en": "The LLM frequently generated false or fabricated information.",
    "de": "Das LLM erzeugte häufig falsche oder erfundene Informationen.",
    "fr": "Le LLM a fréquemment produit des informations fausses ou inventées.",
}
HIGH_BAND = {
    "en": "High perceived reliability",
    "de": "Hohe wahrgenommene Zuverlässigkeit",
    "fr": "Fiabilité perçue élevée",
}


def _answer(page, values):
    for number, value in enumerate(values, start=1):
        page.locator(f"input[name=q{number}][value='{value}']").check()


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_the_calculator_updates_live_in_each_language(language, new_page, db, screenshot):
    page = new_page()
    page.goto(f"/calculator/?lang={language}")
    assert Q2[language] in page.content()

    _answer(page, [2, -2] * 5)
    page.locator("[data-figure=shs]").wait_for()
    # The whole page is in the chosen language, numbers included.
    point = "." if language == "en" else ","
    assert page.locator("[data-figure=shs100]").inner_text() == f"100{point}0"
    assert HIGH_BAND[language] in page.locator("[data-figure=band]").inner_text()
    screenshot(page, f"calculator-{language}")

    # Changing one answer changes the result without pressing Calculate.
    page.locator("input[name=q1][value='-2']").check()
    page.locator("[data-figure=shs100]", has_text=f"90{point}0").wait_for()
    assert "CC BY-NC-ND 4.0" in page.content()


def test_the_calculator_works_without_javascript(browser, live_server, db):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    page.goto("/calculator/?lang=de")
    _answer(page, [0] * 10)
    page.get_by_role("button", name="Berechnen").click()
    page.wait_for_load_state()
    assert page.locator("[data-figure=shs100]").inner_text() == "50,0"
    assert "Mäßige wahrgenommene Zuverlässigkeit" in page.locator("[data-figure=band]").inner_text()
    context.close()


def test_the_calculator_has_no_serious_accessibility_violations(axe_page):
    axe_page.goto("/calculator/?lang=fr")
    _answer(axe_page, [1, -1] * 5)
    axe_page.locator("[data-figure=shs]").wait_for()
    assert serious_violations(axe_page) == []


def test_changing_the_language_keeps_the_answers_typed_so_far(new_page, db):
    page = new_page()
    page.goto("/de/calculator/")
    # One language control only: the page's own, which carries the answers along.
    assert not page.locator(".site-header .language-switcher").is_visible()
    _answer(page, [2, -2, 1])

    page.select_option("#shs-language", "fr")
    page.wait_for_url("**/fr/calculator/**")

    assert Q2["fr"] in page.content()
    for number, value in enumerate([2, -2, 1], start=1):
        assert page.locator(f"input[name=q{number}][value='{value}']").is_checked()
    _answer(page, [2, -2] * 5)
    assert HIGH_BAND["fr"] in page.locator("[data-figure=band]").inner_text()


def test_changing_the_language_without_javascript_keeps_the_answers(browser, live_server, db):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    page.goto("/en/calculator/")
    _answer(page, [1, -1])
    page.select_option("#shs-language", "de")
    page.get_by_role("button", name="Change language").click()
    page.wait_for_url("**/de/calculator/**")
    assert Q2["de"] in page.content()
    assert page.locator("input[name=q1][value='1']").is_checked()
    assert page.locator("input[name=q2][value='-1']").is_checked()
    context.close()
