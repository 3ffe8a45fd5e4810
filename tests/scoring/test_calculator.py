"""The public calculator at /calculator/: three languages, no JavaScript needed."""

import csv
import html
import io
import json
import re

import pytest
from django.urls import reverse

from tests.scoring.examples import ANSWERS

# The published wording (docs/design/instrument.md §2.1), written out here rather than imported, so
# that a changed item text in scoring.instruments fails this test.
ITEM_TEXT = {
    "en": [
        "The response was factually reliable.",
        "The LLM frequently generated false or fabricated information.",
        "It was easy to find and verify the sources of the presented information.",
        "The LLM often omitted sources or invented them, and it was difficult to recognize what was real.",  # noqa: E501
        "The LLM's reasoning was logically structured and supported by facts.",
        "The LLM's reasoning contained unfounded or illogical steps.",
        "False or fabricated information was easy to recognize.",
        "The LLM presented false information in a confident and misleading manner.",
        "I was able to prompt the LLM to provide more accurate answers when needed.",
        "The LLM ignored my instructions and continued to generate false information.",
    ],
    "de": [
        "Die Antwort war sachlich zuverlässig.",
        "Das LLM erzeugte häufig falsche oder erfundene Informationen.",
        "Es war einfach, die Quellen der präsentierten Informationen zu finden und zu prüfen.",
        "Das LLM ließ häufig Quellen weg oder erfand sie, und es war schwer zu erkennen, was echt war.",  # noqa: E501
        "Die Argumentation des LLM war logisch aufgebaut und durch Fakten gestützt.",
        "Die Argumentation des LLM enthielt unbegründete oder unlogische Schritte.",
        "Falsche oder erfundene Informationen waren leicht zu erkennen.",
        "Das LLM präsentierte falsche Informationen selbstsicher und irreführend.",
        "Ich konnte das LLM bei Bedarf zu genaueren Antworten anleiten.",
        "Das LLM ignorierte meine Anweisungen und erzeugte weiterhin falsche Informationen.",
    ],
    "fr": [
        "La réponse était factuellement fiable.",
        "Le LLM a fréquemment produit des informations fausses ou inventées.",
        "Il était facile de trouver et de vérifier les sources des informations présentées.",
        "Le LLM omettait souvent des sources ou en inventait, et il était difficile de distinguer ce qui était réel.",  # noqa: E501
        "Le raisonnement du LLM était logiquement structuré et étayé par des faits.",
        "Le raisonnement du LLM comportait des étapes infondées ou illogiques.",
        "Les informations fausses ou inventées étaient faciles à repérer.",
        "Le LLM présentait des informations fausses de manière assurée et trompeuse.",
        "J'ai pu inciter le LLM à fournir des réponses plus précises lorsque nécessaire.",
        "Le LLM a ignoré mes instructions et a continué à générer des fausses informations.",
    ],
}
SCALE_LABELS = {
    "en": ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"],
    "de": [
        "Stimme gar nicht zu",
        "Stimme nicht zu",
        "Neutral",
        "Stimme zu",
        "Stimme voll zu",
    ],
    "fr": [
        "Pas du tout d'accord",
        "Pas d'accord",
        "Neutre",
        "D'accord",
        "Tout à fait d'accord",
    ],
}
# Dimension labels of docs/design/instrument.md §2.1, FA SR LC DP RG.
DIMENSION_LABELS = {
    "en": [
        "Factual Accuracy",
        "Source Reliability",
        "Logical Coherence",
        "Deceptiveness of presentation",
        "Responsiveness to Guidance",
    ],
    "de": [
        "Faktische Genauigkeit",
        "Quellenzuverlässigkeit",
        "Logische Kohärenz",
        "Täuschungspotenzial",
        "Reaktionsfähigkeit auf Anleitung",
    ],
    "fr": [
        "Précision factuelle",
        "Fiabilité des sources",
        "Cohérence logique",
        "Potentiel de tromperie",
        "Réactivité aux conseils",
    ],
}
BAND_LABELS = {
    "en": "Moderate perceived reliability; some concerns",
    "de": "Mäßige wahrgenommene Zuverlässigkeit; einige Bedenken",
    "fr": "Fiabilité perçue modérée ; quelques réserves",
}
CREDIT_START = {
    "en": "System Hallucination Scale (SHS) items © Heimo Müller",
    "de": "Items der System Hallucination Scale (SHS) © Heimo Müller",
    "fr": "Items de la System Hallucination Scale (SHS) © Heimo Müller",
}
URL = "/calculator/"


def item_texts(page: str) -> list[str]:
    return [
        html.unescape(text) for text in re.findall(r'<span class="item-text">(.*?)</span>', page)
    ]


def radio_labels(page: str, item: str) -> list[str]:
    block = re.search(rf'data-item="{item}".*?</fieldset>', page, re.S).group(0)
    return [html.unescape(label) for label in re.findall(r"<span>(.*?)</span></label>", block)]


def test_the_calculator_url_is_public():
    assert reverse("scoring:calculator") == URL
    assert reverse("scoring:api_score") == "/api/score/"


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_items_are_shown_exactly_in_each_language(client, language):
    response = client.get(URL, {"lang": language})
    page = response.content.decode()
    assert response.status_code == 200
    assert item_texts(page) == ITEM_TEXT[language]
    for item in ("q1", "q10"):
        assert radio_labels(page, item) == SCALE_LABELS[language]
    assert f'<ol class="shs-items" lang="{language}">' in page
    assert CREDIT_START[language] in html.unescape(page)
    assert 'href="https://creativecommons.org/licenses/by-nc-nd/4.0/"' in page


