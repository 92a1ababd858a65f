"""Bedrock through the real boto3 client and anthropic.AnthropicBedrock, served in-process by the Bedrock wire."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from _blocked import BLOCK_HTTPX
from _support import no_aws_environment, thread_sleeps
from wirescript import ScriptTransport
from wirescript.builder import tool_result_text as builder_tool_result_text
from wirescript.errors import ScriptError, UsageError
from wirescript.wires import BedrockWire
from wirescript.wires.bedrock import eventstream

boto3 = pytest.importorskip("boto3")
botocore = pytest.importorskip("botocore")
from botocore.config import Config  # noqa: E402
from botocore.exceptions import EndpointConnectionError, EventStreamError, ReadTimeoutError  # noqa: E402
from botocore.parsers import ResponseParserError  # noqa: E402

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
PROFILE = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0"
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
HI = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
SOCKET_CONNECT, CREATE_CONNECTION = socket.socket.connect, socket.create_connection


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    no_aws_environment(monkeypatch, tmp_path)


def client(*, token: str | None = None, **config: Any) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="test-secret",
        aws_session_token=token,
        config=Config(**config) if config else None,
    )


def no_retries() -> Any:
    return client(retries={"total_max_attempts": 1})


CLAUDE_TOOLS = [{"name": "weather", "input_schema": {"type": "object"}}]
"""The Messages `tools` of an InvokeModel body: the tool its turns call."""


def invoke_body(**extra: Any) -> str:
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 100, "messages": HI, "tools": CLAUDE_TOOLS}
    return json.dumps({**body, **extra})


# ---------------------------------------------------------------------------- converse


def test_converse_tool_loop_records_the_tool_result_and_everything_asked() -> None:
    stub = ScriptTransport(
        [{"text": "Checking.", "tool": {"name": "weather", "input": {"city": "Paris"}}}, {"text": "Sunny, 21°C."}]
    )
    bedrock = stub.attach(client(token="SESSION-TOKEN"))
    first = bedrock.converse(
        modelId=MODEL,
        system=[{"text": "Be brief."}, {"text": "Use tools."}],
        messages=HI,
        toolConfig=TOOLS,
        inferenceConfig={"maxTokens": 200, "temperature": 0.5},
    )
    assert first["stopReason"] == "tool_use"
    text, call = first["output"]["message"]["content"]
    assert text == {"text": "Checking."}
    use = call["toolUse"]
    assert (use["name"], use["input"]) == ("weather", {"city": "Paris"})
    assert first["usage"]["totalTokens"] == first["usage"]["inputTokens"] + first["usage"]["outputTokens"]
    result = {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": "sunny"}, {"json": {"c": 21}}]}}
    second = bedrock.converse(
        modelId=MODEL,
        messages=[*HI, first["output"]["message"], {"role": "user", "content": [result]}],
        toolConfig=TOOLS,
    )
    assert second["output"]["message"]["content"] == [{"text": "Sunny, 21°C."}]
    assert second["stopReason"] == "end_turn"
    assert second["ResponseMetadata"]["RequestId"] == "req-0001"

    one, two = stub.requests
    assert (one.provider, one.model, one.path) == ("bedrock", MODEL, f"/model/{MODEL}/converse")
    assert one.system == "Be brief.\nUse tools."
    assert one.tool_names == ["weather"]
    assert one.tools[0]["inputSchema"]["json"]["type"] == "object"
    assert (one.max_tokens, one.temperature, one.stream) == (200, 0.5, False)
    assert one.tool_results == []
    assert two.tool_results == [result]
    assert BedrockWire.tool_result_text(two.tool_results[0]) == 'sunny{"c":21}'
    assert builder_tool_result_text(two.tool_results[0]) == 'sunny{"c":21}'
    assert one.api_key is not None
    assert one.api_key.get_secret_value() == "AKIDTEST"
    assert "AKIDTEST" not in repr(one)
    assert one.headers["authorization"] == one.headers["x-amz-security-token"] == "<redacted>"
    assert "SESSION-TOKEN" not in json.dumps(one.headers)
    assert stub.problems == []


def test_an_inference_profile_arn_is_the_recorded_model() -> None:
    stub = ScriptTransport(["Hi."])
    stub.attach(client()).converse(modelId=PROFILE, messages=HI)
    assert stub.requests[0].model == PROFILE


def test_reasoning_usage_and_bedrock_stop_reasons() -> None:
    turns = [
        {"thinking": "Hmm.", "text": "Done.", "usage": {"input_tokens": 7, "output_tokens": 3}},
        {"text": "Blocked.", "stop_reason": "guardrail_intervened"},
        {"text": "Filtered.", "stop_reason": "content_filtered"},
        {"text": "Cut", "stop_reason": "max_tokens"},
    ]
    bedrock = ScriptTransport(turns).attach(client())
    first = bedrock.converse(modelId=MODEL, messages=HI)
    reasoning = first["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]
    assert reasoning["text"] == "Hmm."
    assert first["usage"] == {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}
    stops = [bedrock.converse(modelId=MODEL, messages=HI)["stopReason"] for _ in range(3)]
    assert stops == ["guardrail_intervened", "content_filtered", "max_tokens"]


def test_a_misspelt_bedrock_stop_reason_fails_at_construction() -> None:
    with pytest.raises(ScriptError, match="stop_reason"):
        ScriptTransport([{"text": "x", "stop_reason": "guardrail_intervene"}])


# ---------------------------------------------------------------------------- converse_stream


def collect(stream: Any) -> tuple[list[str], str, str]:
    """Event names, the text, and the tool input as streamed."""
    names, text, tool_input = [], "", ""
    for event in stream:
        (name, body), *_ = event.items()
        names.append(name)
        delta = body.get("delta", {})
        text += delta.get("text", "")
        tool_input += delta.get("toolUse", {}).get("input", "")
    return names, text, tool_input


def drain(stream: Any, seen: list[str]) -> None:
    """Read a stream to its end, noting each event's name."""
    for event in stream:
        seen.append(next(iter(event)))


