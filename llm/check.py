"""A coordinator's "Test connection": one short real answer from a connected
system, through the same client a participant's answer goes through
(llm/client.py).

    result = await check_connection(Endpoint.of(system), policy=policy)
    result.ok, result.cause, result.status, result.first_token_ms

The result holds no secret and nothing the server said (a server may quote
the key it was sent): the failure's cause and, when the server answered
with an error, its HTTP status, which the caller tells the coordinator in
plain words with the likely fix (surveys/connection_check.py).
"""

import contextlib
import dataclasses
import time
from dataclasses import dataclass

from llm.client import ChatFailure, Endpoint, Reply, stream_reply
from llm.policy import CallPolicy


@dataclass(frozen=True)
class ConnectionCheck:
    """What a coordinator's "Test connection" shows."""

    ok: bool
    model: str
    first_token_ms: int | None
    latency_ms: int
    # "" when ok, else one of llm.client.CAUSES.
    cause: str
    status: int | None = None


CHECK_PROMPT = "Reply with OK."
CHECK_MAX_TOKENS = 16


async def check_connection(endpoint: Endpoint, *, policy: CallPolicy) -> ConnectionCheck:
    """One short streamed answer through the same code a participant's goes
    through: the system's prompt, parameters and limits, a small answer."""
    started = time.monotonic()
    probe = dataclasses.replace(endpoint, max_tokens=CHECK_MAX_TOKENS)
    reply: Reply | None = None
    try:
        messages = [{"role": "user", "content": CHECK_PROMPT}]
        async with contextlib.aclosing(stream_reply(probe, messages, policy=policy)) as answer:
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
            status=failure.status,
        )
    # stream_reply ends in exactly one Reply, or raises.
    assert reply is not None
    return ConnectionCheck(
        ok=True,
        model=reply.model,
        first_token_ms=reply.first_token_ms,
        latency_ms=reply.latency_ms,
        cause="",
    )


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
