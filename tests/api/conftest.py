"""Tokens and a client that calls the API with one."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from api.models import ApiToken
from api.tokens import api_token_issue
from tests.personas import client_for, make_session, personas, study_a, study_b  # noqa: F401

READ = ApiToken.Access.READ
READ_WRITE = ApiToken.Access.READ_WRITE


@pytest.fixture(autouse=True)
def private_storage(settings, tmp_path):
    """Export files of each test in a folder of its own."""
    settings.PRIVATE_STORAGE_ROOT = tmp_path / "private"
    return settings.PRIVATE_STORAGE_ROOT


@pytest.fixture
def token_for(personas):  # noqa: F811
    """token_for("coordinator_a", [study_a], access=READ) -> (token, secret)."""

    def build(persona, studies, *, access=READ_WRITE, days=90, name="pipeline"):
        return api_token_issue(
            user=personas[persona],
            name=name,
            access=access,
            studies=studies,
            expires_at=timezone.now() + timedelta(days=days),
        )

    return build


class ApiClient(Client):
    """A client that sends a token and nothing else: no session cookie, no CSRF token."""

    def __init__(self, secret: str | None):
        super().__init__(enforce_csrf_checks=True)
        if secret is not None:
            self.defaults["HTTP_AUTHORIZATION"] = f"Bearer {secret}"


@pytest.fixture
def api_as(token_for):
    """api_as("coordinator_a", [study_a]) -> an ApiClient with a fresh read-write token."""

    def build(persona, studies, **options):
        _token, secret = token_for(persona, studies, **options)
        return ApiClient(secret)

    return build