def test_converse_stream_sends_text_then_a_tool_call_in_pieces() -> None:
    stub = ScriptTransport([{"text": "Checking the weather.", "tool": {"name": "weather", "input": {"city": "Paris"}}}])
    response = stub.attach(client()).converse_stream(modelId=MODEL, messages=HI, toolConfig=TOOLS)
    events = list(response["stream"])
    names = [next(iter(e)) for e in events]
    assert names[0] == "messageStart"
    assert names[-2:] == ["messageStop", "metadata"]
    start = next(e["contentBlockStart"] for e in events if "contentBlockStart" in e)
    assert start["start"]["toolUse"]["name"] == "weather"
    pieces = [
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert len(pieces) > 1
    assert json.loads("".join(pieces)) == {"city": "Paris"}
    assert "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e) == (
        "Checking the weather."
    )
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"
    assert stub.requests[0].stream is True


def test_an_in_stream_exception_arrives_after_the_events_before_it() -> None:
    fault = {"stream_error": {"type": "throttlingException", "message": "Too many tokens", "after": 2}}
    stub = ScriptTransport([{"text": "Hello there, world.", "fault": fault}])
    stream = stub.attach(client()).converse_stream(modelId=MODEL, messages=HI)["stream"]
    seen: list[str] = []
    with pytest.raises(EventStreamError) as raised:
        drain(stream, seen)
    assert seen == ["messageStart", "contentBlockDelta"]
    assert raised.value.response["Error"] == {"Code": "throttlingException", "Message": "Too many tokens"}


def test_an_anthropic_error_type_in_stream_becomes_the_bedrock_exception() -> None:
    stub = ScriptTransport([{"text": "Hello.", "fault": {"stream_error": {"type": "overloaded_error"}}}])
    with pytest.raises(EventStreamError) as raised:
        list(stub.attach(client()).converse_stream(modelId=MODEL, messages=HI)["stream"])
    assert raised.value.response["Error"]["Code"] == "serviceUnavailableException"


