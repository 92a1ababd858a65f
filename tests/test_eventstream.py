"""The event-stream encoder, proved against botocore's own decoder and parsers."""

from __future__ import annotations

import base64
import datetime as dt
import json
import subprocess
import sys
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import examples
from wirescript.wires.bedrock import eventstream as es

botocore_eventstream = pytest.importorskip("botocore.eventstream")
botocore_parsers = pytest.importorskip("botocore.parsers")
botocore_exceptions = pytest.importorskip("botocore.exceptions")


def botocore_decode(data: bytes, *, piece: int | None = None) -> list[Any]:
    """Every message botocore's `EventStreamBuffer` finds, fed whole or `piece` bytes at a time."""
    buffer = botocore_eventstream.EventStreamBuffer()
    found: list[Any] = []
    pieces = [data] if piece is None else [data[i : i + piece] for i in range(0, len(data), piece)]
    for part in pieces:
        buffer.add_data(part)
        found.extend(buffer)
    assert buffer._data == b"", "bytes left over that make no whole message"
    return found


def test_a_known_message_byte_for_byte() -> None:
    # The layout, spelt out: the encoder's CRCs are the ones zlib computes over the same spans.
    import zlib

    data = es.encode_message({"a": "b"}, b"{}")
    headers = b"\x01a\x07\x00\x01b"
    total = 12 + len(headers) + 2 + 4
    prelude = total.to_bytes(4, "big") + len(headers).to_bytes(4, "big")
    head = prelude + zlib.crc32(prelude).to_bytes(4, "big")
    body = head + headers + b"{}"
    assert data == body + zlib.crc32(body).to_bytes(4, "big")


def test_every_header_type_decodes_as_botocore_reads_it() -> None:
    when = dt.datetime(2026, 12, 1, 7, 30, 15, 250000, tzinfo=dt.UTC)
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    headers: dict[str, es.HeaderValue] = {
        "yes": True,
        "no": False,
        "byte": es.Byte(-128),
        "short": es.Short(32767),
        "integer": es.Integer(-(2**31)),
        "long": es.Long(2**63 - 1),
        "small-int": 7,
        "big-int": 2**40,
        "blob": b"\x00\xff\x10",
        "text": "héllo ✓",
        "when": when,
        "id": ident,
    }
    [message] = botocore_decode(es.encode_message(headers, b"payload"))
    assert message.headers == {
        "yes": True,
        "no": False,
        "byte": -128,
        "short": 32767,
        "integer": -(2**31),
        "long": 2**63 - 1,
        "small-int": 7,
        "big-int": 2**40,
        "blob": b"\x00\xff\x10",
        "text": "héllo ✓",
        "when": int(when.timestamp() * 1000),
        "id": ident.bytes,
    }
    assert list(message.headers) == list(headers)
    assert message.payload == b"payload"


def test_the_wire_type_of_each_value() -> None:
    # The type byte after each name: what botocore's header parser dispatches on.
    def type_byte(value: es.HeaderValue) -> int:
        return es.encode_headers({"h": value})[2]

    assert [type_byte(v) for v in (True, False, es.Byte(1), es.Short(1), es.Integer(1), es.Long(1))] == [
        0,
        1,
        2,
        3,
        4,
        5,
    ]
    assert [type_byte(v) for v in (1, 2**31, -(2**31) - 1, b"", "")] == [4, 5, 5, 6, 7]
    assert type_byte(dt.datetime.now(dt.UTC)) == 8
    assert type_byte(uuid.uuid4()) == 9


@pytest.mark.parametrize("payload", [b"", b"x", "ünïcødé ✓ 🎉".encode(), bytes(range(256)) * 4096])
def test_payloads_empty_small_unicode_and_a_megabyte(payload: bytes) -> None:
    data = es.encode_message({":message-type": "event", "ünï": "cødé 🎉"}, payload)
    [message] = botocore_decode(data)
    assert message.payload == payload
    assert message.headers == {":message-type": "event", "ünï": "cødé 🎉"}
    assert message.prelude.total_length == len(data)
    assert es.decode(data) == [es.Message({":message-type": "event", "ünï": "cødé 🎉"}, payload)]


def test_no_headers_and_no_payload() -> None:
    data = es.encode_message({})
    assert len(data) == 16
    [message] = botocore_decode(data)
    assert (message.headers, message.payload) == ({}, b"")


