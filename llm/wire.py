"""What the client sends to a chat server and how it reads what comes back,
apart from the call itself (llm/client.py).

Servers that speak "the OpenAI API" differ: vLLM, llama.cpp and Ollama know
only `max_tokens`, OpenAI's reasoning models only `max_completion_tokens`;
older Azure API versions refuse `stream_options`; some answer a streamed
request with one JSON completion. The rules here are what the platform
does about each (docs/design/systems.md §10.1); tests/llm_quirks.py plays them.
"""

import asyncio
import contextlib
import email.utils
import json
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import aiohttp
import httpx2
import openai

from llm.endpoints import UnresolvableHost, UnsafeEndpoint
from llm.policy import CallPolicy
from llm.sse import DONE, JSONObject, TooLong, chat_chunks

TOKEN_PARAMETERS = ("max_tokens", "max_completion_tokens")
# The body fields the platform decides: a coordinator's extra fields may add
# to the request, never change what is asked or how the answer comes back.
RESERVED_FIELDS = frozenset({"model", "messages", "stream", "stream_options", *TOKEN_PARAMETERS})

# Waiting longer than this between two tries, with no Retry-After asked, only
# keeps the participant waiting.
_MAX_BACKOFF_SECONDS = 8.0


class SystemFields(Protocol):
    """What `Endpoint.of` reads: an LLMSystem's fields (llm imports no model)."""

    @property
    def base_url(self) -> str: ...
    @property
    def model_name(self) -> str: ...
    @property
    def api_key_env(self) -> str: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def temperature(self) -> float | None: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def token_parameter(self) -> str: ...
    @property
    def stream_usage(self) -> bool: ...
    @property
    def extra_body(self) -> Mapping[str, Any] | None: ...
    @property
    def idle_timeout_seconds(self) -> float | None: ...
    @property
    def answer_timeout_seconds(self) -> float | None: ...
    @property
    def max_answer_chars(self) -> int: ...


@dataclass(frozen=True)
class Endpoint:
    """A connected system as the client calls it (re-exported by llm/client.py)."""

    base_url: str
    model: str
    api_key_env: str = ""
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    # The study the system belongs to: a key variable may be reserved to some
    # studies (CallPolicy.keys).
    study: str = ""
    # How this server wants the request (surveys/models/connection_fields.py).
    token_parameter: str = "max_tokens"
    stream_usage: bool = True
    extra_body: JSONObject = field(default_factory=dict, hash=False)
    # None: the policy's (CallPolicy.idle_timeout, .answer_timeout).
    idle_timeout: float | None = None
    answer_timeout: float | None = None
    max_answer_chars: int = 1_000_000

    @classmethod
    def of(cls, system: SystemFields) -> "Endpoint":
        """From an LLMSystem, or anything with its field names."""
        return cls(
            base_url=system.base_url,
            model=system.model_name,
            api_key_env=system.api_key_env,
            system_prompt=system.system_prompt,
            temperature=system.temperature,
            max_tokens=system.max_tokens,
            study=getattr(getattr(system, "study", None), "slug", ""),
            token_parameter=system.token_parameter,
            stream_usage=system.stream_usage,
            extra_body=dict(system.extra_body or {}),
            idle_timeout=system.idle_timeout_seconds,
            answer_timeout=system.answer_timeout_seconds,
            max_answer_chars=system.max_answer_chars,
        )


def request_body(endpoint: Endpoint, messages: list[dict[str, str]], *, stream: bool) -> JSONObject:
    """The request's JSON body, built here rather than by the client's typed
    `create`, whose transform walks every message of the history again on
    every call (about a tenth of an answer's CPU at five messages, growing
    with the conversation): the body is plain JSON either way."""
    if endpoint.system_prompt.strip():
        messages = [{"role": "system", "content": endpoint.system_prompt}, *messages]
    extra = {k: v for k, v in (endpoint.extra_body or {}).items() if k not in RESERVED_FIELDS}
    request: JSONObject = {"model": endpoint.model, "messages": messages, **extra}
    if endpoint.temperature is not None:
        request["temperature"] = endpoint.temperature
    if endpoint.max_tokens is not None:
        name = endpoint.token_parameter
        request[name if name in TOKEN_PARAMETERS else "max_tokens"] = endpoint.max_tokens
    if stream:
        request["stream"] = True
        if endpoint.stream_usage:
            request["stream_options"] = {"include_usage": True}
    return request


