"""Record mode for the side endpoints and the cloud variants: what they answered replays the same.

Side endpoints (token counts, embeddings, model listings) go into the file's `"$side"`; Anthropic on
Vertex AI and on Bedrock, Azure OpenAI and boto3's bedrock-runtime client record turns. The
provider is always a stand-in (`ScriptTransport`, or one served on loopback for the network path).
"""

from __future__ import annotations

import base64
import json
import socket
import struct
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from _support import STACKS, anthropic_client, httpx2, no_aws_environment, openai_client
from wirescript import RecordingTransport, ScriptTransport, load_script, script_json_schema

yaml = pytest.importorskip("yaml")

SIDE = {
    "count_tokens": [42, 43, 44],
    "embeddings": {"cat": [0.5, -0.25, 0.125], "dog": [0.0, 1.0, -1.0]},
    "models": ["claude-recorded-1"],
}
"""What the stand-in provider answers: not what a replay would make up (a count from the request,
SHA-256 vectors of 1536 floats), so a replay that gives these back has them from the recording."""

ASK = [{"role": "user", "content": "How many tokens is this?"}]


def gemini_client(transport: Any) -> Any:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    http = STACKS[0].Client(transport=transport)
    return genai.Client(api_key="test-key", http_options=types.HttpOptions(httpx_client=http))


def _side_calls(transport: Any) -> dict[str, Any]:
    """Every side endpoint of the three providers, and one message, through the real SDKs."""
    claude = anthropic_client(transport, max_retries=0)
    gpt = openai_client(transport, max_retries=0)
    said: dict[str, Any] = {
        "message": claude.messages.create(model="claude-x", max_tokens=10, messages=ASK).content[0].text,
        "anthropic count": claude.messages.count_tokens(model="claude-x", messages=ASK).input_tokens,
        "openai count": gpt.responses.input_tokens.count(model="gpt-x", input="Count me").input_tokens,
        "openai base64": [e.embedding for e in gpt.embeddings.create(model="text-embedding-3-small", input="cat").data],
        "openai float": [
            e.embedding
            for e in gpt.embeddings.create(
                model="text-embedding-3-small", input=["cat", "dog"], encoding_format="float"
            ).data
        ],
        "anthropic models": [m.id for m in claude.models.list()],
    }
    gemini = gemini_client(transport)
    said["gemini count"] = gemini.models.count_tokens(model="gemini-2.5-flash", contents="Count me").total_tokens
    embedded = gemini.models.embed_content(model="gemini-embedding-001", contents=["dog", "cat"])
    said["gemini embeddings"] = [e.values for e in embedded.embeddings or []]
    return said


def test_the_side_endpoints_record_into_side_and_replay_what_they_answered(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport(["Hello"], side=SIDE))
    live = _side_calls(rec)
    assert live["anthropic count"] == 42
    assert live["openai base64"] == [[0.5, -0.25, 0.125]]  # the openai SDK asks for base64 by default
    assert rec.notes == []
    assert rec.side is not None
    assert rec.side.count_tokens == [42, 43, 44]
    assert rec.side.embeddings == SIDE["embeddings"]
    assert rec.side.models == ["claude-recorded-1", "claude-sonnet-4-5"]  # the listing as the provider sent it

    path = rec.save()
    header = path.read_text(encoding="utf-8").splitlines()[0]
    genai = pytest.importorskip("google.genai")
    for sdk, version in (
        ("anthropic", anthropic.__version__),
        ("openai", openai.__version__),
        ("google-genai", genai.__version__),
    ):
        assert f"{sdk} {version}" in header  # each SDK that called a side endpoint, told by its User-Agent
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert list(data) == ["*", "$side"]  # a plain list has no room for "$side": the default queue
    pytest.importorskip("jsonschema").Draft202012Validator(script_json_schema()).validate(data)
    replay = ScriptTransport(load_script(path))
    assert _side_calls(replay) == live
    assert replay.problems == []
    assert _side_calls(ScriptTransport(["Hello"])) != live  # without the recording, other answers


