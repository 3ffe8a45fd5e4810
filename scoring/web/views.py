"""The public SHS calculator (no login), its downloads and the JSON scoring API.

Nothing is stored: a response set goes in, its scores come out. The page is a
plain form that works without JavaScript; static/scoring/calculator.js posts
the same form in the background and swaps in the same result fragment, so
there is one rendering of a result, not two.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation import get_language, get_language_info
from django.views.decorators.csrf import csrf_exempt

from scoring.instruments.common import LANGUAGES
from scoring.instruments.shs import ITEM_KEYS, SCALE_VALUES, attribution
from scoring.scores.calculator import (
    chart_frame,
    chart_rows,
    instrument_language,
    result_csv,
    result_payload,
)
from scoring.scores.engine import score_answers, shortened, validate
from scoring.web.forms import CalculatorForm
from scoring.web.numbers import fixed, signed

# The background request of calculator.js; it gets the result fragment only.
LIVE_HEADER = "X-Requested-With"
LIVE_VALUE = "shs-calculator"
# A response set is a few hundred bytes; anything far bigger is not one.
API_MAX_BYTES = 16 * 1024
API_FIELDS = ("responses", "language")
# The calculator form's "change language" button.
SWITCH_FIELD = "switch_language"
ANSWER_VALUES = {str(value) for value in SCALE_VALUES}


def _result_context(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload plus display text in the notation of the active language
    ("+0,25" in German and French, as every report writes it); the downloaded
    files keep the point."""
    query = urlencode({"lang": payload["language"], **payload["responses"]})
    downloads = {
        file_format: reverse("scoring:calculator_download", args=[file_format]) + "?" + query
        for file_format in ("json", "csv")
    }
    rows = chart_rows(payload)
    for row in rows:
        row["score_text"] = signed(row["score"])
        row["consistency_text"] = signed(row["consistency"])
    return {
        "result": payload,
        "shs_text": signed(payload["shs"]),
        "shs100_text": fixed(payload["shs100"], 1),
        "limit_text": fixed(payload["consistency_limit"]),
        "chart": chart_frame(),
        "rows": rows,
        "downloads": downloads,
    }


def _language_choices() -> list[tuple[str, str]]:
    """Each language under its own name, and in the page's language where that differs,
    so a reader finds their own language on a page in any of them."""
    choices = []
    for code in LANGUAGES:
        info = get_language_info(code)
        local, translated = info["name_local"], str(info["name_translated"])
        name = local if local.lower() == translated.lower() else f"{local} ({translated})"
        choices.append((code, name))
    return choices


def _answers_given(data: Mapping[str, str]) -> dict[str, str]:
    """The answers chosen so far (valid ones only), to carry across a change of language."""
    return {key: data[key] for key in ITEM_KEYS if data.get(key) in ANSWER_VALUES}


def calculator_url(language: str, answers: dict[str, str] | None = None) -> str:
    """The calculator in one language (/de/calculator/), a link that can be shared."""
    url = reverse("scoring:calculator_in", kwargs={"language": language})
    return url + ("?" + urlencode(answers) if answers else "")


def calculator(request: HttpRequest, language: str | None = None) -> HttpResponse:
    """The whole page is in one language: the one in the URL (/de/calculator/),
    else ?lang=, else the visitor's. Changing it keeps the answers chosen so far."""
    submitted = request.POST.get("lang") if request.method == "POST" else None
    if request.method == "POST" and SWITCH_FIELD in request.POST:
        target = instrument_language(submitted)
        return redirect(calculator_url(target, _answers_given(request.POST)), permanent=False)
    language = instrument_language(language, submitted, request.GET.get("lang"), get_language())
    with translation.override(language):
        response = _calculator_page(request, language)
    response["Content-Language"] = language
    patch_vary_headers(response, [LIVE_HEADER])
    return response


def _calculator_page(request: HttpRequest, language: str) -> HttpResponse:
    if request.method == "POST":
        form = CalculatorForm(request.POST, language=language)
    else:
        form = CalculatorForm(language=language, initial=_answers_given(request.GET))
    context: dict[str, Any] = {}
    if request.method == "POST" and form.is_valid():
        context = _result_context(result_payload(score_answers(form.answers()), language))
    if request.method == "POST" and request.headers.get(LIVE_HEADER) == LIVE_VALUE:
        return render(
            request,
            "scoring/_calculator_result.html",
            context,
            status=200 if context else 400,
        )
    context.update(
        form=form,
        language=language,
        languages=_language_choices(),
        action=calculator_url(language),
        switch_field=SWITCH_FIELD,
        **attribution(language),
    )
    return render(request, "scoring/calculator.html", context)


