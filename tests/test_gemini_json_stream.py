"""`:streamGenerateContent` without `alt=sse`: the API's default streaming format, one JSON array of chunks.

REST clients that do not ask for SSE (llm-gemini reads the array with ijson as it arrives) get
`[{...}\\n,\\r\\n{...}\\n]`, as the real API sends it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from wirescript import ScriptTransport
from wirescript.wires import GeminiWire

httpx2 = pytest.importorskip("httpx2")

URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent"
BODY = {
    "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
    "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
}
TEXT = "A streamed answer, cut into several chunks of text."


def stream(turn: Any, **params: str) -> tuple[httpx2.Response, list[bytes]]:
    stub = ScriptTransport([turn])
    with httpx2.Client(transport=stub) as http, http.stream("POST", URL, json=BODY, params=params) as response:
        pieces = list(response.iter_raw())
    return response, pieces


def elements(body: bytes) -> list[Any]:
    """The array's elements, decoded one by one as a streaming reader would."""
    decoder = json.JSONDecoder()
    text = body.decode()
    assert text.startswith("[")
    found, at = [], 1
    while True:
        element, at = decoder.raw_decode(text, at)
        found.append(element)
        rest = text[at:]
        if rest == "\n]":
            return found
        assert rest.startswith("\n,\r\n"), f"not the API's separator: {rest[:8]!r}"
        at += 4


def texts(chunks: list[Any]) -> str:
    return "".join(
        part.get("text", "") for chunk in chunks for part in chunk["candidates"][0].get("content", {}).get("parts", [])
    )


def test_without_alt_the_stream_is_a_json_array_whose_parts_join_to_the_text() -> None:
    response, pieces = stream(TEXT)
    assert response.headers["content-type"] == "application/json; charset=UTF-8"
    body = b"".join(pieces)
    chunks = json.loads(body)  # a whole JSON document
    assert isinstance(chunks, list)
    assert len(chunks) > 1
    assert elements(body) == chunks  # framed as the API frames it: `[`, `\n,\r\n` between, `\n]`
    assert texts(chunks) == TEXT
    assert [chunk["candidates"][0].get("finishReason") for chunk in chunks][-1] == "STOP"
    assert all("finishReason" not in chunk["candidates"][0] for chunk in chunks[:-1])
    assert chunks[-1]["usageMetadata"]["candidatesTokenCount"] > 0


def test_alt_json_is_the_array_and_alt_sse_stays_sse() -> None:
    as_json, _ = stream(TEXT, alt="json")
    as_sse, pieces = stream(TEXT, alt="sse")
    assert as_json.headers["content-type"].startswith("application/json")
    assert as_sse.headers["content-type"] == "text/event-stream"
    assert b"".join(pieces).startswith(b"data: {")


def test_the_array_arrives_element_by_element() -> None:
    _, pieces = stream({"text": TEXT, "fault": {"delay": 0.001}})
    assert len(pieces) > 2
    assert pieces[0].startswith(b"[{")
    assert pieces[0].endswith(b"}\n")
    # every element after the first in a piece of its own (the stream's last byte, its tail, goes alone)
    assert all(piece.startswith(b",\r\n{") for piece in pieces[1:-1])
    assert b"".join(pieces[-2:]).endswith(b"}\n]")


def test_function_calls_and_a_single_chunk() -> None:
    _, pieces = stream({"tool": {"name": "get_weather", "input": {"city": "Paris"}}})
    [chunk] = json.loads(b"".join(pieces))
    [part] = chunk["candidates"][0]["content"]["parts"]
    assert part["functionCall"]["name"] == "get_weather"
    assert part["functionCall"]["args"] == {"city": "Paris"}
    assert b"".join(pieces).startswith(b"[{")
    assert b"".join(pieces).endswith(b"}\n]")


def test_a_stream_error_is_the_arrays_last_element() -> None:
    _, pieces = stream(
        {"text": TEXT, "fault": {"stream_error": {"type": "UNAVAILABLE", "message": "down", "after": 2}}}
    )
    chunks = elements(b"".join(pieces))
    assert len(chunks) == 3
    assert chunks[-1] == {"error": {"code": 503, "message": "down", "status": "UNAVAILABLE"}}
    _, pieces = stream({"text": TEXT, "fault": {"stream_error": {"after": 0}}})
    [error] = elements(b"".join(pieces))
    assert error["error"]["status"] == "UNAVAILABLE"


def test_a_cut_stream_or_a_dropped_last_chunk_leaves_the_array_open() -> None:
    _, pieces = stream({"text": TEXT, "fault": {"cut_after": 1}})
    body = b"".join(pieces)
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)  # as a connection closed mid-array: the reader sees an unfinished document
    assert body.startswith(b"[{")
    assert body.endswith(b"}\n")
    _, pieces = stream({"text": TEXT, "fault": {"drop": ["final_chunk"]}})
    with pytest.raises(json.JSONDecodeError):
        json.loads(b"".join(pieces))  # the last element closes the array: without it, the array stays open
    shown = texts(elements(b"".join(pieces) + b"]"))  # closed by hand: every element but the last arrived
    assert shown
    assert shown != TEXT
    assert TEXT.startswith(shown)


def test_a_disconnect_fails_the_read() -> None:
    with pytest.raises(httpx2.RemoteProtocolError):
        stream({"text": TEXT, "fault": {"disconnect_after": 1}})


def test_record_mode_reads_the_array_back_as_the_turn() -> None:
    _, pieces = stream({"text": TEXT})
    turn = GeminiWire().decode(200, {"content-type": "application/json; charset=UTF-8"}, b"".join(pieces))
    assert turn is not None
    assert turn["text"] == TEXT
