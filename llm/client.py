"""Calls to a connected system's OpenAI-compatible chat endpoint (docs/design.md §10).

One code path for hosted APIs, local model servers and the shipped demo
server (llm/demo_server.py), through the official `openai` client. The
caller gets the answer as it streams, then one `Reply` with what the API
reported; or a `ChatFailure` whose `cause` the transcript records and whose
`message` the participant reads. Nothing of the study is known here: the
package imports nothing from `surveys`, `scoring` or `exports`.

    async with contextlib.aclosing(stream_reply(Endpoint.of(system), messages)) as answer:
        async for piece in answer:          # str deltas, then one Reply
            ...
    # ChatFailure: .cause (one of CAUSES), .partial_text, .message

`aclosing` matters when the caller stops early (the participant left): it
closes the connection at once instead of when the generator is collected.

The API key is read from the environment at call time, under the *name* the
system stores; it is never logged and never part of an exception (failures
are raised `from None`, so not even the client's own exception, whose text
may quote a server's answer, travels with them).
"""

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import httpx2
import openai
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from llm.endpoints import UnresolvableHost, UnsafeEndpoint, check_base_url
from llm.keys import api_key as api_key_for
from llm.sse import chat_chunks
from llm.transport import checked_http_client

log = logging.getLogger(__name__)

CAUSES = (
    "unreachable",
    "timeout",
    "rate_limited",
    "server_error",
    "stream_broken",
    "content_filter",
    "rejected",
    "refused_url",
    "no_api_key",
)

# What the participant reads. The prompt they typed is kept by the chat, so
# every message that can end in "try again" does.
FAILURE_MESSAGES = {
    "unreachable": _("The system could not be reached. Please try again in a moment."),
    "timeout": _("The system took too long to answer. Please try again."),
    "rate_limited": _("The system is busy right now. Please wait a moment and try again."),
    "server_error": _("The system had a problem answering. Please try again."),
    "stream_broken": _("The answer broke off before it was complete. Please try again."),
    "content_filter": _(
        "The system's content filter stopped this answer. You can rephrase your message and "
        "try again."
    ),
    "rejected": _("The system refused the request. Please tell the experimenter."),
    "refused_url": _(
        "This system's address is not allowed by the platform. Please tell the experimenter."
    ),
    "no_api_key": _(
        "This system is not set up completely (its API key is missing). Please tell the "
        "experimenter."
    ),
}

# Local servers accept any key, but the client insists on one.
_KEYLESS = "no-key"


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key_env: str = ""
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    # The study the system belongs to: a key variable may be reserved to some
    # studies (settings.LLM_KEYS).
    study: str = ""
    # How this server wants the request (surveys/models/connection_fields.py).
    token_parameter: str = "max_tokens"
    stream_usage: bool = True
    extra_body: dict = field(default_factory=dict, hash=False)
    # None: the platform's defaults (settings.LLM_IDLE_TIMEOUT_SECONDS, ...).
    idle_timeout: float | None = None
    answer_timeout: float | None = None
    max_answer_chars: int = 1_000_000

    @classmethod
    def of(cls, system) -> "Endpoint":
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


@dataclass(frozen=True)
class Reply:
    """A complete answer, with what the API reported about it."""

    text: str
    model: str
    finish_reason: str
    prompt_tokens: int | None
    completion_tokens: int | None
    # Measured by the platform from the start of the call; a non-streamed
    # answer has no first token of its own.
    first_token_ms: int | None
    latency_ms: int


class ChatFailure(Exception):
    """A call that gave no complete answer; `partial_text` is what had arrived."""

    def __init__(self, cause: str, partial_text: str = ""):
        if cause not in CAUSES:
            raise ValueError(f"unknown failure cause {cause!r}")
        super().__init__(cause)
        self.cause = cause
        self.partial_text = partial_text
        self.message = str(FAILURE_MESSAGES[cause])

    def __repr__(self) -> str:
        return f"ChatFailure({self.cause!r}, partial_text={len(self.partial_text)} chars)"

    def __reduce__(self):
        # Survives pickling (a task queue) with its partial text.
        return (ChatFailure, (self.cause, self.partial_text))


