"""The openai-agents `Runner`, driven over the wire on the Responses and Chat Completions models.

The models get an `AsyncOpenAI` client whose HTTP client carries the stub; tracing is disabled in
the run config, so nothing is exported (the network is refused in this directory anyway).
"""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from _support import openai_client
from wirescript import ScriptTransport
from wirescript.recorded import text_of

SYSTEM = "You answer weather questions with the get_weather tool."
QUESTION = "What is the weather in Paris?"
SCRIPT = [
    {"thinking": "I need the weather.", "tool": {"name": "get_weather", "input": {"city": "Paris"}}},
    {"text": "It is sunny in Paris."},
]


def tool_result(kind: str, result: Any) -> tuple[str, str]:
    """(call id, text) of a tool result as the request carried it."""
    if kind == "openai_chat":
        return result["tool_call_id"], text_of(result["content"])
    return result["call_id"], text_of(result["output"])


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_streamed"])
@pytest.mark.parametrize("kind", ["openai_responses", "openai_chat"])
def test_the_runner_runs_the_scripted_function_tool_and_sends_its_result(
    openai_agents: ModuleType, kind: str, stream: bool
) -> None:
    agents = openai_agents
    stub = ScriptTransport(SCRIPT)
    ran: list[str] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: The city.
        """
        ran.append(city)
        return f"Sunny, 21 C in {city}"

    async def main() -> Any:
        client = openai_client(stub, is_async=True)
        if kind == "openai_responses":
            model = agents.OpenAIResponsesModel(model="gpt-test", openai_client=client)
        else:
            model = agents.OpenAIChatCompletionsModel(model="gpt-test", openai_client=client)
        agent = agents.Agent(name="weather", instructions=SYSTEM, tools=[get_weather], model=model)
        config = agents.RunConfig(tracing_disabled=True)
        if not stream:
            return await agents.Runner.run(agent, QUESTION, run_config=config)
        result = agents.Runner.run_streamed(agent, QUESTION, run_config=config)
        async for _ in result.stream_events():
            pass
        return result

    result = asyncio.run(main())
    assert result.final_output == "It is sunny in Paris."
    assert ran == ["Paris"]
    # The framework read the turn's thinking from this API's wire format as a reasoning item.
    reasoning = [i.raw_item for i in result.new_items if i.type == "reasoning_item"]
    assert [[s.text for s in r.summary] for r in reasoning] == [["I need the weather."]]
    first, second = stub.requests
    assert {first.provider, second.provider} == {kind}
    assert first.stream is second.stream is stream
    assert first.tool_names == second.tool_names == ["get_weather"]
    assert first.system == SYSTEM
    assert first.last_user_text == QUESTION
    assert [tool_result(kind, r) for r in second.tool_results] == [("call_0000_0", "Sunny, 21 C in Paris")]
    assert stub.overflow == 0
    assert stub.pending == []
