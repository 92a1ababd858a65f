"""The cloud endpoints of the same providers: Anthropic on Vertex AI, and Azure OpenAI, through their SDK clients.

Same scripts and faults as the first-party endpoints; the records say what the cloud paths carry
(the model of a Vertex path, the Azure deployment and `api-version`, each cloud's credential).
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import openai
import pytest

from _support import chat_tools, httpx2
from wirescript import ScriptTransport

pytestmark = pytest.mark.skipif(httpx2 is None, reason="anthropic >= 1 and openai >= 3 run on httpx2")

VERTEX_MODEL = "claude-sonnet-4-5@20250929"
VERTEX_BASE = "/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models"
TOOL_TURN = {"text": "Checking.", "tool": {"name": "get_weather", "input": {"city": "Paris"}, "id": "toolu_1"}}
TOOLS = [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object"}}]
ASK = [{"role": "user", "content": "Weather in Paris?"}]


def vertex(stub: ScriptTransport, *, is_async: bool = False, **kwargs: Any) -> Any:
    assert httpx2 is not None
    options: dict[str, Any] = {"region": "us-east5", "project_id": "my-proj", "access_token": "fake-token", **kwargs}
    if is_async:
        return anthropic.AsyncAnthropicVertex(http_client=httpx2.AsyncClient(transport=stub), **options)
    return anthropic.AnthropicVertex(http_client=httpx2.Client(transport=stub), **options)


def azure(stub: ScriptTransport, *, is_async: bool = False, **kwargs: Any) -> Any:
    assert httpx2 is not None
    options: dict[str, Any] = {
        "api_version": "2024-10-21",
        "azure_endpoint": "https://myres.openai.azure.com",
        **kwargs,
    }
    if "azure_ad_token" not in options:
        options.setdefault("api_key", "test-key")
    if is_async:
        return openai.AsyncAzureOpenAI(http_client=httpx2.AsyncClient(transport=stub), **options)
    return openai.AzureOpenAI(http_client=httpx2.Client(transport=stub), **options)


def run(is_async: bool, value: Any) -> Any:
    async def wait() -> Any:
        return await value

    return asyncio.run(wait()) if is_async else value


# ------------------------------------------------------------------------------------------- Vertex


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_vertex_create_with_a_tool_call(is_async: bool) -> None:
    stub = ScriptTransport([TOOL_TURN])
    message = run(
        is_async,
        vertex(stub, is_async=is_async).messages.create(model=VERTEX_MODEL, max_tokens=100, messages=ASK, tools=TOOLS),
    )
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert (message.content[1].name, message.content[1].input) == ("get_weather", {"city": "Paris"})
    assert message.stop_reason == "tool_use"
    [record] = stub.requests
    assert (record.provider, record.model, record.stream) == ("anthropic", VERTEX_MODEL, False)
    assert record.path == f"{VERTEX_BASE}/{VERTEX_MODEL}:rawPredict"
    assert "model" not in record.body  # Vertex names the model in the path
    assert isinstance(record.body["anthropic_version"], str)
    assert record.api_key == "fake-token"
    assert record.headers["authorization"] == "<redacted>"
    assert record.tool_names == ["get_weather"]
    assert stub.problems == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_vertex_stream_with_a_tool_call(is_async: bool) -> None:
    stub = ScriptTransport([TOOL_TURN])
    client = vertex(stub, is_async=is_async)

    async def go() -> Any:
        if is_async:
            async with client.messages.stream(model=VERTEX_MODEL, max_tokens=100, messages=ASK, tools=TOOLS) as s:
                return await s.get_final_message()
        with client.messages.stream(model=VERTEX_MODEL, max_tokens=100, messages=ASK, tools=TOOLS) as s:
            return s.get_final_message()

    message = asyncio.run(go())
    assert message.content[0].text == "Checking."
    assert (message.content[1].name, message.content[1].input) == ("get_weather", {"city": "Paris"})
    [record] = stub.requests
    assert record.path == f"{VERTEX_BASE}/{VERTEX_MODEL}:streamRawPredict"
    assert (record.model, record.stream, record.body["stream"]) == (VERTEX_MODEL, True, True)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_vertex_error_turn(is_async: bool) -> None:
    stub = ScriptTransport([{"error": {"status": 429, "message": "slow down"}}, "After the retry."])
    client = vertex(stub, is_async=is_async)
    message = run(is_async, client.messages.create(model=VERTEX_MODEL, max_tokens=10, messages=ASK))
    assert message.content[0].text == "After the retry."  # the SDK's own retry, without sleeping
    assert [r.retry_count for r in stub.requests] == [0, 1]

    refused = ScriptTransport([{"error": {"status": 400, "message": "bad request, as scripted"}}])
    with pytest.raises(anthropic.BadRequestError, match="bad request, as scripted"):
        run(
            is_async,
            vertex(refused, is_async=is_async).messages.create(model=VERTEX_MODEL, max_tokens=10, messages=ASK),
        )


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_vertex_count_tokens(is_async: bool) -> None:
    stub = ScriptTransport(["unused"], side={"count_tokens": 11})
    count = run(is_async, vertex(stub, is_async=is_async).messages.count_tokens(model=VERTEX_MODEL, messages=ASK))
    assert count.input_tokens == 11
    [record] = stub.requests
    assert record.path == f"{VERTEX_BASE}/count-tokens:rawPredict"
    assert (record.provider, record.model) == ("count_tokens", VERTEX_MODEL)
    assert len(stub.pending) == 1


def _events(stub: ScriptTransport) -> list[str]:
    client = vertex(stub, max_retries=0)
    return [
        event.type for event in client.messages.create(model=VERTEX_MODEL, max_tokens=10, messages=ASK, stream=True)
    ]


def test_vertex_faults_apply_as_on_the_first_party_endpoint() -> None:
    whole = _events(ScriptTransport(["Hello there, Vertex."]))
    assert whole[0] == "message_start"
    assert whole[-1] == "message_stop"

    # cut_after counts the frames sent, `ping` included, which the SDK does not yield
    cut = _events(ScriptTransport([{"text": "Hello there, Vertex.", "fault": {"cut_after": 4}}]))
    assert cut == whole[:3]

    dropped = _events(ScriptTransport([{"text": "Hello there, Vertex.", "fault": {"drop": ["message_stop"]}}]))
    assert dropped == whole[:-1]

    stub = ScriptTransport([{"text": "Hello there, Vertex.", "fault": {"disconnect_after": 2}}])
    with pytest.raises((anthropic.APIConnectionError, httpx2.RemoteProtocolError)):  # type: ignore[union-attr]
        _events(stub)
    assert stub.problems == []


# -------------------------------------------------------------------------------------------- Azure


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_azure_chat_records_the_deployment_the_version_and_the_key(is_async: bool) -> None:
    stub = ScriptTransport([{"text": "Hi from Azure."}])
    completion = run(
        is_async,
        azure(stub, is_async=is_async).chat.completions.create(
            model="my-deployment", messages=[{"role": "user", "content": "Hi"}]
        ),
    )
    assert completion.choices[0].message.content == "Hi from Azure."
    [record] = stub.requests
    assert record.path == "/openai/deployments/my-deployment/chat/completions"
    assert (record.provider, record.model) == ("openai_chat", "my-deployment")
    assert record.query == {"api-version": "2024-10-21"}
    assert record.api_key == "test-key"
    assert record.headers["api-key"] == "<redacted>"
    assert "authorization" not in record.headers


def test_azure_fixed_deployment_wins_over_the_model_argument_and_an_ad_token_is_the_key() -> None:
    stub = ScriptTransport(["Fixed."])
    client = azure(stub, azure_deployment="fixed-dep", azure_ad_token="ad-token")
    client.chat.completions.create(model="ignored", messages=[{"role": "user", "content": "Hi"}])
    [record] = stub.requests
    assert (record.model, record.body["model"]) == ("fixed-dep", "ignored")
    assert record.api_key == "ad-token"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_azure_chat_stream_with_a_tool_call_and_a_fault(is_async: bool) -> None:
    stub = ScriptTransport([TOOL_TURN, {"text": "Cut short, on Azure.", "fault": {"cut_after": 2}}])
    client = azure(stub, is_async=is_async)

    async def go() -> list[list[Any]]:
        streams = []
        for _ in range(2):
            stream = client.chat.completions.create(
                model="dep",
                messages=[{"role": "user", "content": "Hi"}],
                stream=True,
                tools=chat_tools(["get_weather"]),
            )
            if is_async:
                streams.append([chunk async for chunk in await stream])
            else:
                streams.append(list(stream))
        return streams

    whole, cut = asyncio.run(go())
    calls = [c for chunk in whole for choice in chunk.choices for c in (choice.delta.tool_calls or [])]
    assert calls[0].function.name == "get_weather"
    assert "".join(c.function.arguments or "" for c in calls) == '{"city":"Paris"}'
    assert len(cut) == 2
    assert [r.model for r in stub.requests] == ["dep", "dep"]


def test_azure_responses_and_embeddings() -> None:
    stub = ScriptTransport(["Responded."])
    client = azure(stub)
    assert client.responses.create(model="dep-r", input="Hi").output_text == "Responded."
    vectors = client.embeddings.create(model="embed-dep", input="cat")
    assert len(vectors.data[0].embedding) == 1536
    responses, embeddings = stub.requests
    assert (responses.path, responses.provider, responses.model) == ("/openai/responses", "openai_responses", "dep-r")
    assert (embeddings.path, embeddings.provider, embeddings.model) == (
        "/openai/deployments/embed-dep/embeddings",
        "embeddings",
        "embed-dep",
    )
    assert embeddings.query == {"api-version": "2024-10-21"}
    assert stub.problems == []
