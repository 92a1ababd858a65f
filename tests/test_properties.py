"""Property tests: any valid turn round-trips exactly through the real SDKs, on every wire, streamed and not.

Hypothesis draws the turn (arbitrary unicode text including empty, nested JSON tool inputs,
parallel tool calls, thinking, usage) and how it is asked for (stream helper or JSON, sync or
async). The examples are derandomized and the database is off, so CI runs the same cases every
time and parallel workers share nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _drivers import DRIVERS, Answer, run
from _support import STACKS, examples
from wirescript import ScriptTransport
from wirescript.sse import json_dumps, parse_sse
from wirescript.transport import PER_EVENT

PROPERTY = settings(
    max_examples=examples(50),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
tool_calls = st.builds(
    lambda name, data: {"name": name, "input": data},
    st.text(st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]), min_size=1, max_size=16),
    st.dictionaries(st.text(max_size=10), json_values, max_size=5),
)
usages = st.builds(
    lambda i, o: {"input_tokens": i, "output_tokens": o},
    st.integers(0, 100_000),
    st.integers(1, 100_000),
)


@st.composite
def turns(draw: st.DrawFn) -> dict[str, Any]:
    turn: dict[str, Any] = {}
    if draw(st.booleans()):
        turn["text"] = draw(st.text(max_size=200))
    if draw(st.booleans()):
        turn["thinking"] = draw(st.text(min_size=1, max_size=100))
    calls = draw(st.lists(tool_calls, max_size=3))
    if len(calls) == 1 and draw(st.booleans()):
        turn["tool"] = calls[0]
    elif calls:
        turn["tools"] = calls
    if draw(st.booleans()):
        turn["usage"] = draw(usages)
    if calls:  # tools of any name the requests here do not offer: the rendering is under test, not the script
        turn["unchecked"] = True
    return turn


def expected_stop(wire: str, turn: dict[str, Any]) -> str:
    tools = bool(turn.get("tools") or turn.get("tool"))
    return {
        "anthropic": "tool_use" if tools else "end_turn",
        "openai_chat": "tool_calls" if tools else "stop",
        "openai_responses": "completed",
        "gemini": "STOP",
    }[wire]


def check_round_trip(wire: str, turn: dict[str, Any], answer: Answer) -> None:
    calls = [turn["tool"]] if "tool" in turn else turn.get("tools", [])
    assert answer.text == (turn.get("text") or "")
    assert answer.thinking == turn.get("thinking", "")
    assert answer.calls == [(call["name"], call["input"]) for call in calls]
    assert answer.stop == expected_stop(wire, turn)
    if "usage" in turn:
        assert answer.usage == (turn["usage"]["input_tokens"], turn["usage"]["output_tokens"])


@pytest.mark.parametrize("wire", sorted(DRIVERS))
@PROPERTY
@given(turn=turns(), surface=st.sampled_from(["helper", "json"]), is_async=st.booleans())
def test_any_turn_round_trips_exactly(wire: str, turn: dict[str, Any], surface: str, is_async: bool) -> None:
    stub = ScriptTransport([turn])
    answer = run(DRIVERS[wire], surface, stub, is_async=is_async, max_retries=0)
    check_round_trip(wire, turn, answer)
    assert stub.problems == []
    assert stub.requests[0].stream is (surface == "helper")


@pytest.mark.parametrize("wire", sorted(DRIVERS))
def test_the_property_can_fail(wire: str) -> None:
    """A turn whose answer differs from it is caught: the comparison is not vacuous."""
    turn = {"text": "Hello", "tool": {"name": "f", "input": {"a": [1, {"b": None}]}}}
    answer = run(DRIVERS[wire], "json", ScriptTransport([turn]), max_retries=0)
    check_round_trip(wire, turn, answer)
    with pytest.raises(AssertionError):
        check_round_trip(wire, {**turn, "text": "Hello!"}, answer)
    with pytest.raises(AssertionError):
        check_round_trip(wire, {**turn, "tool": {"name": "f", "input": {"a": [1, {"b": 0}]}}}, answer)


# Each wire's request, streamed or not, naming `model`: what the wire renders around the turn.
_REQUESTS: dict[str, Callable[[str, bool], tuple[str, dict[str, Any]]]] = {
    "anthropic": lambda model, stream: (
        "/v1/messages",
        {"model": model, "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}], "stream": stream},
    ),
    "openai_chat": lambda model, stream: (
        "/v1/chat/completions",
        {
            "model": model,
            "messages": [{"role": "user", "content": "hi"}],
            "stream": stream,
            "stream_options": {"include_usage": stream} if stream else None,
        },
    ),
    "openai_responses": lambda model, stream: ("/v1/responses", {"model": model, "input": "hi", "stream": stream}),
    # Gemini names the model in the path: any text that stays one path segment.
    "gemini": lambda model, stream: (
        f"/v1beta/models/{quote(model or 'm', safe='', errors='replace')}:"
        + ("streamGenerateContent?alt=sse" if stream else "generateContent"),
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
}


def payloads(response: Any) -> list[str]:
    """The JSON documents of an answer: its body, or each SSE event's data (but `[DONE]`)."""
    if response.headers["content-type"].startswith("application/json"):
        return [response.text]
    events, rest = parse_sse(response.content)
    assert rest == ""
    return [event.data for event in events if event.data != "[DONE]"]


