"""Frameworks that build their own boto3 bedrock-runtime client, served through `stub.intercept()`."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any

import pytest

from _support import no_aws_environment
from wirescript import ScriptTransport

boto3 = pytest.importorskip("boto3")

REQUIRE_ENV = "WIRESCRIPT_REQUIRE_FRAMEWORKS"


def require_framework(module: str, distribution: str) -> ModuleType:
    """Import a framework; skip without it, or fail when `WIRESCRIPT_REQUIRE_FRAMEWORKS=1` (CI) requires it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(
                f"{distribution} is not importable ({exc}), and {REQUIRE_ENV}=1 requires it: "
                "install the 'frameworks' dependency group (uv sync --group frameworks)",
                pytrace=False,
            )
        pytest.skip(f"{distribution} is not installed: this test needs the 'frameworks' dependency group")


MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    no_aws_environment(monkeypatch, tmp_path)


def city_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."


TOOL_LOOP = [{"text": "Checking.", "tool": {"name": "weather", "input": {"city": "Paris"}}}, {"text": "It is sunny."}]


def assert_tool_loop(stub: ScriptTransport, operation: str) -> None:
    one, two = stub.requests
    assert one.path == f"/model/{MODEL}/{operation}"
    assert one.tool_names == ["weather"]
    assert one.tool_results == []
    (result,) = two.tool_results
    assert result["toolResult"]["toolUseId"] == "tooluse_0000_0"
    assert result["toolResult"]["content"] == [{"text": "Sunny in Paris."}]
    assert stub.problems == []


def test_strands_default_bedrock_model_runs_a_tool_loop() -> None:
    strands = require_framework("strands", "strands-agents")
    from strands.models import BedrockModel

    weather = strands.tool(name="weather")(city_weather)
    stub = ScriptTransport(TOOL_LOOP)
    with stub.intercept():  # strands builds its boto3 client in BedrockModel()
        session = boto3.Session(
            aws_access_key_id="AKIDTEST", aws_secret_access_key="test-secret", region_name="us-east-1"
        )
        model = BedrockModel(model_id=MODEL, boto_session=session)
        agent = strands.Agent(model=model, tools=[weather], callback_handler=None)
        result = agent("Weather in Paris?")
    assert str(result).strip() == "It is sunny."
    assert_tool_loop(stub, "converse-stream")


def chat(**kwargs: Any) -> Any:
    langchain_aws = require_framework("langchain_aws", "langchain-aws")
    return langchain_aws.ChatBedrockConverse(
        model=MODEL,
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="test-secret",
        **kwargs,
    )


@pytest.mark.parametrize("streaming", [False, True], ids=["invoke", "stream"])
def test_chat_bedrock_converse_runs_a_tool_loop(streaming: bool) -> None:
    require_framework("langchain_aws", "langchain-aws")
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_core.tools import tool

    weather = tool("weather")(city_weather)
    stub = ScriptTransport(TOOL_LOOP)
    with stub.intercept():  # langchain-aws builds its boto3 client in ChatBedrockConverse()
        model = chat().bind_tools([weather])
        history: list[Any] = [HumanMessage("Weather in Paris?")]
        if streaming:
            first = None
            for piece in model.stream(history):
                first = piece if first is None else first + piece
        else:
            first = model.invoke(history)
        assert first is not None
        (call,) = first.tool_calls
        assert (call["name"], call["args"]) == ("weather", {"city": "Paris"})
        history += [first, ToolMessage(weather.invoke(call["args"]), tool_call_id=call["id"])]
        final = model.invoke(history)
    assert final.text == "It is sunny."
    assert call["id"] == "tooluse_0000_0"
    assert_tool_loop(stub, "converse-stream" if streaming else "converse")