def test_a_json_recording_holds_side_too(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.json", upstream=ScriptTransport([], side={"count_tokens": [9]}))
    assert anthropic_client(rec).messages.count_tokens(model="m", messages=ASK).input_tokens == 9
    rec.save()
    assert json.loads(rec.path.read_text(encoding="utf-8")) == {"$side": {"count_tokens": [9]}}
    replay = ScriptTransport(load_script(rec.path))
    assert anthropic_client(replay).messages.count_tokens(model="m", messages=ASK).input_tokens == 9


def test_a_side_error_is_passed_through_and_noted(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport([], side={"count_tokens": []}))
    with pytest.raises(anthropic.BadRequestError):
        anthropic_client(rec, max_retries=0).messages.count_tokens(model="m", messages=ASK)
    assert rec.side is None
    [note] = rec.notes
    assert "count_tokens" in note
    assert "not recorded: an error answer (status 400); a side script has no error answers" in note


def test_an_embedding_answer_decodes_base64_float32_and_refuses_a_mismatch() -> None:
    from wirescript.recorded import RecordedRequest
    from wirescript.wires import EmbeddingsWire

    vector = [0.1, -0.2]
    packed = base64.b64encode(struct.pack("<2f", *vector)).decode()
    record = RecordedRequest(index=0, method="POST", path="/v1/embeddings", messages=["a", "b"])
    body = json.dumps({"data": [{"index": 1, "embedding": [1.0]}, {"index": 0, "embedding": packed}]}).encode()
    decoded = EmbeddingsWire().decode_side(record, 200, {}, body)
    assert decoded is not None
    assert decoded["embeddings"]["a"] == list(struct.unpack("<2f", struct.pack("<2f", *vector)))
    assert decoded["embeddings"]["b"] == [1.0]
    one = json.dumps({"data": [{"index": 0, "embedding": [1.0]}]}).encode()  # two texts, one vector
    assert EmbeddingsWire().decode_side(record, 200, {}, one) is None


# ---------------------------------------------------------------------- cloud variants over httpx

on_httpx2 = pytest.mark.skipif(
    httpx2 is None, reason="the cloud clients of anthropic >= 1 and openai >= 3 run on httpx2"
)

TOOLS = [{"name": "weather", "description": "Weather.", "input_schema": {"type": "object"}}]
THOUGHT = {
    "thinking": "Paris, then Rome.",
    "thinking_signature": "EqQBsignature-from-the-cloud",
    "tools": [{"name": "weather", "input": {"city": "Paris"}}, {"name": "weather", "input": {"city": "Rome"}}],
    "usage": {"input_tokens": 31, "output_tokens": 17},
}


def _message(client: Any, model: str, *, stream: bool) -> Any:
    asked = {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}
    if stream:
        with client.messages.stream(**asked) as events:
            return events.get_final_message()
    return client.messages.create(**asked)


def _shape(message: Any) -> Any:
    return (
        [
            (b.type, getattr(b, "thinking", None), getattr(b, "signature", None), getattr(b, "input", None))
            for b in message.content
        ],
        message.stop_reason,
        (message.usage.input_tokens, message.usage.output_tokens),
    )


def vertex(transport: Any) -> Any:
    assert httpx2 is not None
    return anthropic.AnthropicVertex(
        region="us-east5",
        project_id="my-proj",
        access_token="fake-token",
        http_client=httpx2.Client(transport=transport),
    )


def bedrock(transport: Any) -> Any:
    assert httpx2 is not None
    pytest.importorskip("botocore", reason="AnthropicBedrock signs its requests with botocore (the bedrock group)")
    return anthropic.AnthropicBedrock(
        aws_access_key="AKIDTEST",
        aws_secret_key="test-secret",
        aws_region="us-east-1",
        http_client=httpx2.Client(transport=transport),
    )


@on_httpx2
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("cloud", ["vertex", "bedrock"])
def test_anthropic_on_vertex_and_bedrock_records_and_replays(tmp_path: Path, cloud: str, stream: bool) -> None:
    make, model = (vertex, "claude-sonnet-4-5@20250929") if cloud == "vertex" else (bedrock, "anthropic.claude-x-v1:0")
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport([THOUGHT]))
    live = _message(make(rec), model, stream=stream)
    assert rec.notes == []
    [turn] = rec.turns
    assert turn.thinking_signature == THOUGHT["thinking_signature"]
    assert [c.input for c in turn.tool_calls] == [{"city": "Paris"}, {"city": "Rome"}]
    raw = rec.save().read_bytes()
    assert f"anthropic {anthropic.__version__}".encode() in raw.splitlines()[0]  # the header names the SDK
    assert b"fake-token" not in raw  # Vertex AI's access token
    assert b"AKIDTEST" not in raw  # Bedrock's access key id
    replay = ScriptTransport(load_script(rec.path))
    again = _message(make(replay), model, stream=stream)
    assert _shape(again) == _shape(live)
    assert replay.problems == []


@on_httpx2
def test_vertex_count_tokens_records(tmp_path: Path) -> None:
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport([], side={"count_tokens": [77]}))
    assert vertex(rec).messages.count_tokens(model="claude-x@1", messages=ASK).input_tokens == 77
    replay = ScriptTransport(load_script(rec.save()))
    assert vertex(replay).messages.count_tokens(model="claude-x@1", messages=ASK).input_tokens == 77


