"""The coordinator's "Test connection" (surveys/connection_check.py): one short
real call to a saved connected system, from its form or the readiness panel,
told in plain words; for the study's coordinators only, and rationed."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from llm import check, client
from llm.check import ConnectionCheck
from surveys.connection_check import CHECKS_PER_WINDOW
from surveys.models import LLMSystem
from tests.llm_server import chat_requests


@pytest.fixture
def system(study_a, settings):
    settings.LLM_KEY_PREFIX = "SHS_LLM_KEY_"
    settings.LLM_KEYS = {}
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    system = LLMSystem.objects.create(
        study=study_a, name="Hosted", kind="connected",
        base_url="https://8.8.8.8/v1", model_name="gpt-test",
    )  # fmt: skip
    cache.delete(f"llm-connection-check:{system.pk}")
    yield system
    cache.delete(f"llm-connection-check:{system.pk}")


@pytest.fixture
def calls(monkeypatch):
    """The checks made, answered by `calls.result` instead of a server."""

    class Calls(list):
        result = ConnectionCheck(
            ok=True, model="gpt-test-2025", first_token_ms=312, latency_ms=845, cause="",
        )  # fmt: skip
        pools_closed = 0

    made = Calls()

    async def fake_check(endpoint, *, policy):
        made.append(endpoint)
        return made.result

    async def fake_close():
        made.pools_closed += 1

    monkeypatch.setattr(check, "check_connection", fake_check)
    monkeypatch.setattr(client, "close_pool", fake_close)
    return made


def _url(study, system):
    return reverse("surveys:system_check", args=[study.slug, system.pk])


def _messages(response) -> str:
    return " ".join(str(message) for message in response.context["messages"])


def test_the_coordinator_sees_the_model_and_the_first_token_time(
    client_for, study_a, system, calls
):
    response = client_for("coordinator_a").post(_url(study_a, system), follow=True)

    assert response.redirect_chain[-1][0] == reverse(
        "surveys:system_edit", args=[study_a.slug, system.pk]
    )
    text = _messages(response)
    assert "gpt-test-2025" in text and "312 ms" in text and "845 ms" in text
    assert [endpoint.model for endpoint in calls] == ["gpt-test"]
    assert calls[0].study == study_a.slug
    # Under WSGI the request's event loop ends with it, and so must its pool.
    assert calls.pools_closed == 1


def test_from_the_readiness_panel_the_result_shows_on_the_study_page(
    client_for, study_a, system, calls
):
    response = client_for("coordinator_a").post(
        _url(study_a, system), {"back": "study"}, follow=True
    )
    assert response.redirect_chain[-1][0].startswith(
        reverse("surveys:study_detail", args=[study_a.slug])
    )
    assert "gpt-test-2025" in _messages(response)


def test_a_refusal_is_told_in_the_checks_own_words(client_for, study_a, system, calls):
    calls.result = ConnectionCheck(
        ok=False, model="", first_token_ms=None, latency_ms=40, cause="rejected", status=401,
    )  # fmt: skip
    response = client_for("coordinator_a").post(_url(study_a, system), follow=True)
    text = _messages(response)
    assert "The test of “Hosted” failed" in text and "HTTP 401" in text
    assert "The server refused the API key" in text


def test_a_refused_key_variable_is_never_called(client_for, study_a, system, calls, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "x" * 40)
    LLMSystem.objects.filter(pk=system.pk).update(api_key_env="SECRET_KEY")

    response = client_for("coordinator_a").post(_url(study_a, system), follow=True)

    assert calls == []
    assert "SHS_LLM_KEY_" in _messages(response)


def test_the_checks_of_a_system_are_rationed(client_for, study_a, system, calls):
    coordinator = client_for("coordinator_a")
    for _ in range(CHECKS_PER_WINDOW):
        coordinator.post(_url(study_a, system))

    response = coordinator.post(_url(study_a, system), follow=True)

    assert len(calls) == CHECKS_PER_WINDOW
    assert "try again later" in _messages(response)


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider", "anonymous"])
def test_only_the_studys_coordinators_may_test(client_for, study_a, system, calls, persona):
    response = client_for(persona).post(_url(study_a, system))
    if persona == "anonymous":
        assert response.url.startswith(reverse("account_login"))
    else:
        assert response.status_code == 404
    assert calls == []


def test_a_system_of_another_study_is_not_found_under_this_one(
    client_for, study_a, study_b, system, calls
):
    response = client_for("coordinator_b").post(_url(study_b, system))
    assert response.status_code == 404
    assert calls == []


def test_an_external_system_has_nothing_to_test(client_for, study_a, system, calls):
    LLMSystem.objects.filter(pk=system.pk).update(kind="external")
    assert client_for("coordinator_a").post(_url(study_a, system)).status_code == 404


def test_testing_takes_a_post(client_for, study_a, system, calls):
    assert client_for("coordinator_a").get(_url(study_a, system)).status_code == 405
    assert calls == []


def test_the_form_and_the_readiness_panel_offer_the_test(client_for, study_a, system):
    coordinator = client_for("coordinator_a")
    form = coordinator.get(reverse("surveys:system_edit", args=[study_a.slug, system.pk]))
    study = coordinator.get(reverse("surveys:study_detail", args=[study_a.slug]))
    for page in (form, study):
        assert f'action="{_url(study_a, system)}"' in page.content.decode()


def test_a_real_call_to_the_demo_server(client_for, study_a, system, llm_server):
    LLMSystem.objects.filter(pk=system.pk).update(base_url=llm_server, model_name="demo")
    before = chat_requests(llm_server)

    response = client_for("coordinator_a").post(_url(study_a, system), follow=True)

    assert chat_requests(llm_server) == before + 1
    text = _messages(response)
    assert "answered" in text and "First token after" in text