def calculator_download(request: HttpRequest, file_format: str) -> HttpResponse:
    """The result of the answers in the query string, as a JSON or CSV file."""
    language = instrument_language(request.GET.get("lang"), get_language())
    answers, problems = validate({key: request.GET.get(key) for key in ITEM_KEYS})
    # validate gives the answers exactly when it finds no problem.
    if answers is None:
        return HttpResponseBadRequest(
            "\n".join(str(problem) for problem in problems), content_type="text/plain"
        )
    payload = result_payload(score_answers(answers), language)
    if file_format == "json":
        body = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
        response = HttpResponse(body, content_type="application/json; charset=utf-8")
    else:
        response = HttpResponse(result_csv(payload), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="shs-result.{file_format}"'
    return response


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _errors(errors: dict[str, str], status: int = 400) -> JsonResponse:
    return JsonResponse(
        {"errors": errors}, status=status, json_dumps_params={"ensure_ascii": False}
    )


class ApiRequestError(Exception):
    """A request the API refuses: the errors per field and the HTTP status."""

    def __init__(self, errors: dict[str, str], status: int = 400):
        super().__init__(errors)
        self.errors, self.status = errors, status


def _api_body(request: HttpRequest) -> dict[str, Any]:
    """The JSON object of the request body, or ApiRequestError."""
    if request.content_type != "application/json":
        raise ApiRequestError({"body": "send JSON with the header Content-Type: application/json"})
    too_big = ApiRequestError({"body": f"the body is larger than {API_MAX_BYTES} bytes"}, 413)
    if _declared_length(request) > API_MAX_BYTES:
        raise too_big
    try:
        body = request.body
    except RequestDataTooBig:
        raise too_big from None
    if len(body) > API_MAX_BYTES:
        raise too_big
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise ApiRequestError({"body": f"the body is not valid JSON ({error})"}) from None
    if not isinstance(data, dict):
        raise ApiRequestError({"body": 'expected a JSON object like {"responses": {"q1": 2, ...}}'})
    return data


def _api_fields(data: dict[str, Any]) -> tuple[tuple[int, ...], str]:
    """The validated answers and language of a request's JSON object, or ApiRequestError
    with every problem at once, one per field."""
    errors: dict[str, str] = {}
    for field in data:
        if field not in API_FIELDS:
            errors[str(field)] = f"unknown field; expected {' and '.join(API_FIELDS)}"
    language = data.get("language", "en")
    if language not in LANGUAGES:
        # Quoted as JSON, the syntax the caller wrote it in.
        shown = shortened(json.dumps(language, ensure_ascii=False))
        errors["language"] = f"{shown} is not one of {', '.join(LANGUAGES)}"
    responses = data.get("responses")
    answers = None
    if responses is None:
        errors["responses"] = "required: an object with the answers q1..q10 (-2..+2)"
    elif not isinstance(responses, dict):
        errors["responses"] = "must be an object with the answers q1..q10 (-2..+2)"
    else:
        answers, problems = validate(responses)
        errors.update({problem.field: problem.message for problem in problems})
    if errors:
        raise ApiRequestError(errors)
    # Without an error every answer was read.
    assert answers is not None
    return answers, language


# CSRF protection is off on purpose: the API is stateless. It reads no
# cookie or session, stores nothing and acts for nobody, so a forged
# cross-site request could learn or change nothing (and the browser would
# not let the forging page read the answer). Scripts in R or Python call it
# without a CSRF token, which is the point of having it.
@csrf_exempt
def api_score(request: HttpRequest) -> HttpResponse:
    """POST {"responses": {"q1": .., ..}, "language": "de"} -> the figures, or 400 per field."""
    if request.method != "POST":
        response = _errors({"method": "use POST with a JSON body"}, status=405)
        response["Allow"] = "POST"
        return response
    try:
        answers, language = _api_fields(_api_body(request))
    except ApiRequestError as refused:
        return _errors(refused.errors, status=refused.status)
    payload = result_payload(score_answers(answers), language)
    return JsonResponse(payload, json_dumps_params={"ensure_ascii": False})
