"""What the client sends to servers that differ (tests/llm_quirks.py): the
parameters each one wants, retries that honour Retry-After only when it fits,
nothing of the platform's own environment, and the coordinator's "Test
connection" (llm/check.py)."""

import time

import pytest

from llm.check import CHECK_MAX_TOKENS, CHECK_PROMPT, check_connection
from llm.client import Endpoint
from surveys.connection_check import coordinator_message
from surveys.llm_policy import call_policy
from tests.llm.calls import ask, at, complete, failure_of
from tests.llm_quirks import answer_for
from tests.llm_server import free_port, run_closing

pytestmark = pytest.mark.usefixtures("loopback")
SECRET = "sk-quirks-3b1f9e7a5c2d4e6f8a0b1c3d5e7f9a2b"


def sent(quirks) -> dict:
    [request] = quirks.requests()
    return request


def test_the_platforms_openai_environment_never_reaches_a_system(quirks, monkeypatch):
    # Given a server whose environment is set up for the platform's own OpenAI account
    monkeypatch.setenv("OPENAI_ORG_ID", "org-platform")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_platform")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", quirks.url("html_200"))
    custom = f"X-Platform-Tenant: lab\nauthorization: Bearer {SECRET}\nX-Other: 1"
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", custom)

    # When a connected system without a key is called, streamed and not
    ask(at(quirks, "ok"), "Hi")
    complete(at(quirks, "ok"), "Hi")

    # Then neither request carried any of it
    for request in quirks.requests():
        assert request["quirk"] == "ok"
        headers = request["headers"]
        assert headers["authorization"] == "Bearer no-key"
        for name in ("openai-organization", "openai-project", "x-platform-tenant", "x-other"):
            assert name not in headers
        assert SECRET not in str(request)


def test_the_token_limit_goes_out_under_the_name_the_server_knows(quirks):
    endpoint = at(quirks, "max_completion_tokens_only", max_tokens=50)

    failure, _ = failure_of(endpoint, "Hi")
    assert (failure.cause, failure.status) == ("rejected", 400)

    quirks.reset()
    ask(Endpoint(**{**endpoint.__dict__, "token_parameter": "max_completion_tokens"}), "Hi")
    body = sent(quirks)["body"]
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body


def test_stream_options_only_when_the_system_wants_usage(quirks):
    assert failure_of(at(quirks, "no_stream_options"), "Hi")[0].cause == "rejected"

    quirks.reset()
    _, reply = ask(at(quirks, "no_stream_options", stream_usage=False), "Hi")
    assert "stream_options" not in sent(quirks)["body"]
    assert reply.prompt_tokens is None


def test_extra_body_fields_add_to_the_request_but_change_nothing_it_asks(quirks):
    extra = {
        "top_p": 0.5,
        "chat_template_kwargs": {"enable_thinking": False},
        "model": "another-model",
        "messages": [],
        "stream": False,
        "stream_options": {"include_usage": True},
        "max_tokens": 1,
        "max_completion_tokens": 2,
    }
    endpoint = at(quirks, "ok", max_tokens=40, stream_usage=False, extra_body=extra)

    _, reply = ask(endpoint, "Hi")

    body = sent(quirks)["body"]
    assert reply.text == answer_for([{"role": "user", "content": "Hi"}])
    assert body["top_p"] == 0.5 and body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["model"] == "m" and body["messages"] == [{"role": "user", "content": "Hi"}]
    assert body["stream"] is True and "stream_options" not in body
    assert body["max_tokens"] == 40 and "max_completion_tokens" not in body


def test_a_server_that_wants_strict_turns_refuses_others(quirks):
    endpoint = at(quirks, "strict_alternation", system_prompt="Be brief.")
    turns = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "And?"},
    ]
    assert ask(endpoint, turns)[1].text == answer_for(turns)
    failure, _ = failure_of(endpoint, turns[:2])
    assert (failure.cause, failure.status) == ("rejected", 400)


def test_a_long_retry_after_is_rate_limited_at_once(quirks):
    started = time.monotonic()
    failure, _ = failure_of(at(quirks, "retry_after_long"), "Hi")

    assert (failure.cause, failure.status) == ("rate_limited", 429)
    assert time.monotonic() - started < 1
    assert len(quirks.requests()) == 1


def test_a_short_retry_after_is_waited_for_once(quirks):
    started = time.monotonic()
    _, reply = ask(at(quirks, "retry_after_short"), "Hi")

    assert reply.text == answer_for([{"role": "user", "content": "Hi"}])
    assert time.monotonic() - started >= 1
    assert len(quirks.requests()) == 2


def test_a_retry_after_longer_than_the_time_left_is_not_waited_for(quirks):
    started = time.monotonic()
    failure, _ = failure_of(at(quirks, "retry_after_short", answer_timeout=0.8), "Hi")

    assert failure.cause == "rate_limited"
    assert time.monotonic() - started < 0.7
    assert len(quirks.requests()) == 1


def test_the_server_counts_the_answers_in_flight(quirks):
    ask(at(quirks, "ok"), "Hi")
    ask(at(quirks, "ok"), "Hi again")
    assert quirks.in_flight_max() == 1


def check(endpoint: Endpoint):
    return run_closing(check_connection(endpoint, policy=call_policy()))


def test_a_working_connection_is_reported_ok(quirks):
    result = check(at(quirks, "ok", system_prompt="Be brief."))

    assert result.ok and result.cause == "" and result.model == "m"
    assert 0 <= result.first_token_ms <= result.latency_ms
    body = sent(quirks)["body"]
    assert body["messages"][-1] == {"role": "user", "content": CHECK_PROMPT}
    assert body["max_tokens"] == CHECK_MAX_TOKENS and body["stream"] is True


@pytest.mark.parametrize(
    ("quirk", "cause", "status", "hint"),
    [
        ("max_completion_tokens_only", "rejected", 400, "answer-length parameter"),
        ("no_stream_options", "rejected", 400, "stream_options"),
        ("retry_after_long", "rate_limited", 429, "limiting requests"),
        ("html_200", "server_error", None, "/v1"),
        ("reasoning_only", "no_text", None, "larger answer length"),
    ],
)
def test_a_failed_check_names_the_likely_fix(quirks, monkeypatch, quirk, cause, status, hint):
    monkeypatch.setenv("SHS_LLM_KEY_QUIRKS_TEST", SECRET)
    endpoint = at(quirks, quirk, api_key_env="SHS_LLM_KEY_QUIRKS_TEST")

    result = check(endpoint)
    message = coordinator_message(result, endpoint.api_key_env)

    assert not result.ok
    assert (result.cause, result.status) == (cause, status)
    assert hint in message
    assert (f"(HTTP {status})" in message) == bool(status)
    assert SECRET not in message + repr(result)


def test_a_check_of_a_server_that_is_down(settings):
    result = check(Endpoint(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m"))
    assert (result.ok, result.cause) == (False, "unreachable")
    assert "base URL" in coordinator_message(result, "")


def test_a_check_with_a_missing_key_names_the_variable(quirks, monkeypatch):
    monkeypatch.delenv("SHS_LLM_KEY_QUIRKS_UNSET", raising=False)
    result = check(at(quirks, "ok", api_key_env="SHS_LLM_KEY_QUIRKS_UNSET"))
    assert result.cause == "no_api_key"
    assert "SHS_LLM_KEY_QUIRKS_UNSET" in coordinator_message(result, "SHS_LLM_KEY_QUIRKS_UNSET")
    assert quirks.requests() == []
