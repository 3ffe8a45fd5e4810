"""The server-sent events of a streamed chat completion, as plain dicts.

The official client would build a typed model for every event, about a
quarter of a millisecond of CPU each: with a few hundred participants
chatting at once, a few thousand tokens a second, that alone would fill a
core. The events are small JSON objects; reading them as dicts is enough.
"""

import json
from collections.abc import AsyncIterator


class StreamError(ValueError):
    """The server reported an error inside the stream, after its 200."""


async def chat_chunks(lines: AsyncIterator[str]) -> AsyncIterator[dict]:
    """Each `data:` event's JSON, until `data: [DONE]` and the end of the body."""
    data: list[str] = []
    done = False
    # Read on past [DONE] to the body's end: a connection whose response was
    # read completely goes back to the pool instead of being closed.
    async for line in lines:
        if done:
            continue
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            # A blank line ends an event; other fields (event:, id:, comments)
            # carry nothing a chat completion needs.
            payload, data = "\n".join(data), []
            done = payload == "[DONE]"
            if not done:
                yield _chunk(payload)
    if data and "\n".join(data) != "[DONE]":
        yield _chunk("\n".join(data))


def _chunk(payload: str) -> dict:
    chunk = json.loads(payload)
    if not isinstance(chunk, dict) or "error" in chunk:
        raise StreamError("error event")
    return chunk
