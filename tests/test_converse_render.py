"""Converse renderings of a turn, read back by a real boto3 client served through `_botocore.attach`."""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from wirescript._adapters import botocore as _botocore
from wirescript._exchange import CHUNK_BYTES
from wirescript.script import ErrorSpec, ToolCall, Turn, Usage
from wirescript.wires import merge_wires
from wirescript.wires.bedrock import converse as _converse
from wirescript.wires.bedrock import eventstream as es

boto3 = pytest.importorskip("boto3")
botocore_config = pytest.importorskip("botocore.config")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

USER = [{"role": "user", "content": [{"text": "Weather?"}]}]
TURN = Turn(
    thinking="The user wants the weather.",
    text="Checking both cities.",
    tools=(
        ToolCall(name="get_weather", input={"city": "Paris"}),
        ToolCall(name="get_weather", input={"city": "Rome"}, id="tu_2"),
    ),
    usage=Usage(input_tokens=20, output_tokens=11, cache_read_input_tokens=4),
)


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a test touched the network: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)


BEDROCK = next(wire for wire in merge_wires(None) if wire.name == "bedrock")
"""A Bedrock wire as a stub holds it: it reads the other default wires' stop reasons (OpenAI's `length`)."""


class TurnServer:
    """Serves one turn per request: Converse JSON, or the ConverseStream messages for `/converse-stream`."""

    def __init__(self, *turns: Turn | ErrorSpec | list[bytes]) -> None:
        self.turns = list(turns)
        self.count = 0

    def serve(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, Mapping[str, str], Iterable[bytes]]:
        turn = self.turns.pop(0)
        self.count += 1
        if isinstance(turn, ErrorSpec):
            status, error_headers, payload = _converse.error_response(turn, self.count)
            return status, error_headers, [payload]
        if isinstance(turn, list):
            return 200, {"Content-Type": es.CONTENT_TYPE}, turn
        if url.endswith("/converse-stream"):
            return (
                200,
                {"Content-Type": es.CONTENT_TYPE},
                (frame for _, frame in _converse.converse_stream(turn, self.count, stop=BEDROCK.canonical_stop(turn))),
            )
        return (
            200,
            {"Content-Type": "application/json"},
            [json.dumps(_converse.converse_body(turn, self.count, stop=BEDROCK.canonical_stop(turn))).encode()],
        )


def client_for(server: TurnServer, **config: Any) -> Any:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="test-secret",
        config=botocore_config.Config(**config) if config else None,
    )
    _botocore.attach(client, server)
    return client


def test_converse_json_reads_back_as_the_turn() -> None:
    answer = client_for(TurnServer(TURN)).converse(modelId="m", messages=USER)
    assert answer["output"]["message"] == {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "The user wants the weather.", "signature": "sig_0001"}}},
            {"text": "Checking both cities."},
            {"toolUse": {"toolUseId": "tooluse_0001_0", "name": "get_weather", "input": {"city": "Paris"}}},
            {"toolUse": {"toolUseId": "tu_2", "name": "get_weather", "input": {"city": "Rome"}}},
        ],
    }
    assert answer["stopReason"] == "tool_use"
    assert answer["usage"] == {"inputTokens": 20, "outputTokens": 11, "totalTokens": 31, "cacheReadInputTokens": 4}
    assert answer["metrics"] == {"latencyMs": 1}