def test_faults_cut_and_drop_whole_event_stream_messages() -> None:
    turns = [
        {"text": "Hello there, world.", "fault": {"cut_after": 3}},
        {"text": "Hello there, world.", "fault": {"drop": ["messageStop"]}},
        {"text": "Hi", "tool": {"name": "weather", "input": {"city": "Oslo"}}, "fault": {"malformed_tool_json": True}},
    ]
    bedrock = ScriptTransport(turns).attach(client())
    names, _, _ = collect(bedrock.converse_stream(modelId=MODEL, messages=HI)["stream"])
    assert names == ["messageStart", "contentBlockDelta", "contentBlockDelta"]
    names, text, _ = collect(bedrock.converse_stream(modelId=MODEL, messages=HI)["stream"])
    assert "messageStop" not in names
    assert names[-1] == "metadata"
    assert text == "Hello there, world."
    _, _, tool_input = collect(bedrock.converse_stream(modelId=MODEL, messages=HI, toolConfig=TOOLS)["stream"])
    with pytest.raises(json.JSONDecodeError):
        json.loads(tool_input)


def test_a_disconnect_mid_stream_is_urllib3s_protocol_error() -> None:
    urllib3_exceptions = pytest.importorskip("urllib3.exceptions")
    stub = ScriptTransport([{"text": "Hello there, world.", "fault": {"disconnect_after": 2}}])
    stream = stub.attach(client()).converse_stream(modelId=MODEL, messages=HI)["stream"]
    seen: list[str] = []
    with pytest.raises(urllib3_exceptions.ProtocolError):
        drain(stream, seen)
    assert seen == ["messageStart", "contentBlockDelta"]


def test_a_timeout_mid_stream_is_urllib3s_read_timeout() -> None:
    urllib3_exceptions = pytest.importorskip("urllib3.exceptions")
    stub = ScriptTransport([{"text": "Hello there, world.", "fault": {"timeout_after": 2}}])
    stream = stub.attach(client()).converse_stream(modelId=MODEL, messages=HI)["stream"]
    seen: list[str] = []
    with pytest.raises(urllib3_exceptions.ReadTimeoutError):
        drain(stream, seen)
    assert seen == ["messageStart", "contentBlockDelta"]


@pytest.mark.parametrize("fault", [{"disconnect_after": 0}, {"timeout_after": 0}])
def test_a_connection_lost_before_the_response_is_retried_by_botocore(fault: dict[str, int]) -> None:
    stub = ScriptTransport([{"text": "lost", "fault": fault}, "Second try."])
    response = stub.attach(client()).converse(modelId=MODEL, messages=HI)
    assert response["output"]["message"]["content"] == [{"text": "Second try."}]
    assert response["ResponseMetadata"]["RetryAttempts"] == 1
    assert len(stub.requests) == 2


def test_a_delay_past_the_read_timeout_is_botocores_read_timeout() -> None:
    stub = ScriptTransport([{"text": "Too slow.", "fault": {"first_byte_delay": 5}}])
    bedrock = stub.attach(client(read_timeout=0.2, retries={"total_max_attempts": 1}))
    started = time.perf_counter()
    with pytest.raises(ReadTimeoutError):
        bedrock.converse(modelId=MODEL, messages=HI)
    assert 0.2 <= time.perf_counter() - started < 2


def test_a_delay_fault_really_waits() -> None:
    stub = ScriptTransport([{"text": "Slow.", "fault": {"first_byte_delay": 0.2}}])
    started = time.perf_counter()
    stub.attach(client()).converse(modelId=MODEL, messages=HI)
    assert time.perf_counter() - started >= 0.2


# ---------------------------------------------------------------------------- errors and retries


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, "ThrottlingException"),
        (400, "ValidationException"),
        (503, "ServiceUnavailableException"),
        (500, "InternalServerException"),
        (424, "ModelErrorException"),
    ],
)
def test_a_scripted_status_is_the_modeled_exception(status: int, code: str) -> None:
    stub = ScriptTransport([{"error": {"status": status, "message": "Nope."}}])
    bedrock = stub.attach(no_retries())
    with pytest.raises(getattr(bedrock.exceptions, code)) as raised:
        bedrock.converse(modelId=MODEL, messages=HI)
    assert raised.value.response["Error"] == {"Code": code, "Message": "Nope."}
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == status


def test_a_scripted_exception_type_wins_over_the_status() -> None:
    stub = ScriptTransport([{"error": {"status": 429, "type": "ModelNotReadyException"}}])
    bedrock = stub.attach(no_retries())
    with pytest.raises(bedrock.exceptions.ModelNotReadyException):
        bedrock.converse(modelId=MODEL, messages=HI)