def check_canonical(payload: str) -> None:
    """The payload is exactly the compact encoding of its own value (`json_dumps`), key order kept."""
    assert json_dumps(json.loads(payload)) == payload


# Lone surrogates included (Hypothesis leaves them out by default): a request may send them as escapes.
models = st.sampled_from(["gpt-x", "modèle-é", "\ud83d", "é-\udfff"]) | st.text(
    st.characters(exclude_categories=[]), max_size=12
)


@pytest.mark.parametrize("wire", sorted(_REQUESTS))
@PROPERTY
@given(turn=turns(), model=models, stream=st.booleans())
def test_every_event_is_encoded_exactly_as_its_whole_value(
    wire: str, turn: dict[str, Any], model: str, stream: bool
) -> None:
    """Events built from templates around a piece are byte for byte the encoding of the whole event.

    The model name comes from the request (any text, lone surrogates included as JSON escapes), so
    the part of an event around the piece may be non-ASCII or need escaping to ASCII.
    """
    path, body = _REQUESTS[wire](model, stream)
    stub, stub_per_event = ScriptTransport([turn]), ScriptTransport([turn])
    content = json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    with STACKS[0].Client(transport=stub, base_url="https://api.test") as client:
        response = client.post(path, content=content, headers=headers)
    # The same answer event by event (as the loopback server and faults send it): the same bytes.
    with STACKS[0].Client(transport=stub_per_event, base_url="https://api.test") as client:
        per_event = client.send(
            client.build_request("POST", path, content=content, headers=headers, extensions={PER_EVENT: True})
        )
    assert response.status_code == 200, response.text
    found = payloads(response)
    assert found
    for payload in found:
        check_canonical(payload)
    assert per_event.content == response.content
    assert stub.problems == stub_per_event.problems == []


def test_the_encoding_check_can_fail() -> None:
    check_canonical('{"a":"é"}')
    for wrong in ('{"a": "é"}', '{"a":"\\u00e9"}', '{"a":1 }'):
        with pytest.raises(AssertionError):
            check_canonical(wrong)


