"""The providers under test: how to build each real SDK client and drive one workload through it.

Each workload is written once, provider-neutrally (wirescript turns), and driven through the SDK's
own streaming helper: anthropic ``messages.stream(...).get_final_message()``, openai
``chat.completions.stream(...).get_final_completion()``, always with ``max_retries=0``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from wirescript.sse import parse_sse

API_KEY = "test-key"
USER = "Write it down."
SAVED = "Saved."

_PROSE = (
    "Streaming answers arrive as many small deltas; the SDK decodes every frame, accumulates the "
    "message and hands the application one event at a time. "
)


def prose(chars: int) -> str:
    """Deterministic text of exactly `chars` characters."""
    return (_PROSE * (chars // len(_PROSE) + 1))[:chars]


def tool_input(json_chars: int) -> dict[str, str]:
    """A tool input whose compact JSON is exactly `json_chars` characters (streamed in 32-char fragments)."""
    head = {"path": "notes/2026-08-01.md", "text": ""}
    overhead = len(json.dumps(head, separators=(",", ":"), ensure_ascii=False))
    return {"path": head["path"], "text": prose(json_chars - overhead)}


NOTE_TOOL_NAME = "save_note"
NOTE_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
    "required": ["path", "text"],
}

AGENT_TOOLS = 4
"""Tools an agent-sized request declares (`save_note` and three more of the same shape)."""
AGENT_STEPS = 9
"""Tool calls in an agent-sized request's history: 1 + 2 x 9 + 1 = 20 messages."""


def agent_steps() -> list[tuple[str, str, dict[str, str], str]]:
    """An agent's history, provider-neutrally: (call id, assistant text, tool input, tool result) per step."""
    return [
        (
            f"call_{step:04d}",
            f"Step {step}: I will write note {step}.",
            {"path": f"notes/{step}.md", "text": prose(120)},
            f"saved note {step}: " + prose(160),
        )
        for step in range(1, AGENT_STEPS + 1)
    ]


def _agent_tool_names() -> list[str]:
    return [NOTE_TOOL_NAME, *(f"tool_{n}" for n in range(1, AGENT_TOOLS))]


@dataclass(frozen=True)
class Provider:
    """One provider API: its SDK client, its streaming drivers and how to count a stream's deltas."""

    name: str
    version: str
    url: str
    """The endpoint's full URL: what the peer matches on."""
    sync_client: Callable[[Any], Any]
    """http client -> SDK client."""
    async_client: Callable[[Any], Any]
    text: Callable[[Any], Any]
    """One streamed request for a text turn; returns the final message."""
    atext: Callable[[Any], Awaitable[Any]]
    tool_loop: Callable[[Any], Any]
    """Two streamed requests: a tool call, the tool's result sent back, the final answer."""
    fingerprint: Callable[[Any], Any]
    """What a final message says (text, tool inputs, stop reason), to check contenders agree."""
    deltas: Callable[[bytes], int]
    """How many content deltas (text or tool-argument fragments) a streamed body carries."""
    stream_body: bytes
    """A streamed text request's JSON body, for driving the stub without the SDK."""
    served_client: Callable[[str, Any], Any]
    """(base URL of a running `ScriptServer`, http client) -> an SDK client that reaches it over loopback HTTP."""
    agent: Callable[[Any], Any]
    """One streamed text request carrying an agent-sized body: 20 messages (9 tool calls and their
    results) and 4 tools; returns the final message."""

    async def many(self, client: Any, n: int) -> list[Any]:
        """`n` concurrent streamed text requests on one async client."""
        return list(await asyncio.gather(*(self.atext(client) for _ in range(n))))


# ---------------------------------------------------------------------------------------------- anthropic


def _anthropic() -> Provider:
    import anthropic

    model = "claude-bench"
    tools = [{"name": NOTE_TOOL_NAME, "description": "Save a note.", "input_schema": NOTE_SCHEMA}]
    first: list[Any] = [{"role": "user", "content": USER}]

    def text(client: Any) -> Any:
        with client.messages.stream(model=model, max_tokens=16384, messages=first) as stream:
            return stream.get_final_message()

    async def atext(client: Any) -> Any:
        async with client.messages.stream(model=model, max_tokens=16384, messages=first) as stream:
            return await stream.get_final_message()

    def tool_loop(client: Any) -> Any:
        with client.messages.stream(model=model, max_tokens=16384, tools=tools, messages=first) as stream:
            asked = stream.get_final_message()
        call = next(block for block in asked.content if block.type == "tool_use")
        result = f"saved {len(call.input['text'])} characters to {call.input['path']}"
        messages = [
            *first,
            {"role": "assistant", "content": asked.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": result}]},
        ]
        with client.messages.stream(model=model, max_tokens=16384, tools=tools, messages=messages) as stream:
            return stream.get_final_message()

    agent_tools = [
        {"name": name, "description": f"{name}: write a note.", "input_schema": NOTE_SCHEMA}
        for name in _agent_tool_names()
    ]
    agent_messages: list[Any] = [{"role": "user", "content": USER}]
    for call_id, said, arguments, result in agent_steps():
        agent_messages += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": said},
                    {"type": "tool_use", "id": call_id, "name": NOTE_TOOL_NAME, "input": arguments},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}]},
        ]
    agent_messages.append({"role": "user", "content": "Thanks. Now the tenth."})

    def agent(client: Any) -> Any:
        with client.messages.stream(
            model=model, max_tokens=16384, tools=agent_tools, messages=agent_messages
        ) as stream:
            return stream.get_final_message()

    def fingerprint(message: Any) -> Any:
        blocks = tuple(
            (block.type, block.text if block.type == "text" else json.dumps(block.input)) for block in message.content
        )
        return message.stop_reason, blocks

    def deltas(body: bytes) -> int:
        events, _ = parse_sse(body)
        return sum(1 for e in events if e.event == "content_block_delta" and '"signature_delta"' not in e.data)

    return Provider(
        name="anthropic",
        version=anthropic.__version__,
        url="https://api.anthropic.com/v1/messages",
        sync_client=lambda http: anthropic.Anthropic(api_key=API_KEY, max_retries=0, http_client=http),
        async_client=lambda http: anthropic.AsyncAnthropic(api_key=API_KEY, max_retries=0, http_client=http),
        text=text,
        atext=atext,
        tool_loop=tool_loop,
        fingerprint=fingerprint,
        deltas=deltas,
        stream_body=json.dumps({"model": model, "max_tokens": 16384, "messages": first, "stream": True}).encode(),
        served_client=lambda url, http: anthropic.Anthropic(
            api_key=API_KEY, max_retries=0, base_url=url, http_client=http
        ),
        agent=agent,
    )