@pytest.mark.parametrize("mode", ["legacy", "standard", "adaptive"])
def test_botocore_retries_for_real_without_sleeping(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, {"error": {"status": 429}}, "Finally."])
    bedrock = stub.attach(client(retries={"mode": mode, "total_max_attempts": 3}))
    slept = thread_sleeps(monkeypatch)  # botocore sleeps its backoff with time.sleep
    response = bedrock.converse(modelId=MODEL, messages=HI)
    assert sum(slept) < 0.05, slept  # the real backoff is 0.7 s (legacy) to 4 s (adaptive)
    assert response["ResponseMetadata"]["RetryAttempts"] == 2
    attempts = [str(r.headers.get("amz-sdk-request")).partition(";")[0] for r in stub.requests]
    assert attempts == ["attempt=1", "attempt=2", "attempt=3"]


def test_retries_stop_where_botocore_says() -> None:
    stub = ScriptTransport([{"error": {"status": 503}}] * 3)
    bedrock = stub.attach(client())
    with pytest.raises(bedrock.exceptions.ServiceUnavailableException):
        bedrock.converse(modelId=MODEL, messages=HI)
    assert len(stub.requests) == 3
    assert stub.problems == []


def test_an_unscripted_request_is_loud_and_not_retried() -> None:
    stub = ScriptTransport([])
    bedrock = stub.attach(client())
    with pytest.raises(bedrock.exceptions.ValidationException, match="wirescript"):
        bedrock.converse(modelId=MODEL, messages=HI)
    assert len(stub.requests) == 1
    assert [p.kind for p in stub.problems] == ["unscripted"]


def test_an_operation_no_wire_serves_is_a_loud_404_in_bedrocks_envelope() -> None:
    stub = ScriptTransport(["unused"])
    bedrock = stub.attach(no_retries())
    with pytest.raises(bedrock.exceptions.ResourceNotFoundException):
        bedrock.apply_guardrail(guardrailIdentifier="g", guardrailVersion="1", source="INPUT", content=[])
    assert [p.kind for p in stub.problems] == ["unknown_endpoint"]
    assert stub.pending  # nothing consumed


# ---------------------------------------------------------------------------- invoke_model


def test_invoke_model_answers_the_anthropic_messages_body() -> None:
    stub = ScriptTransport([{"text": "Invoked.", "tool": {"name": "weather", "input": {"city": "Rome"}}}])
    response = stub.attach(client()).invoke_model(modelId=MODEL, body=invoke_body(system="Be brief."))
    assert response["contentType"] == "application/json"
    message = json.loads(response["body"].read())
    assert [b["type"] for b in message["content"]] == ["text", "tool_use"]
    assert message["stop_reason"] == "tool_use"
    assert message["model"] == MODEL
    record = stub.requests[0]
    assert (record.model, record.system, record.stream, record.max_tokens) == (MODEL, "Be brief.", False, 100)