def text_of(content: object) -> str:
    """A delta's or message's text as the server sent it ("" when it sent none).

    Control characters are left in: the chat takes them out where it stores
    the answer, and records how many (surveys.protocol.chat_rules.cleaned),
    so nothing is altered without a trace."""
    return content if isinstance(content, str) else ""


def media_type(response: httpx2.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


def may_retry(error: Exception) -> bool:
    """Only what a second try can change, and never once the answer began
    (the caller retries only around the request, before any of the body)."""
    if isinstance(error, openai.APIStatusError):
        return error.status_code in (408, 409, 429) or error.status_code >= 500
    if isinstance(error, openai.APITimeoutError):
        # The idle limit was spent waiting already; waiting again doubles it.
        return False
    if isinstance(error, openai.APIConnectionError):
        return not any(isinstance(link, UnsafeEndpoint | UnresolvableHost) for link in chain(error))
    return False


def retry_delay(error: Exception, attempt: int) -> float:
    """The wait the server asked for, else a short backoff."""
    if isinstance(error, openai.APIStatusError):
        requested = requested_delay(error.response.headers)
        if requested is not None:
            return requested
    return min(0.5 * 2.0**attempt, _MAX_BACKOFF_SECONDS)


def requested_delay(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms` (OpenAI's) or `Retry-After` (seconds or a date)."""
    with contextlib.suppress(TypeError, ValueError):
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            return max(0.0, float(milliseconds) / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    with contextlib.suppress(TypeError, ValueError, IndexError):
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return None


def cause_of(error: Exception, response_started: bool) -> str:
    # The client wraps the transport's error, which wraps aiohttp's: the
    # first in that chain is the one that says what happened.
    links = list(chain(error))
    if any(isinstance(link, UnresolvableHost) for link in links):
        return "unreachable"
    # Refused by the connection pool's own check (llm/transport.py).
    if any(isinstance(link, UnsafeEndpoint) for link in links):
        return "refused_url"
    if isinstance(error, TooLong):
        return "too_long"
    transport = next((link for link in links if isinstance(link, aiohttp.ClientError)), None)
    if transport is not None:
        return _transport_cause(transport, response_started)
    if isinstance(error, TimeoutError | openai.APITimeoutError | httpx2.TimeoutException):
        return "timeout"
    if isinstance(error, openai.RateLimitError):
        return "rate_limited"
    if isinstance(error, openai.APIStatusError):
        return "server_error" if error.status_code >= 500 else "rejected"
    if isinstance(error, openai.APIConnectionError | httpx2.TransportError):
        return "stream_broken"
    # An error event inside the stream, or an answer that is not JSON.
    return "server_error"


def _transport_cause(error: aiohttp.ClientError, response_started: bool) -> str:
    if isinstance(error, TimeoutError):
        return "timeout"
    # Only a connection that was never made means the server was not there;
    # a connection that closed or broke before or during the answer, broke off.
    if isinstance(error, aiohttp.ClientConnectorError) and not response_started:
        return "unreachable"
    return "stream_broken"


class Limits:
    """The idle limit for each wait, within the answer's own deadline."""

    def __init__(self, endpoint: Endpoint, policy: CallPolicy) -> None:
        self.loop = asyncio.get_running_loop()
        self.idle = float(endpoint.idle_timeout or policy.idle_timeout)
        answer = float(endpoint.answer_timeout or policy.answer_timeout)
        self.deadline = self.loop.time() + answer

    def wait(self, idle: bool = True) -> asyncio.Timeout:
        # Each wait for the server, never the caller's own work between two deltas.
        if not idle:
            return asyncio.timeout_at(self.deadline)
        return asyncio.timeout_at(min(self.loop.time() + self.idle, self.deadline))

    def left(self) -> float:
        return self.deadline - self.loop.time()


async def send(
    client: openai.AsyncOpenAI, body: JSONObject, limits: Limits, *, idle: bool, max_retries: int
) -> httpx2.Response:
    """The request, with the platform's own retries (at most `max_retries`):
    only before the answer began, and only when the wait the server asks for
    fits both the idle limit and the time left; else the true cause is
    reported at once."""
    attempt = 0
    while True:
        try:
            async with limits.wait(idle):
                return await client.post(
                    "/chat/completions", body=body, cast_to=httpx2.Response, stream=True
                )
        except openai.OpenAIError as error:
            if attempt >= max_retries or not may_retry(error):
                raise
            delay = retry_delay(error, attempt)
            if delay > min(limits.idle, limits.left()):
                raise
        await asyncio.sleep(delay)
        attempt += 1


def max_body_bytes(endpoint: Endpoint) -> int:
    # JSON may spell one character in up to 12 bytes (an escaped surrogate
    # pair); the rest is the envelope around it.
    return 12 * endpoint.max_answer_chars + 64 * 1024


class NotAnAnswer(ValueError):
    """A 200 reply that is neither an event stream nor a chat completion."""


async def answer_chunks(response: httpx2.Response, endpoint: Endpoint) -> AsyncIterator[JSONObject]:
    """The answer's chunks, then `DONE` if the server said the answer was over.

    A server that ignored `stream` and sent one JSON completion gives that as
    the one chunk; a sign-in or error page sent with a 200 is no answer."""
    kind = media_type(response)
    if kind == "application/json":
        yield as_chunk(await read_json(response, endpoint))
        yield DONE
    elif kind in ("text/event-stream", ""):
        async for chunk in chat_chunks(response.aiter_bytes(), max_line=max_body_bytes(endpoint)):
            yield chunk
    else:
        raise NotAnAnswer(kind)


async def read_json(response: httpx2.Response, endpoint: Endpoint) -> JSONObject:
    """A JSON body, refused once it passes what an answer within the cap can
    take, before it is held in memory whole."""
    limit = max_body_bytes(endpoint)
    with contextlib.suppress(ValueError):
        if int(response.headers.get("content-length", "0")) > limit:
            raise TooLong("body")
    parts: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        size += len(piece)
        if size > limit:
            raise TooLong("body")
        parts.append(piece)
    data = json.loads(b"".join(parts))
    if not isinstance(data, dict) or "error" in data:
        raise NotAnAnswer("error object")
    return data


def as_chunk(completion: JSONObject) -> JSONObject:
    """A whole completion as the one chunk of a stream, so that both are held
    to the same rules."""
    choices = completion.get("choices")
    if not choices or not isinstance(choices[0], dict):
        raise NotAnAnswer("no choices")
    return {**completion, "choices": [{**choices[0], "delta": choices[0].get("message") or {}}]}


class StreamedAnswer:
    """What has streamed so far, and what the server said about it."""

    def __init__(self, max_chars: int):
        self.parts: list[str] = []
        self.length = 0
        self.max_chars = max_chars
        self.cut = False
        self.model = ""
        self.finish_reason = ""
        self.usage: JSONObject = {}
        self.first_token_ms: int | None = None
        # What came instead of text, if anything: for the log of a `no_text`.
        self.instead = ""

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def take(self, chunk: JSONObject, started: float) -> list[str]:
        self.model = chunk.get("model") or self.model
        self.usage = chunk.get("usage") or self.usage
        deltas: list[str] = []
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or {}
            content = text_of(delta.get("content"))
            if content and not self.cut:
                if self.first_token_ms is None:
                    self.first_token_ms = round((time.monotonic() - started) * 1000)
                room = self.max_chars - self.length
                self.cut = len(content) > room
                content = content[:room]
                if content:
                    self.parts.append(content)
                    self.length += len(content)
                    deltas.append(content)
            for kind in ("reasoning_content", "reasoning", "tool_calls", "function_call"):
                if delta.get(kind):
                    self.instead = kind
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
        return deltas


def chain(error: BaseException | None) -> Iterator[BaseException]:
    while error is not None:
        yield error
        error = error.__cause__
