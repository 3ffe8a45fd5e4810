"""Fixtures of the remote-study tests (docs/design/remote.md §11)."""

import pytest

from tests.surveys.remote import make_remote_study


@pytest.fixture
def remote_study(db, llm_server, settings):
    """An active remote study whose systems are the shipped demo server."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    return make_remote_study(llm_server)
