"""Fixtures of the client's conformance tests: the settings that let the
client call the quirks server (tests/conftest.py) on this machine."""

import pytest


@pytest.fixture
def loopback(settings, quirks):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    settings.LLM_MAX_RETRIES = 1
    quirks.reset()