@pytest.mark.parametrize("wire", sorted(_REQUESTS))
def test_long_answers_joined_or_event_by_event_are_the_same_bytes(wire: str) -> None:
    """Deltas joined into frames of many events (the unfaulted in-process stream) are the events, byte for byte.

    Long enough to span several joined frames, with what JSON escapes (newlines, quotes,
    backslashes) and non-ASCII text in every group.
    """
    text = 'ab\n"é\\ ' * 400 + "ü" * 3000
    turn = {"text": text, "thinking": text[::-1], "tool": {"name": "f", "input": {"q": text}}, "unchecked": True}
    path, body = _REQUESTS[wire]("m", True)
    content = json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    bodies, chunk_counts = [], []
    for extensions in ({}, {PER_EVENT: True}):
        with STACKS[0].Client(transport=ScriptTransport([turn]), base_url="https://api.test") as client:
            request = client.build_request("POST", path, content=content, headers=headers, extensions=extensions)
            response = client.send(request, stream=True)
            chunks = list(response.iter_raw())
        bodies.append(b"".join(chunks))
        chunk_counts.append(len(chunks))
    joined, per_event = bodies
    assert joined == per_event
    events, rest = parse_sse(per_event)
    assert rest == ""
    assert len(events) > 1000
    # Event by event: one chunk each, and the stream's tail (the last content byte on) in one of its own.
    assert chunk_counts[1] == len(events) + 1
    assert 2 < chunk_counts[0] < len(events) // 10  # joined: a few chunks, each of many events, and the tail


def test_a_joined_group_with_a_lone_surrogate_escapes_it_as_json_dumps_does() -> None:
    """Scripts refuse lone surrogates, but the joined path still encodes one as each event alone would."""
    from wirescript.sse import PIECE, encode_deltas

    pieces = ["é", "ok", "\ud800", 'a"\n'] * 500
    joined = list(encode_deltas("d", {"x": PIECE}, pieces, joined=True))
    one_by_one = list(encode_deltas("d", {"x": PIECE}, pieces, joined=False))
    assert 1 < len(joined) < len(one_by_one) == len(pieces)
    assert b"".join(joined) == b"".join(one_by_one)
    assert one_by_one[2] == b'event: d\ndata: {"x":"\\ud800"}\n\n'
    assert one_by_one[0] == 'event: d\ndata: {"x":"é"}\n\n'.encode()


@pytest.mark.parametrize("wire", ["anthropic", "openai_chat"])
def test_only_an_unfaulted_stream_read_in_chunks_asks_for_joined_frames(
    wire: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The transport asks for joined frames exactly when nothing reads events one by one, and the wire
    then sends runs of deltas as a few frames of many events."""
    from wirescript.wires import AnthropicWire, OpenAIChatWire

    wire_class = {"anthropic": AnthropicWire, "openai_chat": OpenAIChatWire}[wire]
    seen: list[tuple[bool, int, int]] = []
    render = wire_class.render

    def counting_render(self: Any, turn: Any, record: Any, **options: Any) -> Any:
        rendered = render(self, turn, record, **options)
        frames = list(rendered.frames)
        seen.append((options["joined"], len(frames), sum(frame.data.count(b"data: ") for frame in frames)))
        rendered.frames = iter(frames)
        return rendered

    monkeypatch.setattr(wire_class, "render", counting_render)
    text = "abcdefgh" * 500
    path, body = _REQUESTS[wire]("m", True)
    content = json.dumps(body).encode()
    turns = [{"text": text}, {"text": text}, {"text": text, "fault": {"cut_after": 400}}]
    with STACKS[0].Client(transport=ScriptTransport(turns), base_url="https://api.test") as client:
        for extensions in ({}, {PER_EVENT: True}, {}):
            request = client.build_request("POST", path, content=content, extensions=extensions)
            assert client.send(request).status_code == 200
    plain, per_event, faulted = seen
    assert plain[0] is True
    assert plain[2] > 500  # events
    assert plain[1] < 20  # frames: each run of deltas in a few
    assert per_event[0] is faulted[0] is False
    assert per_event[1] == per_event[2] == plain[2]  # one frame per event
    assert faulted[1] == faulted[2] == plain[2]