def test_the_largest_payload_and_headers_botocore_accepts() -> None:
    payload = b"p" * es.MAX_PAYLOAD_LENGTH
    [message] = botocore_decode(es.encode_message({}, payload))
    assert len(message.payload) == es.MAX_PAYLOAD_LENGTH
    with pytest.raises(es.EventStreamError, match="payload"):
        es.encode_message({}, payload + b"p")

    # 128 KiB of headers exactly: three of 1+1+1+2+32767 bytes (name, type, length, value), one to fill.
    value = "v" * 0x7FFF
    headers: dict[str, es.HeaderValue] = {str(i): value for i in range(3)}
    used = 3 * (5 + 0x7FFF)
    headers["z" * 10] = "w" * (es.MAX_HEADERS_LENGTH - used - (1 + 10 + 1 + 2))
    data = es.encode_message(headers)
    [message] = botocore_decode(data)
    assert message.prelude.headers_length == es.MAX_HEADERS_LENGTH
    headers["y"] = ""
    with pytest.raises(es.EventStreamError, match="headers of"):
        es.encode_message(headers)


def test_every_flipped_byte_makes_botocore_raise() -> None:
    data = es.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}})
    assert len(botocore_decode(data)) == 1
    for i in range(len(data)):
        broken = bytearray(data)
        broken[i] ^= 0x01
        with pytest.raises(botocore_eventstream.ChecksumMismatch):
            botocore_decode(bytes(broken))
        with pytest.raises(es.EventStreamError, match="CRC mismatch"):
            es.decode(bytes(broken))


def test_messages_fed_in_pieces_decode_the_same() -> None:
    stream = b"".join(es.event(f"e{i}", {"i": i, "text": "✓" * i}) for i in range(20))
    whole = [(m.headers, m.payload) for m in botocore_decode(stream)]
    assert len(whole) == 20
    for piece in (1, 7, 64):
        assert [(m.headers, m.payload) for m in botocore_decode(stream, piece=piece)] == whole


def test_a_cut_stream() -> None:
    stream = es.event("a", b"{}") + es.event("b", b"{}")
    # botocore waits for the rest of a cut message (the HTTP layer decides it is cut); ours raises.
    buffer = botocore_eventstream.EventStreamBuffer()
    buffer.add_data(stream[:-3])
    assert [m.headers[":event-type"] for m in buffer] == ["a"]
    with pytest.raises(es.EventStreamError, match="cut"):
        es.decode(stream[:-3])
    with pytest.raises(es.EventStreamError, match="prelude"):
        es.decode(stream + b"\x00" * 5)


def test_encoding_errors() -> None:
    with pytest.raises(es.EventStreamError, match="name"):
        es.encode_headers({"": "x"})
    with pytest.raises(es.EventStreamError, match="name"):
        es.encode_headers({"n" * 256: "x"})
    es.encode_headers({"n" * 255: "x"})
    with pytest.raises(es.EventStreamError, match="most is 32767"):
        es.encode_headers({"h": b"x" * 0x8000})
    with pytest.raises(es.EventStreamError, match="does not fit"):
        es.encode_headers({"h": es.Byte(128)})
    with pytest.raises(es.EventStreamError, match="does not fit"):
        es.encode_headers({"h": 2**63})
    with pytest.raises(es.EventStreamError, match="time zone"):
        es.encode_headers({"h": dt.datetime(2026, 1, 1)})
    with pytest.raises(es.EventStreamError, match="UTF-8"):
        es.encode_headers({"h": "\ud800"})
    with pytest.raises(es.EventStreamError, match="UTF-8"):
        es.encode_headers({"\udfff": "x"})
    with pytest.raises(es.EventStreamError, match="float"):
        es.encode_headers({"h": 1.5})  # type: ignore[dict-item]


# --- The Bedrock messages, read by botocore's parsers against the bedrock-runtime service model ---


def _stream_shape(name: str) -> Any:
    from botocore.loaders import Loader
    from botocore.model import ServiceModel

    model = ServiceModel(Loader().load_service_model("bedrock-runtime", "service-2"))
    return model.shape_for(name)


