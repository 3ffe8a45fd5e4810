"""The public SHS calculator (no login), its downloads and the JSON scoring API.

Nothing is stored: a response set goes in, its scores come out. The page is a
plain form that works without JavaScript; static/scoring/calculator.js posts
the same form in the background and swaps in the same result fragment, so
there is one rendering of a result, not two.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import get_language, get_language_info
from django.views.decorators.csrf import csrf_exempt

from scoring.calculator import (
    chart_frame,
    chart_rows,
    instrument_language,
    result_csv,
    result_payload,
)
from scoring.engine import score_answers, shortened, validate
from scoring.forms import CalculatorForm
from scoring.instruments.common import LANGUAGES
from scoring.instruments.shs import ITEM_KEYS, attribution

# The background request of calculator.js; it gets the result fragment only.
LIVE_HEADER = "X-Requested-With"
LIVE_VALUE = "shs-calculator"
# A response set is a few hundred bytes; anything far bigger is not one.
API_MAX_BYTES = 16 * 1024
API_FIELDS = ("responses", "language")


def _signed(value: float) -> str:
    return f"{value:+.2f}" if value else "0.00"


def _result_context(payload: dict) -> dict:
    """The payload plus display text (a decimal point in every language, as in the files)."""
    query = urlencode({"lang": payload["language"], **payload["responses"]})
    downloads = {
        file_format: reverse("scoring:calculator_download", args=[file_format]) + "?" + query
        for file_format in ("json", "csv")
    }
    rows = chart_rows(payload)
    for row in rows:
        row["score_text"] = _signed(row["score"])
        row["consistency_text"] = _signed(row["consistency"])
    return {
        "result": payload,
        "shs_text": _signed(payload["shs"]),
        "shs100_text": f"{payload['shs100']:.1f}",
        "chart": chart_frame(),
        "rows": rows,
        "downloads": downloads,
    }


def _language_choices() -> list[tuple[str, str]]:
    return [(code, get_language_info(code)["name_local"]) for code in LANGUAGES]


def calculator(request):
    submitted = request.POST.get("lang") if request.method == "POST" else None
    language = instrument_language(submitted, request.GET.get("lang"), get_language())
    form = CalculatorForm(request.POST or None, language=language)
    context = {}
    if request.method == "POST" and form.is_valid():
        context = _result_context(result_payload(score_answers(form.answers()), language))
    if request.method == "POST" and request.headers.get(LIVE_HEADER) == LIVE_VALUE:
        response = render(
            request,
            "scoring/_calculator_result.html",
            context,
            status=200 if context else 400,
        )
        patch_vary_headers(response, [LIVE_HEADER])
        return response
    context.update(
        form=form, language=language, languages=_language_choices(), **attribution(language)
    )
    response = render(request, "scoring/calculator.html", context)
    patch_vary_headers(response, [LIVE_HEADER])
    return response


def calculator_download(request, file_format: str):
    """The result of the answers in the query string, as a JSON or CSV file."""
    language = instrument_language(request.GET.get("lang"), get_language())
    answers, problems = validate({key: request.GET.get(key) for key in ITEM_KEYS})
    if problems:
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


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _errors(errors: dict[str, str], status: int = 400) -> JsonResponse:
    return JsonResponse(
        {"errors": errors}, status=status, json_dumps_params={"ensure_ascii": False}
    )


# CSRF protection is off on purpose: the API is stateless. It reads no
# cookie or session, stores nothing and acts for nobody, so a forged
# cross-site request could learn or change nothing (and the browser would
# not let the forging page read the answer). Scripts in R or Python call it
# without a CSRF token, which is the point of having it.
@csrf_exempt
def api_score(request):
    """POST {"responses": {"q1": .., ..}, "language": "de"} -> the figures, or 400 per field."""
    if request.method != "POST":
        response = _errors({"method": "use POST with a JSON body"}, status=405)
        response["Allow"] = "POST"
        return response
    if request.content_type != "application/json":
        return _errors({"body": "send JSON with the header Content-Type: application/json"})
    too_big = _errors({"body": f"the body is larger than {API_MAX_BYTES} bytes"}, status=413)
    if _declared_length(request) > API_MAX_BYTES:
        return too_big
    try:
        body = request.body
    except RequestDataTooBig:
        return too_big
    if len(body) > API_MAX_BYTES:
        return too_big
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:
        return _errors({"body": f"the body is not valid JSON ({error})"})
    if not isinstance(data, dict):
        return _errors({"body": 'expected a JSON object like {"responses": {"q1": 2, ...}}'})
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
        return _errors(errors)
    payload = result_payload(score_answers(answers), language)
    return JsonResponse(payload, json_dumps_params={"ensure_ascii": False})
