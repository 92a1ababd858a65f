"""pydantic-ai agents, driven over the wire: AnthropicModel, OpenAIChatModel and OpenAIResponsesModel.

Each model gets a provider built on a real SDK client whose HTTP client carries the stub, so the
framework, the SDK and its streaming all run for real and nothing reaches the network.
"""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from _support import anthropic_client, openai_client
from wirescript import ScriptTransport
from wirescript.recorded import text_of

SYSTEM = "You answer weather questions with the get_weather tool."
QUESTION = "What is the weather in Paris?"
SCRIPT = [
    {"thinking": "I need the weather.", "tool": {"name": "get_weather", "input": {"city": "Paris"}}},
    {"text": "It is sunny in Paris."},
]
FIRST_CALL_ID = {"anthropic": "toolu_0000_0", "openai_chat": "call_0000_0", "openai_responses": "call_0000_0"}


def make_model(kind: str, stub: ScriptTransport) -> Any:
    """A pydantic-ai model of the given kind whose provider's SDK client carries the stub."""
    if kind == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        provider = AnthropicProvider(anthropic_client=anthropic_client(stub, is_async=True))
        return AnthropicModel("claude-test", provider=provider)
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=openai_client(stub, is_async=True))
    model_class = OpenAIChatModel if kind == "openai_chat" else OpenAIResponsesModel
    return model_class("gpt-test", provider=provider)


def tool_result_text(kind: str, result: Any) -> tuple[str, str]:
    """(call id, text) of a tool result as the provider's request carried it."""
    if kind == "anthropic":
        return result["tool_use_id"], text_of(result["content"])
    if kind == "openai_chat":
        return result["tool_call_id"], text_of(result["content"])
    return result["call_id"], text_of(result["output"])


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
@pytest.mark.parametrize("kind", ["anthropic", "openai_chat", "openai_responses"])
def test_an_agent_runs_the_scripted_tool_call_and_sends_its_result(
    pydantic_ai: ModuleType, kind: str, stream: bool
) -> None:
    from pydantic_ai.messages import ThinkingPart, ToolCallPart

    stub = ScriptTransport(SCRIPT)
    agent = pydantic_ai.Agent(make_model(kind, stub), instructions=SYSTEM)
    ran: list[str] = []

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"Sunny, 21 C in {city}"

    async def main() -> tuple[str, list[Any]]:
        if not stream:
            result = await agent.run(QUESTION)
            return result.output, result.all_messages()
        async with agent.run_stream(QUESTION) as streamed:
            output = await streamed.get_output()
        return output, streamed.all_messages()

    output, messages = asyncio.run(main())
    assert output == "It is sunny in Paris."
    assert ran == ["Paris"]
    parts = [part for message in messages for part in message.parts]
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    assert [(c.tool_name, c.args_as_dict(), c.tool_call_id) for c in calls] == [
        ("get_weather", {"city": "Paris"}, FIRST_CALL_ID[kind])
    ]
    # The framework read the turn's thinking from this provider's wire format.
    assert [p.content for p in parts if isinstance(p, ThinkingPart)] == ["I need the weather."]
    first, second = stub.requests
    assert {first.provider, second.provider} == {kind}
    assert first.stream is second.stream is stream
    assert first.tool_names == ["get_weather"]
    assert first.system is not None
    assert first.system.endswith(SYSTEM)  # after whatever the framework adds
    assert first.last_user_text == QUESTION
    assert [tool_result_text(kind, r) for r in second.tool_results] == [(FIRST_CALL_ID[kind], "Sunny, 21 C in Paris")]
    assert stub.overflow == 0
    assert stub.pending == []