class _Raw:
    """What botocore's `EventStream` reads: an object with `.stream()`."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self) -> Any:
        yield from (self._data[i : i + 10] for i in range(0, len(self._data), 10))

    def close(self) -> None:
        pass


def _events(data: bytes, shape: str = "ConverseStreamOutput", operation: str = "ConverseStream") -> Any:
    parser = botocore_parsers.EventStreamJSONParser()
    return botocore_eventstream.EventStream(_Raw(data), _stream_shape(shape), parser, operation)


def test_converse_stream_events_parse_as_boto3_returns_them() -> None:
    stream = b"".join(
        [
            es.event("messageStart", {"role": "assistant"}),
            es.event(
                "contentBlockStart",
                {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}}},
            ),
            es.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"city":'}}}),
            es.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '"Paris"}'}}}),
            es.event("contentBlockStop", {"contentBlockIndex": 0}),
            es.event("messageStop", {"stopReason": "tool_use"}),
            es.event(
                "metadata",
                {"usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}, "metrics": {"latencyMs": 42}},
            ),
        ]
    )
    assert list(_events(stream)) == [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 0,
                "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"city":'}}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '"Paris"}'}}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}, "metrics": {"latencyMs": 42}}},
    ]


@pytest.mark.parametrize(
    "name",
    [
        "modelStreamErrorException",
        "throttlingException",
        "validationException",
        "internalServerException",
        "serviceUnavailableException",
    ],
)
def test_an_exception_event_raises_what_botocore_raises(name: str) -> None:
    stream = es.event("messageStart", {"role": "assistant"}) + es.exception(name, {"message": "it broke ✗"})
    events = iter(_events(stream))
    assert next(events) == {"messageStart": {"role": "assistant"}}
    with pytest.raises(botocore_exceptions.EventStreamError) as caught:
        next(events)
    assert caught.value.response["Error"] == {"Code": name, "Message": "it broke ✗"}
    assert "ConverseStream" in str(caught.value)


def test_an_error_message_carries_its_code_and_message_in_headers() -> None:
    with pytest.raises(botocore_exceptions.EventStreamError) as caught:
        list(_events(es.error("InternalFailure", "the model went away")))
    assert caught.value.response["Error"] == {"Code": "InternalFailure", "Message": "the model went away"}


def test_chunk_events_carry_the_model_bytes_base64() -> None:
    events = [{"type": "message_start", "message": {"id": "msg_1"}}, {"type": "message_stop"}]
    raw = [json.dumps(e).encode() for e in events]
    stream = b"".join(es.chunk(r) for r in raw)
    [first, _] = es.decode(stream)
    assert json.loads(first.payload) == {"bytes": base64.b64encode(raw[0]).decode()}
    parsed = list(_events(stream, "ResponseStream", "InvokeModelWithResponseStream"))
    assert parsed == [{"chunk": {"bytes": r}} for r in raw]


def test_event_payload_bytes_are_sent_as_they_are() -> None:
    [message] = botocore_decode(es.event("messageStop", b'{"stopReason":"end_turn","p":"abc"}'))
    assert message.payload == b'{"stopReason":"end_turn","p":"abc"}'
    assert message.headers == {
        ":event-type": "messageStop",
        ":content-type": "application/json",
        ":message-type": "event",
    }


# --- Any message, both decoders ---

_values = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.binary(max_size=64),
    st.text(max_size=64),
    st.uuids(),
)


@settings(max_examples=examples(150), deadline=None)
@given(
    headers=st.dictionaries(
        st.text(min_size=1, max_size=20).filter(lambda s: len(s.encode()) < 256), _values, max_size=8
    ),
    payload=st.binary(max_size=512),
)
def test_any_message_decodes_to_what_was_encoded(headers: dict[str, es.HeaderValue], payload: bytes) -> None:
    data = es.encode_message(headers, payload)
    [message] = botocore_decode(data)
    expected = {k: v.bytes if isinstance(v, uuid.UUID) else v for k, v in headers.items()}
    assert message.headers == expected
    assert message.payload == payload
    assert es.decode(data) == [es.Message(headers, payload)]


def test_importing_wirescript_imports_neither_boto3_nor_botocore() -> None:
    code = (
        "import sys, wirescript, wirescript.wires.bedrock.eventstream\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- The anthropic SDK's Bedrock client reads `chunk` frames as its Messages stream ---

_MESSAGE = {
    "id": "msg_bdrk_1",
    "type": "message",
    "role": "assistant",
    "model": "claude",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
_TOOL_STREAM = [
    {"type": "message_start", "message": _MESSAGE},
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
    },
    {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"city":'}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 5},
    },
    {"type": "message_stop"},
]


def _bedrock_client(body: bytes, *, asynchronous: bool = False) -> Any:
    anthropic = pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")

    def answer(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": es.CONTENT_TYPE}, content=body)

    keys = {"aws_access_key": "AKIDTEST", "aws_secret_key": "test-secret", "aws_region": "us-east-1", "max_retries": 0}
    if asynchronous:
        return anthropic.AsyncAnthropicBedrock(
            **keys, http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
        )
    return anthropic.AnthropicBedrock(**keys, http_client=httpx2.Client(transport=httpx2.MockTransport(answer)))


def test_anthropic_bedrock_reads_chunk_frames() -> None:
    body = b"".join(es.chunk(json.dumps(e).encode()) for e in _TOOL_STREAM)
    client = _bedrock_client(body)
    with client.messages.stream(
        model="anthropic.claude", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
    ) as s:
        final = s.get_final_message()
    assert final.stop_reason == "tool_use"
    assert [(b.type, b.name, b.input) for b in final.content] == [("tool_use", "f", {"city": "Paris"})]


def test_async_anthropic_bedrock_reads_chunk_frames() -> None:
    import asyncio

    body = b"".join(es.chunk(json.dumps(e).encode()) for e in _TOOL_STREAM)

    async def main() -> Any:
        client = _bedrock_client(body, asynchronous=True)
        async with client.messages.stream(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]) as s:
            return await s.get_final_message()

    assert asyncio.run(main()).content[0].input == {"city": "Paris"}


def test_anthropic_bedrock_surfaces_an_exception_frame_as_an_error_event() -> None:
    anthropic = pytest.importorskip("anthropic")
    body = es.chunk(json.dumps(_TOOL_STREAM[0]).encode()) + es.exception(
        "throttlingException", {"message": "slow down"}
    )
    client = _bedrock_client(body)
    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        client.messages.stream(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]) as s,
    ):
        s.get_final_message()
    assert caught.value.body == {"type": "error", "error": {"type": "throttlingException", "message": "slow down"}}


# --- The framers: a message's start worked out once per payload length, the bytes those of framing it whole ---


def test_a_framer_frames_every_payload_length_as_the_message_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(es, "_STARTS_KEPT", 8)  # past the lengths it keeps, it works the start out each time
    raw = es.encode_headers({":event-type": "contentBlockDelta", ":content-type": "application/json"})
    framer = es._Framer(raw)
    lengths = [0, 1, 7, 300, 1, 0, 65536, *range(20, 40), 7, 300]
    for length in lengths:  # each length twice at least: a kept start must give the same bytes as a new one
        payload = bytes(range(256)) * (length // 256) + bytes(range(length % 256))
        assert framer.message(payload) == es.encode_message(
            {":event-type": "contentBlockDelta", ":content-type": "application/json"}, payload
        )
    assert len(framer._starts) == 8
    with pytest.raises(es.EventStreamError, match="most is"):
        framer.message(b"x" * (es.MAX_PAYLOAD_LENGTH + 1))


def test_delta_messages_are_the_events_whole_for_any_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(es, "_STARTS_KEPT", 4)
    from wirescript.sse import json_string

    before, after = b'{"contentBlockIndex":3,"delta":{"text":', b"}}"
    around = es._framer("event", "contentBlockDelta").around(before, after)
    pieces = ["", "a", "Streamin", 'q"uo\\te', "\n\t\x07", "café ✓", "日本語🙂", "\ud800 lone"]
    pieces += ["x" * n for n in range(12)]
    for _ in range(2):
        got = around.messages(pieces, json_string)
        whole = [es.event("contentBlockDelta", before + json_string(p).encode() + after) for p in pieces]
        assert got == whole
        payloads = [before + json_string(p).encode() + after for p in pieces]
        assert [m.payload for m in botocore_decode(b"".join(got))] == payloads


def test_plain_delta_messages_are_those_of_the_quoted_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(es, "_STARTS_KEPT", 2)  # past the lengths it keeps, it works the start out each time
    from wirescript.sse import json_string

    before, after = b'{"contentBlockIndex":0,"delta":{"text":', b"}}"
    around = es._framer("event", "contentBlockDelta").around(before, after)
    for text in ["a", "ab", "Streaming answers", "x" * 9, "y" * 800]:
        for size in (1, 3, 8):
            pieces = [text[i : i + size] for i in range(0, len(text), size)]
            for _ in range(2):  # a kept start gives the bytes a new one does
                parts: list[bytes] = []
                around.plain(parts, text.encode(), size)
                assert b"".join(parts) == b"".join(around.messages(pieces, json_string))
                payloads = [before + json_string(p).encode() + after for p in pieces]
                assert [m.payload for m in botocore_decode(b"".join(parts))] == payloads


def test_an_event_type_is_framed_by_its_own_headers() -> None:
    a = es.event("messageStart", b"{}")
    b = es.event("messageStop", b"{}")
    assert [m.headers[":event-type"] for m in botocore_decode(a + b)] == ["messageStart", "messageStop"]
    assert es.exception("throttlingException", b"{}") != es.event("throttlingException", b"{}")