def test_invoke_model_with_response_stream_sends_each_event_in_a_chunk() -> None:
    stub = ScriptTransport([{"text": "Streamed.", "tool": {"name": "weather", "input": {"city": "Rome"}}}])
    response = stub.attach(client()).invoke_model_with_response_stream(modelId=MODEL, body=invoke_body())
    events = [json.loads(e["chunk"]["bytes"]) for e in response["body"]]
    assert events[0]["type"] == "message_start"
    assert events[-1]["type"] == "message_stop"
    assert events[-1]["amazon-bedrock-invocationMetrics"]["outputTokenCount"] >= 1
    partial = "".join(e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta")
    assert json.loads(partial) == {"city": "Rome"}
    assert stub.requests[0].stream is True


def test_an_invoke_stream_exception_raises_event_stream_error() -> None:
    fault = {"stream_error": {"type": "modelStreamErrorException", "message": "Model failed.", "after": 1}}
    stub = ScriptTransport([{"text": "Hello.", "fault": fault}])
    body = stub.attach(client()).invoke_model_with_response_stream(modelId=MODEL, body=invoke_body())["body"]
    with pytest.raises(EventStreamError) as raised:
        list(body)
    assert raised.value.response["Error"]["Code"] == "modelStreamErrorException"


# ---------------------------------------------------------------------------- attach, intercept, server


def test_attach_twice_or_attach_a_non_client_is_a_usage_error() -> None:
    stub = ScriptTransport([])
    bedrock = stub.attach(client())
    with pytest.raises(UsageError, match="already"):
        stub.attach(bedrock)
    with pytest.raises(UsageError, match="boto3"):
        stub.attach(object())


def test_detach_gives_the_client_back_to_botocore() -> None:
    stub = ScriptTransport(["Served."])
    bedrock = stub.attach(no_retries())
    bedrock.converse(modelId=MODEL, messages=HI)
    stub.detach(bedrock)
    with pytest.raises(EndpointConnectionError):  # the socket refused: it went to the network
        bedrock.converse(modelId=MODEL, messages=HI)
    assert len(stub.requests) == 1


def test_a_client_created_inside_intercept_is_served_and_given_back_after() -> None:
    from botocore.client import ClientCreator

    original = ClientCreator.__dict__["create_client"]
    before = no_retries()
    stub = ScriptTransport(["Intercepted.", "Again."])
    with stub.intercept():
        assert ClientCreator.__dict__["create_client"] is not original
        inside = no_retries()
        assert inside.converse(modelId=MODEL, messages=HI)["output"]["message"]["content"] == [{"text": "Intercepted."}]
        with pytest.raises(EndpointConnectionError):
            before.converse(modelId=MODEL, messages=HI)  # created before the block: not reached
    assert ClientCreator.__dict__["create_client"] is original
    with pytest.raises(EndpointConnectionError):
        inside.converse(modelId=MODEL, messages=HI)
    assert len(stub.requests) == 1
    assert stub.pending  # "Again." was never served


def test_intercept_leaves_other_services_and_hosts_alone() -> None:
    from wirescript._adapters import botocore as _botocore

    stub = ScriptTransport([])
    with stub.intercept(hosts=["api.anthropic.com"]):
        assert client() not in _botocore._ATTACHED
    with stub.intercept(hosts="*"):  # every host, still only the service a wire serves
        s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="A", aws_secret_access_key="B")
        assert s3 not in _botocore._ATTACHED
        assert client() in _botocore._ATTACHED  # the same block does take a bedrock-runtime client


def test_the_fixture_with_intercept_serves_a_client_the_test_creates(wirescript: Any) -> None:
    stub = wirescript(["From the fixture."], intercept=True)
    reply = client().converse(modelId=MODEL, messages=HI)
    assert reply["output"]["message"]["content"] == [{"text": "From the fixture."}]
    assert stub.requests[0].provider == "bedrock"


def test_hold_keeps_boto3_calls_in_flight_until_release() -> None:
    stub = ScriptTransport(["one", "two"])
    bedrock = stub.attach(client())
    replies: list[str] = []

    def call() -> None:
        replies.append(bedrock.converse(modelId=MODEL, messages=HI)["output"]["message"]["content"][0]["text"])

    with stub.holding():
        workers = [threading.Thread(target=call) for _ in range(2)]
        for worker in workers:
            worker.start()
        stub.wait_for_requests(2)
        assert replies == []  # both recorded, neither answered
    for worker in workers:
        worker.join(5)
    assert sorted(replies) == ["one", "two"]


def test_a_bedrock_api_key_is_the_recorded_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-1")
    stub = ScriptTransport(["Hi."])
    stub.attach(client()).converse(modelId=MODEL, messages=HI)
    record = stub.requests[0]
    assert record.api_key is not None
    assert record.api_key.get_secret_value() == "bedrock-api-key-1"
    assert "bedrock-api-key-1" not in json.dumps(record.headers)


