"""Security properties that do not depend on one page: production cookie flags,
unguessable tokens, and uploads that are size-limited and never executed."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings
from django.urls import reverse

from surveys.invitations import invitation_create
from surveys.models.sessions import new_session_token

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "a-production-secret-key-that-is-long-enough-for-django-checks-0123456789",
    "ALLOWED_HOSTS": "shs.example.org",
}


def _production_settings(*names):
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n) for n in {list(names)!r}}}))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY")}
    env.update(PRODUCTION, DJANGO_SETTINGS_MODULE="shs_platform.settings")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_production_cookies_are_secure_and_http_only():
    values = _production_settings(
        "SESSION_COOKIE_SECURE",
        "SESSION_COOKIE_HTTPONLY",
        "SESSION_COOKIE_SAMESITE",
        "CSRF_COOKIE_SECURE",
        "CSRF_COOKIE_HTTPONLY",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "X_FRAME_OPTIONS",
    )
    assert values == {
        "SESSION_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "CSRF_COOKIE_SECURE": True,
        "CSRF_COOKIE_HTTPONLY": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        "X_FRAME_OPTIONS": "DENY",
    }


def test_production_sends_pages_to_https_but_answers_the_health_check_over_http(client, db):
    # Load balancers probe /healthz over plain HTTP: a redirect would read as down.
    production = _production_settings("SECURE_SSL_REDIRECT", "SECURE_REDIRECT_EXEMPT")
    with override_settings(**production):
        page = client.get(reverse("account_login"))
        health = client.get(reverse("healthz"))

    assert page.status_code == 301
    assert page["Location"].startswith("https://")
    assert "Location" not in health
    assert json.loads(health.content)["checks"]["database"]["ok"]


def _bits(token: str) -> float:
    return len(token) * math.log2(64)  # URL-safe base64: 6 bits per character


def test_session_urls_carry_at_least_128_random_bits():
    tokens = {new_session_token() for _ in range(2000)}
    assert len(tokens) == 2000
    assert min(_bits(token) for token in tokens) >= 128


def test_invitation_links_carry_at_least_128_random_bits(study_a, personas):
    _invitation, raw = invitation_create(
        study=study_a,
        email="x@example.org",
        role="experimenter",
        invited_by=personas["coordinator_a"],
    )
    assert _bits(raw) >= 128
    assert raw not in str(_invitation.__dict__)  # only its hash is stored


def test_export_links_carry_at_least_128_random_bits():
    from exports.models import new_job_token

    tokens = {new_job_token() for _ in range(2000)}
    assert len(tokens) == 2000
    assert min(_bits(token) for token in tokens) >= 128


def test_the_scoring_api_refuses_large_bodies(client, db):
    body = json.dumps({"responses": {"q1": 1}, "padding": "x" * 20_000})
    response = client.post(reverse("scoring:api_score"), body, content_type="application/json")
    assert response.status_code == 413


def test_csv_cells_that_look_like_formulas_are_refused_not_run(tmp_path):
    from scoring.answers.files import parse_answers, read_answer_file

    path = tmp_path / "answers.csv"
    path.write_text("q1,q2,q3,q4,q5,q6,q7,q8,q9,q10\n=1+1,\"=cmd|' /C calc'!A0\",0,0,0,0,0,0,0,0\n")
    parsed = parse_answers(read_answer_file(path))
    assert parsed.answers.shape[0] == 0
    assert {problem.column for problem in parsed.problems} == {"q1", "q2"}


def test_xlsx_formulas_are_read_as_text_never_evaluated(tmp_path):
    from openpyxl import Workbook

    from scoring.answers.files import parse_answers, read_answer_file

    workbook = Workbook()
    sheet = workbook.active
    sheet.append([f"q{i}" for i in range(1, 11)])
    sheet.append(["=1+1", *[0] * 9])
    path = tmp_path / "answers.xlsx"
    workbook.save(path)

    parsed = parse_answers(read_answer_file(path))

    assert parsed.answers.shape[0] == 0
    assert parsed.problems[0].column == "q1"


def test_answer_files_above_the_size_limit_are_refused(tmp_path):
    from scoring.answers.files import AnswerFileError, read_answer_file

    path = tmp_path / "big.csv"
    path.write_bytes(b"q1\n" + b"1\n" * 5000)
    with pytest.raises(AnswerFileError, match="bytes"):
        read_answer_file(path, max_bytes=1000)
