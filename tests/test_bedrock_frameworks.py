"""Frameworks that build their own boto3 bedrock-runtime client, served through `stub.intercept()`."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

from wirescript import ScriptTransport

pytest.importorskip("boto3")
langchain_aws = pytest.importorskip("langchain_aws")
from langchain_core.messages import HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a test touched the network: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."


def chat(**kwargs: Any) -> Any:
    return langchain_aws.ChatBedrockConverse(
        model=MODEL,
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="test-secret",
        **kwargs,
    )


@pytest.mark.parametrize("streaming", [False, True], ids=["invoke", "stream"])
def test_chat_bedrock_converse_runs_a_tool_loop(streaming: bool) -> None:
    stub = ScriptTransport(
        [{"text": "Checking.", "tool": {"name": "weather", "input": {"city": "Paris"}}}, {"text": "It is sunny."}]
    )
    with stub.intercept():
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
    one, two = stub.requests
    assert one.path.endswith("/converse-stream" if streaming else "/converse")
    assert one.tool_names == ["weather"]
    (result,) = two.tool_results
    assert result["toolResult"]["toolUseId"] == call["id"]
    assert "Sunny in Paris." in str(result["toolResult"]["content"])
    assert stub.problems == []