def test_the_loopback_server_serves_a_client_given_endpoint_url(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvicorn")
    # The server and the client need their loopback sockets (the only address used): sockets back.
    monkeypatch.setattr(socket.socket, "connect", SOCKET_CONNECT)
    monkeypatch.setattr(socket, "create_connection", CREATE_CONNECTION)
    stub = ScriptTransport(["Over HTTP.", {"text": "Streamed over HTTP.", "tool": {"name": "weather", "input": {}}}])
    with stub.serve() as url:
        assert url.startswith("http://127.0.0.1:")
        remote = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            endpoint_url=url,
            aws_access_key_id="AKIDTEST",
            aws_secret_access_key="test-secret",
        )
        first = remote.converse(modelId=MODEL, messages=HI)
        names, text, _ = collect(remote.converse_stream(modelId=MODEL, messages=HI, toolConfig=TOOLS)["stream"])
    assert first["output"]["message"]["content"] == [{"text": "Over HTTP."}]
    assert text == "Streamed over HTTP."
    assert names[-1] == "metadata"
    assert [r.model for r in stub.requests] == [MODEL, MODEL]


# ---------------------------------------------------------------------------- AnthropicBedrock (issue 17)

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")


def anthropic_bedrock(stub: ScriptTransport, **kwargs: Any) -> Any:
    return anthropic.AnthropicBedrock(
        aws_access_key="AKIDTEST",
        aws_secret_key="test-secret",
        aws_region="us-east-1",
        http_client=httpx2.Client(transport=stub),
        **kwargs,
    )


def test_anthropic_bedrock_streams_a_tool_call() -> None:
    stub = ScriptTransport([{"text": "Let me look.", "tool": {"name": "weather", "input": {"city": "Lima"}}}])
    with anthropic_bedrock(stub).messages.stream(
        model=PROFILE, max_tokens=100, messages=[{"role": "user", "content": "Weather in Lima?"}], tools=CLAUDE_TOOLS
    ) as stream:
        text = "".join(stream.text_stream)
        message = stream.get_final_message()
    assert text == "Let me look."
    assert message.stop_reason == "tool_use"
    tool = message.content[1]
    assert (tool.type, tool.name, tool.input) == ("tool_use", "weather", {"city": "Lima"})
    record = stub.requests[0]
    assert record.path.endswith("/invoke-with-response-stream")
    assert record.stream is True
    assert record.model == PROFILE
    assert "model" not in record.body
    assert "anthropic_version" in record.body
    assert record.api_key is not None
    assert record.api_key.get_secret_value() == "AKIDTEST"
    assert record.headers["authorization"] == "<redacted>"


def test_anthropic_bedrock_create_and_an_error_turn() -> None:
    stub = ScriptTransport(["Plain.", {"error": {"status": 429, "message": "Slow down."}}, {"error": {"status": 400}}])
    bedrock = anthropic_bedrock(stub, max_retries=1)
    message = bedrock.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    assert message.content[0].text == "Plain."
    assert message.id.startswith("msg_bdrk_")
    with pytest.raises(anthropic.BadRequestError):  # the 429 was retried at once, then the 400
        bedrock.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    assert [r.path.rsplit("/", 1)[1] for r in stub.requests] == ["invoke"] * 3
    assert stub.problems == []


def read_all(manager: Any) -> None:
    with manager as stream:
        for _ in stream:
            pass


def test_anthropic_bedrock_sees_an_in_stream_exception_as_an_api_error() -> None:
    stub = ScriptTransport([{"text": "Hello there.", "fault": {"stream_error": {"type": "throttlingException"}}}])
    stream = anthropic_bedrock(stub).messages.stream(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
    )
    with pytest.raises(anthropic.APIStatusError) as raised:
        read_all(stream)
    assert "throttlingException" in str(raised.value.body)


def test_the_chunks_are_event_stream_messages_botocore_checks() -> None:
    # The bytes on the wire, decoded by wirescript's own CRC-checking decoder.
    stub = ScriptTransport(["Hi there."])
    httpx_client = httpx2.Client(transport=stub)
    response = httpx_client.post(
        f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{MODEL}/invoke-with-response-stream",
        content=invoke_body(),
    )
    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    messages = eventstream.decode(response.content)
    assert {m.headers[":event-type"] for m in messages} == {"chunk"}