def test_every_item_is_a_required_group_of_five_radio_buttons(client):
    page = client.get(URL).content.decode()
    for number in range(1, 11):
        radios = re.findall(rf'<input type="radio" name="q{number}" value="(-?\d)"[^>]*>', page)
        assert radios == ["-2", "-1", "0", "1", "2"]
    assert page.count(" required") >= 50


def test_the_language_defaults_to_the_ui_language(client):
    page = client.get(URL, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert item_texts(page) == ITEM_TEXT["de"]
    page = client.get(URL, {"lang": "xx"}, HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert item_texts(page) == ITEM_TEXT["fr"]


def test_the_page_obeys_the_content_security_policy(client):
    response = client.get(URL)
    page = response.content.decode()
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page) == []  # no inline scripts
    assert "<style" not in page and " style=" not in page  # no inline styles
    assert "/static/scoring/calculator.js" in page
    assert "/static/scoring/calculator.css" in page


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_submitting_the_form_without_javascript_shows_the_result(client, language):
    response = client.post(URL, {"lang": language, **ANSWERS})
    page = html.unescape(response.content.decode())
    assert response.status_code == 200
    # Figures on the page are in the language's notation (the files keep the point).
    point = "." if language == "en" else ","
    assert f'data-figure="shs">+0{point}30<' in page
    assert f'data-figure="shs100">65{point}0<' in page
    assert BAND_LABELS[language] in page
    assert '<svg class="shs-chart"' in page
    flagged = re.findall(r'<tr data-dimension="(\w+)" class="shs-flagged">', page)
    assert flagged == ["SR", "LC"]
    # The answers stay checked, so the person can change one and recalculate.
    assert re.search(r'name="q1" value="2"[^>]*checked', page)


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_the_result_names_the_dimensions_exactly_in_each_language(client, language):
    page = client.post(URL, {"lang": language, **ANSWERS}).content.decode()
    table = re.findall(rf'<tr data-dimension="\w+"[^>]*>\s*<td lang="{language}">(.*?)</td>', page)
    chart = re.findall(r'<text class="shs-chart-label"[^>]*>(.*?)</text>', page)
    assert [html.unescape(label) for label in table] == DIMENSION_LABELS[language]
    assert [html.unescape(label) for label in chart] == DIMENSION_LABELS[language]


def test_the_chart_numbers_ignore_the_decimal_comma_of_the_ui_language(client):
    response = client.post(URL, {"lang": "de", **ANSWERS}, HTTP_ACCEPT_LANGUAGE="de")
    svg = re.search(r"<svg.*?</svg>", response.content.decode(), re.S).group(0)
    assert re.findall(r'(?:x|width)="[^"]*,[^"]*"', svg) == []
    assert 'width="107.25"' in svg  # s_FA = 0.75 of the half-width 143


def test_missing_answers_are_named_next_to_their_item(client):
    response = client.post(URL, {"lang": "en", "q1": "2", "q2": "9"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "9 items are not answered yet." in page
    assert 'id="q3-error">Please choose an answer for this item.<' in page
    assert 'id="q2-error">Please choose one of the five answers.<' in page
    assert "shs-chart" not in page


def test_live_update_gets_only_the_result_fragment(client):
    headers = {"X-Requested-With": "shs-calculator"}
    response = client.post(URL, {"lang": "fr", **ANSWERS}, headers=headers)
    fragment = html.unescape(response.content.decode())
    assert response.status_code == 200
    assert "<html" not in fragment and "<form" not in fragment
    assert BAND_LABELS["fr"] in fragment
    incomplete = client.post(URL, {"lang": "fr", "q1": "1"}, headers=headers)
    assert incomplete.status_code == 400


def download_links(page: str) -> dict[str, str]:
    links = re.findall(r'href="(/calculator/result\.(json|csv)\?[^"]+)"', page)
    return {kind: html.unescape(link) for link, kind in links}


def test_result_downloads_as_json_and_csv(client):
    page = client.post(URL, {"lang": "de", **ANSWERS}).content.decode()
    links = download_links(page)

    response = client.get(links["json"])
    assert response["Content-Disposition"] == 'attachment; filename="shs-result.json"'
    result = json.loads(response.content)
    assert result["responses"] == ANSWERS
    assert (result["shs"], result["shs100"], result["band"]) == (0.3, 65.0, "moderate")
    assert result["flagged_pairs"] == ["SR", "LC"]
    assert result["band_label"] == BAND_LABELS["de"]
    assert result["language"] == "de" and result["instrument_version"] == "shs-1.0"

    response = client.get(links["csv"])
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="shs-result.csv"'
    (row,) = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert row["q6"] == "-2" and row["s_FA"] == "0.75" and row["c_SR"] == "0.5"
    assert (row["shs"], row["shs100"], row["band"], row["flagged_pairs"]) == (
        "0.3",
        "65.0",
        "moderate",
        "SR;LC",
    )


def test_a_download_with_bad_answers_is_refused(client):
    response = client.get("/calculator/result.json", {"q1": "7"})
    assert response.status_code == 400
    assert "q1: 7 is out of range" in response.content.decode()
    assert "q2: answer is missing" in response.content.decode()