def _assemble(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What an app builds from ConverseStream events (the loop strands and langchain-aws run)."""
    blocks: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {}
    for event in events:
        [(name, body)] = event.items()
        if name == "contentBlockStart":
            blocks[body["contentBlockIndex"]] = {"toolUse": dict(body["start"]["toolUse"], input="")}
        elif name == "contentBlockDelta":
            block = blocks.setdefault(body["contentBlockIndex"], {})
            delta = body["delta"]
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            elif "toolUse" in delta:
                block["toolUse"]["input"] += delta["toolUse"]["input"]
            elif "reasoningContent" in delta:
                reasoning = block.setdefault("reasoning", {"text": "", "signature": ""})
                for key in ("text", "signature"):
                    reasoning[key] += delta["reasoningContent"].get(key, "")
        elif name in ("messageStop", "metadata", "messageStart"):
            out[name] = body
    out["blocks"] = [blocks[i] for i in sorted(blocks)]
    return out


def test_converse_stream_reads_back_as_the_turn() -> None:
    stream = client_for(TurnServer(TURN)).converse_stream(modelId="m", messages=USER)["stream"]
    got = _assemble(stream)
    assert got["messageStart"] == {"role": "assistant"}
    reasoning, text, first, second = got["blocks"]
    assert reasoning == {"reasoning": {"text": "The user wants the weather.", "signature": "sig_0001"}}
    assert text == {"text": "Checking both cities."}
    assert (first["toolUse"]["toolUseId"], json.loads(first["toolUse"]["input"])) == (
        "tooluse_0001_0",
        {"city": "Paris"},
    )
    assert (second["toolUse"]["toolUseId"], json.loads(second["toolUse"]["input"])) == ("tu_2", {"city": "Rome"})
    assert got["messageStop"] == {"stopReason": "tool_use"}
    assert got["metadata"]["usage"]["totalTokens"] == 31


def test_stream_pieces_are_several_and_named() -> None:
    names = [
        name for name, _ in _converse.converse_stream(Turn(text="Hello there", tool=ToolCall(name="f", input={"a": 1})))
    ]
    assert names[0] == "messageStart"
    assert names[-2:] == ["messageStop", "metadata"]
    assert names.count("contentBlockStart") == 1
    assert names.count("contentBlockStop") == 2
    assert names.count("contentBlockDelta") > 4


@pytest.mark.parametrize(
    ("turn", "stop"),
    [
        (Turn(text="x"), "end_turn"),
        (Turn(text="x", stop_reason="length"), "max_tokens"),
        (Turn(text="x", stop_reason="content_filter"), "content_filtered"),
    ],
)
def test_stop_reasons_in_bedrocks_vocabulary(turn: Turn, stop: str) -> None:
    assert client_for(TurnServer(turn)).converse(modelId="m", messages=USER)["stopReason"] == stop


@pytest.mark.parametrize(
    ("status", "exception"),
    [
        (400, "ValidationException"),
        (404, "ResourceNotFoundException"),
        (429, "ThrottlingException"),
        (500, "InternalServerException"),
        (503, "ServiceUnavailableException"),
    ],
)
def test_error_turns_raise_botocores_modeled_exceptions(status: int, exception: str) -> None:
    client = client_for(
        TurnServer(ErrorSpec(status=status, message="scripted")), retries={"mode": "standard", "total_max_attempts": 1}
    )
    with pytest.raises(getattr(client.exceptions, exception)) as caught:
        client.converse(modelId="m", messages=USER)
    assert caught.value.response["Error"] == {"Code": exception, "Message": "scripted"}
    assert caught.value.response["ResponseMetadata"]["RequestId"] == "req-0001"


def test_a_scripted_429_is_retried_by_botocore_then_answered() -> None:
    server = TurnServer(ErrorSpec(status=429), Turn(text="ok"))
    answer = client_for(server).converse(modelId="m", messages=USER)
    assert answer["output"]["message"]["content"] == [{"text": "ok"}]
    assert answer["ResponseMetadata"]["RetryAttempts"] == 1


@pytest.mark.parametrize(
    ("error_type", "name"),
    [
        ("throttlingException", "throttlingException"),
        ("overloaded_error", "serviceUnavailableException"),
        ("odd_error", "modelStreamErrorException"),
    ],
)
def test_an_exception_mid_stream(error_type: str, name: str) -> None:
    frames = [frame for _, frame in _converse.converse_stream(Turn(text="Hello there"))]
    body = [*frames[:2], _converse.stream_exception(error_type, "stopped")[1]]
    events = iter(client_for(TurnServer(body)).converse_stream(modelId="m", messages=USER)["stream"])
    assert next(iter(next(events))) == "messageStart"
    assert next(iter(next(events))) == "contentBlockDelta"
    with pytest.raises(botocore_exceptions.EventStreamError) as caught:
        next(events)
    assert caught.value.response["Error"] == {"Code": name, "Message": "stopped"}


@pytest.mark.parametrize(
    "turn",
    [
        TURN,
        Turn(text="S"),
        Turn(text=""),
        Turn(text="Streaming answers arrive as many small pieces. " * 400),  # several joined frames
        Turn(text='quotes " and \\ and\nnew lines, café ✓ 日本語 🙂'),
        Turn.model_construct(text="a lone \ud800 surrogate, escaped as JSON escapes it"),  # not scriptable
        Turn(thinking="", text="t", tools=(ToolCall(name="f", input={"k": "v" * 3000}),)),
    ],
)
def test_joined_frames_carry_the_bytes_of_every_message_in_order(turn: Turn) -> None:
    messages = [data for _, data in _converse.converse_stream(turn, 7, stop="end_turn")]
    joined = list(_converse.stream_frames(turn, 7, stop="end_turn", joined=True))
    assert b"".join(frame.data for frame in joined) == b"".join(messages)
    assert len(joined) < len(messages) or len(messages) <= 6
    for frame in joined:  # a joined frame carries messages of its own name only
        assert {m.headers[":event-type"] for m in es.decode(frame.data)} == {frame.name}
    for data in messages:  # and every message is the event framed whole, as `eventstream.event` frames it
        (message,) = es.decode(data)
        assert es.event(str(message.headers[":event-type"]), message.payload) == data


@pytest.mark.parametrize(
    "turn",
    [
        TURN,
        Turn(text=""),
        Turn(text="S"),
        Turn(text="x" * 800),
        Turn(text="café ✓ 日本語 🙂"),
        Turn(text='quotes " and \\ and\nnew lines'),
        Turn.model_construct(text="a lone \ud800 surrogate, escaped as JSON escapes it"),  # not scriptable
        Turn(text="stopped", stop_reason="max_tokens"),
        Turn(text="refused", stop_reason="refusal"),
        Turn(text="guarded", stop_reason="guardrail_intervened"),
        Turn(text="counted", usage=Usage(output_tokens=3)),
        Turn(text="thought", thinking="hm"),
        Turn(text="called", tool=ToolCall(name="f", input={"q": 1})),
        *(Turn(text="y" * n) for n in range(12)),
    ],
)
def test_the_converse_json_of_a_text_answer_is_its_body_encoded(turn: Turn) -> None:
    for stop in (None, "end_turn", "max_tokens"):
        for _ in range(2):  # the second time from the bytes kept
            assert _converse.converse_json(turn, 3, stop=stop) == _converse.json_bytes(
                _converse.converse_body(turn, 3, stop=stop)
            )


_PROSE = "Streaming answers arrive as many small pieces, each framed on its own. "


@pytest.mark.parametrize(
    "turn",
    [
        TURN,
        Turn(text=""),
        Turn(thinking="", text="t", thinking_signature="sig"),
        Turn(text='quotes " and \\ and\nnew lines, café ✓ 日本語 🙂'),
        Turn.model_construct(text="a lone \ud800 surrogate, escaped as JSON escapes it"),  # not scriptable
        Turn(text="x" * 800),
        Turn(text=_PROSE * 2, tools=(ToolCall(name="f", input={"k": 'v"' * 40}),), stop_reason="max_tokens"),
        Turn(tool=ToolCall(name="f", input={"q": "r"}), usage=Usage(cache_creation_input_tokens=5)),
        *(Turn(text=(_PROSE * 15)[:n]) for n in range(41)),
        *(Turn(thinking=(_PROSE * 15)[:n], text="ok") for n in (0, 1, 2, 3, 17, 600)),
    ],
)
@pytest.mark.parametrize("malformed", [False, True])
def test_a_short_stream_rendered_at_once_is_its_messages_in_one_chunk(turn: Turn, malformed: bool) -> None:
    messages = [data for _, data in _converse.converse_stream(turn, 7, stop="end_turn", malformed_tool_json=malformed)]
    for _ in range(2):  # the second time from the starts and messages kept
        chunk = _converse.one_chunk(turn, 7, stop="end_turn", malformed_tool_json=malformed)
        assert chunk is not None
        assert chunk.body == b"".join(messages)
        assert chunk.content_end == len(chunk.body) < CHUNK_BYTES
        assert [frame.data for frame in chunk] == [chunk.body]  # iterated, the one frame the core would send


@pytest.mark.parametrize(
    "turn",
    [
        Turn(text="x" * 1025),  # more than it renders at once
        Turn(text="x" * 1024),  # not one chunk after all
        Turn(text="\n" * 1000),  # a short text that escapes into more than one chunk
        Turn(text="t", tools=(ToolCall(name="f", input={"k": "v" * 3000}),)),
    ],
)
def test_a_stream_longer_than_a_chunk_is_rendered_as_it_is_read(turn: Turn) -> None:
    assert _converse.one_chunk(turn, 7, stop="end_turn") is None


def test_the_messages_kept_between_answers_carry_each_answers_own_values() -> None:
    first = dict(_converse.converse_stream(Turn(text="one"), 0, stop="end_turn"))
    second = dict(_converse.converse_stream(Turn(text="one two", usage=Usage(input_tokens=3)), 1, stop="max_tokens"))
    assert json.loads(es.decode(second["messageStop"])[0].payload) == {"stopReason": "max_tokens"}
    assert json.loads(es.decode(first["messageStop"])[0].payload) == {"stopReason": "end_turn"}
    assert json.loads(es.decode(second["metadata"])[0].payload)["usage"]["inputTokens"] == 3
    stream = _converse.converse_stream(TURN, 0, stop="tool_use")
    stops = [json.loads(es.decode(data)[0].payload) for name, data in stream if name == "contentBlockStop"]
    assert stops == [{"contentBlockIndex": n} for n in range(4)]


def _seen(rendered: Any) -> tuple[Any, ...]:
    """Everything the core reads of an answer: status, headers, body, and each frame (its name and bytes)."""
    frames = rendered.frames
    listed = None if frames is None else [(f.name, f.data) for f in frames]
    return rendered.status, rendered.headers, rendered.body, type(frames).__name__, listed


def test_a_plain_text_answer_from_the_bytes_kept_is_the_full_rendering() -> None:
    from wirescript.recorded import RecordedRequest
    from wirescript.wires.bedrock import wire as _wire

    class Full(_wire.BedrockWire):
        def full(self, turn: Turn, record: RecordedRequest, joined: bool) -> Any:
            found = _wire.operation(record.path)
            return self._render(turn, record, found[1] if found else "converse", False, joined)

    texts = ["", "w", "Hello, world.", 'quotes " and \\ and\nnew lines', "café ✓ 日本語 🙂", "x" * 800, "y" * 1500]
    texts.append("z" * CHUNK_BYTES)  # a Converse body longer than a chunk: rendered in full every time
    stops = [None, "max_tokens", "length", "refusal", "content_filtered", "guardrail_intervened", "pause_turn"]
    turns = [Turn(text=text) if stop is None else Turn(text=text, stop_reason=stop) for text in texts for stop in stops]
    turns.append(Turn.model_construct(text="a lone \ud800 surrogate, escaped as JSON escapes it"))  # not scriptable
    turns += [  # not plain: the same text with what else its answer holds, never served another turn's bytes
        Turn(text="w", usage=Usage(output_tokens=3)),
        Turn(text="w", thinking="hm"),
        Turn(text="w", tool=ToolCall(name="f", input={"q": 1})),
    ]
    _wire._PLAIN.clear()  # once: what is kept for one turn and request must not serve another's
    wire = Full()
    for path in ("/model/m:0/converse", "/model/other/converse-stream"):
        for turn, joined, index in itertools.product(turns, (True, False), (0, 3, 9999, 12345)):
            record = RecordedRequest(index=index, method="POST", path=path, stream=path.endswith("stream"))
            expected = _seen(wire.full(turn, record, joined))
            assert _seen(wire.render(turn, record, joined=joined)) == expected, (turn, path, joined, index)
    assert len(_wire._PLAIN) > 50  # the kept bytes were used, not only the full rendering
    assert all(len(body) < CHUNK_BYTES for body in _wire._PLAIN.values())
