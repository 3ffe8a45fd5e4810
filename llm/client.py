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
may quote a server's answer, travels with them). Nothing else of this
server's environment goes out: no organisation, project or custom header the
`openai` client would read from `OPENAI_*` variables.

Time limits: each wait for the server (for its reply, then between two
pieces of the answer) is bounded by the idle limit, the whole answer by the
answer limit, so a slow local model that keeps sending is never cut off
while a server that went quiet is given up on soon. How servers that differ
are met is in llm/wire.py; a coordinator's "Test connection" in llm/check.py.
"""

import asyncio
import contextlib
import dataclasses
import logging
import os
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import httpx2
import openai
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from llm import wire
from llm.endpoints import UnresolvableHost, UnsafeEndpoint, check_base_url
from llm.keys import RefusedKeyVariable
from llm.keys import api_key as api_key_for
from llm.sse import DONE
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
    "refused_key",
    # The stream ended properly but carried no text: only reasoning, or tool
    # calls nobody asked for (a reasoning model that spent its whole answer
    # length on thinking).
    "no_text",
    # The answer passed the system's `max_answer_chars`: reading stopped there.
    "too_long",
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
    "refused_key": _(
        "This system's API key is not allowed by the platform. Please tell the experimenter."
    ),
    "no_text": _("The system answered without any text. Please try again."),
    "too_long": _(
        "The answer was longer than this study allows, so it was cut off. You can ask for a "
        "shorter answer and try again."
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

    def __init__(self, cause: str, partial_text: str = "", status: int | None = None):
        if cause not in CAUSES:
            raise ValueError(f"unknown failure cause {cause!r}")
        super().__init__(cause)
        self.cause = cause
        self.partial_text = partial_text
        # The server's HTTP status, when it answered with an error.
        self.status = status
        self.message = str(FAILURE_MESSAGES[cause])

    def __repr__(self) -> str:
        return f"ChatFailure({self.cause!r}, partial_text={len(self.partial_text)} chars)"

    def __reduce__(self):
        # Survives pickling (a task queue) with its partial text.
        return (ChatFailure, (self.cause, self.partial_text, self.status))


async def stream_reply(endpoint: Endpoint, messages: list[dict]) -> AsyncIterator[str | Reply]:
    """Yield the answer's text as it arrives, then exactly one `Reply`."""
    started = time.monotonic()
    client = await _client_for(endpoint)
    limits = wire.Limits(endpoint)
    answer = wire.StreamedAnswer(endpoint.max_answer_chars)
    response_started = done = False
    try:
        async with contextlib.AsyncExitStack() as stack:
            body = wire.request_body(endpoint, messages, stream=True)
            response = await wire.send(client, body, limits, idle=True)
            # Closing an unfinished body closes its connection: what follows
            # [DONE], or the rest of an answer past the cap, is never read.
            stack.push_async_callback(response.aclose)
            response_started = True
            chunks = aiter(wire.answer_chunks(response, endpoint))
            while True:
                async with limits.wait():
                    chunk = await anext(chunks, None)
                if chunk is None or chunk is DONE:
                    done = chunk is DONE
                    break
                for delta in answer.take(chunk, started):
                    yield delta
                _check_so_far(answer)
    except _CLIENT_ERRORS as error:
        raise _failure(error, answer.text, response_started=response_started) from None
    yield _finished(answer, done, started)


async def complete_reply(endpoint: Endpoint, messages: list[dict]) -> Reply:
    """The whole answer in one response: for the chat without JavaScript."""
    started = time.monotonic()
    client = await _client_for(endpoint)
    limits = wire.Limits(endpoint)
    answer = wire.StreamedAnswer(endpoint.max_answer_chars)
    try:
        # The server sends nothing until the answer is whole: the wait for it
        # is the answer's, not an idle one.
        body = wire.request_body(endpoint, messages, stream=False)
        response = await wire.send(client, body, limits, idle=False)
        try:
            if wire.media_type(response) not in ("application/json", ""):
                raise wire.NotAnAnswer(wire.media_type(response))
            async with limits.wait():
                answer.take(wire.as_chunk(await wire.read_json(response, endpoint)), started)
        finally:
            await response.aclose()
    except _CLIENT_ERRORS as error:
        raise _failure(error, "", response_started=False) from None
    _check_so_far(answer)
    # A non-streamed answer has no first token of its own.
    return dataclasses.replace(_finished(answer, True, started), first_token_ms=None)


