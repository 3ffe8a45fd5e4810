"""Every way a call can fail, against the demo server's fault modes over real HTTP.

Each failure is one cause of llm.client.CAUSES, keeps the text that had
streamed, and is retried only while nothing of the answer had arrived.
"""

import asyncio
import socket
import time

import pytest

from llm.client import CAUSES, ChatFailure, Endpoint, Reply, complete_reply, stream_reply
from surveys.llm_policy import call_policy
from surveys.views.chat_panel import FAILURE_MESSAGES, failure_message
from tests.llm_server import chat_requests, free_port, run_closing, running_demo_server


def ask(endpoint: Endpoint, prompt: str) -> tuple[list[str], Reply]:
    async def run():
        deltas = []
        async for item in stream_reply(
            endpoint, [{"role": "user", "content": prompt}], policy=call_policy()
        ):
            if isinstance(item, Reply):
                return deltas, item
            deltas.append(item)
        raise AssertionError("the stream ended without a Reply")

    return run_closing(run())


def failure_of(endpoint: Endpoint, prompt: str) -> tuple[ChatFailure, list[str]]:
    """The failure of a streamed call, and the deltas that arrived before it."""
    deltas = []

    async def run():
        async for item in stream_reply(
            endpoint, [{"role": "user", "content": prompt}], policy=call_policy()
        ):
            deltas.append(item)

    with pytest.raises(ChatFailure) as raised:
        run_closing(run())
    return raised.value, deltas


