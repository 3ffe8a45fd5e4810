"""The shipped demo server (docs/design/transcripts.md §10.5), through the production client."""

import asyncio
import json
import time
import urllib.request

import pytest

from llm.client import Endpoint, Reply, complete_reply, stream_reply
from llm.demo_server import answer_words
from surveys.llm_policy import call_policy
from tests.llm_server import run_closing, running_demo_server

CONCURRENT_STREAMS = 250


@pytest.fixture(scope="module")
def slow_server():
    """Answers spread over one second, as the benchmark's (at 2 s) are."""
    with running_demo_server("--delay", "1") as server:
        yield server.base_url


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True


async def _reply(endpoint: Endpoint, messages: list[dict]) -> tuple[float | None, Reply]:
    """The reply, and when (seconds after the call) its first piece arrived."""
    started, first = time.monotonic(), None
    async for item in stream_reply(endpoint, messages, policy=call_policy()):
        if isinstance(item, Reply):
            return first, item
        first = first if first is not None else time.monotonic() - started
    raise AssertionError("no Reply")


def test_health_and_models(llm_server):
    root = llm_server.removesuffix("/v1")
    with urllib.request.urlopen(root + "/healthz", timeout=2) as response:
        assert json.loads(response.read()) == {"status": "ok"}
    with urllib.request.urlopen(llm_server + "/models", timeout=2) as response:
        assert json.loads(response.read())["data"][0]["id"]


def test_the_answer_depends_on_the_prompt_and_is_repeatable(llm_server):
    endpoint = Endpoint(base_url=llm_server, model="demo")

    def ask(prompt):
        return run_closing(
            complete_reply(endpoint, [{"role": "user", "content": prompt}], policy=call_policy())
        ).text

    assert ask("What is a hallucination?") == ask("What is a hallucination?")
    assert ask("What is a hallucination?") != ask("Who wrote the SHS?")
    assert ask("Who wrote the SHS?").count(". ") >= 3  # several sentences to stream


def test_the_system_prompt_and_the_history_reach_the_server(llm_server):
    endpoint = Endpoint(base_url=llm_server, model="demo", system_prompt="Be brief.")
    history = [
        {"role": "user", "content": "First question"},
        {"role": "assistant", "content": "First answer"},
        {"role": "user", "content": "Second question"},
    ]

    _, reply = run_closing(_reply(endpoint, history))

    assert "A system prompt is in effect." in reply.text
    assert "This is turn 2 of our conversation." in reply.text
    assert reply.prompt_tokens == 2 + 2 + 2 + 2  # the system prompt counted too


def test_max_tokens_cuts_the_answer(llm_server):
    endpoint = Endpoint(base_url=llm_server, model="demo", max_tokens=5, temperature=0.2)
    messages = [{"role": "user", "content": "Tell me everything"}]

    _, streamed = run_closing(_reply(endpoint, messages))
    whole = run_closing(complete_reply(endpoint, messages, policy=call_policy()))

    for reply in (streamed, whole):
        assert reply.finish_reason == "length"
        assert reply.completion_tokens == 5
        assert reply.text == "".join(answer_words(messages)[:5])


def test_the_delay_is_spread_over_the_answer(slow_server):
    endpoint = Endpoint(base_url=slow_server, model="demo")

    first, reply = run_closing(_reply(endpoint, [{"role": "user", "content": "Hello"}]))

    assert first < 0.5
    assert reply.latency_ms >= 1000


def test_it_holds_hundreds_of_streams_at_once(slow_server):
    endpoint = Endpoint(base_url=slow_server, model="demo")

    async def all_at_once():
        prompts = [f"Participant {number} asks" for number in range(CONCURRENT_STREAMS)]
        calls = [_reply(endpoint, [{"role": "user", "content": p}]) for p in prompts]
        return prompts, await asyncio.gather(*calls)

    started = time.monotonic()
    prompts, outcomes = run_closing(all_at_once())
    elapsed = time.monotonic() - started

    for prompt, (_first, reply) in zip(prompts, outcomes, strict=True):
        assert reply.text == "".join(answer_words([{"role": "user", "content": prompt}]))
    # One second per answer, all of them side by side rather than in a queue.
    assert elapsed < 30


def test_a_refused_request_leaves_the_connection_usable(llm_server):
    """A 401 or 404 before the body was read would leave it in the socket."""
    import http.client

    root = llm_server.removesuffix("/v1")
    connection = http.client.HTTPConnection(root.removeprefix("http://"), timeout=5)
    try:
        for path in ("/v1/nowhere", "/v1/chat/completions"):
            connection.request("POST", path, body=b'{"model": "m"}' + b" " * 5000)
            response = connection.getresponse()
            response.read()
            assert response.status in (404, 400)
        connection.request("GET", "/healthz")
        assert json.loads(connection.getresponse().read()) == {"status": "ok"}
    finally:
        connection.close()