def _check_so_far(answer: wire.StreamedAnswer) -> None:
    if answer.finish_reason == "content_filter":
        _log_failure("content_filter", "finish_reason")
        raise ChatFailure("content_filter", answer.text)
    if answer.cut:
        _log_failure("too_long", f"{answer.max_chars} characters")
        raise ChatFailure("too_long", answer.text)


def _finished(answer: wire.StreamedAnswer, done: bool, started: float) -> Reply:
    if not (done or answer.finish_reason):
        # The connection ended cleanly but the server never said it was done.
        _log_failure("stream_broken", "neither [DONE] nor a finish_reason")
        raise ChatFailure("stream_broken", answer.text)
    if not answer.text:
        _log_failure("no_text", answer.instead or "empty")
        raise ChatFailure("no_text")
    return Reply(
        text=answer.text,
        model=answer.model,
        finish_reason=answer.finish_reason,
        prompt_tokens=answer.usage.get("prompt_tokens"),
        completion_tokens=answer.usage.get("completion_tokens"),
        first_token_ms=answer.first_token_ms,
        latency_ms=_ms_since(started),
    )


async def _client_for(endpoint: Endpoint) -> openai.AsyncOpenAI:
    api_key = _KEYLESS
    if endpoint.api_key_env:
        try:
            api_key = api_key_for(endpoint.api_key_env, endpoint.study)
        except RefusedKeyVariable:
            # Before any request: the operator does not allow this variable here.
            _log_failure("refused_key", f"variable {endpoint.api_key_env} is not allowed")
            raise ChatFailure("refused_key") from None
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
    answer = endpoint.answer_timeout or settings.LLM_ANSWER_TIMEOUT_SECONDS
    return openai.AsyncOpenAI(
        api_key=api_key,
        base_url=endpoint.base_url,
        http_client=_http_client(),
        # Retries are the platform's own (llm/wire.py, `send`): the client's would wait
        # out any Retry-After up to a minute, whatever time the answer has left.
        max_retries=0,
        # The limits that matter are `wire.Limits`'; this only keeps the
        # client's own from cutting in first.
        timeout=httpx2.Timeout(answer, connect=settings.LLM_CONNECT_TIMEOUT_SECONDS),
        default_headers=_own_headers(api_key),
    )


def _own_headers(api_key: str) -> dict:
    """The client adds `OpenAI-Organization` and `OpenAI-Project` from
    OPENAI_ORG_ID and OPENAI_PROJECT_ID, and every header of
    OPENAI_CUSTOM_HEADERS (an `Authorization` too, which would replace the
    system's key), when this server's environment has them: meant for the
    platform's own account, never for a connected system. `omit` removes a
    header whatever set it; an explicit `Authorization` wins over the one
    from the environment."""
    names = ["OpenAI-Organization", "OpenAI-Project"]
    for line in os.environ.get("OPENAI_CUSTOM_HEADERS", "").splitlines():
        name, colon, _value = line.partition(":")
        if colon and name.strip() and name.strip().lower() != "authorization":
            names.append(name.strip())
    return {**dict.fromkeys(names, openai.omit), "Authorization": f"Bearer {api_key}"}


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
    cause = wire.cause_of(error, response_started or bool(partial_text))
    status = getattr(error, "status_code", None)
    # The class and status only: an error's text may quote the server's answer.
    _log_failure(cause, type(error).__name__ + (f" HTTP {status}" if status else ""))
    return ChatFailure(cause, partial_text, status)


def _log_failure(cause: str, detail: str) -> None:
    log.warning("LLM call failed: %s (%s)", cause, detail)


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
