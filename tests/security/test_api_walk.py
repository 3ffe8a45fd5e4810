"""The URL walk of the API (docs/design/api.md §16.3): every endpoint, for
every persona holding a read-write token that names both studies, answers as
the pages do: never 500, never 403, 404 beyond the owner's role; without a
token 401; with a read-only token a change is 403 or 405."""

import pytest
from django.urls import reverse
from django.utils import timezone

from api.models import ApiToken
from api.tokens import api_token_revoke
from surveys.models import StudyMembership
from tests.api.conftest import ApiClient, token_for  # noqa: F401
from tests.security.test_url_walk import COORDINATOR_A, MEMBERS_A, PERSONAS, STAFF, World

# name: (who reaches it, its arguments from the world)
API_ACCESS = {
    "api:study_list": (STAFF, lambda w: {}),
    "api:study_detail": (MEMBERS_A, lambda w: {"slug": w.study.slug}),
    "api:system_list": (MEMBERS_A, lambda w: {"slug": w.study.slug}),
    "api:team": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:progress": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:quality": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:export_list": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:export_job": (COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.job.token}),
    "api:export_file": (COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.job.token}),
    "api:report_jobs": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:report": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:report_criterion": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:report_validation": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:annotations": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "api:automated_results": (
        MEMBERS_A, lambda w: {"slug": w.study.slug, "system_pk": w.automated.system_id}),
    "api:external_blocks": (MEMBERS_A, lambda w: {"slug": w.study.slug}),
    "api:block_transcript": (
        MEMBERS_A, lambda w: {"slug": w.study.slug, "pk": w.session.blocks.get(block=1).pk}),
    "api:unknown": (set(), lambda w: {"rest": "no/such/endpoint/"}),
}  # fmt: skip
METHODS = ("get", "post", "put", "delete")


@pytest.fixture
def world(study_a, study_b, personas, client_for):
    return World(study_a, personas, client_for)


def _clients(token_for, study_a, study_b, access):  # noqa: F811
    clients = {"anonymous": ApiClient(None)}
    for persona in PERSONAS[:-1]:
        _token, secret = token_for(persona, [study_a, study_b], access=access)
        clients[persona] = ApiClient(secret)
    return clients


def _call(client, method: str, url: str):
    return getattr(client, method)(url, {}, content_type="application/json")


@pytest.mark.parametrize("name", sorted(API_ACCESS))
def test_no_endpoint_errors_or_leaks_for_any_persona(name, world, token_for, study_a, study_b):  # noqa: F811
    allowed, build = API_ACCESS[name]
    url = reverse(name, kwargs=build(world))
    clients = _clients(token_for, study_a, study_b, ApiToken.Access.READ_WRITE)
    for persona, client in clients.items():
        for method in METHODS:
            status = _call(client, method, url).status_code
            where = f"{method.upper()} {name} as {persona}: {status}"
            assert status < 500, where
            assert status != 403, where
            if persona == "anonymous":
                assert status == 401, where
            elif persona not in allowed:
                assert status in (404, 405), where


@pytest.mark.parametrize("name", sorted(API_ACCESS))
def test_a_read_only_token_changes_nothing_anywhere(name, world, token_for, study_a, study_b):  # noqa: F811
    allowed, build = API_ACCESS[name]
    url = reverse(name, kwargs=build(world))
    clients = _clients(token_for, study_a, study_b, ApiToken.Access.READ)
    for persona in sorted(allowed):
        for method in ("post", "put", "delete"):
            status = _call(clients[persona], method, url).status_code
            assert status in (403, 404, 405), f"{method.upper()} {name} as {persona}: {status}"


def test_a_browser_session_opens_no_endpoint(world, client_for):
    for persona in PERSONAS:
        client = client_for(persona)
        for name, (_allowed, build) in API_ACCESS.items():
            status = client.get(reverse(name, kwargs=build(world))).status_code
            assert status == 401, f"GET {name} as {persona} with a session: {status}"


def test_every_endpoint_refuses_a_token_that_lost_its_way(
    world,
    token_for,  # noqa: F811
    study_a,
    study_b,
    personas,
):
    """The coordinator of study A, whose token: expired, was revoked, names
    only study B, or whose owner has left study A."""
    expired, expired_secret = token_for("coordinator_a", [study_a])
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now())
    revoked, revoked_secret = token_for("coordinator_a", [study_a])
    api_token_revoke(token=revoked, user=personas["coordinator_a"])
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=study_b, role=StudyMembership.Role.COORDINATOR
    )
    _elsewhere, elsewhere_secret = token_for("coordinator_a", [study_b])
    _left, left_secret = token_for("coordinator_a", [study_a])
    calls = [
        # The one endpoint without a GET is asked as it is used.
        ("put" if name == "api:block_transcript" else "get", reverse(name, kwargs=build(world)))
        for name, (_allowed, build) in API_ACCESS.items()
        if name not in ("api:study_list", "api:unknown")
    ]
    expected = {expired_secret: 401, revoked_secret: 401, elsewhere_secret: 404}
    for secret, status in expected.items():
        for method, url in calls:
            assert _call(ApiClient(secret), method, url).status_code == status, url
    StudyMembership.objects.filter(user=personas["coordinator_a"], study=study_a).delete()
    for method, url in calls:
        assert _call(ApiClient(left_secret), method, url).status_code == 404, url
