"""Every wire's answers, byte for byte and chunk by chunk, as the reference release sent them.

`golden/answers.json` holds what a fixed set of turns (text, tool calls, thinking, usage, stop reasons,
errors, stream faults, long answers of many deltas) rendered on every wire, streamed and whole, joined
and event by event, with an ASCII and a non-ASCII model: the status, the headers, a digest of the body
and the size of every chunk the client read. However the answer is built, it must not change.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from wirescript import ScriptTransport
from wirescript.wires.base import OneChunk

httpx2 = pytest.importorskip("httpx2")  # the legacy run (anthropic 0.x, openai 2.x on httpx) has none
golden = pytest.importorskip("_golden")  # which reads the answers through httpx2

EXPECTED: dict[str, list[dict[str, Any]]] = json.loads(golden.GOLDEN.read_text())


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_every_answer_is_the_reference_bytes(key: str) -> None:
    case, model, mode = key.split(" | ")
    found = golden.answers(case, model, mode)
    for number, (got, expected) in enumerate(zip(found, EXPECTED[key], strict=True)):
        assert got == expected, f"turn {number} ({golden.TURNS[number]!r:.80}) of {key}"


async def _async_answers(case: str, model: str) -> list[dict[str, Any]]:
    host, path, body = golden._requests(model)[case]
    stub = ScriptTransport([dict(turn) for turn in golden.TURNS])
    out = []
    async with httpx2.AsyncClient(transport=stub, base_url=f"https://{host}") as client:
        for _ in golden.TURNS:
            request = client.build_request(
                "POST",
                path,
                content=json.dumps(body).encode(),
                headers={"content-type": "application/json", "x-api-key": "k", "authorization": "Bearer k"},
            )
            response = await client.send(request, stream=True)
            try:
                chunks = [chunk.decode("latin-1") async for chunk in response.aiter_raw()]
            except httpx2.HTTPError as exc:
                chunks = [f"<{type(exc).__name__}>"]
            out.append(golden.summary(response.status_code, response.headers.multi_items(), chunks))
    return out


@pytest.mark.parametrize("case", ["anthropic stream", "openai_chat usage stream", "openai_responses stream", "gemini"])
def test_an_async_client_reads_the_same_bytes(case: str) -> None:
    for model in golden.MODELS:
        assert asyncio.run(_async_answers(case, model)) == EXPECTED[f"{case} | {model} | joined"]


def test_a_stream_rendered_at_once_iterates_as_its_frames() -> None:
    """A stream a wire renders as one chunk still reads as frames: its content, then what closes it (if anything)."""
    body = b"event: a\ndata: 1\n\nevent: stop\ndata: 2\n\n"
    closed = OneChunk(body, 18, "a", "stop")
    assert [(frame.name, frame.data) for frame in closed] == [("a", body[:18]), ("stop", body[18:])]
    assert [(frame.name, frame.data) for frame in OneChunk(body, len(body), "a", "")] == [("a", body)]
