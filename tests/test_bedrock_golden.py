"""Bedrock answers byte for byte: what botocore reads from a stub, against bytes kept in `golden/bedrock.json`.

Each scenario is a script and the boto3 calls that read it (Converse, ConverseStream, InvokeModel and
its stream: text in one and in many deltas, reasoning, tool calls, usage with cache counts, stop
reasons, HTTP errors, in-stream exceptions, faults). The status, headers and body of every answer the
stub gave botocore are compared with the kept ones, through `stub.attach(client)` and through
`stub.intercept()`; and botocore's own event-stream parser must read every message of every stream.

The kept bytes come from an earlier release of the renderer: a change meant to make an answer
cheaper must not change a byte of it. To write them again (only for a change that means to alter
an answer): ``python tests/test_bedrock_golden.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
from botocore.eventstream import EventStreamBuffer  # noqa: E402
from botocore.exceptions import ClientError, EventStreamError  # noqa: E402

from wirescript import ScriptTransport  # noqa: E402
from wirescript._adapters import botocore as _botocore  # noqa: E402

GOLDEN = Path(__file__).parent / "golden" / "bedrock.json"
MODEL = "anthropic.claude-golden-v1:0"
HI = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "weather",
                "description": "The weather in a city.",
                "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
            }
        }
    ]
}
CLAUDE = {
    "anthropic_version": "bedrock-2023-05-31",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "tools": [{"name": "weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
}
PROSE = (
    "Streaming answers arrive as many small pieces, and every piece is framed on its own with a prelude, "
    "headers, a payload and two checksums; an encoder that does less per piece saves on every delta. "
) * 40
ESCAPES = 'She said "hi"\\there\n\ttab \u0007 bell, café ✓ 日本語 and an emoji 🙂 at the end.'
THINKING = {"thinking": "The user wants the weather; Paris first.", "text": "Checking both cities."}
TWO_CALLS = [
    {"name": "weather", "input": {"city": "Paris"}},
    {"name": "weather", "input": {"city": 'Rome, "Italy" ✓'}, "id": "tu_2"},
]
RICH = {
    **THINKING,
    "tools": TWO_CALLS,
    "usage": {"input_tokens": 20, "output_tokens": 11, "cache_read_input_tokens": 4},
}
CACHE_WRITES = {
    "text": "Cached.",
    "usage": {"input_tokens": 30, "cache_creation_input_tokens": 12, "cache_creation_1h_input_tokens": 5},
}

Call = Callable[[Any], Any]


def _converse(**extra: Any) -> Call:
    def call(client: Any) -> Any:
        try:
            answer = client.converse(modelId=MODEL, messages=HI, **extra)
        except ClientError as exc:
            return {"error": exc.response["Error"]["Code"]}
        return {"output": answer["output"], "stopReason": answer["stopReason"], "usage": answer["usage"]}

    return call


def _converse_stream(**extra: Any) -> Call:
    def call(client: Any) -> Any:
        try:
            stream = client.converse_stream(modelId=MODEL, messages=HI, **extra)["stream"]
        except ClientError as exc:
            return {"error": exc.response["Error"]["Code"]}
        return _events(stream)

    return call


def _events(stream: Any) -> dict[str, Any]:
    """Every event botocore parsed, in order, and what it raised at the end, if anything."""
    events: list[Any] = []
    try:
        for event in stream:
            events.append(event)
    except EventStreamError as exc:
        return {"events": events, "raised": exc.response["Error"]["Code"]}
    except Exception as exc:  # a dropped connection, as urllib3 raises it
        return {"events": events, "raised": type(exc).__name__}
    return {"events": events}


def _invoke(client: Any) -> Any:
    answer = client.invoke_model(modelId=MODEL, body=json.dumps(CLAUDE))
    return json.loads(answer["body"].read())


def _invoke_stream(client: Any) -> Any:
    stream = client.invoke_model_with_response_stream(modelId=MODEL, body=json.dumps(CLAUDE))["body"]
    return _events(stream)


SCENARIOS: dict[str, tuple[list[Any], list[Call]]] = {
    "converse one character": (["S"], [_converse()]),
    "converse 800 characters": ([PROSE[:800]], [_converse()]),
    "converse escapes and non-ASCII": ([ESCAPES], [_converse()]),
    "converse reasoning, text, two tool calls, cache reads": ([RICH], [_converse(toolConfig=TOOLS)]),
    "converse a tool call alone": ([{"tool": TWO_CALLS[0]}], [_converse(toolConfig=TOOLS)]),
    "converse reasoning with its own signature": (
        [{**THINKING, "thinking_signature": "sig-own"}],
        [_converse()],
    ),
    "converse cache writes split by ttl": ([CACHE_WRITES], [_converse()]),
    "converse stop reasons": (
        [
            {"text": "No.", "stop_reason": "refusal"},
            {"text": "Cut", "stop_reason": "max_tokens"},
            {"text": "Held.", "stop_reason": "guardrail_intervened"},
        ],
        [_converse(), _converse(), _converse()],
    ),
    "converse a 429 retried, then text": (
        [{"error": {"status": 429}}, "After the retry."],
        [_converse()],
    ),
    "converse errors by type and status": (
        [
            {"error": {"status": 400, "message": "Bad input."}},
            {"error": {"status": 403, "type": "AccessDeniedException", "headers": {"x-extra": "1"}}},
        ],
        [_converse(), _converse()],
    ),
    "stream one delta": (["S"], [_converse_stream()]),
    "stream a hundred deltas": ([PROSE[:800]], [_converse_stream()]),
    "stream several hundred deltas, over one chunk": ([PROSE[:3000]], [_converse_stream()]),
    "stream escapes and non-ASCII": ([ESCAPES], [_converse_stream()]),
    "stream an empty text": ([{"text": ""}], [_converse_stream()]),
    "stream reasoning, text, two tool calls, cache reads": ([RICH], [_converse_stream(toolConfig=TOOLS)]),
    "stream a tool call alone": ([{"tool": TWO_CALLS[0]}], [_converse_stream(toolConfig=TOOLS)]),
    "stream cache writes split by ttl": ([CACHE_WRITES], [_converse_stream()]),
    "stream stop reasons": (
        [{"text": "No.", "stop_reason": "refusal"}, {"text": "Cut off", "stop_reason": "max_tokens"}],
        [_converse_stream(), _converse_stream()],
    ),
    "stream exception events": (
        [
            {"text": "Partial answer", "fault": {"stream_error": {"type": "throttlingException", "message": "Slow"}}},
            {"text": "Partial", "fault": {"stream_error": {"type": "overloaded_error", "after": 2}}},
            {"text": "Partial", "fault": {"stream_error": {"type": "something_else", "message": "x", "after": 0}}},
        ],
        [_converse_stream(), _converse_stream(), _converse_stream()],
    ),
    "stream faults: dropped, cut, malformed tool input": (
        [
            {"text": "Dropped start", "fault": {"drop": ["messageStart", "metadata"]}},
            {"text": "Cut after three", "fault": {"cut_after": 3}},
            {"tool": TWO_CALLS[0], "fault": {"malformed_tool_json": True}},
            {"text": "Gone mid-way", "fault": {"disconnect_after": 2}},
        ],
        [_converse_stream(), _converse_stream(), _converse_stream(toolConfig=TOOLS), _converse_stream()],
    ),
    "stream an HTTP error": ([{"error": {"status": 400, "message": "No stream."}}], [_converse_stream()]),
    "invoke text and a tool call": ([{"text": "Invoked.", "tool": TWO_CALLS[0]}], [_invoke]),
    "invoke stream text and a tool call": ([{**THINKING, "tool": TWO_CALLS[0]}], [_invoke_stream]),
}


class _Tee:
    """A response's `raw`, noting each piece botocore reads from it."""

    def __init__(self, raw: Any, sink: list[bytes]) -> None:
        self._raw = raw
        self._sink = sink

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        for piece in self._raw.stream(*args, **kwargs):
            self._sink.append(piece)
            yield piece

    def read(self, *args: Any, **kwargs: Any) -> bytes:
        data: bytes = self._raw.read(*args, **kwargs)
        self._sink.append(data)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _client() -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDGOLDEN",
        aws_secret_access_key="golden-secret",
    )


