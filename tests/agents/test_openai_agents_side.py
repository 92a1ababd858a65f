"""openai-agents' side calls under intercept: its default tracing export, and `OpenAIConversationsSession`.

Neither consumes a turn: the tracing ingest is answered `{}` and recorded, and the conversations
session keeps its items in the stub, listed back on the next run.
"""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

QUESTION = "What is the weather in Paris?"


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # the default client's key, and the tracing exporter's


def weather_agent(agents: ModuleType) -> Any:
    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: The city.
        """
        return f"Sunny in {city}"

    return agents.Agent(name="weather", instructions="Answer with the tool.", tools=[get_weather], model="gpt-5")


@pytest.mark.usefixtures("openai_key")
def test_the_default_tracing_export_is_answered_and_recorded_without_a_turn(
    openai_agents: ModuleType, wirescript: Any
) -> None:
    agents = openai_agents
    stub = wirescript(
        [{"tool": {"name": "get_weather", "input": {"city": "Paris"}}}, "It is sunny in Paris."], intercept=True
    )
    result = asyncio.run(agents.Runner.run(weather_agent(agents), QUESTION))  # tracing left on, the default
    assert result.final_output == "It is sunny in Paris."
    agents.tracing.get_trace_provider().force_flush()  # export now, inside the test, as the exporter would later

    traces = [r for r in stub.requests if r.provider == "openai_traces"]
    assert traces, "the exporter sent nothing to the stub"
    assert all(r.path == "/v1/traces/ingest" for r in traces)
    exported = [item for r in traces for item in r.messages]
    assert {item.get("object") for item in exported} >= {"trace", "trace.span"}
    assert any(item.get("workflow_name") == "Agent workflow" for item in exported)
    turns = [r for r in stub.requests if r.provider == "openai_responses"]
    assert turns[0].tool_names == ["get_weather"]
    [output] = turns[1].tool_results
    assert output["output"] == "Sunny in Paris"
    assert stub.problems == []
    assert stub.pending == []  # both turns went to the model's requests, none to the exports


@pytest.mark.usefixtures("openai_key")
def test_an_openai_conversations_session_keeps_its_items_in_the_stub(
    openai_agents: ModuleType, wirescript: Any
) -> None:
    agents = openai_agents
    from agents.memory import OpenAIConversationsSession

    stub = wirescript(["Noted: blue.", "Your colour is blue."], intercept=True)
    agent = agents.Agent(name="memory", instructions="Remember what you are told.", model="gpt-5")
    config = agents.RunConfig(tracing_disabled=True)

    async def main() -> tuple[Any, Any, list[Any]]:
        session = OpenAIConversationsSession()
        first = await agents.Runner.run(agent, "My colour is blue.", session=session, run_config=config)
        second = await agents.Runner.run(agent, "What is my colour?", session=session, run_config=config)
        return first, second, await session.get_items()

    first, second, items = asyncio.run(main())
    assert (first.final_output, second.final_output) == ("Noted: blue.", "Your colour is blue.")
    texts = [part["text"] for item in items if item.get("type") == "message" for part in item["content"]]
    assert texts == ["My colour is blue.", "Noted: blue.", "What is my colour?", "Your colour is blue."]

    turns = [r for r in stub.requests if r.provider == "openai_responses"]
    assert [r.last_user_text for r in turns] == ["My colour is blue.", "What is my colour?"]
    sent = [m for m in turns[1].messages if isinstance(m, dict)]
    assert "My colour is blue." in str(sent)  # the session's history reached the model
    assert "Noted: blue." in str(sent)
    sides = {r.provider for r in stub.requests} - {"openai_responses"}
    assert sides == {"openai_conversations"}
    assert stub.problems == []
