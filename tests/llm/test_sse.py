"""The event-stream reader works on the body's bytes as they arrive
(llm/sse.py): pieces split anywhere, in a line, in a UTF-8 character or
between the CR and LF of a line end, give the same events."""

import asyncio
import json

import pytest

from llm.sse import DONE, StreamError, TooLong, chat_chunks

EVENTS = [{"choices": [{"delta": {"content": word}}]} for word in ("Grüß ", "Gott", " ✓")]


def body(line_end: bytes) -> bytes:
    lines = []
    for event in EVENTS:
        lines += [b": comment", b"data: " + json.dumps(event, ensure_ascii=False).encode(), b""]
    lines += [b"data: [DONE]", b"", b""]
    return line_end.join(lines)


def read(pieces: list[bytes], max_line: int = 10_000) -> list[dict]:
    async def collect():
        async def stream():
            for piece in pieces:
                yield piece

        return [chunk async for chunk in chat_chunks(stream(), max_line=max_line)]

    return asyncio.run(collect())


def split_every(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 10_000])
def test_events_are_the_same_however_the_body_is_cut(line_end, size):
    chunks = read(split_every(body(line_end), size))
    assert chunks == [*EVENTS, DONE] and chunks[-1] is DONE


def test_nothing_after_done_is_read():
    async def body_left_open():
        yield body(b"\n")
        # A server that keeps the body open after [DONE]: never reached.
        await asyncio.sleep(3600)
        yield b'data: {"choices": []}\n\n'

    async def collect():
        return [chunk async for chunk in chat_chunks(body_left_open(), max_line=100)]

    chunks = asyncio.run(asyncio.wait_for(collect(), 5))
    assert chunks == [*EVENTS, DONE]


@pytest.mark.parametrize("empty", [b"data:\n\n", b"data: \n\n", b"data:\r\n\r\n"])
def test_an_empty_data_line_is_no_event(empty):
    data = body(b"\n")
    assert read([empty + data]) == [*EVENTS, DONE]


def test_a_body_that_ends_without_done_says_so():
    assert DONE not in read([b'data: {"a": 1}\n\n'])


def test_a_line_longer_than_allowed_is_refused_before_it_is_held():
    with pytest.raises(TooLong):
        read([b"data: " + b"x" * 500, b"x" * 600], max_line=1000)


def test_an_event_at_the_end_of_the_body_without_a_blank_line_counts():
    assert read([b'data: {"a": 1}']) == [{"a": 1}]


def test_an_event_split_over_several_data_lines_is_joined():
    assert read([b'data: {"a":\ndata: 1}\n\n']) == [{"a": 1}]


def test_an_error_event_raises():
    with pytest.raises(StreamError):
        read([b'data: {"error": {"message": "overloaded"}}\n\n'])


def test_an_event_that_is_not_json_raises_a_value_error():
    with pytest.raises(ValueError):
        read([b"data: {not json\n\n"])


def test_a_crlf_cut_between_cr_and_lf_is_one_line_end():
    # Read as two line ends, it would be a blank line: the event would end
    # after its first data line, half a JSON object.
    data = b'data: {"a":\r\ndata: 1}\r\n\r\n'
    cut = data.index(b"\r\n") + 1
    assert read([data[:cut], data[cut:]]) == [{"a": 1}]
