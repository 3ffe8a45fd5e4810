"""What the client refuses before any request leaves (docs/design/systems.md §10.1), and
where the API key may never appear.

Refusals are tested against the demo server on loopback with loopback calls
forbidden by setting: had the guard been removed, the request would reach
the server (and the test would see it counted), never a private address.
"""

import logging
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from llm.client import ChatFailure, Endpoint, Reply, complete_reply, stream_reply
from surveys.llm_policy import call_policy
from tests.llm_server import chat_requests, run_closing, running_demo_server

SECRET = "sk-test-7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4"


async def _stream(endpoint: Endpoint) -> Reply:
    async for item in stream_reply(
        endpoint, [{"role": "user", "content": "Hello"}], policy=call_policy()
    ):
        if isinstance(item, Reply):
            return item
    raise AssertionError("no Reply")


def streamed(endpoint: Endpoint) -> Reply:
    return run_closing(_stream(endpoint))


def failed(call, endpoint: Endpoint) -> ChatFailure:
    with pytest.raises(ChatFailure) as raised:
        if call == "stream":
            streamed(endpoint)
        else:
            run_closing(
                complete_reply(
                    endpoint, [{"role": "user", "content": "Hello"}], policy=call_policy()
                )
            )
    return raised.value


@pytest.mark.parametrize("call", ["stream", "complete"])
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/v1",
        "http://localhost:{port}/v1",
        "http://[::ffff:127.0.0.1]:{port}/v1",
    ],
)
def test_loopback_is_refused_before_any_request_without_its_setting(
    llm_server, settings, call, url
):
    settings.LLM_ALLOW_HTTP_LOOPBACK = False
    port = llm_server.rsplit(":", 1)[1].split("/")[0]
    before = chat_requests(llm_server)

    failure = failed(call, Endpoint(base_url=url.format(port=port), model="demo"))

    assert failure.cause == "refused_url"
    assert chat_requests(llm_server) == before


@pytest.mark.parametrize("call", ["stream", "complete"])
def test_credentials_in_the_url_are_refused_before_any_request(llm_server, settings, call):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    url = llm_server.replace("http://", "http://user:pass@")
    before = chat_requests(llm_server)

    assert failed(call, Endpoint(base_url=url, model="demo")).cause == "refused_url"
    assert chat_requests(llm_server) == before


def test_the_check_runs_at_call_time_not_only_when_saved(llm_server, settings):
    # Given a system that was allowed when it was saved
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    endpoint = Endpoint(base_url=llm_server, model="demo")
    assert streamed(endpoint).text

    # When the platform's policy changes, the next call is refused
    settings.LLM_ALLOW_HTTP_LOOPBACK = False
    assert failed("stream", endpoint).cause == "refused_url"


class _Redirect(BaseHTTPRequestHandler):
    target = ""

    def do_POST(self):
        self.send_response(307)
        self.send_header("Location", self.target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("call", ["stream", "complete"])
def test_redirects_are_not_followed(llm_server, settings, call):
    """A checked server could send the client on to an address nobody checked."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    handler = type("Redirect", (_Redirect,), {"target": llm_server + "/chat/completions"})
    redirector = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=redirector.serve_forever, daemon=True).start()
    before = chat_requests(llm_server)
    try:
        endpoint = Endpoint(base_url=f"http://127.0.0.1:{redirector.server_port}/v1", model="m")
        failure = failed(call, endpoint)
    finally:
        redirector.shutdown()
        redirector.server_close()
    assert failure.cause == "rejected"
    assert chat_requests(llm_server) == before


@pytest.fixture(scope="module")
def keyed_server():
    """A demo server that wants a key, and quotes a wrong one back, as some APIs do."""
    with running_demo_server("--api-key-env", "DEMO_REQUIRED_KEY", env={
        "DEMO_REQUIRED_KEY": SECRET
    }) as server:  # fmt: skip
        yield server.base_url


def test_the_key_is_read_from_the_named_variable_at_call_time(keyed_server, settings, monkeypatch):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    endpoint = Endpoint(base_url=keyed_server, model="demo", api_key_env="SHS_LLM_KEY_TEST")

    monkeypatch.setenv("SHS_LLM_KEY_TEST", SECRET)
    assert streamed(endpoint).finish_reason == "stop"

    monkeypatch.setenv("SHS_LLM_KEY_TEST", "sk-wrong-" + SECRET[::-1])
    assert failed("stream", endpoint).cause == "rejected"


@pytest.mark.parametrize("call", ["stream", "complete"])
def test_a_missing_key_is_reported_before_any_request(llm_server, settings, monkeypatch, call):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    monkeypatch.delenv("SHS_LLM_KEY_TEST_UNSET", raising=False)
    before = chat_requests(llm_server)

    endpoint = Endpoint(base_url=llm_server, model="demo", api_key_env="SHS_LLM_KEY_TEST_UNSET")

    assert failed(call, endpoint).cause == "no_api_key"
    assert chat_requests(llm_server) == before


def _all_text_of(failure: ChatFailure) -> str:
    return "\n".join(
        [
            str(failure),
            repr(failure),
            failure.partial_text,
            "".join(traceback.format_exception(failure)),
        ]
    )


@pytest.mark.parametrize("call", ["stream", "complete"])
@pytest.mark.parametrize(
    ("server", "prompt", "cause"),
    [
        ("keyed", "Hello", "rejected"),
        ("plain", "Hello [500]", "server_error"),
        ("plain", "Hello [drop]", "stream_broken"),
        ("plain", "Hello [429]", "rate_limited"),
    ],
)
def test_the_key_appears_in_no_log_and_no_failure(
    keyed_server, llm_server, settings, monkeypatch, caplog, call, server, prompt, cause
):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    # The keyed server wants another key, and its refusal quotes the one sent.
    monkeypatch.setenv("SHS_LLM_KEY_TEST", SECRET + "-wrong")
    base_url = keyed_server if server == "keyed" else llm_server
    endpoint = Endpoint(base_url=base_url, model="demo", api_key_env="SHS_LLM_KEY_TEST")
    caplog.set_level(logging.DEBUG)

    with pytest.raises(ChatFailure) as raised:
        if call == "stream":
            run_closing(_consume(endpoint, prompt))
        else:
            run_closing(
                complete_reply(
                    endpoint, [{"role": "user", "content": prompt}], policy=call_policy()
                )
            )

    failure = raised.value
    assert failure.cause == cause
    assert SECRET not in _all_text_of(failure)
    logged = "\n".join(record.getMessage() + str(record.args) for record in caplog.records)
    assert caplog.records, "the failure is logged"
    assert SECRET not in logged


async def _consume(endpoint: Endpoint, prompt: str) -> None:
    async for _item in stream_reply(
        endpoint, [{"role": "user", "content": prompt}], policy=call_policy()
    ):
        pass
