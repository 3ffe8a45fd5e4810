"""The calculator in one language throughout: /de/ and /fr/ links to
share, ?lang= switching the whole page, numbers in the language's notation,
and a change of language that keeps the answers chosen so far."""

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from tests.scoring.examples import ANSWERS

TITLE = {
    "en": "System Hallucination Scale (SHS) calculator",
    "de": "Rechner für die System Hallucination Scale (SHS)",
    "fr": "Calculateur de la System Hallucination Scale (SHS)",
}
Q1 = {
    "en": "The response was factually reliable.",
    "de": "Die Antwort war sachlich zuverlässig.",
}


def _page(response) -> str:
    return html.unescape(response.content.decode())


def _checked(page: str) -> dict[str, str]:
    return dict(re.findall(r'name="(q\d+)" value="(-?\d)"[^>]*checked', page))


@pytest.mark.parametrize("language", ["de", "fr"])
def test_a_language_link_shows_the_whole_page_in_that_language(client, language):
    url = reverse("scoring:calculator_in", kwargs={"language": language})
    assert url == f"/{language}/calculator/"

    # A visitor whose browser asks for English still gets the shared language.
    response = client.get(url, HTTP_ACCEPT_LANGUAGE="en")
    page = _page(response)

    assert response.status_code == 200
    assert response["Content-Language"] == language
    assert f'<html lang="{language}">' in page
    assert TITLE[language] in page and TITLE["en"] not in page
    assert f'<ol class="shs-items" lang="{language}">' in page
    assert f'action="/{language}/calculator/"' in page


def test_lang_in_the_query_switches_the_whole_page(client):
    page = _page(client.get("/calculator/", {"lang": "de"}, HTTP_ACCEPT_LANGUAGE="en"))
    assert TITLE["de"] in page and Q1["de"] in page
    assert "Berechnen" in page and ">Calculate<" not in page


@pytest.mark.parametrize("language", ["de", "fr"])
def test_numbers_use_the_decimal_comma_in_german_and_french(client, language):
    page = _page(client.post(f"/{language}/calculator/", ANSWERS))
    assert 'data-figure="shs">+0,30<' in page
    assert 'data-figure="shs100">65,0<' in page
    shown = re.sub(r"<[^>]+>", " ", page)  # the text a reader sees, not SVG coordinates
    assert "(|c| > 0,25)" in shown
    assert {"de": "über 0,25", "fr": "dépasse 0,25"}[language] in shown
    assert re.findall(r"\d\.\d\d", shown) == []  # no score or limit with a point
    assert re.search(r'<tr data-dimension="FA"[^>]*>.*?<td class="num">\+0,75</td>', page, re.S)


def test_english_keeps_the_decimal_point(client):
    page = _page(client.post("/en/calculator/", ANSWERS))
    assert 'data-figure="shs">+0.30<' in page and "(|c| > 0.25)" in page


def test_changing_the_language_keeps_the_answers_so_far(client):
    given = {"q1": "2", "q2": "-1", "q5": "0"}
    response = client.post(
        "/en/calculator/", {**given, "q3": "9", "lang": "fr", "switch_language": "1"}
    )

    assert response.status_code == 302
    target = urlsplit(response.url)
    assert target.path == "/fr/calculator/"
    assert {key: values[0] for key, values in parse_qs(target.query).items()} == given
    page = _page(client.get(response.url))
    assert TITLE["fr"] in page
    assert _checked(page) == given
    # Half a questionnaire is not an error: nothing is flagged as missing.
    assert 'class="errors"' not in page


def test_language_names_are_given_in_the_page_language_too(client):
    page = _page(client.get("/de/calculator/"))
    options = re.findall(r'<option value="(\w+)" lang="\w+"[^>]*>(.*?)</option>', page)
    assert options == [
        ("en", "English (Englisch)"),
        ("de", "Deutsch"),
        ("fr", "français (Französisch)"),
    ]


def test_the_site_language_switcher_is_left_out_of_the_calculator(client):
    # Its form would reload the page without the answers and could not override /de/.
    page = client.get("/de/calculator/").content.decode()
    assert '<body class="calculator-page">' in page
