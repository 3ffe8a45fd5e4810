"""The chat's rules (docs/design/transcripts.md §10.3) through the real HTTP path, on the
production-like stack (gunicorn, uvicorn workers and WSGI workers, DEBUG=0)
and under `make run` (runserver): what the model is sent, one answer in
flight, the block's limits, what is stored of every answer and failure."""

import socket
import threading
import time

import pytest

from surveys.models import Study, Turn
from tests.surveys.chat_http import ChatSession, ended_with, web_fixture

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# The server's own organisation and project must never reach a study's system.
WEB_ENV = {"OPENAI_ORG_ID": "org-server-own", "OPENAI_PROJECT_ID": "proj-server-own"}
web = web_fixture("asgi", "wsgi", "make_run")


def test_after_a_failed_turn_the_next_message_is_sent_in_strict_alternation(web, quirks):
    chat = ChatSession(web, quirks, "retry_after_long")
    status, lines = chat.send("First question?")
    assert status == 200 and ended_with(lines)["cause"] == "rate_limited"
    chat.use("strict_alternation")

    status, lines = chat.send("Second question?")

    assert ended_with(lines).get("done"), lines
    sent = quirks.requests()[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["user"]
    assert sent[-1]["content"] == "Second question?"
    # The transcript keeps the unanswered message and says what was sent.
    first, error, second, answer = chat.turns()
    assert (first.role, error.role, second.role, answer.role) == (
        "user",
        "error",
        "user",
        "assistant",
    )
    assert answer.reply_to_id == second.pk and answer.sent_positions == [second.position]
    assert error.reply_to_id == first.pk


def test_a_retried_answer_joins_the_conversation_in_order(web, quirks):
    chat = ChatSession(web, quirks, "strict_alternation")
    assert ended_with(chat.send("One?")[1]).get("done")
    chat.use("retry_after_long")
    assert ended_with(chat.send("Two?")[1])["cause"] == "rate_limited"
    chat.use("strict_alternation")

    assert ended_with(chat.send(None)[1]).get("done")  # "Try again"
    assert ended_with(chat.send("Three?")[1]).get("done")

    sent = quirks.requests()[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["One?", "Two?", "Three?"]


def test_one_answer_in_flight_per_session(web, quirks):
    chat = ChatSession(web, quirks, "slow_tokens")
    results = []

    def send(number):
        results.append(chat.send(f"Question {number}?"))

    threads = [threading.Thread(target=send, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    statuses = sorted(status for status, _lines in results)
    assert statuses == [200] + [409] * 11
    refused = [lines for status, lines in results if status == 409]
    assert all("still answering" in lines[0]["error"] for lines in refused)
    assert quirks.in_flight_max() == 1 and len(quirks.requests()) == 1
    assert [t.role for t in chat.turns()] == ["user", "assistant"]


def test_try_again_during_an_answer_is_refused(web, quirks):
    chat = ChatSession(web, quirks, "retry_after_long")
    assert ended_with(chat.send("Hello?")[1])["cause"] == "rate_limited"
    chat.use("slow_tokens")
    first = threading.Thread(target=chat.send, args=(None,))
    first.start()
    _wait_for(lambda: len(quirks.requests()) == 2)

    status, lines = chat.send(None)
    first.join()

    assert status == 409 and "still answering" in lines[0]["error"]
    assert len(quirks.requests()) == 2
    assert [t.role for t in chat.turns()] == ["user", "error", "assistant"]


def test_a_block_has_a_limit_on_messages_and_characters(web, quirks):
    chat = ChatSession(web, quirks, "ok")
    Study.objects.filter(pk=chat.study.pk).update(
        chat_max_turns_per_block=2, chat_max_chars_per_block=1000
    )
    assert ended_with(chat.send("One?")[1]).get("done")
    status, lines = chat.send("x" * 999)
    assert status == 409 and "1000 characters" in lines[0]["error"]
    assert ended_with(chat.send("Two?")[1]).get("done")

    status, lines = chat.send("Three?")

    assert status == 409 and "limit of 2 messages" in lines[0]["error"]
    assert len(quirks.requests()) == 2


def test_a_changed_system_prompt_is_recorded_as_sent(web, quirks):
    chat = ChatSession(web, quirks, "ok", system_prompt="Answer briefly.")
    assert ended_with(chat.send("One?")[1]).get("done")
    chat.use("ok", system_prompt="Answer in detail.")

    assert ended_with(chat.send("Two?")[1]).get("done")

    first_call, second_call = (r["body"]["messages"] for r in quirks.requests())
    assert first_call[0] == {"role": "system", "content": "Answer briefly."}
    assert second_call[0] == {"role": "system", "content": "Answer in detail."}
    turns = chat.turns()
    systems = [t for t in turns if t.role == Turn.Role.SYSTEM]
    assert [t.text for t in systems] == ["Answer briefly.", "Answer in detail."]
    assert turns[-1].sent_positions[0] == systems[-1].position


def test_control_characters_in_an_answer_are_taken_out_and_counted(web, quirks):
    chat = ChatSession(web, quirks, "nul")

    assert ended_with(chat.send("Anything?")[1]).get("done")

    answer = chat.last()
    assert answer.role == "assistant" and answer.cleaned_chars > 0
    assert "\x00" not in answer.text and answer.text.strip()


def test_a_participant_who_leaves_mid_answer_is_recorded_as_interrupted(web, quirks):
    chat = ChatSession(web, quirks, "slow_tokens")
    # A browser that reads the first line of the answer and goes away.
    with socket.create_connection(("127.0.0.1", web.port)) as raw:
        raw.sendall(_chat_request(chat, "Tell me a long story."))
        received = b""
        while b'"delta"' not in received:
            received += raw.recv(4096)

    turn = _wait_for(lambda: chat.turns()[-1] if len(chat.turns()) == 2 else None)

    assert turn.role == "error" and turn.error_cause == "interrupted"
    full = quirks.answer_of("slow_tokens", "Tell me a long story.")
    assert full.startswith(turn.text) and len(turn.text) < len(full)


def test_the_servers_organisation_and_project_are_never_sent(web, quirks):
    chat = ChatSession(web, quirks, "ok")

    assert ended_with(chat.send("Hi?")[1]).get("done")

    headers = quirks.requests()[-1]["headers"]
    assert "openai-organization" not in headers and "openai-project" not in headers
    assert "org-server-own" not in str(headers) and "proj-server-own" not in str(headers)


def test_a_server_setting_named_as_key_variable_is_never_sent(web, quirks):
    chat = ChatSession(web, quirks, "ok", api_key_env="SECRET_KEY")

    status, lines = chat.send("Hi?")

    assert ended_with(lines)["cause"] == "refused_key"
    assert quirks.requests() == []
    assert web.secret_key not in web.output()


def test_an_endless_answer_is_cut_at_the_systems_limit_and_shown_folded(web, quirks):
    chat = ChatSession(web, quirks, "endless", max_answer_chars=50_000)

    status, lines = chat.send("Go on forever.")

    assert ended_with(lines)["cause"] == "too_long"
    turn = chat.last()
    assert turn.role == "error" and len(turn.text) == 50_000
    page = chat.browser.page(chat.url)
    assert f"/turns/{turn.pk}/text/" in page and len(page) < 50_000
    whole = chat.browser.page(chat.url.rstrip("/") + f"/turns/{turn.pk}/text/")
    assert whole == turn.text


def test_a_long_real_answer_passes_whole(web, quirks):
    chat = ChatSession(web, quirks, "huge")

    assert ended_with(chat.send("Write a lot.")[1]).get("done")

    answer = chat.last()
    assert answer.role == "assistant"
    assert answer.text == quirks.answer_of("huge", "Write a lot.")


def test_a_models_bidirectional_controls_stay_inside_its_turn(web, quirks):
    chat = ChatSession(web, quirks, "bidi")
    assert ended_with(chat.send("Hi?")[1]).get("done")

    page = chat.browser.page(chat.url)

    answer = chat.last()
    assert "\u202e" in answer.text
    assert f'<div class="turn-text" dir="auto">{answer.text[:20]}' in page


def _chat_request(chat, text: str) -> bytes:
    from urllib.parse import urlencode

    cookies = "; ".join(f"{c.name}={c.value}" for c in _jar(chat.browser))
    body = urlencode(
        {"step": "block1_interaction", "text": text, "csrfmiddlewaretoken": chat.browser.token}
    ).encode()
    head = (
        f"POST {chat.url}chat/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookies}\r\n"
        "Accept: application/x-ndjson\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _jar(browser):
    from urllib.request import HTTPCookieProcessor

    handler = next(h for h in browser.opener.handlers if isinstance(h, HTTPCookieProcessor))
    return list(handler.cookiejar)


def _wait_for(probe, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := probe():
            return result
        time.sleep(0.05)
    raise AssertionError("timed out waiting")
