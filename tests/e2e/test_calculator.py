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
    assert page.locator("[data-figure=shs100]").inner_text() == "100.0"
    assert HIGH_BAND[language] in page.locator("[data-figure=band]").inner_text()
    screenshot(page, f"calculator-{language}")

    # Changing one answer changes the result without pressing Calculate.
    page.locator("input[name=q1][value='-2']").check()
    page.locator("[data-figure=shs100]", has_text="90.0").wait_for()
    assert "CC BY-NC-ND 4.0" in page.content()


def test_the_calculator_works_without_javascript(browser, live_server, db):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    page.goto("/calculator/?lang=de")
    _answer(page, [0] * 10)
    page.get_by_role("button", name="Calculate").click()
    page.wait_for_load_state()
    assert page.locator("[data-figure=shs100]").inner_text() == "50.0"
    assert "Mäßige wahrgenommene Zuverlässigkeit" in page.locator("[data-figure=band]").inner_text()
    context.close()


def test_the_calculator_has_no_serious_accessibility_violations(axe_page):
    axe_page.goto("/calculator/?lang=fr")
    _answer(axe_page, [1, -1] * 5)
    axe_page.locator("[data-figure=shs]").wait_for()
    assert serious_violations(axe_page) == []
