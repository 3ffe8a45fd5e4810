"""The server-sent events of a streamed chat completion, as plain dicts.

The official client would build a typed model for every event, about a
quarter of a millisecond of CPU each: with a few hundred participants
chatting at once, a few thousand tokens a second, that alone would fill a
core. The events are small JSON objects; reading them as dicts is enough.
They are read straight from the body's bytes, a line at a time, without the
text and line decoders stacked in between (each a generator step per chunk).
"""

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

# A JSON object as the server sent it: its values are whatever the server
# put there, so every reader checks the type of what it takes out.
JSONObject = dict[str, Any]

# Yielded once, for `data: [DONE]`: the answer is over, whatever the body
# does next (some servers keep it open).
DONE: JSONObject = {}


class StreamError(ValueError):
    """The server reported an error inside the stream, after its 200."""


class TooLong(ValueError):
    """More of the body than the reader may hold in memory at once."""


async def chat_chunks(body: AsyncIterator[bytes], *, max_line: int) -> AsyncIterator[JSONObject]:
    """Each `data:` event's JSON, then `DONE` if the server sent `data: [DONE]`.

    Nothing after [DONE] is read: a server that keeps the body open would
    otherwise hold the answer until a time limit. `max_line` bounds the
    memory one line may take, since a line is held whole until it ends.
    """
    data: list[bytes] = []
    lines = _Lines(max_line)
    async for piece in body:
        for line in lines.feed(piece):
            if line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
            elif not line and data:
                # A blank line ends an event; other fields (event:, id:,
                # comments) carry nothing a chat completion needs.
                payload, data = b"\n".join(data), []
                if payload.strip() == b"[DONE]":
                    yield DONE
                    return
                if payload.strip():
                    yield _chunk(payload)
    data += [line[5:].removeprefix(b" ") for line in lines.rest() if line.startswith(b"data:")]
    payload = b"\n".join(data).strip()
    if payload == b"[DONE]":
        yield DONE
    elif payload:
        yield _chunk(payload)


class _Lines:
    """Complete lines out of arbitrary pieces of a body. An event stream's
    lines end in CRLF, LF or CR; a CR at a piece's end may be half a CRLF."""

    def __init__(self, max_line: int):
        self.pending = b""
        self.max_line = max_line

    def feed(self, piece: bytes) -> list[bytes]:
        text = self.pending + piece
        # Held back until the next piece tells whether an LF follows.
        held = b"\r" if text.endswith(b"\r") else b""
        if held:
            text = text[:-1]
        lines = _split(text)
        self.pending = lines.pop() + held
        if len(self.pending) > self.max_line:
            raise TooLong("event-stream line")
        return lines

    def rest(self) -> Iterator[bytes]:
        if self.pending:
            yield from _split(self.pending)


def _split(text: bytes) -> list[bytes]:
    return text.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")


def _chunk(payload: bytes) -> JSONObject:
    chunk = json.loads(payload)
    if not isinstance(chunk, dict) or "error" in chunk:
        raise StreamError("error event")
    return chunk
