"""How the client reads the answers of real servers that differ, against the
quirks server over real HTTP (tests/llm_quirks.py): time limits, [DONE],
answers without text, replies that are not event streams, size limits."""

import time

import pytest

from surveys.views.chat_panel import failure_message
from tests.llm.calls import ask, at, complete, complete_failure, failure_of
from tests.llm_quirks import HUGE_CHARS, ODD_TEXT, SLOW_TOKENS, answer_for

pytestmark = pytest.mark.usefixtures("loopback")
PROMPT = "What does the SHS measure?"
ANSWER = answer_for([{"role": "user", "content": PROMPT}])


@pytest.mark.parametrize(
    "quirk", ["ok", "empty_data", "crlf", "gzip", "comments", "azure_empty_first"]
)
def test_well_formed_streams_give_the_whole_answer(quirks, quirk):
    deltas, reply = ask(at(quirks, quirk), PROMPT)

    assert "".join(deltas) == reply.text == ANSWER
    assert reply.finish_reason == "stop"
    assert reply.model == "m"


def test_a_slow_model_that_keeps_sending_is_not_cut_off(quirks, settings):
    # Given platform limits shorter than the whole answer, and a system whose
    # own limits leave room for it (a local model at a few tokens a second)
    settings.LLM_IDLE_TIMEOUT_SECONDS = 0.1
    settings.LLM_ANSWER_TIMEOUT_SECONDS = 0.5
    endpoint = at(quirks, "slow_tokens", idle_timeout=1, answer_timeout=30)

    started = time.monotonic()
    deltas, reply = ask(endpoint, PROMPT)

    # Then every gap stayed under the idle limit and the answer is whole
    assert time.monotonic() - started > 2
    assert len(deltas) == SLOW_TOKENS and reply.finish_reason == "stop"


def test_the_whole_answer_is_still_bounded(quirks, settings):
    settings.LLM_IDLE_TIMEOUT_SECONDS = 1
    settings.LLM_ANSWER_TIMEOUT_SECONDS = 1.2

    started = time.monotonic()
    failure, deltas = failure_of(at(quirks, "slow_tokens"), PROMPT)

    assert failure.cause == "timeout"
    assert 1.1 < time.monotonic() - started < 2
    assert deltas and failure.partial_text == "".join(deltas)
    assert ANSWER.startswith(failure.partial_text)


def test_a_server_that_stalls_is_given_up_after_the_idle_limit(quirks, settings):
    settings.LLM_IDLE_TIMEOUT_SECONDS = 0.5

    started = time.monotonic()
    failure, deltas = failure_of(at(quirks, "stall"), PROMPT)

    assert failure.cause == "timeout"
    assert time.monotonic() - started < 1.5
    assert deltas and ANSWER.startswith(failure.partial_text)


def test_done_ends_the_answer_even_if_the_body_stays_open(quirks, settings):
    settings.LLM_IDLE_TIMEOUT_SECONDS = 5

    started = time.monotonic()
    _, reply = ask(at(quirks, "done_keepalive"), PROMPT)

    assert reply.text == ANSWER
    assert time.monotonic() - started < 2
    # The connection was closed, not left waiting for the rest of the body.
    assert _settles(lambda: quirks.in_flight() == 0)


def test_done_without_a_finish_reason_is_a_complete_answer(quirks):
    _, reply = ask(at(quirks, "done_no_finish"), PROMPT)
    assert reply.text == ANSWER
    assert reply.finish_reason == ""


@pytest.mark.parametrize("quirk", ["reasoning_only", "tool_calls_only"])
def test_an_answer_without_text_is_no_text(quirks, quirk):
    failure, deltas = failure_of(at(quirks, quirk), PROMPT)
    assert failure.cause == "no_text" and deltas == []
    assert "try again" in str(failure_message(failure.cause))

    assert complete_failure(at(quirks, quirk), PROMPT).cause == "no_text"


def test_a_sign_in_page_sent_with_200_is_a_server_error(quirks):
    failure, _ = failure_of(at(quirks, "html_200"), PROMPT)
    assert failure.cause == "server_error"
    assert complete_failure(at(quirks, "html_200"), PROMPT).cause == "server_error"


def test_a_whole_completion_sent_for_a_stream_is_the_answer(quirks):
    deltas, reply = ask(at(quirks, "json_when_stream"), PROMPT)
    assert deltas == [ANSWER] and reply.text == ANSWER
    assert reply.finish_reason == "stop" and reply.completion_tokens == 11


def test_an_error_in_the_stream_keeps_what_arrived(quirks):
    failure, deltas = failure_of(at(quirks, "error_mid_stream"), PROMPT)
    assert failure.cause == "server_error"
    assert deltas and failure.partial_text == "".join(deltas)


def test_an_endless_stream_stops_at_the_cap_and_hangs_up(quirks, settings):
    settings.LLM_ANSWER_TIMEOUT_SECONDS = 5  # without a cap: a timeout, not a hang
    endpoint = at(quirks, "endless", max_answer_chars=5000)

    failure, deltas = failure_of(endpoint, PROMPT)

    assert failure.cause == "too_long"
    assert len(failure.partial_text) == 5000 == len("".join(deltas))
    assert failure.partial_text == "".join(f"word{n} " for n in range(1000))[:5000]
    assert _settles(lambda: quirks.in_flight() == 0)


def test_an_endless_body_without_streaming_is_refused(quirks, settings):
    settings.LLM_ANSWER_TIMEOUT_SECONDS = 5
    started = time.monotonic()
    failure = complete_failure(at(quirks, "endless", max_answer_chars=5000), PROMPT)
    assert failure.cause == "too_long"
    assert time.monotonic() - started < 3


def test_a_huge_answer_passes_whole_within_the_default_cap(quirks):
    deltas, reply = ask(at(quirks, "huge"), PROMPT)
    assert len(reply.text) > HUGE_CHARS and "".join(deltas) == reply.text
    assert complete(at(quirks, "huge"), PROMPT).text == reply.text


def test_a_huge_answer_without_streaming_is_cut_at_the_cap(quirks):
    failure = complete_failure(at(quirks, "huge", max_answer_chars=100_000), PROMPT)
    whole = complete(at(quirks, "huge"), PROMPT).text
    assert failure.cause == "too_long"
    assert failure.partial_text == whole[:100_000]


def test_control_characters_reach_the_chat_as_sent(quirks):
    # The chat takes them out where it stores the answer, and counts them
    # (tests/surveys/test_chat_http_rules.py): the client alters nothing.
    expected = ODD_TEXT["nul"]

    _, reply = ask(at(quirks, "nul"), PROMPT)

    assert reply.text == expected
    assert complete(at(quirks, "nul"), PROMPT).text == expected


def test_bidi_controls_are_kept_as_sent(quirks):
    # The transcript keeps what the system said; pages isolate its direction.
    _, reply = ask(at(quirks, "bidi"), PROMPT)
    assert reply.text == ODD_TEXT["bidi"]


def _settles(condition, within: float = 3) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False
