"""The Anthropic Messages wire, through the real anthropic SDK: what the stub emits is rebuilt exactly."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

from _support import ANTHROPIC_HX, ANTHROPIC_MAJOR, SAMPLE_TURNS, anthropic_client, anthropic_tools
from wirescript import ScriptTransport, StreamValidationError, validate_anthropic_stream

USER = [{"role": "user", "content": "Hi"}]
PARAMS: dict[str, Any] = {"model": "claude-test", "max_tokens": 256, "messages": USER, "tools": anthropic_tools()}

TURNS = SAMPLE_TURNS


def expected_content(turn: dict[str, Any], index: int = 0) -> list[dict[str, Any]]:
    """The content blocks a turn must come back as."""
    blocks: list[dict[str, Any]] = []
    if "thinking" in turn:
        blocks.append({"type": "thinking", "thinking": turn["thinking"], "signature": f"sig_{index:04d}"})
    if "text" in turn:
        blocks.append({"type": "text", "text": turn["text"]})
    calls = [turn["tool"]] if "tool" in turn else turn.get("tools", [])
    for k, call in enumerate(calls):
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", f"toolu_{index:04d}_{k}"),
                "name": call["name"],
                "input": call["input"],
            }
        )
    return blocks


def content_of(message: Any) -> list[dict[str, Any]]:
    keep = {"type", "text", "thinking", "signature", "id", "name", "input"}
    return [{k: v for k, v in block.model_dump().items() if k in keep} for block in message.content]


def final_message(stub: ScriptTransport, is_async: bool, mode: str) -> Any:
    """Run one request in the given SDK mode; return the resulting Message."""
    if is_async:
        return asyncio.run(_final_message_async(stub, mode))
    client = anthropic_client(stub, _strict_response_validation=True)
    if mode == "stream-helper":
        with client.messages.stream(**PARAMS) as stream:
            return stream.get_final_message()
    return client.messages.create(**PARAMS)


async def _final_message_async(stub: ScriptTransport, mode: str) -> Any:
    client = anthropic_client(stub, is_async=True, _strict_response_validation=True)
    if mode == "stream-helper":
        async with client.messages.stream(**PARAMS) as stream:
            return await stream.get_final_message()
    return await client.messages.create(**PARAMS)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("mode", ["stream-helper", "create"])
@pytest.mark.parametrize("name", list(TURNS))
def test_every_turn_is_rebuilt_exactly(name: str, mode: str, is_async: bool) -> None:
    turn = TURNS[name]
    stub = ScriptTransport([turn])
    message = final_message(stub, is_async, mode)
    assert content_of(message) == expected_content(turn)
    assert message.id == "msg_0000"
    assert message.model == "claude-test"
    assert message.role == "assistant"
    has_tool = "tool" in turn or "tools" in turn
    assert message.stop_reason == turn.get("stop_reason", "tool_use" if has_tool else "end_turn")
    usage = turn.get("usage")
    if usage:
        got = message.usage
        assert (got.input_tokens, got.output_tokens) == (usage["input_tokens"], usage["output_tokens"])
        assert (got.cache_read_input_tokens, got.cache_creation_input_tokens) == (6, 7)
    else:
        assert message.usage.input_tokens == 10
        assert message.usage.output_tokens >= 1
    assert stub.requests[0].stream is (mode == "stream-helper")
    assert stub.overflow == 0


def raw_body(turn: dict[str, Any]) -> bytes:
    """The exact bytes the stub streams for a turn, read through a plain client."""
    stub = ScriptTransport([turn])
    with ANTHROPIC_HX.Client(transport=stub) as http:
        response = http.post("https://api.anthropic.com/v1/messages", json={**PARAMS, "stream": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    return response.content


@pytest.mark.parametrize("name", list(TURNS))
def test_every_stream_passes_the_strict_envelope_validator(name: str) -> None:
    message = validate_anthropic_stream(raw_body(TURNS[name]))
    assert [{k: v for k, v in b.items() if k != "citations"} for b in message["content"]] == expected_content(
        TURNS[name]
    )


def event_names(body: bytes) -> list[str]:
    return [line.split(": ", 1)[1] for line in body.decode().splitlines() if line.startswith("event: ")]


def test_the_envelope_is_the_documented_sequence() -> None:
    names = event_names(raw_body(TURNS["parallel"]))
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 4
    body = raw_body(TURNS["parallel"]).decode()
    indexes = [json.loads(line[6:])["index"] for line in body.splitlines() if '"content_block_start"' in line]
    assert indexes == [0, 1, 2, 3]
    # Every event has its `event:` line and its blank line: data-only events vanish in the SDK.
    assert body.count("event: ") == body.count("data: ") == len(names)
    assert body.endswith("\n\n")


def test_text_arrives_in_several_deltas_cut_mid_word() -> None:
    stub = ScriptTransport([TURNS["text"]])
    client = anthropic_client(stub)
    with client.messages.stream(**PARAMS) as stream:
        pieces = list(stream.text_stream)
    assert len(pieces) > 3
    assert "".join(pieces) == TURNS["text"]["text"]
    # Some boundary falls inside a word: a consumer assuming whole words per delta is caught.
    assert any(a[-1].isalpha() and b[0].isalpha() for a, b in itertools.pairwise(pieces))


def test_tool_input_arrives_in_several_json_fragments_after_an_empty_start() -> None:
    turn = {"tool": {"name": "create_card", "input": {"title": "a fairly long title", "body": "x" * 100}}}
    stub = ScriptTransport([turn])
    client = anthropic_client(stub)
    with client.messages.stream(**PARAMS) as stream:
        events = list(stream)
    fragments = [e.delta.partial_json for e in events if e.type == "content_block_delta"]
    starts = [e.content_block for e in events if e.type == "content_block_start"]
    assert len(fragments) >= 4
    assert json.loads("".join(fragments)) == turn["tool"]["input"]
    assert starts[0].input == {}


def test_raw_stream_events_arrive_in_order_through_create_stream_true() -> None:
    stub = ScriptTransport([TURNS["thinking"]])
    client = anthropic_client(stub)
    events = list(client.messages.create(**PARAMS, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    delta_kinds = [e.delta.type for e in events if e.type == "content_block_delta"]
    assert delta_kinds[0] == "thinking_delta"
    assert "signature_delta" in delta_kinds
    assert delta_kinds[-1] == "text_delta"
    thinking = "".join(
        e.delta.thinking for e in events if e.type == "content_block_delta" and e.delta.type == "thinking_delta"
    )
    assert thinking == TURNS["thinking"]["thinking"]


# About 1.5 s: 6,500 deltas through the SDK's accumulator. The stream must fill well over ten 16 KiB chunks
# to prove it is produced in pieces; the SDK half proves those pieces reassemble.
def test_a_long_stream_arrives_in_several_chunks_of_whole_events() -> None:
    text = "abcdefghijklmnopqrstuvwxyz" * 2000  # 52,000 characters, 6,500 deltas
    with (
        ANTHROPIC_HX.Client(transport=ScriptTransport([text])) as http,
        http.stream("POST", "https://api.anthropic.com/v1/messages", json={**PARAMS, "stream": True}) as response,
    ):
        chunks = list(response.iter_raw())
    # Produced as it is read, in pieces, never one pre-rendered blob; no event is split across chunks but
    # the stream's tail (its last byte of content and what follows), sent apart to know it was read.
    assert len(chunks) > 10
    *whole, head, tail = chunks
    assert all(chunk.endswith(b"\n\n") and chunk.startswith(b"event: ") for chunk in [*whole, head + tail])
    assert tail == b'}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'  # message_stop closes the stream
    stub = ScriptTransport([text])
    with anthropic_client(stub).messages.stream(**PARAMS) as stream:
        first = next(iter(stream.text_stream))
        rest = "".join(stream.text_stream)
    assert (first, first + rest) == ("abcdefgh", text)


def test_the_model_is_echoed_and_ids_are_deterministic_per_stub() -> None:
    def run() -> list[Any]:
        stub = ScriptTransport([TURNS["tool"], TURNS["tool"]])
        client = anthropic_client(stub)
        return [client.messages.create(**{**PARAMS, "model": m}) for m in ("claude-a", "claude-b")]

    first, second = run(), run()
    assert [m.model for m in first] == ["claude-a", "claude-b"]
    assert [(m.id, m.content[1].id) for m in first] == [("msg_0000", "toolu_0000_0"), ("msg_0001", "toolu_0001_0")]
    assert [(m.id, m.content[1].id) for m in first] == [(m.id, m.content[1].id) for m in second]


def test_response_carries_a_request_id() -> None:
    stub = ScriptTransport(["a"])
    message = anthropic_client(stub).messages.create(**PARAMS)
    assert message._request_id == "req_0000"


# ---------------------------------------------------------------- the checks can fail

MESSAGE_START = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
    '"model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
)


def sse(*events: tuple[str, dict[str, Any]]) -> str:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


TEXT_BLOCK = (
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
)
END = (
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
    ("message_stop", {"type": "message_stop"}),
)


def tool_block(*fragments: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    start = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    return (
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        *(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": f}},
            )
            for f in fragments
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    )


def serve_raw(body: str) -> ScriptTransport:
    return ScriptTransport([{"fault": {"raw": body}}])


def stream_final(stub: ScriptTransport) -> Any:
    with anthropic_client(stub).messages.stream(**PARAMS) as stream:
        return stream.get_final_message()


def test_a_well_formed_hand_written_stream_passes_both_sdk_and_validator() -> None:
    body = MESSAGE_START + sse(*TEXT_BLOCK, *END)
    assert stream_final(serve_raw(body)).content[0].text == "Hi"
    assert validate_anthropic_stream(body)["content"] == [{"type": "text", "text": "Hi"}]


def test_sdk_rejects_a_stream_without_message_start() -> None:
    stub = serve_raw(sse(*TEXT_BLOCK, *END))
    expected: type[BaseException] = AssertionError if ANTHROPIC_MAJOR >= 1 else RuntimeError
    with pytest.raises(expected):
        stream_final(stub)
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(sse(*TEXT_BLOCK, *END))
    assert str(info.value) == "event 0 (line 1): expected message_start first, got 'content_block_start'"


def test_sdk_rejects_a_delta_for_an_unknown_index() -> None:
    bad = (
        "content_block_delta",
        {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}},
    )
    body = MESSAGE_START + sse(*TEXT_BLOCK, bad, *END)
    with pytest.raises(IndexError):
        stream_final(serve_raw(body))
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value) == "event 4 (line 13): delta for block 3, but the open block is None"


def test_sdk_rejects_invalid_tool_json() -> None:
    body = MESSAGE_START + sse(*tool_block('{"city": ', "nope}"), *END)
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON from model"):
        stream_final(serve_raw(body))
    with pytest.raises(StreamValidationError, match=r"^event 4 \(line 13\): the tool input fragments of block 'f'"):
        validate_anthropic_stream(body)


def test_malformed_tool_json_fault_makes_the_sdk_raise() -> None:
    stub = ScriptTransport([{"tool": {"name": "f", "input": {"a": 1}}, "fault": {"malformed_tool_json": True}}])
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON from model"):
        stream_final(stub)


# What the SDK tolerates silently, the validator rejects with a precise message.


def test_missing_message_stop_is_silent_in_the_sdk_but_rejected_by_the_validator() -> None:
    body = MESSAGE_START + sse(*TEXT_BLOCK, END[0])
    assert stream_final(serve_raw(body)).content[0].text == "Hi"  # the SDK does not notice
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value) == "the stream ends without message_stop; the SDK would not notice"


def test_cut_body_is_silent_in_the_sdk_but_rejected_by_the_validator() -> None:
    body = MESSAGE_START + sse(*TEXT_BLOCK[:2])
    message = stream_final(serve_raw(body))
    assert message.stop_reason is None  # partial, no error
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value) == "the stream ends while block 0 is open (cut mid-stream?)"
    cut_mid_event = body + 'event: content_block_delta\ndata: {"type":"content_b'
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(cut_mid_event)
    assert str(info.value) == (
        "the body ends inside an event (no blank line after 'event: content_block_delta'); "
        "the SDK drops such an event without an error"
    )


def test_truncated_tool_json_is_silent_in_the_sdk_but_rejected_by_the_validator() -> None:
    body = MESSAGE_START + sse(*tool_block('{"city": "Pa'), *END)
    assert stream_final(serve_raw(body)).content[0].input == {}  # silently empty
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value).startswith(
        "event 3 (line 10): the tool input fragments of block 'f' are not valid JSON (Unterminated string"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "the stream has no message_start (is it empty, or data-only?)"),
        (
            'data: {"type":"ping"}\n\n',
            'event 0 (line 1): data without an `event:` line; the anthropic SDK silently drops it: \'{"type":"ping"}\'',
        ),
        (MESSAGE_START + sse(*TEXT_BLOCK), "the stream ends without message_delta (no stop_reason; cut mid-stream?)"),
        (
            MESSAGE_START + sse(*TEXT_BLOCK, *END, END[1]),
            "event 6 (line 19): 'message_stop' after message_stop; message_stop must be last",
        ),
        (MESSAGE_START + "event: brand_new\ndata: {}\n\n", "event 1 (line 4): unknown event 'brand_new'"),
        (
            MESSAGE_START + sse(("ping", {"type": "message_stop"})),
            "event 1 (line 4): data type 'message_stop' does not match `event: ping`",
        ),
        (
            MESSAGE_START + sse(*TEXT_BLOCK[:1], *TEXT_BLOCK),
            "event 2 (line 7): block 0 starts before block 0 stopped",
        ),
        (
            MESSAGE_START
            + sse(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
                )
            ),
            "event 1 (line 4): block index 1, expected 0 (indexes run 0, 1, 2…)",
        ),
        (
            MESSAGE_START
            + sse(
                TEXT_BLOCK[0],
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": "{"},
                    },
                ),
            ),
            "event 2 (line 7): input_json_delta cannot apply to a 'text' block",
        ),
        (
            sse(("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
            "event 0 (line 1): the stream carries an API error: {'type': 'overloaded_error', 'message': 'Overloaded'}",
        ),
    ],
)
def test_validator_names_the_violation(body: str, message: str) -> None:
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value) == message


def test_validator_accepts_an_error_event_when_asked() -> None:
    body = MESSAGE_START + sse(("error", {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}))
    assert validate_anthropic_stream(body, allow_error=True) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "x"},
    }


USAGE = {"input_tokens": 1, "output_tokens": 1}


def _start(**message: Any) -> tuple[str, dict[str, Any]]:
    base = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "usage": USAGE}
    return ("message_start", {"type": "message_start", "message": {**base, **message}})


def _delta(delta: dict[str, Any], index: int = 0) -> tuple[str, dict[str, Any]]:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (MESSAGE_START + "event: ping\ndata: {nope\n\n", "event 1 (line 4): data is not JSON (Expecting property name"),
        (MESSAGE_START + MESSAGE_START, "event 1 (line 4): a second message_start"),
        (MESSAGE_START + sse(END[0], TEXT_BLOCK[0]), "event 2 (line 7): content_block_start after message_delta"),
        (
            MESSAGE_START
            + sse(("content_block_start", {"type": "content_block_start", "index": 0, "content_block": "text"})),
            "event 1 (line 4): content_block must be an object with a type",
        ),
        (
            MESSAGE_START + sse(TEXT_BLOCK[0], ("content_block_stop", {"type": "content_block_stop", "index": 1})),
            "event 2 (line 7): stop for block 1, but the open block is 0",
        ),
        (MESSAGE_START + sse(TEXT_BLOCK[0], END[0]), "event 2 (line 7): message_delta while block 0 is still open"),
        (
            MESSAGE_START + sse(("message_delta", {"type": "message_delta", "delta": {}})),
            "event 1 (line 4): message_delta needs delta.stop_reason",
        ),
        (sse(("message_start", {"type": "message_start"})), "event 0 (line 1): message_start needs a `message` object"),
        (sse(_start(id=1)), "event 0 (line 1): message_start.message.id must be a string"),
        (
            sse(_start(content=[{"type": "text", "text": "early"}])),
            "event 0 (line 1): message_start.message.content must be an empty list",
        ),
        (
            sse(_start(usage={"input_tokens": 1})),
            "event 0 (line 1): message_start.message.usage needs integer input_tokens and output_tokens",
        ),
        (
            MESSAGE_START + sse(TEXT_BLOCK[0], _delta({"type": "bogus_delta"})),
            "event 2 (line 7): unknown delta {'type': 'bogus_delta'}",
        ),
        (
            MESSAGE_START + sse(TEXT_BLOCK[0], _delta({"type": "text_delta", "text": 5})),
            "event 2 (line 7): delta.text must be a string",
        ),
        (
            MESSAGE_START + sse(*tool_block("[1]"), *END),
            "event 3 (line 10): tool input must be a JSON object, got list",
        ),
    ],
)
def test_validator_names_each_envelope_violation(body: str, message: str) -> None:
    with pytest.raises(StreamValidationError) as info:
        validate_anthropic_stream(body)
    assert str(info.value).startswith(message)


def test_a_tool_call_streamed_as_one_empty_fragment_has_empty_input() -> None:
    """The API opens each tool call's arguments with `"partial_json": ""` (its streaming docs' example), and a
    call without arguments sends nothing else: the SDK and the validator both read `input == {}`."""
    body = MESSAGE_START + sse(*tool_block(""), *END)
    assert stream_final(serve_raw(body)).content[0].input == {}
    assert validate_anthropic_stream(body)["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    ]
    fragments = MESSAGE_START + sse(*tool_block("", '{"city": ', '"Paris"}'), *END)
    assert validate_anthropic_stream(fragments)["content"][0]["input"] == {"city": "Paris"}
