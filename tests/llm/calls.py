"""Calling the client from synchronous tests, as the chat does: the deltas
that arrived, then the Reply or the ChatFailure."""

import pytest

from llm.client import ChatFailure, Endpoint, Reply, complete_reply, stream_reply
from surveys.llm_policy import call_policy
from tests.llm_server import run_closing


def ask(endpoint: Endpoint, prompt: str | list[dict]) -> tuple[list[str], Reply]:
    async def run():
        deltas = []
        async for item in stream_reply(endpoint, _messages(prompt), policy=call_policy()):
            if isinstance(item, Reply):
                return deltas, item
            deltas.append(item)
        raise AssertionError("the stream ended without a Reply")

    return run_closing(run())


def failure_of(endpoint: Endpoint, prompt: str | list[dict]) -> tuple[ChatFailure, list[str]]:
    """The failure of a streamed call, and the deltas that arrived before it."""
    deltas = []

    async def run():
        async for item in stream_reply(endpoint, _messages(prompt), policy=call_policy()):
            deltas.append(item)

    with pytest.raises(ChatFailure) as raised:
        run_closing(run())
    return raised.value, deltas


def complete(endpoint: Endpoint, prompt: str | list[dict]) -> Reply:
    return run_closing(complete_reply(endpoint, _messages(prompt), policy=call_policy()))


def complete_failure(endpoint: Endpoint, prompt: str | list[dict]) -> ChatFailure:
    with pytest.raises(ChatFailure) as raised:
        complete(endpoint, prompt)
    return raised.value


def _messages(prompt: str | list[dict]) -> list[dict]:
    return [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt


def at(quirks, quirk: str, **fields) -> Endpoint:
    return Endpoint(base_url=quirks.url(quirk), model="m", **fields)
