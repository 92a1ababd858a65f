"""No false positives from agent frameworks: what pydantic-ai and openai-agents send over the wire in
multi-turn tool loops (parallel calls, thinking, streaming) passes every strict-request rule."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from _support import openai_client
from test_strict_rules import assert_none_refused
from wirescript import ScriptTransport

QUESTION = "What is the weather in Paris and Rome?"
SCRIPT = [
    {
        "thinking": "Two lookups.",
        "tools": [
            {"name": "get_weather", "input": {"city": "Paris"}},
            {"name": "get_weather", "input": {"city": "Rome"}},
        ],
    },
    {"thinking": "One more.", "tool": {"name": "get_weather", "input": {"city": "Oslo"}}},
    {"thinking": "Done.", "text": "Sunny everywhere."},
    {"text": "Still sunny."},
]


def two_conversations(pydantic_ai: ModuleType, model: Any, *, stream: bool) -> str:
    """A weather agent's tool loop (run or streamed), then a second run on its history: the second's output."""
    agent = pydantic_ai.Agent(model, instructions="Answer weather questions with the tool.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    async def main() -> str:
        if stream:
            async with agent.run_stream(QUESTION) as streamed:
                await streamed.get_output()
            history = streamed.all_messages()
        else:
            history = (await agent.run(QUESTION)).all_messages()
        return (await agent.run("And tomorrow?", message_history=history)).output

    return asyncio.run(main())


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
@pytest.mark.parametrize("kind", ["anthropic", "openai_chat", "openai_responses", "google"])
def test_pydantic_ai_multi_turn_tool_loops_are_never_refused(pydantic_ai: ModuleType, kind: str, stream: bool) -> None:
    stub = ScriptTransport(SCRIPT)
    if kind == "google":
        pytest.importorskip("google.genai")
        from test_pydantic_ai_google import google_model

        model = google_model(stub)
    else:
        from test_pydantic_ai import make_model

        model = make_model(kind, stub)
    assert two_conversations(pydantic_ai, model, stream=stream) == "Still sunny."
    assert_none_refused(stub, 4)


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_streamed"])
@pytest.mark.parametrize("kind", ["openai_responses", "openai_chat"])
def test_the_openai_agents_runner_is_never_refused(openai_agents: ModuleType, kind: str, stream: bool) -> None:
    agents = openai_agents
    stub = ScriptTransport(SCRIPT[:3])

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: The city.
        """
        return f"Sunny in {city}"

    async def main() -> Any:
        client = openai_client(stub, is_async=True)
        if kind == "openai_responses":
            model = agents.OpenAIResponsesModel(model="gpt-test", openai_client=client)
        else:
            model = agents.OpenAIChatCompletionsModel(model="gpt-test", openai_client=client)
        agent = agents.Agent(name="weather", instructions="Use the tool.", tools=[get_weather], model=model)
        config = agents.RunConfig(tracing_disabled=True)
        if not stream:
            return await agents.Runner.run(agent, QUESTION, run_config=config)
        result = agents.Runner.run_streamed(agent, QUESTION, run_config=config)
        async for _ in result.stream_events():
            pass
        return result

    assert asyncio.run(main()).final_output == "Sunny everywhere."
    assert_none_refused(stub, 3)


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
def test_a_pydantic_ai_agent_on_bedrock_is_never_refused(
    pydantic_ai: ModuleType, stream: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """pydantic-ai's Converse model, over a boto3 client the stub answers, through a multi-turn tool loop."""
    boto3 = pytest.importorskip("boto3")
    from pydantic_ai.models.bedrock import BedrockConverseModel
    from pydantic_ai.providers.bedrock import BedrockProvider

    from _support import no_aws_environment

    no_aws_environment(monkeypatch, tmp_path)
    stub = ScriptTransport(SCRIPT)
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKID", aws_secret_access_key="x"
    )
    provider = BedrockProvider(bedrock_client=stub.attach(client))
    model = BedrockConverseModel("us.anthropic.claude-sonnet-4-5-20250929-v1:0", provider=provider)
    assert two_conversations(pydantic_ai, model, stream=stream) == "Still sunny."
    assert len(stub.requests) == 4
    assert stub.problems == []  # served under strict, Converse rules and all