def test_async_anthropic_bedrock_streams_and_creates() -> None:
    import asyncio

    stub = ScriptTransport([{"text": "Async.", "tool": {"name": "weather", "input": {"city": "Quito"}}}, "Plain."])

    async def main() -> tuple[Any, Any]:
        claude = anthropic.AsyncAnthropicBedrock(
            aws_access_key="AKIDTEST",
            aws_secret_key="test-secret",
            aws_region="us-east-1",
            http_client=httpx2.AsyncClient(transport=stub),
        )
        asked = [{"role": "user", "content": "Hi"}]
        async with claude.messages.stream(model=MODEL, max_tokens=10, messages=asked, tools=CLAUDE_TOOLS) as stream:
            streamed = await stream.get_final_message()
        created = await claude.messages.create(model=MODEL, max_tokens=10, messages=asked)
        return streamed, created

    streamed, created = asyncio.run(main())
    assert streamed.content[1].input == {"city": "Quito"}
    assert created.content[0].text == "Plain."
    assert [r.stream for r in stub.requests] == [True, False]


# ---------------------------------------------------------------------------- strict Converse


def test_converse_strict_rules_refuse_what_bedrock_refuses_and_consume_no_turn() -> None:
    stub = ScriptTransport(["Sunny."])
    bedrock = stub.attach(no_retries())
    same_role_twice = [*HI, {"role": "user", "content": [{"text": "And tomorrow?"}]}]
    with pytest.raises(botocore.exceptions.ClientError) as info:
        bedrock.converse(modelId=MODEL, messages=same_role_twice)
    error = info.value.response["Error"]
    assert error["Code"] == "ValidationException"
    assert error["Message"].startswith("A conversation must alternate between user and assistant roles.")
    assert "bedrock.roles-must-alternate" in error["Message"]
    unanswered = [
        *HI,
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "weather", "input": {}}}]},
        {"role": "user", "content": [{"text": "Never mind."}]},
    ]
    with pytest.raises(botocore.exceptions.ClientError, match=r"Expected toolResult blocks at messages\.2\.content"):
        bedrock.converse(modelId=MODEL, messages=unanswered, toolConfig=TOOLS)
    with pytest.raises(botocore.exceptions.ClientError, match="The toolConfig field must be defined"):
        bedrock.converse(modelId=MODEL, messages=[*unanswered[:2], _result("tooluse_1")])
    assert [p.kind for p in stub.problems] == ["strict", "strict", "strict"]
    # Nothing was consumed: a conversation Bedrock accepts still gets turn 0.
    answered = [*unanswered[:2], _result("tooluse_1")]
    reply = bedrock.converse(modelId=MODEL, messages=answered, toolConfig=TOOLS)
    assert reply["output"]["message"]["content"][0]["text"] == "Sunny."


def test_converse_strict_rules_can_be_skipped() -> None:
    stub = ScriptTransport(["Fine."], strict_skip=["bedrock.roles-must-alternate"])
    twice = [*HI, {"role": "user", "content": [{"text": "And tomorrow?"}]}]
    assert stub.attach(no_retries()).converse(modelId=MODEL, messages=twice)["stopReason"] == "end_turn"
    assert stub.problems == []


def test_a_converse_body_checked_alone_skips_rules_named_in_any_collection() -> None:
    from wirescript.strict import check_request

    both = [*HI, {"role": "user", "content": [{"text": " "}]}]  # two user messages, the second blank

    def first(skip: Any) -> str | None:
        found = check_request("bedrock", {"messages": both}, skip=skip)
        return found.rule.id if found is not None else None

    assert first(frozenset()) == "bedrock.roles-must-alternate"
    assert first(frozenset({"bedrock.roles-must-alternate"})) == "bedrock.blank-text"  # the next rule in order
    assert first(frozenset({"bedrock.roles-must-alternate", "bedrock.blank-text"})) is None
    for skip in ({"bedrock.roles-must-alternate"}, ["bedrock.roles-must-alternate"]):  # not only a frozenset
        assert first(skip) == "bedrock.blank-text"


def _result(tool_id: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"toolResult": {"toolUseId": tool_id, "content": [{"text": "21 °C"}]}}]}


# ---------------------------------------------------------------------------- the body as a file, other operations