async def stream_reply(endpoint: Endpoint, messages: list[dict]) -> AsyncIterator[str | Reply]:
    """Yield the answer's text as it arrives, then exactly one `Reply`."""
    started = time.monotonic()
    client = await _client_for(endpoint)
    deadline = asyncio.get_running_loop().time() + settings.LLM_TIMEOUT_SECONDS
    answer = _Answer()
    response_started = False
    try:
        async with contextlib.AsyncExitStack() as stack:
            # The deadline covers each wait for the server, never the caller's
            # own work between two deltas.
            async with asyncio.timeout_at(deadline):
                response = await client.post(
                    "/chat/completions",
                    body=_request(endpoint, messages, stream=True),
                    cast_to=httpx2.Response,
                    stream=True,
                )
            stack.push_async_callback(response.aclose)
            response_started = True
            chunks = aiter(chat_chunks(response.aiter_bytes()))
            while True:
                async with asyncio.timeout_at(deadline):
                    chunk = await anext(chunks, None)
                if chunk is None:
                    break
                for delta in answer.take(chunk, started):
                    yield delta
    except _CLIENT_ERRORS as error:
        raise _failure(error, answer.text, response_started=response_started) from None
    if not answer.finish_reason:
        # The connection ended cleanly but the server never said it was done.
        _log_failure("stream_broken", "no finish_reason")
        raise ChatFailure("stream_broken", answer.text)
    yield answer.reply(started)


async def complete_reply(endpoint: Endpoint, messages: list[dict]) -> Reply:
    """The whole answer in one response: for the chat without JavaScript."""
    started = time.monotonic()
    client = await _client_for(endpoint)
    try:
        async with asyncio.timeout(settings.LLM_TIMEOUT_SECONDS):
            completion = await client.chat.completions.create(
                **_request(endpoint, messages, stream=False)
            )
    except _CLIENT_ERRORS as error:
        raise _failure(error, "", response_started=False) from None
    if not completion.choices:
        _log_failure("server_error", "no choices")
        raise ChatFailure("server_error")
    choice = completion.choices[0]
    text = choice.message.content or ""
    if choice.finish_reason == "content_filter":
        _log_failure("content_filter", "finish_reason")
        raise ChatFailure("content_filter", text)
    usage = completion.usage
    return Reply(
        text=text,
        model=completion.model or "",
        finish_reason=choice.finish_reason or "",
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        first_token_ms=None,
        latency_ms=_ms_since(started),
    )


class _Answer:
    """What has streamed so far, and what the server said about it."""

    def __init__(self):
        self.parts: list[str] = []
        self.model = ""
        self.finish_reason = ""
        self.usage: dict = {}
        self.first_token_ms: int | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def take(self, chunk: dict, started: float) -> list[str]:
        self.model = chunk.get("model") or self.model
        self.usage = chunk.get("usage") or self.usage
        deltas = []
        for choice in chunk.get("choices") or ():
            content = (choice.get("delta") or {}).get("content")
            if content:
                if self.first_token_ms is None:
                    self.first_token_ms = _ms_since(started)
                self.parts.append(content)
                deltas.append(content)
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
        if self.finish_reason == "content_filter":
            _log_failure("content_filter", "finish_reason")
            raise ChatFailure("content_filter", self.text)
        return deltas

    def reply(self, started: float) -> Reply:
        return Reply(
            text=self.text,
            model=self.model,
            finish_reason=self.finish_reason,
            prompt_tokens=self.usage.get("prompt_tokens"),
            completion_tokens=self.usage.get("completion_tokens"),
            first_token_ms=self.first_token_ms,
            latency_ms=_ms_since(started),
        )


