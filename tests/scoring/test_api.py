"""POST /api/score/: the calculator's figures as JSON, or 400 with one message per bad field."""

import json

import pytest
from django.test import Client

from tests.scoring.examples import ANSWERS

URL = "/api/score/"


def post(client, body, content_type="application/json"):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(URL, data=data, content_type=content_type)


def test_scores_a_response_set(client):
    response = post(client, {"responses": ANSWERS, "language": "de"})
    assert response.status_code == 200
    result = response.json()
    assert result["instrument_version"] == "shs-1.0"
    assert result["language"] == "de"
    assert result["responses"] == ANSWERS
    assert [result[f"s_{k}"] for k in ("FA", "SR", "LC", "DP", "RG")] == [0.75, 0, 0.5, -0.25, 0.5]
    assert [result[f"c_{k}"] for k in ("FA", "SR", "LC", "DP", "RG")] == [0.25, 0.5, -0.5, -0.25, 0]
    assert (result["shs"], result["shs100"], result["band"]) == (0.3, 65.0, "moderate")
    assert result["band_label"] == "Mäßige wahrgenommene Zuverlässigkeit; einige Bedenken"
    assert result["flagged_pairs"] == ["SR", "LC"]
    assert result["dimensions"][1] == {
        "key": "SR",
        "label": "Quellenzuverlässigkeit",
        "items": ["q3", "q4"],
        "score": 0.0,
        "consistency": 0.5,
        "flagged": True,
    }
    assert result["licence_url"] == "https://creativecommons.org/licenses/by-nc-nd/4.0/"
    assert result["credit"].startswith("Items der System Hallucination Scale (SHS) ©")


def test_language_defaults_to_english_and_answers_may_be_text(client):
    responses = {key: str(value) for key, value in ANSWERS.items()}
    result = post(client, {"responses": responses}).json()
    assert result["language"] == "en"
    assert result["band_label"] == "Moderate perceived reliability; some concerns"


def test_the_api_needs_no_csrf_token():
    strict = Client(enforce_csrf_checks=True)
    assert post(strict, {"responses": ANSWERS}).status_code == 200


def test_every_bad_field_gets_its_own_message(client):
    response = post(
        client,
        {
            "responses": {"q1": 3, "q2": "x", "q3": None, "q4": 1.5, "q5": True, "q11": 0},
            "language": "es",
            "lang": "de",
        },
    )
    assert response.status_code == 400
    assert response.json() == {
        "errors": {
            "lang": "unknown field; expected responses and language",
            "language": '"es" is not one of en, de, fr',
            "q1": "3 is out of range (answers are -2..+2)",
            "q2": "'x' is not an integer answer",
            "q3": "answer is missing",
            "q4": "1.5 is not an integer answer",
            "q5": "True is not an integer answer",
            "q6": "answer is missing",
            "q7": "answer is missing",
            "q8": "answer is missing",
            "q9": "answer is missing",
            "q10": "answer is missing",
            "q11": "is not an item of shs-1.0",
        }
    }


@pytest.mark.parametrize(
    ("body", "content_type", "field", "message"),
    [
        ("{not json", "application/json", "body", "the body is not valid JSON"),
        ("", "application/json", "body", "JSON"),  # the client drops the type of an empty body
        (b"\xff\xfe\x00", "application/json", "body", "the body is not valid JSON"),
        ("[" * 10_000 + "]" * 10_000, "application/json", "body", "the body is"),
        ("[1, 2]", "application/json", "body", "expected a JSON object"),
        ('"q1"', "application/json", "body", "expected a JSON object"),
        (
            "q1=2&q2=1",
            "application/x-www-form-urlencoded",
            "body",
            "Content-Type: application/json",
        ),
        ("{}", "text/plain", "body", "Content-Type: application/json"),
        ("{}", "application/json", "responses", "required: an object with the answers"),
        ('{"responses": [2, 1]}', "application/json", "responses", "must be an object"),
        ('{"responses": "2,1"}', "application/json", "responses", "must be an object"),
    ],
    ids=[
        "broken-json",
        "empty-body",
        "not-utf8",
        "deep-nesting",
        "array",
        "string",
        "form-encoded",
        "text-plain",
        "no-responses",
        "responses-list",
        "responses-string",
    ],
)
def test_bad_requests_answer_400_with_a_clear_message(client, body, content_type, field, message):
    response = post(client, body, content_type=content_type)
    assert response.status_code in (400, 413)
    errors = response.json()["errors"]
    assert message in errors[field]


def test_deep_nesting_is_a_400_not_a_500(client):
    response = post(client, '{"responses": ' + "[" * 5000 + "]" * 5000 + "}")
    assert response.status_code == 400


def test_a_big_body_is_refused_before_it_is_parsed(client):
    response = post(client, {"responses": ANSWERS, "padding": "x" * 20_000})
    assert response.status_code == 413
    assert "larger than" in response.json()["errors"]["body"]


def test_only_post_is_allowed(client):
    response = client.get(URL)
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert response.json() == {"errors": {"method": "use POST with a JSON body"}}
