"""One provider-neutral script drives the same app on Anthropic Messages, OpenAI Chat and OpenAI Responses.

The app is a small tool loop written once per provider SDK (the way an app would be); the script
and the assertions are the same for all three, sync and async, streamed and not.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
import pytest

from _support import anthropic_client, openai_client
from wirescript import ScriptTransport

SYSTEM = "You answer weather questions with the get_weather tool."
QUESTION = "What is the weather in Paris?"
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
SCRIPT = [
    {
        "thinking": "I need the weather.",
        "text": "Let me check.",
        "tool": {"name": "get_weather", "input": {"city": "Paris"}},
    },
    {"text": "It is sunny in Paris.", "usage": {"input_tokens": 50, "output_tokens": 7}},
]


def get_weather(city: str) -> str:
    return f"Sunny, 21 C in {city}"


@dataclass(frozen=True)
class Provider:
    """How the app talks to one provider: one request, and how to read and extend the conversation."""

    name: str
    first_call_id: str
    make_client: Callable[[ScriptTransport, bool], Any]
    send: Callable[[Any, list[Any], bool, bool], Awaitable[Any]]
    tool_calls: Callable[[Any], list[tuple[str, str, dict[str, Any]]]]
    text: Callable[[Any], str]
    thinking: Callable[[Any], str | None]
    extend: Callable[[list[Any], Any, list[tuple[str, str]]], None]
    sent_results: Callable[[Any], list[tuple[str, str]]]


async def _maybe(value: Any) -> Any:
    return await value if asyncio.iscoroutine(value) else value


# ---------------------------------------------------------------- Anthropic Messages


async def _anthropic_send(client: Any, history: list[Any], is_async: bool, stream: bool) -> Any:
    params = {
        "model": "claude-test",
        "max_tokens": 1024,
        "system": SYSTEM,
        "tools": [{"name": "get_weather", "description": "The weather.", "input_schema": SCHEMA}],
        "messages": history,
    }
    if not stream:
        return await _maybe(client.messages.create(**params))
    if is_async:
        async with client.messages.stream(**params) as events:
            return await events.get_final_message()
    with client.messages.stream(**params) as events:
        return events.get_final_message()


def _anthropic_extend(history: list[Any], reply: Any, results: list[tuple[str, str]]) -> None:
    history.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
    history.append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": cid, "content": out} for cid, out in results],
        }
    )


ANTHROPIC = Provider(
    name="anthropic",
    first_call_id="toolu_0000_0",
    make_client=lambda stub, is_async: anthropic_client(stub, is_async=is_async, _strict_response_validation=True),
    send=_anthropic_send,
    tool_calls=lambda reply: [(b.id, b.name, b.input) for b in reply.content if b.type == "tool_use"],
    text=lambda reply: "".join(b.text for b in reply.content if b.type == "text"),
    thinking=lambda reply: next((b.thinking for b in reply.content if b.type == "thinking"), None),
    extend=_anthropic_extend,
    sent_results=lambda record: [(r["tool_use_id"], r["content"]) for r in record.tool_results],
)


# ---------------------------------------------------------------- OpenAI Chat Completions


async def _chat_send(client: Any, history: list[Any], is_async: bool, stream: bool) -> Any:
    tool = {
        "type": "function",
        "function": {"name": "get_weather", "description": "The weather.", "parameters": SCHEMA, "strict": True},
    }
    params = {"model": "gpt-test", "messages": [{"role": "system", "content": SYSTEM}, *history], "tools": [tool]}
    if not stream:
        completion = await _maybe(client.chat.completions.create(**params))
    elif is_async:
        async with client.chat.completions.stream(**params) as events:
            completion = await events.get_final_completion()
    else:
        with client.chat.completions.stream(**params) as events:
            completion = events.get_final_completion()
    return completion.choices[0].message


def _chat_extend(history: list[Any], message: Any, results: list[tuple[str, str]]) -> None:
    calls = [
        {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
        for c in message.tool_calls
    ]
    history.append({"role": "assistant", "content": message.content, "tool_calls": calls})
    history.extend({"role": "tool", "tool_call_id": cid, "content": out} for cid, out in results)


CHAT = Provider(
    name="openai_chat",
    first_call_id="call_0000_0",
    make_client=lambda stub, is_async: openai_client(stub, is_async=is_async, _strict_response_validation=True),
    send=_chat_send,
    tool_calls=lambda m: [(c.id, c.function.name, json.loads(c.function.arguments)) for c in m.tool_calls or []],
    text=lambda message: message.content or "",
    thinking=lambda message: (message.model_extra or {}).get("reasoning_content"),
    extend=_chat_extend,
    sent_results=lambda record: [(r["tool_call_id"], r["content"]) for r in record.tool_results],
)


# ---------------------------------------------------------------- OpenAI Responses


async def _responses_send(client: Any, history: list[Any], is_async: bool, stream: bool) -> Any:
    tool = {
        "type": "function",
        "name": "get_weather",
        "description": "The weather.",
        "parameters": SCHEMA,
        "strict": True,
    }
    params = {"model": "gpt-test", "instructions": SYSTEM, "input": history, "tools": [tool]}
    if not stream:
        return await _maybe(client.responses.create(**params))
    if is_async:
        async with client.responses.stream(**params) as events:
            return await events.get_final_response()
    with client.responses.stream(**params) as events:
        return events.get_final_response()


def _as_input(item: Any) -> dict[str, Any]:
    """An output item as the input item that sends it back."""
    if item.type == "function_call":
        return {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments}
    if item.type == "reasoning":
        return {"type": "reasoning", "id": item.id, "summary": [s.model_dump() for s in item.summary]}
    return {"role": "assistant", "content": "".join(part.text for part in item.content)}


def _responses_extend(history: list[Any], response: Any, results: list[tuple[str, str]]) -> None:
    history.extend(_as_input(item) for item in response.output)
    history.extend({"type": "function_call_output", "call_id": cid, "output": out} for cid, out in results)


RESPONSES = Provider(
    name="openai_responses",
    first_call_id="call_0000_0",
    make_client=lambda stub, is_async: openai_client(stub, is_async=is_async, _strict_response_validation=True),
    send=_responses_send,
    tool_calls=lambda r: [(i.call_id, i.name, json.loads(i.arguments)) for i in r.output if i.type == "function_call"],
    text=lambda response: response.output_text,
    thinking=lambda r: next(("".join(s.text for s in i.summary) for i in r.output if i.type == "reasoning"), None),
    extend=_responses_extend,
    sent_results=lambda record: [(r["call_id"], r["output"]) for r in record.tool_results],
)

PROVIDERS = [ANTHROPIC, CHAT, RESPONSES]


# ---------------------------------------------------------------- the app and the tests


@dataclass
class Outcome:
    answer: str
    thoughts: list[str | None]
    ran: list[tuple[str, dict[str, Any]]]


async def weather_app(provider: Provider, client: Any, *, is_async: bool, stream: bool) -> Outcome:
    """The app under test: ask, run the tools the model calls, send their results, until it answers."""
    history: list[Any] = [{"role": "user", "content": QUESTION}]
    thoughts: list[str | None] = []
    ran: list[tuple[str, dict[str, Any]]] = []
    for _ in range(5):
        reply = await provider.send(client, history, is_async, stream)
        thoughts.append(provider.thinking(reply))
        calls = provider.tool_calls(reply)
        if not calls:
            return Outcome(provider.text(reply), thoughts, ran)
        results = []
        for cid, name, args in calls:
            ran.append((name, args))
            results.append((cid, get_weather(**args)))
        provider.extend(history, reply, results)
    raise AssertionError("the app did not finish in 5 model calls")


def run_app(provider: Provider, stub: ScriptTransport, *, is_async: bool, stream: bool) -> Outcome:
    client = provider.make_client(stub, is_async)
    return asyncio.run(weather_app(provider, client, is_async=is_async, stream=stream))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_one_script_drives_the_tool_loop_on_every_provider(provider: Provider, is_async: bool, stream: bool) -> None:
    stub = ScriptTransport(SCRIPT)
    outcome = run_app(provider, stub, is_async=is_async, stream=stream)
    assert outcome.answer == "It is sunny in Paris."
    assert outcome.ran == [("get_weather", {"city": "Paris"})]
    assert outcome.thoughts == ["I need the weather.", None]
    first, second = stub.requests
    assert [first.provider, second.provider] == [provider.name, provider.name]
    assert first.system == second.system == SYSTEM
    assert first.tool_names == second.tool_names == ["get_weather"]
    assert first.last_user_text == second.last_user_text == QUESTION
    assert first.stream is second.stream is stream
    assert first.tool_results == []
    # The evidence that the tool's result reached the model, under the id the model gave the call.
    assert provider.sent_results(second) == [(provider.first_call_id, "Sunny, 21 C in Paris")]
    assert len(second.conversation) > len(first.conversation)
    assert stub.overflow == 0
    assert stub.pending == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_retryable_errors_then_success_on_every_provider(provider: Provider, is_async: bool) -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, {"error": {"status": 500}}, "Sunny."])

    async def main() -> Any:
        client = provider.make_client(stub, is_async)
        return await provider.send(client, [{"role": "user", "content": QUESTION}], is_async, True)

    assert provider.text(asyncio.run(main())) == "Sunny."
    assert [(r.provider, r.retry_count) for r in stub.requests] == [(provider.name, n) for n in range(3)]


STATUS_ERROR = {"anthropic": anthropic.BadRequestError, "openai_chat": openai.BadRequestError}


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_a_drained_script_fails_loudly_on_every_provider(provider: Provider) -> None:
    stub = ScriptTransport(["Only one."])
    error = STATUS_ERROR.get(provider.name, openai.BadRequestError)

    async def main() -> Any:
        client = provider.make_client(stub, False)
        await provider.send(client, [{"role": "user", "content": QUESTION}], False, False)
        return await provider.send(client, [{"role": "user", "content": QUESTION}], False, False)

    with pytest.raises(error) as info:
        asyncio.run(main())
    assert "is past the end of the script: it has 1 turn(s), all served." in str(info.value)
    assert len(stub.requests) == 2  # the loud answer is not retried
    assert stub.overflow == 1