@pytest.fixture
def endpoint(llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    settings.LLM_MAX_RETRIES = 1
    return Endpoint(base_url=llm_server, model="demo")


def test_rate_limit_is_retried_then_reported(endpoint, llm_server):
    before = chat_requests(llm_server)

    failure, deltas = failure_of(endpoint, "Tell me more [429]")

    assert failure.cause == "rate_limited"
    assert failure.partial_text == "" and deltas == []
    assert chat_requests(llm_server) - before == 2  # the call and its one retry


@pytest.mark.parametrize(("retries", "requests"), [(2, 3), (0, 1)])
def test_server_error_is_retried_as_often_as_the_setting_says(
    endpoint, llm_server, settings, retries, requests
):
    settings.LLM_MAX_RETRIES = retries
    before = chat_requests(llm_server)

    failure, _ = failure_of(endpoint, "Tell me more [500]")

    assert failure.cause == "server_error"
    assert chat_requests(llm_server) - before == requests


def test_a_stream_that_breaks_keeps_its_text_and_is_not_retried(endpoint, llm_server, settings):
    settings.LLM_MAX_RETRIES = 3
    before = chat_requests(llm_server)

    failure, deltas = failure_of(endpoint, "Tell me more [drop]")

    assert failure.cause == "stream_broken"
    assert deltas and failure.partial_text == "".join(deltas)
    assert failure.partial_text.startswith('You wrote: "Tell me more [drop]"')
    # The participant already saw the start: a retry would show another answer.
    assert chat_requests(llm_server) - before == 1


def test_a_content_filter_stop_keeps_the_partial_answer(endpoint, llm_server):
    before = chat_requests(llm_server)

    failure, deltas = failure_of(endpoint, "Something forbidden [filter]")

    assert failure.cause == "content_filter"
    assert deltas and failure.partial_text == "".join(deltas)
    assert chat_requests(llm_server) - before == 1


def test_a_broken_answer_without_streaming(endpoint, llm_server, settings):
    settings.LLM_MAX_RETRIES = 0
    messages = [{"role": "user", "content": "Tell me more [drop]"}]

    with pytest.raises(ChatFailure) as raised:
        run_closing(complete_reply(endpoint, messages, policy=call_policy()))

    assert raised.value.cause == "stream_broken"


def test_a_content_filter_stop_without_streaming(endpoint):
    messages = [{"role": "user", "content": "Something forbidden [filter]"}]

    with pytest.raises(ChatFailure) as raised:
        run_closing(complete_reply(endpoint, messages, policy=call_policy()))

    assert raised.value.cause == "content_filter"
    assert raised.value.partial_text.startswith('You wrote: "Something forbidden [filter]"')


@pytest.mark.parametrize(
    ("marker", "cause"), [("[429]", "rate_limited"), ("[500]", "server_error")]
)
def test_http_errors_without_streaming(endpoint, marker, cause):
    with pytest.raises(ChatFailure) as raised:
        run_closing(
            complete_reply(
                endpoint, [{"role": "user", "content": f"Hi {marker}"}], policy=call_policy()
            )
        )
    assert raised.value.cause == cause


def test_a_silent_server_times_out_after_the_idle_limit(endpoint, settings):
    settings.LLM_IDLE_TIMEOUT_SECONDS = 1

    started = time.monotonic()
    failure, deltas = failure_of(endpoint, "Take your time [slow]")

    assert failure.cause == "timeout"
    assert deltas == []
    # A wait that used up the idle limit is not tried again.
    assert 0.9 < time.monotonic() - started < 1.9


def test_a_deadline_in_the_middle_of_an_answer_keeps_what_arrived(settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    settings.LLM_ANSWER_TIMEOUT_SECONDS = 1
    with running_demo_server("--delay", "5") as dawdling:
        failure, deltas = failure_of(Endpoint(base_url=dawdling.base_url, model="m"), "Hi")

    assert failure.cause == "timeout"
    assert deltas and failure.partial_text == "".join(deltas)


def test_a_slow_answer_times_out_without_streaming(endpoint, settings):
    # Nothing arrives before the whole answer: the answer's limit applies.
    settings.LLM_ANSWER_TIMEOUT_SECONDS = 1
    started = time.monotonic()

    with pytest.raises(ChatFailure) as raised:
        run_closing(
            complete_reply(
                endpoint, [{"role": "user", "content": "Hm [slow]"}], policy=call_policy()
            )
        )

    assert raised.value.cause == "timeout"
    assert time.monotonic() - started < 3


def test_a_server_that_is_down_is_unreachable(settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    down = Endpoint(base_url=f"http://127.0.0.1:{free_port()}/v1", model="demo")

    failure, _ = failure_of(down, "Hello?")
    assert failure.cause == "unreachable"

    with pytest.raises(ChatFailure) as raised:
        run_closing(
            complete_reply(down, [{"role": "user", "content": "Hello?"}], policy=call_policy())
        )
    assert raised.value.cause == "unreachable"


def test_a_host_name_that_does_not_resolve_is_unreachable():
    failure, _ = failure_of(Endpoint(base_url="https://no-such-host.invalid/v1", model="m"), "Hi")
    assert failure.cause == "unreachable"


def test_an_unknown_model_error_is_rejected(endpoint):
    # The demo server refuses a request without a model, as a hosted API
    # refuses one it does not know.
    failure, _ = failure_of(Endpoint(base_url=endpoint.base_url, model=""), "Hi")
    assert failure.cause == "rejected"


def test_a_server_that_hangs_up_without_answering_broke_the_answer(settings):
    """It accepted the connection, so it was reachable; never a hang, never a 500."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    settings.LLM_MAX_RETRIES = 0
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        async def hang_up():
            loop = asyncio.get_running_loop()
            conversation = asyncio.ensure_future(
                complete_reply(
                    Endpoint(base_url=f"http://127.0.0.1:{port}/v1", model="m"),
                    [{"role": "user", "content": "Hi"}],
                    policy=call_policy(),
                )
            )
            connection, _ = await loop.sock_accept(listener)
            connection.close()
            return await asyncio.gather(conversation, return_exceptions=True)

        listener.setblocking(False)
        [outcome] = run_closing(hang_up())
    assert isinstance(outcome, ChatFailure)
    assert outcome.cause == "stream_broken"


def test_every_cause_has_a_message_for_the_participant():
    # The chat words the client's causes (surveys/views/chat_panel.py).
    for cause in CAUSES:
        ChatFailure(cause, "partial")
        message = str(FAILURE_MESSAGES[cause])
        assert message and "http" not in message.lower()
    with pytest.raises(ValueError):
        ChatFailure("something_else")


def test_messages_are_translated(settings):
    from django.utils import translation

    with translation.override("de"):
        german = str(failure_message("timeout"))
    with translation.override("fr"):
        french = str(failure_message("timeout"))
    english = str(failure_message("timeout"))
    assert len({english, german, french}) == 3


def test_a_failure_survives_pickling_with_its_partial_text():
    import pickle

    failure = pickle.loads(pickle.dumps(ChatFailure("stream_broken", "Half an ans")))
    assert (failure.cause, failure.partial_text) == ("stream_broken", "Half an ans")
