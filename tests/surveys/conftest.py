"""Fixtures of the remote-study tests (docs/design.md §11)."""

import pytest

from tests.surveys.remote import make_remote_study


@pytest.fixture
def remote_study(db, llm_server, settings):
    """An active remote study whose systems are the shipped demo server."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    return make_remote_study(llm_server)


@pytest.fixture(scope="module")
def quirks():
    """The conformance LLM server (tests/llm_quirks.py), once per test module."""
    from tests.llm_quirks import running_quirks_server

    with running_quirks_server() as server:
        yield server
