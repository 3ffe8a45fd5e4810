"""A chat server with the quirks of real ones, for conformance tests of the client.

    python -m tests.llm_quirks --port 8002

Servers that speak "the OpenAI API" (OpenAI, Azure, vLLM, llama.cpp, Ollama,
LiteLLM) differ in what they accept and in how they stream. Each behaviour
here is one quirk, chosen by the first path segment: a system whose base URL
is http://127.0.0.1:8002/done_keepalive/v1 meets a server that keeps the body
open after [DONE]. `ok` is a well-behaved server; the answer quotes the last
user message, so it is known in advance (`answer_for`).

tests/llm_quirks_client.py starts it for a test. GET /_requests lists the
chat requests received (quirk, path, lower-cased headers, JSON body), newest
last; GET /_in_flight tells how many it is
answering now and at most since POST /_reset, which forgets both.

Standard library only, one thread per connection, like llm/demo_server.py.
"""

import argparse
import gzip
import hashlib
import json
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# slow_tokens: each gap is short, the whole answer long.
SLOW_TOKEN_SECONDS = 0.3
SLOW_TOKENS = 12
# stall and done_keepalive: how long the body stays open with nothing sent.
HOLD_SECONDS = 60
HUGE_CHARS = 210 * 1024
TOKENS_BEFORE_TROUBLE = 3
ODD_TEXT = {
    # C0 controls a terminal or a database would take badly.
    "nul": "Zero \x00 bell \x07 escape \x1b[31m tab\tand newline\n end.",
    # An override and an isolate, as a spoofed file name would carry them.
    "bidi": "File: \u202egpj.exe\u202c and \u2066isolated\u2069 text.",
}
QUIRKS = (
    "ok", "strict_alternation", "slow_tokens", "stall", "retry_after_long", "retry_after_short",
    "empty_data", "done_keepalive", "done_no_finish", "reasoning_only", "tool_calls_only",
    "html_200", "json_when_stream", "endless", "huge", "nul", "bidi",
    "max_completion_tokens_only", "no_stream_options", "azure_empty_first", "error_mid_stream",
    "crlf", "gzip", "comments",
)  # fmt: skip


def answer_for(messages: list[dict]) -> str:
    user_turns = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    prompt = str(user_turns[-1].get("content", "")) if user_turns else ""
    return f'You wrote: "{prompt}". This is the quirks server, answering in a few words.'


