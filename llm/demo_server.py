"""A small OpenAI-compatible chat server for the demo and the tests
(docs/design/transcripts.md §10.5).

    python -m llm.demo_server --port 8001 [--host 127.0.0.1] [--delay SECONDS]
                              [--api-key-env NAME] [--slow SECONDS]

It is not a language model: the answer is a fixed function of the
conversation (a few sentences chosen by a hash of the last user message,
which it quotes), so tests can predict it and a newcomer can chat right
after `make run` with no key and no internet. The platform calls it through
the same code as a hosted API (llm/client.py).

Endpoints: POST /v1/chat/completions (`stream` true or false; streamed as
server-sent events ending in `data: [DONE]`, with a usage chunk when
`stream_options.include_usage` is set), GET /v1/models, GET /healthz, and
GET /stats (how many chat requests it received, for the retry tests).

The model name it reports is the one the request asked for. `max_tokens`
cuts the answer (finish_reason "length"); a word counts as a token.
`--delay` spreads that many seconds over each answer, so streaming shows
(the benchmark uses 2). With `--api-key-env NAME` a request must bring the
key held by that environment variable (never on the command line, where
`ps` would show it).

Faults, chosen per request by a marker in the last user message:
  [slow]    answers only after --slow seconds (default 30): for timeouts
  [429]     HTTP 429 with an OpenAI-style error body
  [500]     HTTP 500 with an OpenAI-style error body
  [drop]    the stream breaks mid-answer: the connection closes after a few chunks
  [filter]  a partial answer, then finish_reason "content_filter"

Standard library only, one thread per connection: it holds hundreds of
concurrent streams and never imports Django.
"""

import argparse
import hashlib
import json
import os
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A JSON object as a client sent it (llm.sse has the same; this module
# imports nothing of the platform).
JSONObject = dict[str, Any]

SENTENCES = (
    "This is the demo model of the SHS study platform, not a real language model.",
    "Its answers are put together from a fixed set of sentences, the same every time.",
    "Verified knowledge means a claim you could check against a reliable source.",
    "A hallucination is a fluent answer that is not supported by any source.",
    "Ask a follow-up question to see whether the answer stays consistent.",
    "You can request a source, and the demo model will not be able to give one.",
    "Challenging an answer is part of the protocol: try it on this one.",
    "The paper's instrument rates how trustworthy the answers of a system felt.",
    "Every turn of this conversation is kept in the session's transcript.",
    "Real systems answer in many ways; this one answers in just a few.",
)
FAULTS = ("[slow]", "[429]", "[500]", "[drop]", "[filter]")
# A conversation of a study is a few pages of text.
MAX_BODY_BYTES = 4 * 1024 * 1024
# Chunks sent before a [drop] breaks the stream or a [filter] stops it.
PARTIAL_CHUNKS = 6


def answer_words(messages: list[JSONObject]) -> list[str]:
    """The answer to a conversation, word by word (each with its trailing space)."""
    user_turns = [m for m in messages if m.get("role") == "user"]
    prompt = str(user_turns[-1].get("content", "")) if user_turns else ""
    digest = hashlib.sha256(prompt.encode()).digest()
    quoted = " ".join(prompt.split()[:8]) or "nothing"
    sentences = [f'You wrote: "{quoted}".']
    if any(m.get("role") == "system" for m in messages):
        sentences.append("A system prompt is in effect.")
    sentences.append(f"This is turn {len(user_turns)} of our conversation.")
    # Three different sentences, in an order the prompt decides.
    ranked = sorted(range(len(SENTENCES)), key=lambda index: digest[index])
    sentences += [SENTENCES[index] for index in ranked[:3]]
    words = " ".join(sentences).split(" ")
    return [word + " " for word in words[:-1]] + [words[-1]]


def count_tokens(messages: list[JSONObject]) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in messages)


class DemoHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "SHSDemoLLM/1.0"
    server: "DemoServer"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the stdlib's signature)
        pass  # hundreds of benchmark requests a second: stay quiet

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self._send_json(HTTPStatus.OK, {"status": "ok"})
        elif self.path.rstrip("/") == "/v1/models":
            model = {"id": "shs-demo", "object": "model", "created": 0, "owned_by": "shs"}
            self._send_json(HTTPStatus.OK, {"object": "list", "data": [model]})
        elif self.path == "/stats":
            self._send_json(HTTPStatus.OK, {"chat_requests": self.server.chat_requests})
        else:
            self._send_error(HTTPStatus.NOT_FOUND, "not_found", f"No route {self.path}")

    def do_POST(self) -> None:
        body = self._read_body()
        if body is None:
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_error(HTTPStatus.NOT_FOUND, "not_found", f"No route {self.path}")
            return
        self.server.count_chat_request()
        request = self._parse_request(body)
        if request is None:
            return
        fault = _fault_of(request["messages"])
        if fault == "[slow]":
            time.sleep(self.server.slow_seconds)
        if fault in ("[429]", "[500]"):
            status = (
                HTTPStatus.TOO_MANY_REQUESTS
                if fault == "[429]"
                else HTTPStatus.INTERNAL_SERVER_ERROR
            )
            # A short Retry-After keeps the client's one retry quick.
            self._send_error(status, "demo_fault", f"Demo fault {fault}", {"retry-after-ms": "50"})
            return
        if request.get("stream"):
            self._stream(request, fault)
        else:
            self._complete(request, fault)

    def _read_body(self) -> bytes | None:
        """The whole body, read before any answer so the connection stays usable."""
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            self.close_connection = True
            self._send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "invalid_request", "Body size.")
            return None
        return self.rfile.read(length)

    def _parse_request(self, body: bytes) -> JSONObject | None:
        expected = self.server.api_key
        sent = self.headers.get("Authorization", "").removeprefix("Bearer ")
        if expected and sent != expected:
            # Quoted back, as some hosted APIs do: the platform must not pass it on.
            message = f"Incorrect API key provided: {sent}."
            self._send_error(HTTPStatus.UNAUTHORIZED, "invalid_api_key", message)
            return None
        try:
            request = json.loads(body)
            if not isinstance(request, dict):
                raise ValueError
            messages = request["messages"]
            well_formed = isinstance(messages, list) and all(isinstance(m, dict) for m in messages)
            if not (request.get("model") and well_formed):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            self._send_error(HTTPStatus.BAD_REQUEST, "invalid_request", "Need model and messages.")
            return None
        return request

    def _answer(self, request: JSONObject, fault: str | None) -> tuple[list[str], str]:
        words = answer_words(request["messages"])
        if fault == "[filter]":
            return words[:PARTIAL_CHUNKS], "content_filter"
        limit = request.get("max_tokens") or request.get("max_completion_tokens")
        if isinstance(limit, int) and 0 < limit < len(words):
            return words[:limit], "length"
        return words, "stop"

    def _complete(self, request: JSONObject, fault: str | None) -> None:
        words, finish_reason = self._answer(request, fault)
        time.sleep(self.server.delay)
        message = {"role": "assistant", "content": "".join(words)}
        body = _completion(request, "chat.completion")
        body["choices"] = [{"index": 0, "message": message, "finish_reason": finish_reason}]
        body["usage"] = _usage(request, words)
        if fault == "[drop]":
            # Announce the whole body, send half of it, hang up.
            encoded = json.dumps(body).encode()
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(encoded)))
            self.end_headers()
            self.wfile.write(encoded[: len(encoded) // 2])
            self.close_connection = True
            return
        self._send_json(HTTPStatus.OK, body)

    def _stream(self, request: JSONObject, fault: str | None) -> None:
        words, finish_reason = self._answer(request, fault)
        pause = self.server.delay / (len(words) + 1)
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            first = {
                "index": 0,
                "delta": {"role": "assistant", "content": ""},
                "finish_reason": None,
            }
            self._event(_chunk(request, [first]))
            for number, word in enumerate(words):
                if fault == "[drop]" and number == PARTIAL_CHUNKS:
                    # Mid-answer, without the chunked body's last chunk: the
                    # client sees a connection that broke, not an answer.
                    self.close_connection = True
                    return
                time.sleep(pause)
                delta = {"index": 0, "delta": {"content": word}, "finish_reason": None}
                self._event(_chunk(request, [delta]))
            time.sleep(pause)
            self._event(
                _chunk(request, [{"index": 0, "delta": {}, "finish_reason": finish_reason}])
            )
            if (request.get("stream_options") or {}).get("include_usage"):
                self._event({**_chunk(request, []), "usage": _usage(request, words)})
            self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away; nothing to tell it

    def _event(self, payload: JSONObject) -> None:
        self._write_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _send_json(
        self, status: HTTPStatus, payload: JSONObject, headers: dict[str, str] | None = None
    ) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_error(
        self, status: HTTPStatus, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        error = {"message": message, "type": code, "param": None, "code": code}
        self._send_json(status, {"error": error}, headers)


def _fault_of(messages: list[JSONObject]) -> str | None:
    user_turns = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    last = str(user_turns[-1].get("content", "")) if user_turns else ""
    return next((fault for fault in FAULTS if fault in last), None)


def _completion(request: JSONObject, kind: str) -> JSONObject:
    return {
        "id": "chatcmpl-demo",
        "object": kind,
        "created": int(time.time()),
        "model": request["model"],
    }


def _chunk(request: JSONObject, choices: list[JSONObject]) -> JSONObject:
    return {**_completion(request, "chat.completion.chunk"), "choices": choices}


def _usage(request: JSONObject, words: list[str]) -> JSONObject:
    prompt_tokens = count_tokens(request["messages"])
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": len(words),
        "total_tokens": prompt_tokens + len(words),
    }


class DemoServer(ThreadingHTTPServer):
    daemon_threads = True
    # The benchmark opens a few hundred connections at once.
    request_queue_size = 1024

    def __init__(
        self,
        address: tuple[str, int],
        *,
        delay: float = 0.0,
        slow_seconds: float = 30.0,
        api_key: str = "",
    ) -> None:
        super().__init__(address, DemoHandler)
        self.delay = delay
        self.slow_seconds = slow_seconds
        self.api_key = api_key
        self.chat_requests = 0
        self._lock = threading.Lock()

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: tuple[str, int]
    ) -> None:
        # A client that closes an idle kept-alive connection is no error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def count_chat_request(self) -> None:
        with self._lock:
            self.chat_requests += 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds spread over each answer")
    parser.add_argument("--slow", type=float, default=30.0, help="seconds a [slow] answer waits")
    parser.add_argument(
        "--api-key-env", default="", help="require the key in this variable (default: any key)"
    )
    options = parser.parse_args(argv)
    server = DemoServer(
        (options.host, options.port),
        delay=options.delay,
        slow_seconds=options.slow,
        api_key=os.environ[options.api_key_env] if options.api_key_env else "",
    )
    print(f"demo LLM server on http://{options.host}:{server.server_port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
