"""Each call in the audit log, the rate limit per token, and no secret in a
log line (docs/design/api.md §16.5)."""

import logging

from audit.models import SITE_CHAIN, AuditEntry, study_chain
from shs_platform.log_filters import MASK, mask_tokens
from tests.api.conftest import ApiClient

USED = AuditEntry.Kind.API_TOKEN_USED


def test_every_call_is_one_row_on_the_chain_of_the_study_it_reached(token_for, study_a):
    token, secret = token_for("coordinator_a", [study_a])
    api = ApiClient(secret)
    before = AuditEntry.objects.count()
    api.get("/api/v1/studies/study-a/progress/")
    api.get("/api/v1/studies/study-b/progress/")
    api.get("/api/v1/studies/")
    rows = list(AuditEntry.objects.order_by("pk")[before:])
    assert [(row.kind, row.chain, row.details["status"]) for row in rows] == [
        (USED, study_chain(study_a.pk), 200),
        # A study the token cannot reach: nothing said of it, in the site's chain.
        (USED, SITE_CHAIN, 404),
        (USED, SITE_CHAIN, 200),
    ]
    first = rows[0]
    assert first.details["method"] == "GET"
    assert first.details["endpoint"] == "api/v1/studies/<slug:slug>/progress/"
    assert first.target == f"API token {token.pk} ({token.prefix}…)"
    assert first.actor_id == token.user_id
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_a_call_no_token_opens_writes_no_row(study_a, personas):
    before = AuditEntry.objects.count()
    client = ApiClient("shs_" + "x" * 43)
    assert client.get("/api/v1/studies/").status_code == 401
    assert AuditEntry.objects.count() == before


def test_each_token_has_its_own_rate_limit(token_for, study_a, settings):
    settings.API_CALLS_PER_MINUTE = 3
    _first, first_secret = token_for("coordinator_a", [study_a])
    _second, second_secret = token_for("coordinator_a", [study_a])
    first = ApiClient(first_secret)
    assert [first.get("/api/v1/studies/").status_code for _ in range(3)] == [200] * 3
    refused = first.get("/api/v1/studies/")
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    assert int(refused["Retry-After"]) > 0
    assert ApiClient(second_secret).get("/api/v1/studies/").status_code == 200


def test_a_secret_is_masked_in_every_log_line(token_for, study_a, caplog):
    _token, secret = token_for("coordinator_a", [study_a])
    assert mask_tokens(f"Authorization: Bearer {secret}") == f"Authorization: Bearer {MASK}"
    assert secret not in mask_tokens(f"GET /api/v1/?token={secret} failed")
    # A refused call logs its path; the secret stays out whatever the handler.
    with caplog.at_level(logging.WARNING):
        ApiClient(secret + "x").get("/api/v1/studies/")
    assert secret not in caplog.text


def test_a_json_body_over_the_limit_is_refused_whole(api_as, study_a):
    from api.parsers import MAX_JSON_BYTES
    from exports.models import ExportJob

    api = api_as("coordinator_a", [study_a])
    padding = "x" * MAX_JSON_BYTES
    response = api.post(
        "/api/v1/studies/study-a/exports/",
        f'{{"format": "csv", "padding": "{padding}"}}',
        content_type="application/json",
    )
    assert response.status_code == 413
    assert response["Content-Type"] == "application/problem+json"
    assert "nothing was stored" in response.json()["detail"]
    assert not ExportJob.objects.exists()
    # Just under the limit, the same body is read (and its format started).
    fits = "x" * (MAX_JSON_BYTES - 100)
    body = f'{{"format": "csv", "padding": "{fits}"}}'
    assert (
        api.post(
            "/api/v1/studies/study-a/exports/", body, content_type="application/json"
        ).status_code
        == 202
    )