def answer_text(quirk: str, messages: list[dict]) -> str:
    """The whole answer a quirk sends to this conversation."""
    text = ODD_TEXT.get(quirk) or answer_for(messages)
    if quirk == "huge":
        text = (text + " ") * (HUGE_CHARS // (len(text) + 1) + 1)
    if quirk == "slow_tokens":
        text = "".join(words_of(text)[:SLOW_TOKENS])
    return text


def words_of(text: str) -> list[str]:
    words = text.split(" ")
    return [word + " " for word in words[:-1]] + [words[-1]]


class QuirkHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 (the stdlib's signature)
        pass

    def do_GET(self):
        if self.path == "/healthz":
            self._json(200, {"status": "ok"})
        elif self.path == "/_requests":
            self._json(200, self.server.recorded())
        elif self.path == "/_in_flight":
            self._json(200, self.server.in_flight())
        else:
            self._error(404, "No such route.")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/_reset":
            self.server.reset()
            self._json(200, {"reset": True})
            return
        quirk, _, rest = self.path.lstrip("/").partition("/")
        if quirk not in QUIRKS or rest.rstrip("/") != "v1/chat/completions":
            self._error(404, "No such route.")
            return
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        self.server.record(quirk, self.path, self.headers, request)
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            self._error(400, "Need model and messages.")
            return
        self.server.answering_more(1)
        try:
            self._answer(quirk, request)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client hung up, as it may
        finally:
            self.server.answering_more(-1)

    def _answer(self, quirk: str, request: dict) -> None:
        stream = bool(request.get("stream"))
        if refusal := self._refusal(quirk, request):
            return self._error(*refusal)
        text = answer_text(quirk, request["messages"])
        if quirk == "html_200":
            self._send(200, b"<html><body><form>Sign in</form></body></html>", "text/html")
        elif quirk == "endless":
            self._endless(request, stream)
        elif quirk == "json_when_stream" or not stream:
            self._json(200, self._completion(quirk, request, text))
        elif quirk == "gzip":
            events = self._events(quirk, request, text)
            self._send(200, gzip.compress(b"".join(events)), "text/event-stream", zipped=True)
        else:
            self._stream(quirk, request, text)

    def _refusal(self, quirk: str, request: dict) -> tuple | None:
        if quirk == "retry_after_long":
            return 429, "Rate limit reached.", {"Retry-After": "120"}
        if quirk == "retry_after_short" and self.server.first_time(request["messages"]):
            return 429, "Rate limit reached.", {"Retry-After": "1"}
        if quirk == "strict_alternation" and not _alternates(request["messages"]):
            # The words of the chat templates of Mistral and Llama 2.
            return 400, "Conversation roles must alternate user/assistant/user/assistant/..."
        if quirk == "max_completion_tokens_only" and "max_tokens" in request:
            return 400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens'."
        if quirk == "no_stream_options" and "stream_options" in request:
            return 400, "Unrecognized request argument supplied: stream_options"
        return None

    def _completion(self, quirk: str, request: dict, text: str) -> dict:
        message, finish = {"role": "assistant", "content": text}, "stop"
        if quirk == "reasoning_only":
            message = {"role": "assistant", "content": None, "reasoning_content": text}
            finish = "length"
        elif quirk == "tool_calls_only":
            message = {"role": "assistant", "content": None, "tool_calls": [_TOOL_CALL]}
            finish = "tool_calls"
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return {**_envelope(request, "chat.completion"), "choices": [choice], "usage": _USAGE}

    def _events(self, quirk: str, request: dict, text: str) -> list[bytes]:
        """The whole stream of a quirk that sends it at once."""
        chunks: list[dict] = []
        if quirk == "azure_empty_first":
            chunks.append({**_envelope(request), "choices": [], "prompt_filter_results": []})
        finish = None if quirk == "done_no_finish" else "stop"
        if quirk == "reasoning_only":
            deltas = [{"reasoning_content": word, "reasoning": word} for word in words_of(text)]
            finish = "length"
        elif quirk == "tool_calls_only":
            deltas, finish = [{"content": None, "tool_calls": [_TOOL_CALL]}], "tool_calls"
        elif quirk == "huge":
            deltas = [{"content": text[i : i + 1000]} for i in range(0, len(text), 1000)]
        else:
            deltas = [{"content": word} for word in words_of(text)]
        chunks += [_choice(request, delta) for delta in deltas]
        chunks.append(_choice(request, {}, finish))
        if (request.get("stream_options") or {}).get("include_usage"):
            chunks.append({**_envelope(request), "choices": [], "usage": _USAGE})
        end = b"\r\n" if quirk == "crlf" else b"\n"
        between = {"empty_data": b"data:" + end + end + b"data: " + end + end}.get(quirk, b"")
        if quirk == "comments":
            between = b": keep-alive" + end + end
        events = [between + b"data: " + json.dumps(c).encode() + end + end for c in chunks]
        return [*events, b"data: [DONE]" + end + end]

    def _stream(self, quirk: str, request: dict, text: str) -> None:
        self._start_stream()
        events = self._events(quirk, request, text)
        if quirk in ("stall", "error_mid_stream"):
            # A few tokens, then the trouble.
            events = events[:TOKENS_BEFORE_TROUBLE]
        for event in events:
            if quirk == "slow_tokens" and b'"content"' in event:
                time.sleep(SLOW_TOKEN_SECONDS)
            self._chunk(event)
        if quirk == "error_mid_stream":
            error = {"error": {"message": "The model is overloaded.", "type": "server_error"}}
            self._chunk(b"data: " + json.dumps(error).encode() + b"\n\n")
        if quirk in ("stall", "done_keepalive"):
            self._hold()
        self._chunk(b"")

    def _endless(self, request: dict, stream: bool) -> None:
        self._start_stream("text/event-stream" if stream else "application/json")
        if not stream:
            self._chunk(b'{"choices": [{"index": 0, "message": {"content": "')
        word = 0
        while True:
            piece = f"word{word} "
            word += 1
            if stream:
                self._chunk(b"data: " + json.dumps(_choice(request, {"content": piece})).encode())
                self._chunk(b"\n\n")
            else:
                self._chunk(piece.encode())

    def _hold(self) -> None:
        """Send nothing, until the client hangs up (or a minute passes)."""
        until = time.monotonic() + HOLD_SECONDS
        while time.monotonic() < until and not self.server.closing.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                self.close_connection = True
                return

    def _start_stream(self, kind: str = "text/event-stream") -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _send(self, status: int, body: bytes, kind: str, headers=None, zipped=False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in ({"Content-Encoding": "gzip"} if zipped else headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload, headers=None) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers)

    def _error(self, status: int, message: str, headers=None) -> None:
        kind = {429: "rate_limit_exceeded", 404: "not_found"}.get(status, "invalid_request_error")
        error = {"message": message, "type": kind, "param": None, "code": kind}
        self._json(status, {"error": error}, headers)


_TOOL_CALL = {"index": 0, "id": "call_0", "type": "function"}
_TOOL_CALL["function"] = {"name": "lookup", "arguments": "{}"}
_USAGE = {"prompt_tokens": 7, "completion_tokens": 11, "total_tokens": 18}


def _envelope(request: dict, kind: str = "chat.completion.chunk") -> dict:
    model = request.get("model") or "quirk"
    return {"id": "chatcmpl-quirk", "object": kind, "created": 0, "model": model}


def _choice(request: dict, delta: dict, finish: str | None = None) -> dict:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {**_envelope(request), "choices": [choice]}


def _alternates(messages: list[dict]) -> bool:
    roles = [m.get("role") for m in messages if isinstance(m, dict)]
    if roles[:1] == ["system"]:
        roles = roles[1:]
    expected = ["user", "assistant"] * len(roles)
    return bool(roles) and roles == expected[: len(roles)] and roles[-1] == "user"


class QuirkServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address):
        super().__init__(address, QuirkHandler)
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.requests: list[dict] = []
            self.seen: set[str] = set()
            # An answer still going on (a held stream) stays counted.
            self.answering = getattr(self, "answering", 0)
            self.answering_max = self.answering

    def record(self, quirk: str, path: str, headers, body) -> None:
        entry = {"quirk": quirk, "path": path, "body": body}
        entry["headers"] = {name.lower(): value for name, value in headers.items()}
        with self.lock:
            self.requests.append(entry)

    def recorded(self) -> list[dict]:
        with self.lock:
            return list(self.requests)

    def first_time(self, messages: list[dict]) -> bool:
        """Whether this conversation is new to the server."""
        key = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        with self.lock:
            new = key not in self.seen
            self.seen.add(key)
        return new

    def answering_more(self, change: int) -> None:
        with self.lock:
            self.answering += change
            self.answering_max = max(self.answering_max, self.answering)

    def in_flight(self) -> dict:
        with self.lock:
            return {"now": self.answering, "max": self.answering_max}

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8002)
    options = parser.parse_args(argv)
    server = QuirkServer((options.host, options.port))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.closing.set()
        server.server_close()


if __name__ == "__main__":
    main()
