"""A plain text turn's answer, rendered from the bytes kept for its text, is the full rendering's.

The Anthropic, Chat Completions and Responses wires keep a plain text turn's answer (by its text, model,
stop reason and what the request asks) around the few values that differ between requests: each
answer rendered from it must be byte for byte the one rendered in full, for every request index.
"""

from __future__ import annotations

import itertools
from typing import Any

from _support import anthropic_client, openai_client
from wirescript import ScriptTransport
from wirescript.recorded import RecordedRequest
from wirescript.script import Turn
from wirescript.wires.anthropic import wire as anthropic_wire
from wirescript.wires.base import Rendered, Wire
from wirescript.wires.openai import chat as chat_wire

TEXTS = ["", "w", "Hello, world.", 'it says "msg_0003" and "req_0003"', 'Zürich ☃ \n\t"\\', "x" * 700, "y" * 1500]
STOPS = [None, "max_tokens", "length", "pause_turn", "refusal"]
MODELS = ["claude-a", "claude-ü", None]
INDEXES = [0, 3, 9999, 12345]


def _seen(rendered: Rendered) -> tuple[Any, ...]:
    """Everything the core reads of an answer: status, headers, body, and each frame (its name and bytes)."""
    frames = rendered.frames
    listed = None if frames is None else [(f.name, f.data) for f in frames]
    return rendered.status, rendered.headers, rendered.body, type(frames).__name__, listed


def _record(**update: Any) -> RecordedRequest:
    stub = ScriptTransport(["hi"])
    client = anthropic_client(stub)
    client.messages.create(model="claude-a", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    return stub.requests[0].model_copy(update=update)


def _turn(text: str, stop: str | None) -> Turn:
    return Turn.model_validate({"text": text} if stop is None else {"text": text, "stop_reason": stop})


def test_anthropic_plain_answers_are_the_full_renderings() -> None:
    base = _record()
    anthropic_wire._PLAIN.clear()  # once: an answer kept for one turn and request must not serve another's
    for text, stop, model, stream, joined, index in itertools.product(
        TEXTS, STOPS, MODELS, (True, False), (True, False), INDEXES
    ):
        turn = _turn(text, stop)
        wire = AnthropicWireForTest()
        record = base.model_copy(update={"index": index, "model": model, "stream": stream})
        full = _seen(wire.full(turn, record, joined))
        assert _seen(wire.render(turn, record, joined=joined)) == full, (text, stop, model, stream, joined, index)
    assert len(anthropic_wire._PLAIN) > 100  # the kept bytes were used, not only the full rendering


class AnthropicWireForTest(anthropic_wire.AnthropicWire):
    """The wire, with its full rendering (what `render` gives a turn with no kept bytes) reachable."""

    def full(self, turn: Turn, record: RecordedRequest, joined: bool) -> Rendered:
        return self._render(turn, record, record.model or "claude-wirescript", False, joined)


def test_a_threaded_request_is_rendered_in_full_so_its_thread_is_kept() -> None:
    wire: Wire = anthropic_wire.AnthropicWire()
    turn = _turn("Hello.", None)
    record = _record(body={"model": "claude-a", "max_tokens": 16, "messages": [], "thread": {"type": "start"}})
    for index in (1, 2):
        wire.render(turn, record.model_copy(update={"index": index}), joined=True)
    assert set(wire._threads) == {"msg_0001", "msg_0002"}  # type: ignore[attr-defined]


FINISHES = [None, "max_tokens", "length", "content_filter", "stop", "pause_turn"]
GPT_MODELS = ["gpt-a", "gpt-ü", 'gpt-"q"', None]


class ChatWireForTest(chat_wire.OpenAIChatWire):
    """The Chat wire, with its full rendering (what `render` gives a turn with no kept bytes) reachable."""

    def full(self, turn: Turn, record: RecordedRequest, joined: bool) -> Rendered:
        return self._render(turn, record, False, joined)


def test_chat_plain_answers_are_the_full_renderings() -> None:
    stub = ScriptTransport(["hi"])
    openai_client(stub).chat.completions.create(model="gpt-a", messages=[{"role": "user", "content": "hi"}])
    base = stub.requests[0]
    chat_wire._PLAIN.clear()  # once: an answer kept for one turn and request must not serve another's
    for text, stop, model, stream, usage, joined, index in itertools.product(
        TEXTS, FINISHES, GPT_MODELS, (True, False), (True, False), (True, False), INDEXES
    ):
        turn = _turn(text, stop)
        wire = ChatWireForTest()
        body = {"model": "gpt-a", "messages": [], "stream_options": {"include_usage": usage}}
        record = base.model_copy(update={"index": index, "model": model, "stream": stream, "body": body})
        full = _seen(wire.full(turn, record, joined))
        assert _seen(wire.render(turn, record, joined=joined)) == full, (text, stop, model, stream, usage, index)
    assert len(chat_wire._PLAIN) > 100  # the kept bytes were used, not only the full rendering
