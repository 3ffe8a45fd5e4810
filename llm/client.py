"""Calls to a connected system's OpenAI-compatible chat endpoint (docs/design/systems.md §10).

One code path for hosted APIs, local model servers and the shipped demo
server (llm/demo_server.py), through the official `openai` client. The
caller gets the answer as it streams, then one `Reply` with what the API
reported; or a `ChatFailure` whose `cause` the transcript records and the
caller puts in the participant's words. Nothing of the study is known here,
nor of Django: the package imports nothing from `surveys`, `scoring` or
`exports`, and what the operator allows comes in as a `CallPolicy`
(llm/policy.py).

    answer = stream_reply(Endpoint.of(system), messages, policy=policy)
    async with contextlib.aclosing(answer):
        async for piece in answer:          # str deltas, then one Reply
            ...
    # ChatFailure: .cause (one of CAUSES), .partial_text, .status

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
from collections.abc import AsyncGenerator
from dataclasses import dataclass

import aiohttp
import httpx2
import openai

from llm import wire
from llm.endpoints import UnresolvableHost, UnsafeEndpoint, check_base_url
from llm.keys import RefusedKeyVariable
from llm.keys import api_key as api_key_for
from llm.policy import CallPolicy
from llm.sse import DONE
from llm.transport import checked_http_client

# Defined beside the request it describes; callers take it from here.
from llm.wire import Endpoint as Endpoint

log = logging.getLogger(__name__)

# Stable codes, recorded with the transcript: the caller words each for the
# participant (surveys/views/chat_panel.py) and the coordinator
# (surveys/connection_check.py).
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

# Local servers accept any key, but the client insists on one.
_KEYLESS = "no-key"


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

    def __repr__(self) -> str:
        return f"ChatFailure({self.cause!r}, partial_text={len(self.partial_text)} chars)"

    def __reduce__(self) -> tuple[type["ChatFailure"], tuple[str, str, int | None]]:
        # Survives pickling (a task queue) with its partial text.
        return (ChatFailure, (self.cause, self.partial_text, self.status))


async def stream_reply(
    endpoint: Endpoint, messages: list[dict[str, str]], *, policy: CallPolicy
) -> AsyncGenerator[str | Reply, None]:
    """Yield the answer's text as it arrives, then exactly one `Reply`."""
    started = time.monotonic()
    client = await _client_for(endpoint, policy)
    limits = wire.Limits(endpoint, policy)
    answer = wire.StreamedAnswer(endpoint.max_answer_chars)
    response_started = done = False
    try:
        async with contextlib.AsyncExitStack() as stack:
            body = wire.request_body(endpoint, messages, stream=True)
            response = await wire.send(
                client, body, limits, idle=True, max_retries=policy.max_retries
            )
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


async def complete_reply(
    endpoint: Endpoint, messages: list[dict[str, str]], *, policy: CallPolicy
) -> Reply:
    """The whole answer in one response: for the chat without JavaScript."""
    started = time.monotonic()
    client = await _client_for(endpoint, policy)
    limits = wire.Limits(endpoint, policy)
    answer = wire.StreamedAnswer(endpoint.max_answer_chars)
    try:
        # The server sends nothing until the answer is whole: the wait for it
        # is the answer's, not an idle one.
        body = wire.request_body(endpoint, messages, stream=False)
        response = await wire.send(client, body, limits, idle=False, max_retries=policy.max_retries)
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


async def _client_for(endpoint: Endpoint, policy: CallPolicy) -> openai.AsyncOpenAI:
    api_key = _KEYLESS
    if endpoint.api_key_env:
        try:
            api_key = api_key_for(endpoint.api_key_env, endpoint.study, policy=policy)
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
            asyncio.to_thread(check_base_url, endpoint.base_url, policy=policy),
            policy.connect_timeout,
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
    answer = endpoint.answer_timeout or policy.answer_timeout
    return openai.AsyncOpenAI(
        api_key=api_key,
        base_url=endpoint.base_url,
        http_client=_http_client(policy),
        # Retries are the platform's own (llm/wire.py, `send`): the client's would wait
        # out any Retry-After up to a minute, whatever time the answer has left.
        max_retries=0,
        # The limits that matter are `wire.Limits`'; this only keeps the
        # client's own from cutting in first.
        timeout=httpx2.Timeout(answer, connect=policy.connect_timeout),
        # Typed as str only, but the client drops a header whose value is `omit`.
        default_headers=_own_headers(api_key),  # type: ignore[arg-type]
    )


def _own_headers(api_key: str) -> dict[str, str | openai.Omit]:
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
# new connection, and a new TLS handshake, for every answer. A pool connects
# only where its policy allows, so each policy has its own (a process has
# one policy, unless its settings change, as in tests).
_Pools = dict[CallPolicy, httpx2.AsyncClient]
_pools: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pools]" = weakref.WeakKeyDictionary()


def _http_client(policy: CallPolicy) -> httpx2.AsyncClient:
    pools = _pools.setdefault(asyncio.get_running_loop(), {})
    pool = pools.get(policy)
    if pool is None:
        pool = pools[policy] = checked_http_client(policy)
    return pool


async def close_pool() -> None:
    """Close this event loop's pools. For a loop that ends with its request
    (Django's WSGI handler runs an async view on a loop of its own): an
    aiohttp session left open would be closed, with a warning, only when
    collected."""
    for pool in _pools.pop(asyncio.get_running_loop(), {}).values():
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
