"""respx interop: a stub mounted as a respx route's side effect, for apps on plain httpx.

respx patches httpx, so the app keeps building its own `httpx.Client()` (or an SDK on httpx builds
it) and the route hands each request to the stub: `handle_request` for sync clients,
`handle_async_request` for async ones. The stub still records, streams lazily and fails loudly.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest
import respx

from _support import ANTHROPIC_MAJOR, chat_tools
from wirescript import ScriptTransport

ANTHROPIC = "https://api.anthropic.com"
BODY: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
USER = [{"role": "user", "content": "Hi"}]
TOOLS = chat_tools(["weather"])


# The app under test: plain httpx, its own client, no transport of ours.
def ask(stream: bool) -> tuple[int, list[str]]:
    with httpx.Client(base_url=ANTHROPIC) as client:
        if not stream:
            response = client.post("/v1/messages", json=BODY)
            return response.status_code, [b["text"] for b in response.json()["content"]]
        with client.stream("POST", "/v1/messages", json={**BODY, "stream": True}) as response:
            return response.status_code, _text_deltas(response.iter_lines())


async def ask_async(stream: bool) -> tuple[int, list[str]]:
    async with httpx.AsyncClient(base_url=ANTHROPIC) as client:
        if not stream:
            response = await client.post("/v1/messages", json=BODY)
            return response.status_code, [b["text"] for b in response.json()["content"]]
        async with client.stream("POST", "/v1/messages", json={**BODY, "stream": True}) as response:
            return response.status_code, _text_deltas([line async for line in response.aiter_lines()])


def _text_deltas(lines: Any) -> list[str]:
    events = [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]
    return [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_route_answers_a_plain_httpx_app_from_the_stub(is_async: bool, stream: bool) -> None:
    stub = ScriptTransport(["The quick brown fox jumps over the lazy dog."])
    with respx.mock(base_url=ANTHROPIC) as router:
        route = router.post("/v1/messages").mock(
            side_effect=stub.handle_async_request if is_async else stub.handle_request
        )
        status, texts = asyncio.run(ask_async(stream)) if is_async else ask(stream)
    assert status == 200
    assert "".join(texts) == "The quick brown fox jumps over the lazy dog."
    assert len(texts) > 1 if stream else len(texts) == 1  # a stream arrives in several deltas
    assert route.call_count == 1
    [request] = stub.requests
    assert (request.provider, request.model, request.stream) == ("anthropic", "claude-test", stream)
    assert request.messages == BODY["messages"]
    stub.check()


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_the_openai_sdk_on_httpx_streams_through_a_respx_route(is_async: bool) -> None:
    stub = ScriptTransport(
        [
            {"tool": {"name": "weather", "input": {"city": "Paris"}, "id": "call_1"}},
            "Sunny in Paris.",
        ]
    )

    async def run_async() -> tuple[Any, list[str]]:
        client = openai.AsyncOpenAI(api_key="test-key", http_client=httpx.AsyncClient())
        first = await client.chat.completions.create(model="gpt-test", messages=USER, tools=TOOLS)
        chunks = await client.chat.completions.create(model="gpt-test", messages=USER, stream=True, tools=TOOLS)
        deltas = [c.choices[0].delta.content or "" async for c in chunks if c.choices]
        await client.close()
        return first, deltas

    def run() -> tuple[Any, list[str]]:
        with openai.OpenAI(api_key="test-key", http_client=httpx.Client()) as client:
            first = client.chat.completions.create(model="gpt-test", messages=USER, tools=TOOLS)
            chunks = client.chat.completions.create(model="gpt-test", messages=USER, stream=True, tools=TOOLS)
            return first, [c.choices[0].delta.content or "" for c in chunks if c.choices]

    with respx.mock(base_url="https://api.openai.com/v1") as router:
        route = router.post("/chat/completions").mock(
            side_effect=stub.handle_async_request if is_async else stub.handle_request
        )
        first, deltas = asyncio.run(run_async()) if is_async else run()
    [call] = first.choices[0].message.tool_calls
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_1",
        "weather",
        {"city": "Paris"},
    )
    assert "".join(deltas) == "Sunny in Paris."
    assert len([d for d in deltas if d]) > 1  # streamed in several deltas
    assert route.call_count == 2
    assert [(r.provider, r.stream) for r in stub.requests] == [("openai_chat", False), ("openai_chat", True)]
    stub.check()


def test_a_host_route_lets_the_stub_pick_the_wire_by_path(respx_mock: respx.MockRouter) -> None:
    stub = ScriptTransport(["From chat.", "From responses."])
    respx_mock.route(host="api.openai.com").mock(side_effect=stub.handle_request)
    with openai.OpenAI(api_key="test-key", http_client=httpx.Client()) as client:
        chat = client.chat.completions.create(model="gpt-test", messages=USER, tools=TOOLS)
        response = client.responses.create(model="gpt-test", input="Hi")
    assert chat.choices[0].message.content == "From chat."
    assert response.output_text == "From responses."
    assert [r.provider for r in stub.requests] == ["openai_chat", "openai_responses"]


def test_an_overflow_through_respx_is_loud_and_not_retried() -> None:
    stub = ScriptTransport([])
    with respx.mock(base_url="https://api.openai.com/v1") as router:
        route = router.post("/chat/completions").mock(side_effect=stub.handle_request)
        with (
            openai.OpenAI(api_key="test-key", http_client=httpx.Client()) as client,
            pytest.raises(openai.APIStatusError) as info,
        ):
            client.chat.completions.create(model="gpt-test", messages=USER, tools=TOOLS)
    assert "is past the end of the script: it has 0 turn(s)" in str(info.value)
    assert (route.call_count, stub.overflow) == (1, 1)


@pytest.mark.skipif(
    ANTHROPIC_MAJOR >= 1, reason="anthropic >= 1 runs on httpx2, which respx does not intercept: use a transport"
)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_sdk_on_httpx_with_its_default_client_is_served_through_respx(is_async: bool) -> None:
    import anthropic

    stub = ScriptTransport(["Hello from the stub."])

    async def run_async() -> str:
        client = anthropic.AsyncAnthropic(api_key="test-key")  # wirescript: allow[WS103] respx intercepts httpx
        async with client.messages.stream(**BODY) as stream:
            return await stream.get_final_text()

    def run() -> str:
        client = anthropic.Anthropic(api_key="test-key")  # wirescript: allow[WS103] respx intercepts httpx
        with client.messages.stream(**BODY) as stream:
            return stream.get_final_text()

    with respx.mock(base_url=ANTHROPIC) as router:
        router.post("/v1/messages").mock(side_effect=stub.handle_async_request if is_async else stub.handle_request)
        text = asyncio.run(run_async()) if is_async else run()
    assert text == "Hello from the stub."
    assert stub.requests[0].stream is True
    stub.check()