def _tapped(client: Any, exchanges: list[dict[str, Any]]) -> None:
    """Note what the stub's `before-send` handler answers `client` with, as botocore reads it."""
    handler = _botocore._ATTACHED[client].handler

    def spy(request: Any, **kwargs: Any) -> Any:
        exchange: dict[str, Any] = {"url": request.url}
        exchanges.append(exchange)
        try:
            response = handler(request=request, **kwargs)
        except Exception as exc:
            exchange["raised"] = type(exc).__name__
            raise
        sink: list[bytes] = []
        exchange.update(status=response.status_code, headers=dict(response.headers), body=sink)
        response.raw = _Tee(response.raw, sink)
        return response

    events = client.meta.events
    events.unregister(_botocore._ATTACHED[client].event, unique_id=_botocore._HANDLER_ID)
    events.register_first(_botocore._ATTACHED[client].event, spy, unique_id=_botocore._HANDLER_ID)


def run(name: str, route: str = "attach") -> dict[str, Any]:
    """A scenario served through `route`: what each call returned, and each answer as botocore read it (bytes)."""
    turns, calls = SCENARIOS[name]
    stub = ScriptTransport(turns)
    exchanges: list[dict[str, Any]] = []
    if route == "attach":
        client = stub.attach(_client())
        _tapped(client, exchanges)
        results = [call(client) for call in calls]
    else:
        with stub.intercept():  # a client created inside the block is served by the stub until it closes
            client = _client()
            _tapped(client, exchanges)
            results = [call(client) for call in calls]
    for exchange in exchanges:
        if "body" in exchange:
            exchange["body"] = b"".join(exchange["body"])
    return {"results": results, "exchanges": exchanges}


_LONGEST = 4096
"""Bodies (and what the calls returned) up to this long are kept whole, to show where they differ; longer, by digest."""


def _digest(data: bytes) -> str:
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"