def _request(endpoint: Endpoint, messages: list[dict], *, stream: bool) -> dict:
    """The request's JSON body, built here rather than by the client's typed
    `create`, whose transform walks every message of the history again on
    every call (about a tenth of an answer's CPU at five messages, growing
    with the conversation): the body is plain JSON either way."""
    if endpoint.system_prompt.strip():
        messages = [{"role": "system", "content": endpoint.system_prompt}, *messages]
    request = {"model": endpoint.model, "messages": messages}
    if endpoint.temperature is not None:
        request["temperature"] = endpoint.temperature
    if endpoint.max_tokens is not None:
        # `max_tokens`, not `max_completion_tokens`: the local servers
        # (vLLM, llama.cpp, Ollama) know only the older name.
        request["max_tokens"] = endpoint.max_tokens
    if stream:
        request["stream"] = True
        request["stream_options"] = {"include_usage": True}
    return request


async def _client_for(endpoint: Endpoint) -> openai.AsyncOpenAI:
    api_key = _KEYLESS
    if endpoint.api_key_env:
        api_key = api_key_for(endpoint.api_key_env, endpoint.study)
        if not api_key:
            _log_failure("no_api_key", f"variable {endpoint.api_key_env} is not set")
            raise ChatFailure("no_api_key")
    try:
        # Resolving a name blocks; the event loop must not, nor wait for a
        # resolver longer than for a connection.
        await asyncio.wait_for(
            asyncio.to_thread(check_base_url, endpoint.base_url),
            settings.LLM_CONNECT_TIMEOUT_SECONDS,
        )
    except TimeoutError:
        _log_failure("timeout", "resolving the host name")
        raise ChatFailure("timeout") from None
    except UnresolvableHost:
        _log_failure("unreachable", "host name does not resolve")
        raise ChatFailure("unreachable") from None
    except UnsafeEndpoint as refusal:
        _log_failure("refused_url", str(refusal))
        raise ChatFailure("refused_url") from None
    return openai.AsyncOpenAI(
        api_key=api_key,
        base_url=endpoint.base_url,
        http_client=_http_client(),
        max_retries=settings.LLM_MAX_RETRIES,
        timeout=httpx2.Timeout(
            settings.LLM_TIMEOUT_SECONDS, connect=settings.LLM_CONNECT_TIMEOUT_SECONDS
        ),
    )


# One connection pool per event loop (an ASGI worker has one for its life):
# a pool cannot be shared across loops, and a new one per call would open a
# new connection, and a new TLS handshake, for every answer.
_pools: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx2.AsyncClient]" = (
    weakref.WeakKeyDictionary()
)


def _http_client() -> httpx2.AsyncClient:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = checked_http_client()
    return pool


async def close_pool() -> None:
    """Close this event loop's pool. For a loop that ends with its request
    (Django's WSGI handler runs an async view on a loop of its own): an
    aiohttp session left open would be closed, with a warning, only when
    collected."""
    pool = _pools.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.aclose()


_CLIENT_ERRORS = (
    openai.OpenAIError,
    httpx2.HTTPError,
    aiohttp.ClientError,
    TimeoutError,
    ValueError,
)


def _failure(error: Exception, partial_text: str, *, response_started: bool) -> ChatFailure:
    cause = _cause_of(error, response_started or bool(partial_text))
    status = getattr(error, "status_code", None)
    # The class and status only: an error's text may quote the server's answer.
    _log_failure(cause, type(error).__name__ + (f" HTTP {status}" if status else ""))
    return ChatFailure(cause, partial_text)


def _cause_of(error: Exception, response_started: bool) -> str:
    # The client wraps the transport's error, which wraps aiohttp's: the
    # first in that chain is the one that says what happened.
    chain = list(_chain(error))
    if any(isinstance(link, UnresolvableHost) for link in chain):
        return "unreachable"
    # Refused by the connection pool's own check (llm/transport.py).
    if any(isinstance(link, UnsafeEndpoint) for link in chain):
        return "refused_url"
    transport = next((link for link in chain if isinstance(link, aiohttp.ClientError)), None)
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


def _chain(error: BaseException | None):
    while error is not None:
        yield error
        error = error.__cause__


def _log_failure(cause: str, detail: str) -> None:
    log.warning("LLM call failed: %s (%s)", cause, detail)


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