# ---------------------------------------------------------------------------------------------- openai chat


def _openai() -> Provider:
    import openai

    model = "gpt-bench"
    tools = [
        {
            "type": "function",
            "function": {"name": NOTE_TOOL_NAME, "description": "Save a note.", "parameters": NOTE_SCHEMA},
        }
    ]
    first: list[Any] = [{"role": "user", "content": USER}]

    def text(client: Any) -> Any:
        with client.chat.completions.stream(model=model, messages=first) as stream:
            return stream.get_final_completion()

    async def atext(client: Any) -> Any:
        async with client.chat.completions.stream(model=model, messages=first) as stream:
            return await stream.get_final_completion()

    def tool_loop(client: Any) -> Any:
        with client.chat.completions.stream(model=model, messages=first, tools=tools) as stream:
            asked = stream.get_final_completion()
        call = asked.choices[0].message.tool_calls[0]
        arguments = json.loads(call.function.arguments)
        result = f"saved {len(arguments['text'])} characters to {arguments['path']}"
        messages = [
            *first,
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.function.name, "arguments": call.function.arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call.id, "content": result},
        ]
        with client.chat.completions.stream(model=model, messages=messages, tools=tools) as stream:
            return stream.get_final_completion()

    agent_tools = [
        {
            "type": "function",
            "function": {"name": name, "description": f"{name}: write a note.", "parameters": NOTE_SCHEMA},
        }
        for name in _agent_tool_names()
    ]
    agent_messages: list[Any] = [{"role": "user", "content": USER}]
    for call_id, said, arguments, result in agent_steps():
        call = {"name": NOTE_TOOL_NAME, "arguments": json.dumps(arguments)}
        agent_messages += [
            {
                "role": "assistant",
                "content": said,
                "tool_calls": [{"id": call_id, "type": "function", "function": call}],
            },
            {"role": "tool", "tool_call_id": call_id, "content": result},
        ]
    agent_messages.append({"role": "user", "content": "Thanks. Now the tenth."})

    def agent(client: Any) -> Any:
        with client.chat.completions.stream(model=model, messages=agent_messages, tools=agent_tools) as stream:
            return stream.get_final_completion()

    def fingerprint(completion: Any) -> Any:
        choice = completion.choices[0]
        calls = tuple((c.function.name, c.function.arguments) for c in choice.message.tool_calls or ())
        return choice.finish_reason, choice.message.content, calls

    def deltas(body: bytes) -> int:
        events, _ = parse_sse(body)
        count = 0
        for event in events:
            if event.data == "[DONE]":
                continue
            for choice in json.loads(event.data).get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    count += 1
                count += sum(1 for c in delta.get("tool_calls") or () if (c.get("function") or {}).get("arguments"))
        return count

    return Provider(
        name="openai",
        version=openai.__version__,
        url="https://api.openai.com/v1/chat/completions",
        sync_client=lambda http: openai.OpenAI(api_key=API_KEY, max_retries=0, http_client=http),
        async_client=lambda http: openai.AsyncOpenAI(api_key=API_KEY, max_retries=0, http_client=http),
        text=text,
        atext=atext,
        tool_loop=tool_loop,
        fingerprint=fingerprint,
        deltas=deltas,
        stream_body=json.dumps({"model": model, "messages": first, "stream": True}).encode(),
        served_client=lambda url, http: openai.OpenAI(
            api_key=API_KEY, max_retries=0, base_url=f"{url}/v1", http_client=http
        ),
        agent=agent,
    )


def openai_chat_available() -> bool:
    """Whether this wirescript serves OpenAI chat completions (the wire is registered)."""
    from wirescript.wires import default_wires

    return any(wire.matches("POST", "/v1/chat/completions") for wire in default_wires())


def providers(names: list[str] | None = None) -> list[Provider]:
    """The providers to benchmark: anthropic, and openai when wirescript has its chat wire."""
    found = [_anthropic()]
    if openai_chat_available():
        found.append(_openai())
    if names:
        found = [p for p in found if p.name in names]
    return found
