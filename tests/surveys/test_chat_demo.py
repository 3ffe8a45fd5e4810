"""The demo study's connected system (docs/design/transcripts.md §10.5): `seed_demo` points it
at the demo server `make run` starts, labels it a demo model, and the next
session started gets it, so a newcomer can chat at once with no key."""

import pytest
from django.core.management import call_command
from django.test import override_settings

from surveys.models import LLMSystem, Study, StudyMembership
from surveys.protocol.flow import session_start


@pytest.fixture
def seeded(db, monkeypatch, django_capture_on_commit_callbacks, llm_server):
    monkeypatch.setenv("DEMO_LLM_URL", llm_server)
    with override_settings(DEBUG=True), django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo", stdout=open("/dev/null", "w"))
    return Study.objects.get(slug="shs-demo")


def test_the_demo_study_has_one_connected_demo_model(seeded, llm_server):
    (demo,) = LLMSystem.objects.filter(study=seeded, kind=LLMSystem.Kind.CONNECTED)
    assert demo.is_demo and demo.active
    assert demo.base_url == llm_server and demo.api_key_env == ""
    assert LLMSystem.objects.filter(study=seeded, is_demo=True).count() == 1


def test_a_second_seed_follows_the_demo_servers_port_and_adds_nothing(seeded, monkeypatch):
    monkeypatch.setenv("DEMO_LLM_URL", "http://127.0.0.1:8123/v1")
    with override_settings(DEBUG=True):
        call_command("seed_demo", stdout=open("/dev/null", "w"))

    (demo,) = LLMSystem.objects.filter(study=seeded, is_demo=True)
    assert demo.base_url == "http://127.0.0.1:8123/v1"


def test_the_next_session_chats_with_the_demo_model(seeded, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    experimenter = StudyMembership.objects.get(study=seeded, role="experimenter").user

    session = session_start(study=seeded, experimenter=experimenter, language="en")

    assert LLMSystem.objects.get(study=seeded, is_demo=True) in (
        session.first_system,
        session.second_system,
    )
