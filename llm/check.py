"""A coordinator's "Test connection": one short real answer from a connected
system, through the same client a participant's answer goes through
(llm/client.py), told in plain words with the likely fix.

    result = await check_connection(Endpoint.of(system))
    result.ok, result.message, result.status, result.first_token_ms

The message names no secret and quotes nothing the server said (a server
may quote the key it was sent); the server's HTTP status is added when it
answered with an error.
"""

import contextlib
import dataclasses
import time
from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from llm.client import ChatFailure, Endpoint, Reply, stream_reply


@dataclass(frozen=True)
class ConnectionCheck:
    """What a coordinator's "Test connection" shows."""

    ok: bool
    model: str
    first_token_ms: int | None
    latency_ms: int
    cause: str
    message: str
    status: int | None = None


CHECK_PROMPT = "Reply with OK."
CHECK_MAX_TOKENS = 16


async def check_connection(endpoint: Endpoint) -> ConnectionCheck:
    """One short streamed answer through the same code a participant's goes
    through: the system's prompt, parameters and limits, a small answer."""
    started = time.monotonic()
    probe = dataclasses.replace(endpoint, max_tokens=CHECK_MAX_TOKENS)
    reply = None
    try:
        messages = [{"role": "user", "content": CHECK_PROMPT}]
        async with contextlib.aclosing(stream_reply(probe, messages)) as answer:
            async for item in answer:
                if isinstance(item, Reply):
                    reply = item
    except ChatFailure as failure:
        return ConnectionCheck(
            ok=False,
            model="",
            first_token_ms=None,
            latency_ms=_ms_since(started),
            cause=failure.cause,
            message=coordinator_message(failure, endpoint),
            status=failure.status,
        )
    return ConnectionCheck(
        ok=True,
        model=reply.model,
        first_token_ms=reply.first_token_ms,
        latency_ms=reply.latency_ms,
        cause="",
        message=str(_("The system answered (model %(model)s, first text after %(ms)s ms)."))
        % {"model": reply.model or endpoint.model, "ms": reply.first_token_ms},
    )


# For the coordinator: what went wrong and the likely fix. Never the server's
# own text, which may quote the key it was sent.
_CHECK_MESSAGES = {
    "unreachable": _(
        "No connection to the server: check the base URL (host and port) and that the "
        "server is running."
    ),
    "timeout": _(
        "The server did not answer in time: it may be overloaded or still loading the model. "
        "Try again, or raise this system's time limits."
    ),
    "rate_limited": _(
        "The server is limiting requests for this key: wait and try again, or raise the key's "
        "limits with the provider."
    ),
    "server_error": _(
        "The server failed or did not answer with a chat answer (a sign-in or error page?): "
        "check the base URL, which usually ends in /v1."
    ),
    "stream_broken": _("The connection broke off during the answer: try again."),
    "content_filter": _("The provider's content filter stopped the test answer."),
    "rejected": _(
        "The server refused the request: check the model name, the answer-length parameter "
        "or stream_options."
    ),
    "refused_url": _(
        "The platform's address policy does not allow this base URL (plain http, a private "
        "network, or credentials in the URL)."
    ),
    "no_api_key": _(
        "The environment variable %(variable)s, which should hold this system's API key, is "
        "not set on the platform's server."
    ),
    "refused_key": _(
        "The platform does not allow the key variable %(variable)s for this system's study: "
        "ask the operator (settings LLM_KEY_PREFIX and LLM_KEYS)."
    ),
    "no_text": _(
        "The server answered, but with no text (only reasoning or tool calls) within a "
        "short test answer. A reasoning model may need a larger answer length."
    ),
    "too_long": _("The test answer was longer than this system's answer limit."),
}
_REJECTED_MESSAGES = {
    401: _("The server refused the API key: check the key in this system's key variable."),
    403: _("The key is not allowed to use this model or endpoint: check the key and the model."),
    404: _(
        "Nothing answers at this address, or the model is unknown: check the base URL "
        "(usually ending in /v1) and the model name."
    ),
}


def coordinator_message(failure: ChatFailure, endpoint: Endpoint) -> str:
    text = _CHECK_MESSAGES.get(failure.cause, _("The call failed: %(cause)s."))
    if failure.cause == "rejected" and failure.status in _REJECTED_MESSAGES:
        text = _REJECTED_MESSAGES[failure.status]
    elif failure.cause == "rejected" and failure.status and failure.status < 400:
        text = _("The server redirected the request, which the platform does not follow.")
    message = str(text) % {"variable": endpoint.api_key_env, "cause": failure.cause}
    return f"{message} (HTTP {failure.status})" if failure.status else message


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