@on_httpx2
def test_a_bedrock_error_and_an_in_stream_exception_record(tmp_path: Path) -> None:
    upstream = ScriptTransport(
        [
            {"error": {"status": 429, "message": "Too many requests"}},
            {"text": "Part", "fault": {"stream_error": {"type": "throttlingException", "message": "Slow", "after": 3}}},
        ]
    )
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=upstream)
    client = bedrock(rec).with_options(max_retries=0)
    with pytest.raises(anthropic.RateLimitError):
        _message(client, "anthropic.claude-x", stream=False)
    with pytest.raises(Exception):  # noqa: B017, PT011 - AnthropicBedrock raises the exception message as an APIError
        _message(client, "anthropic.claude-x", stream=True)
    error, streamed = rec.turns
    assert error.error is not None
    assert (error.error.status, error.error.type, error.error.message) == (
        429,
        "ThrottlingException",
        "Too many requests",
    )
    assert streamed.fault is not None
    assert streamed.fault.stream_error is not None
    assert (streamed.fault.stream_error.type, streamed.fault.stream_error.message) == ("throttlingException", "Slow")


@on_httpx2
def test_azure_openai_chat_and_embeddings_record_and_replay(tmp_path: Path) -> None:
    assert httpx2 is not None

    def azure(transport: Any) -> Any:
        return openai.AzureOpenAI(
            api_key="test-key",
            api_version="2024-10-21",
            azure_endpoint="https://myres.openai.azure.com",
            max_retries=0,
            http_client=httpx2.Client(transport=transport),
        )

    def calls(client: Any) -> Any:
        stream = client.chat.completions.create(
            model="my-deployment", messages=[{"role": "user", "content": "Hi"}], stream=True
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
        vector = client.embeddings.create(model="my-embeddings", input="cat").data[0].embedding
        return text, vector

    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport(["Hello from Azure."], side=SIDE))
    live = calls(azure(rec))
    assert live == ("Hello from Azure.", [0.5, -0.25, 0.125])
    assert rec.notes == []
    replay = ScriptTransport(load_script(rec.save()))
    assert calls(azure(replay)) == live
    assert replay.problems == []


# ---------------------------------------------------------------------- boto3's bedrock-runtime client

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
HI = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": {"type": "object"}}}}]}


def boto_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **options: Any) -> Any:
    boto3 = pytest.importorskip("boto3")
    no_aws_environment(monkeypatch, tmp_path)
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="test-secret",
        **options,
    )


def _boto_calls(client: Any) -> list[Any]:
    """Converse, ConverseStream, InvokeModel and its stream, as an app reads them."""
    said: list[Any] = []
    answer = client.converse(modelId=MODEL, messages=HI, toolConfig=TOOL_CONFIG)
    said.append((answer["output"]["message"]["content"], answer["stopReason"], answer["usage"]))
    events = list(client.converse_stream(modelId=MODEL, messages=HI, toolConfig=TOOL_CONFIG)["stream"])
    said.append([e for e in events if "metadata" not in e])  # metadata holds latency metrics
    body = json.dumps(
        {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Hi"}],
            "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
        }
    )
    message = json.loads(client.invoke_model(modelId=MODEL, body=body)["body"].read())
    said.append((message["content"], message["stop_reason"], message["usage"]))
    chunks = client.invoke_model_with_response_stream(modelId=MODEL, body=body)["body"]
    said.append([json.loads(c["chunk"]["bytes"]) for c in chunks if "chunk" in c][:-1])  # the last has metrics
    return said


BOTO_TURNS = [
    {
        "thinking": "Look it up.",
        "thinking_signature": "sig-from-converse",
        "tool": {"name": "weather", "input": {"city": "Paris"}, "id": "tooluse_1"},
        "usage": {"input_tokens": 12, "output_tokens": 8, "cache_read_input_tokens": 4},
    },
    {"text": "Streamed answer.", "thinking": "Hm.", "thinking_signature": "sig-streamed", "stop_reason": "max_tokens"},
    {"text": "Invoked.", "thinking": "So.", "thinking_signature": "sig-invoked"},
    {"text": "Invoked, streamed.", "tool": {"name": "weather", "input": {"city": "Rome"}, "id": "toolu_9"}},
]


def test_boto3_records_through_attach_and_replays(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    client = boto_client(monkeypatch, tmp_path)
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=ScriptTransport(BOTO_TURNS))
    live = _boto_calls(rec.attach(client))
    assert rec.notes == []
    assert [t.thinking_signature for t in rec.turns] == ["sig-from-converse", "sig-streamed", "sig-invoked", None]
    assert rec.turns[1].stop_reason == "max_tokens"
    rec.detach(client)
    raw = rec.save().read_bytes()
    assert b"AKIDTEST" not in raw  # neither the access key id nor the SigV4 signature it is part of
    assert b"test-secret" not in raw
    assert b"Signature" not in raw
    assert b"botocore " in raw.splitlines()[0]  # the header names the library that sent it
    replay = ScriptTransport(load_script(rec.path))
    assert _boto_calls(replay.attach(client)) == live
    assert replay.problems == []


