"""`RecordedRequest.tool_results` is the newest message's tool results, on every wire; `all_tool_results` the
request's whole conversation's. In a three-step tool loop the third request's results are the second step's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from _support import anthropic_client, no_aws_environment, openai_client
from wirescript import ScriptTransport
from wirescript.builder import ScriptBuilder, tool_result_text

STEPS = [
    {"tool": {"name": "get_weather", "input": {"city": "Paris"}}},
    {"tool": {"name": "get_weather", "input": {"city": "Lima"}}},
    {"text": "Paris is sunny, Lima is grey."},
]


def weather(city: str) -> str:
    return f"Weather in {city}"


def texts(stub: ScriptTransport, index: int, field: str = "tool_results") -> list[str | None]:
    return [tool_result_text(result) for result in getattr(stub.requests[index], field)]


def assert_three_steps(stub: ScriptTransport) -> None:
    assert len(stub.requests) == 3
    assert texts(stub, 0) == []
    assert texts(stub, 1) == ["Weather in Paris"]
    assert texts(stub, 2) == ["Weather in Lima"]  # the newest message's, not the first step's
    assert texts(stub, 2, "all_tool_results") == ["Weather in Paris", "Weather in Lima"]
    assert stub.problems == []


def test_anthropic_the_last_user_messages_tool_result_blocks() -> None:
    stub = ScriptTransport(STEPS)
    client = anthropic_client(stub)
    tool = {"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object", "properties": {}}}
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris, then Lima?"}]
    for _ in range(3):
        reply = client.messages.create(model="claude-test", max_tokens=64, tools=[tool], messages=messages)
        if reply.stop_reason != "tool_use":
            break
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        results = [
            {"type": "tool_result", "tool_use_id": b.id, "content": weather(b.input["city"])}
            for b in reply.content
            if b.type == "tool_use"
        ]
        messages.append({"role": "user", "content": [*results, {"type": "text", "text": "Thanks."}]})
    assert_three_steps(stub)


def chat_loop(stub: ScriptTransport) -> str | None:
    """A Chat Completions tool loop of up to three requests, answering each call with `weather`: the last text."""
    client = openai_client(stub)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris, then Lima?"}]
    for _ in range(3):
        message = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools).choices[0].message
        if not message.tool_calls:
            break
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            city = json.loads(call.function.arguments)["city"]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": weather(city)})
    return message.content


def test_openai_chat_the_tool_messages_after_the_last_assistant_message() -> None:
    stub = ScriptTransport(STEPS)
    chat_loop(stub)
    assert_three_steps(stub)


def test_ollama_native_the_tool_messages_after_the_last_assistant_message() -> None:
    ollama = pytest.importorskip("ollama")
    stub = ScriptTransport(STEPS)
    client = ollama.Client(host="http://localhost:11434", transport=stub)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris, then Lima?"}]
    for _ in range(3):
        reply = client.chat(model="llama3.2", messages=messages, tools=tools, stream=False)
        if not reply.message.tool_calls:
            break
        messages.append(reply.message.model_dump(exclude_none=True))
        for call in reply.message.tool_calls:
            messages.append(
                {"role": "tool", "tool_name": call.function.name, "content": weather(call.function.arguments["city"])}
            )
    assert_three_steps(stub)
    assert {r.provider for r in stub.requests} == {"ollama_native"}


@pytest.mark.parametrize("chained", [False, True], ids=["stateless", "previous_response_id"])
def test_openai_responses_the_outputs_after_the_last_call(chained: bool) -> None:
    stub = ScriptTransport(STEPS)
    client = openai_client(stub)
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    items: list[Any] = [{"role": "user", "content": "Weather in Paris, then Lima?"}]
    previous: str | None = None
    for _ in range(3):
        extra = {"previous_response_id": previous} if chained and previous else {}
        response = client.responses.create(model="gpt-test", input=items, tools=tools, **extra)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            break
        outputs = [
            {"type": "function_call_output", "call_id": c.call_id, "output": weather(json.loads(c.arguments)["city"])}
            for c in calls
        ]
        if chained:  # the input holds only the new outputs: the stored response has the rest
            items, previous = outputs, response.id
        else:
            items += [*(c.model_dump(exclude_none=True) for c in calls), *outputs]
    assert len(stub.requests) == 3
    assert texts(stub, 2) == ["Weather in Lima"]
    assert texts(stub, 2, "all_tool_results") == (
        ["Weather in Lima"] if chained else ["Weather in Paris", "Weather in Lima"]
    )
    assert stub.problems == []


def test_gemini_the_last_user_contents_function_responses() -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    from test_gemini import gemini_client

    stub = ScriptTransport(STEPS)
    client = gemini_client(stub)
    declaration = types.FunctionDeclaration(name="get_weather", parameters={"type": "object", "properties": {}})
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="Weather in Paris, then Lima?")])]
    for _ in range(3):
        response = client.models.generate_content(model="gemini-test", contents=contents, config=config)
        calls = response.function_calls or []
        if not calls:
            break
        contents.append(response.candidates[0].content)
        parts = [
            types.Part.from_function_response(name=c.name, response={"output": weather(c.args["city"])}) for c in calls
        ]
        contents.append(types.Content(role="user", parts=parts))
    assert_three_steps(stub)


def test_bedrock_converse_the_last_user_messages_tool_result_blocks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    boto3 = pytest.importorskip("boto3")
    no_aws_environment(monkeypatch, tmp_path)
    stub = ScriptTransport(STEPS)
    bedrock = stub.attach(
        boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKID", aws_secret_access_key="x")
    )
    spec = {"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}
    messages: list[Any] = [{"role": "user", "content": [{"text": "Weather in Paris, then Lima?"}]}]
    for _ in range(3):
        answer = bedrock.converse(
            modelId="anthropic.claude-3-5-haiku-20241022-v1:0", messages=messages, toolConfig={"tools": [spec]}
        )
        message = answer["output"]["message"]
        uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
        if not uses:
            break
        messages.append(message)
        results = [
            {"toolResult": {"toolUseId": u["toolUseId"], "content": [{"text": weather(u["input"]["city"])}]}}
            for u in uses
        ]
        messages.append({"role": "user", "content": results})
    assert_three_steps(stub)


def test_a_user_message_after_the_results_leaves_them_the_newest_turns() -> None:
    """Chat's `tool` messages then a user message: the results still answer the model's last calls."""
    stub = ScriptTransport([STEPS[0], "Done."])
    client = openai_client(stub)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    messages: list[Any] = [{"role": "user", "content": "Weather?"}]
    reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    call = reply.choices[0].message.tool_calls[0]
    messages += [
        reply.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": weather("Paris")},
        {"role": "user", "content": "And in short?"},
    ]
    client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    assert texts(stub, 1) == ["Weather in Paris"]


def test_echoes_tool_result_echoes_the_newest_result() -> None:
    stub = (
        ScriptBuilder()
        .calls("get_weather", {"city": "Paris"})
        .calls("get_weather", {"city": "Lima"})
        .echoes_tool_result(prefix="Got: ")
        .build()
    )
    assert chat_loop(stub) == "Got: Weather in Lima"
