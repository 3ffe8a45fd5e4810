"""Each quirk of real OpenAI-compatible servers (tests/llm_quirks.py) met by the
built-in chat through the real HTTP path, under the uvicorn workers and under
gunicorn's own (WSGI) workers, on PostgreSQL: how the exchange ends, what the
participant is told, and what the transcript keeps."""

import time

import pytest

from tests.surveys.chat_http import ChatSession, ended_with, web_fixture

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

web = web_fixture("asgi", "wsgi")
PROMPT = "Where is the nearest library?"
# A local model's pace: each gap well inside the idle limit, the whole answer
# (12 tokens, 0.3 s apart) well beyond it.
LOCAL = {"idle_timeout_seconds": 2, "answer_timeout_seconds": 60}

# quirk: (the system's settings, how the exchange ends)
CASES = {
    "slow_tokens": ({"idle_timeout_seconds": 1, "answer_timeout_seconds": 60}, "answer"),
    "stall": (LOCAL, "timeout"),
    "retry_after_long": ({}, "rate_limited"),
    "retry_after_short": ({}, "answer"),
    "empty_data": ({}, "answer"),
    "done_keepalive": (LOCAL, "answer"),
    "done_no_finish": ({}, "answer"),
    "reasoning_only": ({}, "no_text"),
    "tool_calls_only": ({}, "no_text"),
    "html_200": ({}, "server_error"),
    "json_when_stream": ({}, "answer"),
    "error_mid_stream": ({}, "server_error"),
    "azure_empty_first": ({}, "answer"),
    "max_completion_tokens_only": (
        {"token_parameter": "max_completion_tokens", "max_tokens": 200},
        "answer",
    ),
    "no_stream_options": ({"stream_usage": False}, "answer"),
    "crlf": ({}, "answer"),
    "gzip": ({}, "answer"),
    "comments": ({}, "answer"),
}


@pytest.mark.parametrize("quirk", list(CASES))
def test_each_quirk_ends_as_an_answer_or_an_error_turn_with_its_cause(web, quirks, quirk):
    system, outcome = CASES[quirk]
    chat = ChatSession(web, quirks, quirk, **system)

    started = time.monotonic()
    status, lines = chat.send(PROMPT)
    took = time.monotonic() - started

    assert status == 200
    user, last = chat.turns()
    assert (user.role, user.text) == ("user", PROMPT)
    if outcome == "answer":
        assert ended_with(lines).get("done"), lines[-1]
        assert last.role == "assistant" and last.reply_to_id == user.pk
        expected = quirks.answer_of(quirk, PROMPT)
        assert last.text == expected
        assert "".join(line.get("delta", "") for line in lines) == expected
    else:
        assert ended_with(lines)["cause"] == outcome, lines[-1]
        assert last.role == "error" and last.error_cause == outcome
        assert ended_with(lines)["error"]  # the participant's words for it
    # Nothing waits for a limit it need not reach: [DONE] ends the answer,
    # and a Retry-After that does not fit fails at once.
    assert took < 10, took


def test_the_answer_length_parameter_and_stream_options_go_as_the_system_says(web, quirks):
    chat = ChatSession(
        web, quirks, "ok", token_parameter="max_completion_tokens", max_tokens=77,
        stream_usage=False, extra_body={"top_k": 20, "model": "not-this"},
    )  # fmt: skip

    assert ended_with(chat.send(PROMPT)[1]).get("done")

    body = quirks.requests()[-1]["body"]
    assert body["max_completion_tokens"] == 77 and "max_tokens" not in body
    assert "stream_options" not in body and body["top_k"] == 20
    assert body["model"] == chat.system.model_name