def test_boto3_records_over_the_network_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No upstream: the recorder sends botocore's signed request on over the network (here to loopback)."""
    pytest.importorskip("uvicorn")
    connect, create_connection = socket.socket.connect, socket.create_connection
    provider = ScriptTransport(["Over the network."])
    with provider.serve() as url:
        client = boto_client(monkeypatch, tmp_path, endpoint_url=url)
        monkeypatch.setattr(socket.socket, "connect", connect)  # loopback sockets back, for the stand-in's server
        monkeypatch.setattr(socket, "create_connection", create_connection)
        with RecordingTransport(tmp_path / "rec.yaml") as rec:
            answer = rec.attach(client).converse(modelId=MODEL, messages=HI)
    assert answer["output"]["message"]["content"] == [{"text": "Over the network."}]
    [record] = provider.requests
    assert record.api_key is not None  # the stand-in got botocore's SigV4-signed request, key id and all
    assert record.api_key.get_secret_value() == "AKIDTEST"
    assert rec.closed
    assert [t.text for t in load_script(rec.path)] == ["Over the network."]  # type: ignore[union-attr]


def test_the_recording_server_does_not_forward_bedrock_runtime_requests() -> None:
    """botocore signs the host it sends to: a request signed for loopback cannot go on to AWS, so it gets a 404."""
    from _support import ANTHROPIC_HX
    from wirescript.recording import Rehost

    provider = ScriptTransport(["never"])
    with ANTHROPIC_HX.Client(transport=Rehost(provider)) as client:
        response = client.post(f"http://127.0.0.1:8123/model/{MODEL}/converse", json={"messages": HI})
    assert response.status_code == 404
    assert "no provider serves this path" in response.text
    assert provider.requests == []


def test_a_converse_stream_tool_call_and_an_in_stream_exception_record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """ConverseStream's events are put back together as botocore's caller would: the tool call from its
    `contentBlockStart` and `toolUse` deltas; an `exception` message becomes the turn's stream error."""
    exceptions = pytest.importorskip("botocore.exceptions")
    client = boto_client(monkeypatch, tmp_path)
    upstream = ScriptTransport(
        [
            {"text": "Checking.", "tool": {"name": "weather", "input": {"city": "Paris"}, "id": "tooluse_7"}},
            {"text": "Part", "fault": {"stream_error": {"type": "throttlingException", "message": "Slow", "after": 3}}},
        ]
    )
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=upstream)
    rec.attach(client)

    def stream() -> list[Any]:
        events = client.converse_stream(modelId=MODEL, messages=HI, toolConfig=TOOL_CONFIG)["stream"]
        try:
            return [e for e in events if "metadata" not in e]
        finally:  # botocore raises at the exception message and reads no further: closing ends the body
            events.close()

    live = stream()
    with pytest.raises(exceptions.EventStreamError, match="Slow"):
        stream()
    assert rec.notes == []
    called, cut = rec.turns
    assert called.text == "Checking."
    assert [(c.id, c.name, c.input) for c in called.tool_calls] == [("tooluse_7", "weather", {"city": "Paris"})]
    assert cut.text == "Part"
    assert cut.stop_reason is None  # the stream never got to its messageStop
    assert cut.fault is not None
    assert cut.fault.stream_error is not None
    assert (cut.fault.stream_error.type, cut.fault.stream_error.message) == ("throttlingException", "Slow")
    rec.detach(client)

    replay = ScriptTransport(load_script(rec.save()))
    replay.attach(client)
    assert stream() == live
    with pytest.raises(exceptions.EventStreamError, match="Slow"):
        stream()
    assert replay.problems == []


def test_converse_stream_tool_arguments_that_are_not_json_are_noted_not_recorded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    client = boto_client(monkeypatch, tmp_path)
    upstream = ScriptTransport(
        [{"tool": {"name": "weather", "input": {"city": "Rome"}}, "fault": {"malformed_tool_json": True}}]
    )
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=upstream)
    events = list(rec.attach(client).converse_stream(modelId=MODEL, messages=HI, toolConfig=TOOL_CONFIG)["stream"])
    assert any("contentBlockDelta" in e for e in events)  # botocore passes the fragments on as they came
    assert rec.turns == []
    [note] = rec.notes
    assert note.endswith("the bedrock wire could not read its answer (status 200)")
