"""A pydantic-ai agent on its Google model, driven over the Gemini wire.

`GoogleProvider` gets an `httpx2.AsyncClient` carrying the stub, so pydantic-ai, google-genai and
its SSE decoding all run for real and nothing reaches the network.
"""

from __future__ import annotations

import asyncio
import base64
from types import ModuleType
from typing import Any

import pytest

from wirescript import ScriptTransport

SYSTEM = "You answer weather questions with the get_weather tool."
QUESTION = "What is the weather in Paris?"
SCRIPT = [
    {
        "thinking": "I need the weather.",
        "tool": {"name": "get_weather", "input": {"city": "Paris"}},
        "usage": {"input_tokens": 40, "output_tokens": 9},
    },
    {"text": "It is sunny in Paris.", "usage": {"input_tokens": 60, "output_tokens": 6}},
]


def google_model(stub: ScriptTransport) -> Any:
    """pydantic-ai's GoogleModel whose provider's HTTP client carries the stub."""
    import httpx2
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    # A timeout other than httpx's 5 s default: pydantic-ai warns about that one.
    provider = GoogleProvider(api_key="test-key", http_client=httpx2.AsyncClient(transport=stub, timeout=60))
    return GoogleModel("gemini-test", provider=provider)


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
def test_an_agent_runs_the_scripted_function_call_and_sends_its_result(pydantic_ai: ModuleType, stream: bool) -> None:
    from pydantic_ai.messages import ThinkingPart, ToolCallPart

    stub = ScriptTransport(SCRIPT)
    agent = pydantic_ai.Agent(google_model(stub), instructions=SYSTEM)
    ran: list[str] = []

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"Sunny, 21 C in {city}"

    async def main() -> tuple[str, list[Any], Any]:
        if not stream:
            result = await agent.run(QUESTION)
            return result.output, result.all_messages(), result.usage
        async with agent.run_stream(QUESTION) as streamed:
            output = await streamed.get_output()
        return output, streamed.all_messages(), streamed.usage

    output, messages, usage = asyncio.run(main())
    assert output == "It is sunny in Paris."
    assert ran == ["Paris"]
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (100, 15, 2)

    response_parts = messages[1].parts
    thinking = [p for p in response_parts if isinstance(p, ThinkingPart)]
    assert [p.content for p in thinking if p.content] == ["I need the weather."]
    [call] = [p for p in response_parts if isinstance(p, ToolCallPart)]
    assert (call.tool_name, call.args_as_dict(), call.tool_call_id) == ("get_weather", {"city": "Paris"}, "fc_0000_0")

    first, second = stub.requests
    assert [r.provider for r in stub.requests] == ["gemini", "gemini"]
    assert [r.stream for r in stub.requests] == [stream, stream]
    assert first.model == second.model == "gemini-test"
    assert first.system is not None
    assert SYSTEM in first.system.splitlines()  # pydantic-ai adds a note of its own on another line
    assert first.tool_names == second.tool_names == ["get_weather"]
    assert first.last_user_text == QUESTION
    assert first.tool_results == []
    assert second.tool_results == [
        {
            "functionResponse": {
                "id": "fc_0000_0",
                "name": "get_weather",
                "response": {"return_value": "Sunny, 21 C in Paris"},
            }
        }
    ]
    # The model's turn goes back as it came, the function call still carrying its thought signature.
    sent_back = [p for m in second.messages if m["role"] == "model" for p in m["parts"] if "functionCall" in p]
    assert sent_back == [
        {
            "functionCall": {"args": {"city": "Paris"}, "id": "fc_0000_0", "name": "get_weather"},
            "thoughtSignature": base64.b64encode(b"sig_0000").decode(),
        }
    ]
    assert first.api_key == "test-key"
    assert stub.overflow == 0


def test_a_scripted_rate_limit_reaches_the_agent_as_a_model_http_error(pydantic_ai: ModuleType) -> None:
    from pydantic_ai.exceptions import ModelHTTPError

    stub = ScriptTransport([{"error": {"status": 429, "message": "Quota exceeded."}}])
    agent = pydantic_ai.Agent(google_model(stub))
    with pytest.raises(ModelHTTPError) as info:
        asyncio.run(agent.run(QUESTION))
    assert info.value.status_code == 429
    assert info.value.model_name == "gemini-test"
    assert info.value.body == {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}}
    assert len(stub.requests) == 1


def test_an_agent_that_calls_the_model_once_too_often_fails_loudly(pydantic_ai: ModuleType) -> None:
    from pydantic_ai.exceptions import ModelHTTPError

    stub = ScriptTransport(SCRIPT[:1])
    agent = pydantic_ai.Agent(google_model(stub))

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "Sunny"

    with pytest.raises(ModelHTTPError) as info:
        asyncio.run(agent.run(QUESTION))
    assert info.value.status_code == 400
    assert "is past the end of the script: it has 1 turn(s), all served" in str(info.value.body)
    assert stub.overflow == 1
