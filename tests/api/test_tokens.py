"""Who gets in with a token, and how far (docs/design/api.md §16.2, §16.3)."""

from datetime import timedelta

import pytest
from allauth.mfa.models import Authenticator
from django.utils import timezone

from api.models import ApiToken
from api.tokens import api_token_revoke, digest_of
from exports.models import ExportJob
from surveys.models import StudyMembership
from tests.api.conftest import READ, ApiClient

PROBLEM = "application/problem+json"


def test_a_call_without_a_token_is_401_naming_the_scheme(study_a):
    response = ApiClient(None).get("/api/v1/studies/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response["Content-Type"] == PROBLEM
    assert response.json()["status"] == 401


@pytest.mark.parametrize(
    "header",
    ["Token shs_abc", "Bearer", "Bearer shs_unknown-token-of-the-right-shape-000", "Bearer a b"],
)
def test_a_malformed_or_unknown_token_is_401(personas, header):
    client = ApiClient(None)
    client.defaults["HTTP_AUTHORIZATION"] = header
    response = client.get("/api/v1/studies/")
    assert response.status_code == 401
    assert response["Content-Type"] == PROBLEM


def test_only_the_hash_of_the_secret_is_stored(token_for, study_a):
    token, secret = token_for("coordinator_a", [study_a])
    stored = ApiToken.objects.filter(pk=token.pk).values().get()
    assert secret not in {str(value) for value in stored.values()}
    assert stored["digest"] == digest_of(secret)
    assert secret.startswith(stored["prefix"])


def test_an_expired_token_is_401(token_for, study_a):
    token, secret = token_for("coordinator_a", [study_a])
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert ApiClient(secret).get("/api/v1/studies/").status_code == 401


def test_a_revoked_token_is_401_from_the_next_call(token_for, study_a, personas):
    token, secret = token_for("coordinator_a", [study_a])
    api = ApiClient(secret)
    assert api.get("/api/v1/studies/study-a/").status_code == 200
    assert api_token_revoke(token=token, user=personas["coordinator_a"])
    assert api.get("/api/v1/studies/study-a/").status_code == 401
    assert not api_token_revoke(token=token, user=personas["coordinator_a"])


def test_the_token_of_a_deactivated_account_is_401(token_for, study_a, personas):
    _token, secret = token_for("coordinator_a", [study_a])
    personas["coordinator_a"].is_active = False
    personas["coordinator_a"].save()
    assert ApiClient(secret).get("/api/v1/studies/").status_code == 401


def test_a_signed_in_browser_session_opens_no_endpoint(client_for, study_a):
    response = client_for("coordinator_a").get("/api/v1/studies/study-a/")
    assert response.status_code == 401


def test_a_token_reaches_only_the_studies_it_names(api_as, study_a, study_b, personas):
    # Given a coordinator of both studies whose token names study A only
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=study_b, role=StudyMembership.Role.COORDINATOR
    )
    api = api_as("coordinator_a", [study_a])
    # Then study B is as absent as a study that does not exist
    assert [s["slug"] for s in api.get("/api/v1/studies/").json()] == ["study-a"]
    for slug in ("study-b", "no-such-study"):
        response = api.get(f"/api/v1/studies/{slug}/progress/")
        assert response.status_code == 404
        assert response.json()["detail"] == "Not found, or not yours to see."


def test_a_token_never_reaches_a_study_its_owner_is_not_a_member_of(api_as, study_a, study_b):
    api = api_as("coordinator_a", [study_a, study_b])
    assert api.get("/api/v1/studies/study-b/").status_code == 404


def test_a_token_loses_a_study_when_its_owner_leaves_it(api_as, study_a, personas):
    api = api_as("coordinator_a", [study_a])
    assert api.get("/api/v1/studies/study-a/").status_code == 200
    StudyMembership.objects.filter(user=personas["coordinator_a"], study=study_a).delete()
    assert api.get("/api/v1/studies/study-a/").status_code == 404
    assert api.get("/api/v1/studies/").json() == []


def test_a_token_follows_its_owners_role_at_the_moment_of_the_call(api_as, study_a, personas):
    api = api_as("coordinator_a", [study_a])
    assert api.get("/api/v1/studies/study-a/progress/").status_code == 200
    StudyMembership.objects.filter(user=personas["coordinator_a"], study=study_a).update(
        role=StudyMembership.Role.EXPERIMENTER
    )
    assert api.get("/api/v1/studies/study-a/progress/").status_code == 404
    assert api.get("/api/v1/studies/study-a/").json()["role"] == "experimenter"


def test_a_read_only_token_may_not_change_anything(api_as, study_a):
    api = api_as("coordinator_a", [study_a], access=READ)
    response = api.post("/api/v1/studies/study-a/reports/", {}, content_type="application/json")
    assert response.status_code == 403
    assert "read-only" in response.json()["detail"]
    assert not ExportJob.objects.exists()


def test_no_call_needs_a_csrf_token(api_as, study_a):
    # The client enforces CSRF checks and sends no CSRF token: a refusal would be 403.
    api = api_as("coordinator_a", [study_a])
    response = api.post("/api/v1/studies/study-a/", {}, content_type="application/json")
    assert response.status_code == 405


def test_a_coordinator_without_the_required_second_factor_is_refused(api_as, study_a, personas):
    study_a.require_coordinator_mfa = True
    study_a.save()
    api = api_as("coordinator_a", [study_a])
    response = api.get("/api/v1/studies/study-a/progress/")
    assert response.status_code == 403
    assert "second factor" in response.json()["detail"]
    Authenticator.objects.create(
        user=personas["coordinator_a"], type=Authenticator.Type.TOTP, data={"secret": "x"}
    )
    assert api.get("/api/v1/studies/study-a/progress/").status_code == 200


def test_an_unknown_path_under_the_api_is_a_problem_not_a_page(api_as, study_a):
    response = api_as("coordinator_a", [study_a]).get("/api/v1/no/such/thing/")
    assert response.status_code == 404
    assert response["Content-Type"] == PROBLEM