def test_an_invoke_model_body_reads_as_botocores_streaming_body_reads_a_socket() -> None:
    """Every way `StreamingBody` reads: in parts, by chunks and lines, into a buffer, counting with `tell()`."""
    stub = ScriptTransport(["Hello there, world."] * 6)
    bedrock = stub.attach(client())

    def body() -> Any:
        return bedrock.invoke_model(modelId=MODEL, body=invoke_body())["body"]

    def same(data: bytes) -> Any:  # the answer, but for its id (numbered by request)
        message = json.loads(data)
        assert message.pop("id").startswith("msg_bdrk_")
        return message

    whole = body().read()
    assert same(whole)["content"] == [{"type": "text", "text": "Hello there, world."}]
    parts = body()
    assert parts.readable()
    head = parts.read(5)
    assert (head, parts.tell()) == (whole[:5], len(whole))  # the server's one chunk was pulled whole
    assert same(head + parts.read()) == same(whole)
    assert parts.read(5) == b""  # at the end: nothing more, and the length checked against content-length
    assert same(b"".join(body().iter_chunks(chunk_size=16))) == same(whole)
    [line] = body().iter_lines()  # one line of JSON
    assert same(line) == same(whole)
    [line] = body().readlines()
    assert same(line) == same(whole)
    into = body()
    buffer = bytearray(8)
    read = []
    while count := into.readinto(buffer):
        read.append(bytes(buffer[:count]))
    assert same(b"".join(read)) == same(whole)
    assert stub.problems == []


def test_an_operation_no_wire_serves_is_refused_loudly_with_nothing_consumed() -> None:
    """ListAsyncInvokes (a GET without a body) reaches the stub, which says no wire serves it."""
    stub = ScriptTransport(["Unused."])
    bedrock = stub.attach(client())
    with pytest.raises(bedrock.exceptions.ResourceNotFoundException, match="GET /async-invoke: no wire serves"):
        bedrock.list_async_invokes()
    [record] = stub.requests
    assert (record.method, record.path, record.content) == ("GET", "/async-invoke", b"")
    [problem] = stub.problems
    assert problem.kind == "unknown_endpoint"
    assert "Nothing was consumed from the script" in problem
    assert bedrock.converse(modelId=MODEL, messages=HI)["output"]["message"]["content"] == [{"text": "Unused."}]


def test_any_botocore_client_reaches_the_stub_a_form_encoded_body_included() -> None:
    """`attach` takes any botocore client: a query-protocol one sends a form-encoded text body, seen as sent."""
    sts = boto3.client("sts", region_name="us-east-1", aws_access_key_id="AKIDTEST", aws_secret_access_key="x")
    stub = ScriptTransport([])
    stub.attach(sts)
    with pytest.raises(ResponseParserError):  # the refusal is JSON; STS answers in XML
        sts.get_caller_identity()
    [record] = stub.requests
    assert (record.method, record.path) == ("POST", "/")
    assert record.content == b"Action=GetCallerIdentity&Version=2011-06-15"
    assert len(stub.problems) == 1


_NO_HTTPX = (
    BLOCK_HTTPX
    + """
import threading
import boto3
from wirescript import ScriptTransport

stub = ScriptTransport(["Hello without httpx.", {"text": "Streamed.", "fault": {"delay": 0.001}}, "Held."])
bedrock = stub.attach(
    boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKIDTEST", aws_secret_access_key="s")
)
hi = [{"role": "user", "content": [{"text": "hi"}]}]
print(bedrock.converse(modelId="m", messages=hi)["output"]["message"]["content"][0]["text"])
events = bedrock.converse_stream(modelId="m", messages=hi)["stream"]
print("".join(e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e))
stub.hold()
threading.Timer(0.05, stub.release).start()
print(bedrock.converse(modelId="m", messages=hi)["output"]["message"]["content"][0]["text"])
stub.check()
assert not {"httpx", "httpx2", "anyio"} & set(sys.modules), sorted(sys.modules)
"""
)


def test_a_boto3_only_project_needs_neither_httpx_nor_httpx2(tmp_path: Any) -> None:
    """httpx, httpx2 and anyio blocked from import: Converse, ConverseStream with a fault, a held call: all served."""
    env = {"AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}
    env.update({name: value for name, value in os.environ.items() if name in ("PATH", "PYTHONPATH")})
    result = subprocess.run([sys.executable, "-c", _NO_HTTPX], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["Hello without httpx.", "Streamed.", "Held."]