def kept_form(got: dict[str, Any]) -> dict[str, Any]:
    """What the golden file keeps of a run: bodies as hex (or a digest, when long), the returns as JSON."""
    exchanges = []
    for exchange in got["exchanges"]:
        kept = dict(exchange)
        if "body" in kept:
            body = kept["body"]
            kept["body"] = body.hex() if len(body) <= _LONGEST else _digest(body)
        exchanges.append(kept)
    returned = json.dumps(got["results"], default=repr, sort_keys=True)
    results = json.loads(returned) if len(returned) <= _LONGEST else _digest(returned.encode())
    return {"results": results, "exchanges": exchanges}


def _messages(body: bytes) -> list[dict[str, Any]]:
    """The messages of an event stream as botocore's own decoder reads them (both CRCs checked)."""
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    return [{"headers": m.headers, "payload": m.payload} for m in buffer]


def _kept() -> dict[str, Any]:
    kept: dict[str, Any] = json.loads(GOLDEN.read_text())
    return kept


def differences(got: dict[str, Any], kept: dict[str, Any]) -> list[str]:
    """Where `got` differs from `kept`: each answer's status, headers and body bytes, and what each call returned."""
    found = []
    if len(got["exchanges"]) != len(kept["exchanges"]):
        found.append(f"{len(got['exchanges'])} answers, {len(kept['exchanges'])} kept")
    for n, (mine, theirs) in enumerate(zip(got["exchanges"], kept["exchanges"], strict=False)):
        for key in sorted(mine.keys() | theirs.keys()):
            if mine.get(key) != theirs.get(key):
                if key == "body" and " " not in mine[key] + theirs.get(key, " "):
                    a, b = bytes.fromhex(mine[key]), bytes.fromhex(theirs[key])
                    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
                    found.append(f"answer {n}: body differs at byte {at} ({len(a)} bytes, {len(b)} kept)")
                else:
                    found.append(f"answer {n}: {key} {mine.get(key)!r}, kept {theirs.get(key)!r}")
    if got["results"] != kept["results"]:
        found.append("what the calls returned differs")
    return found


@pytest.mark.parametrize("route", ["attach", "intercept"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_answer_is_byte_for_byte_the_kept_one(name: str, route: str) -> None:
    assert differences(kept_form(run(name, route)), _kept()[name]) == []


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_botocore_parses_every_message_of_every_stream(name: str) -> None:
    got = run(name)
    streams = [e for e in got["exchanges"] if e.get("headers", {}).get("content-type", "").endswith("eventstream")]
    results = [r for r in got["results"] if isinstance(r, dict) and "events" in r]
    assert len(streams) == len(results) > 0 or not streams
    for exchange, result in zip(streams, results, strict=True):
        messages = _messages(exchange["body"])
        assert messages, "a stream with no messages"
        kinds = [m["headers"][":message-type"] for m in messages]
        names = [m["headers"][":event-type"] for m in messages if m["headers"][":message-type"] == "event"]
        # each event message is an event the client yielded, named by its `:event-type`
        assert [next(iter(event)) for event in result["events"]] == names
        if "exception" in kinds:  # and an exception message is what the stream raised, once, at its end
            assert kinds.count("exception") == 1
            assert kinds[-1] == "exception"
            assert result["raised"] == messages[-1]["headers"][":exception-type"]
        elif "raised" not in result:
            assert kinds == ["event"] * len(kinds)


def test_a_changed_byte_anywhere_is_a_difference() -> None:
    got = kept_form(run("stream reasoning, text, two tool calls, cache reads"))
    kept = _kept()["stream reasoning, text, two tool calls, cache reads"]
    assert differences(got, kept) == []
    body = bytearray(bytes.fromhex(kept["exchanges"][0]["body"]))
    for at in (0, 11, 12, len(body) // 2, len(body) - 1):
        changed = bytearray(body)
        changed[at] ^= 0x01
        mutated = {**kept, "exchanges": [{**kept["exchanges"][0], "body": bytes(changed).hex()}]}
        assert differences(got, mutated) == [
            f"answer 0: body differs at byte {at} ({len(body)} bytes, {len(body)} kept)"
        ]
    headers = {**kept["exchanges"][0]["headers"], "x-amzn-requestid": "req-9999"}
    assert differences(got, {**kept, "exchanges": [{**kept["exchanges"][0], "headers": headers}]}) != []


def test_the_kept_answers_cover_every_scenario() -> None:
    assert sorted(_kept()) == sorted(SCENARIOS)


def _write() -> None:  # pragma: no cover - run by hand, with the renderer whose bytes are kept
    import os
    import tempfile

    for name in list(os.environ):
        if name.startswith("AWS_"):
            del os.environ[name]
    empty = tempfile.mkdtemp()
    os.environ.update(
        AWS_CONFIG_FILE=f"{empty}/none", AWS_SHARED_CREDENTIALS_FILE=f"{empty}/none", AWS_EC2_METADATA_DISABLED="true"
    )
    kept = {name: kept_form(run(name)) for name in SCENARIOS}
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(kept)} scenarios to {GOLDEN}")


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["--write"]:
        _write()
