"""One driver per wire: the real SDK's calls on each surface, sync and async, with a provider-neutral result.

A surface is how the app asks: `raw` (a `stream=True` iteration of the SDK's raw events), `helper`
(the SDK's accumulating stream helper, or for google-genai the streamed chunks put together) and
`json` (a non-streamed call). `run()` drives one surface once and returns what the app gets.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import ssl
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from _support import (
    ANTHROPIC_HX,
    ANTHROPIC_MAJOR,
    TOOL_NAMES,
    anthropic_client,
    anthropic_tools,
    chat_tools,
    httpx,
    httpx2,
    openai_client,
    responses_tools,
)
from wirescript import ScriptTransport

__all__ = ["DRIVERS", "Answer", "Driver", "run"]

SURFACES = ("raw", "helper", "json")


@dataclass
class Answer:
    """What the app got, in provider-neutral terms."""

    text: str = ""
    thinking: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    """(name, input) per tool call, input parsed from JSON where the SDK leaves it as text."""
    raw_arguments: list[str] = field(default_factory=list)
    """Tool arguments as the SDK delivered them, when it delivers text."""
    stop: str | None = None
    usage: tuple[int, int] | None = None
    events: list[str] = field(default_factory=list)
    """For the raw surface: the event types the SDK yielded."""


@dataclass(frozen=True)
class Driver:
    """How the real SDK of one wire is called."""

    wire: str
    sdk: str
    """The SDK and major, e.g. `anthropic 2`, `openai 3`."""
    hx: ModuleType
    """The HTTP library the SDK runs on here."""
    make: Callable[..., Any]
    sync: dict[str, Callable[[Any], Answer]]
    asyncs: dict[str, Callable[[Any], Coroutine[Any, Any, Answer]]]
    wraps_mid_stream: bool
    """Whether a transport error mid-stream reaches the app wrapped (`APIConnectionError` /
    `APITimeoutError`) rather than as the HTTP library's own exception."""


def run(driver: Driver, surface: str, stub: ScriptTransport, *, is_async: bool = False, **client: Any) -> Answer:
    """Drive one surface once through a fresh client over `stub`."""
    sdk = driver.make(stub, is_async=is_async, **client)
    if is_async:
        return asyncio.run(driver.asyncs[surface](sdk))
    return driver.sync[surface](sdk)


# --- anthropic

A_PARAMS: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "Hi"}],
    "tools": anthropic_tools(),
}


def _a_answer(message: Any) -> Answer:
    answer = Answer(stop=message.stop_reason, usage=(message.usage.input_tokens, message.usage.output_tokens))
    for block in message.content:
        if block.type == "text":
            answer.text += block.text
        elif block.type == "thinking":
            answer.thinking += block.thinking
        elif block.type == "tool_use":
            answer.calls.append((block.name, block.input))
    return answer


def _a_raw(client: Any) -> Answer:
    return Answer(events=[event.type for event in client.messages.create(stream=True, **A_PARAMS)])


def _a_helper(client: Any) -> Answer:
    with client.messages.stream(**A_PARAMS) as stream:
        return _a_answer(stream.get_final_message())


def _a_json(client: Any) -> Answer:
    return _a_answer(client.messages.create(**A_PARAMS))


async def _a_raw_async(client: Any) -> Answer:
    return Answer(events=[event.type async for event in await client.messages.create(stream=True, **A_PARAMS)])


async def _a_helper_async(client: Any) -> Answer:
    async with client.messages.stream(**A_PARAMS) as stream:
        return _a_answer(await stream.get_final_message())


async def _a_json_async(client: Any) -> Answer:
    return _a_answer(await client.messages.create(**A_PARAMS))


# --- openai

C_PARAMS: dict[str, Any] = {"model": "gpt-test", "messages": [{"role": "user", "content": "Hi"}], "tools": chat_tools()}
C_STREAM = {**C_PARAMS, "stream_options": {"include_usage": True}}
C_HELPER = {**{k: v for k, v in C_STREAM.items() if k != "tools"}, "extra_body": {"tools": chat_tools()}}
"""The stream helper's: openai 2.x's async helper refuses a `tools` argument of tools that are not strict (it
auto-parses only strict ones), so the request offers them through the body."""


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _c_answer(completion: Any) -> Answer:
    choice = completion.choices[0]
    message = choice.message
    answer = Answer(text=message.content or "", stop=choice.finish_reason)
    answer.thinking = (message.model_extra or {}).get("reasoning_content") or ""
    for call in message.tool_calls or []:
        answer.raw_arguments.append(call.function.arguments)
        answer.calls.append((call.function.name, _loads(call.function.arguments)))
    if completion.usage is not None:
        answer.usage = (completion.usage.prompt_tokens, completion.usage.completion_tokens)
    return answer


def _c_event(chunk: Any) -> str:
    if chunk.choices:
        return f"chunk:{chunk.choices[0].finish_reason}" if chunk.choices[0].finish_reason else "chunk"
    return "usage"


def _c_raw(client: Any) -> Answer:
    return Answer(events=[_c_event(c) for c in client.chat.completions.create(stream=True, **C_STREAM)])


def _c_helper(client: Any) -> Answer:
    with client.chat.completions.stream(**C_HELPER) as stream:
        return _c_answer(stream.get_final_completion())


def _c_json(client: Any) -> Answer:
    return _c_answer(client.chat.completions.create(**C_PARAMS))


async def _c_raw_async(client: Any) -> Answer:
    stream = await client.chat.completions.create(stream=True, **C_STREAM)
    return Answer(events=[_c_event(c) async for c in stream])


async def _c_helper_async(client: Any) -> Answer:
    async with client.chat.completions.stream(**C_HELPER) as stream:
        return _c_answer(await stream.get_final_completion())


async def _c_json_async(client: Any) -> Answer:
    return _c_answer(await client.chat.completions.create(**C_PARAMS))


R_PARAMS: dict[str, Any] = {"model": "gpt-test", "input": "Hi", "tools": responses_tools()}


def _r_answer(response: Any) -> Answer:
    answer = Answer(stop=response.status)
    if response.usage is not None:
        answer.usage = (response.usage.input_tokens, response.usage.output_tokens)
    for item in response.output:
        if item.type == "message":
            answer.text += "".join(part.text for part in item.content if part.type == "output_text")
        elif item.type == "reasoning":
            answer.thinking += "".join(part.text for part in item.summary)
        elif item.type == "function_call":
            answer.raw_arguments.append(item.arguments)
            answer.calls.append((item.name, _loads(item.arguments)))
    return answer


def _r_raw(client: Any) -> Answer:
    return Answer(events=[event.type for event in client.responses.create(stream=True, **R_PARAMS)])


def _r_helper(client: Any) -> Answer:
    with client.responses.stream(**R_PARAMS) as stream:
        return _r_answer(stream.get_final_response())


def _r_json(client: Any) -> Answer:
    return _r_answer(client.responses.create(**R_PARAMS))


async def _r_raw_async(client: Any) -> Answer:
    return Answer(events=[event.type async for event in await client.responses.create(stream=True, **R_PARAMS)])


async def _r_helper_async(client: Any) -> Answer:
    async with client.responses.stream(**R_PARAMS) as stream:
        return _r_answer(await stream.get_final_response())


async def _r_json_async(client: Any) -> Answer:
    return _r_answer(await client.responses.create(**R_PARAMS))


# --- gemini

G_PARAMS: dict[str, Any] = {
    "model": "gemini-test",
    "contents": "Hi",
    "config": {"tools": [{"function_declarations": [{"name": name} for name in TOOL_NAMES]}]},
}


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # google-genai builds two SSL contexts per client unless given one; loading the CA store costs
    # tens of milliseconds each time, and no request ever leaves the process.
    return ssl.create_default_context()


def _g_client(stub: ScriptTransport, *, is_async: bool = False, max_retries: int | None = None, **kw: Any) -> Any:
    from google import genai
    from google.genai import types

    hx = httpx2 if httpx2 is not None else httpx
    assert hx is not None
    options: dict[str, Any] = {
        "client_args": {"verify": _ssl_context()},
        "async_client_args": {"verify": _ssl_context(), "ssl": _ssl_context()},
    }
    if max_retries is not None:
        options["retry_options"] = types.HttpRetryOptions(attempts=max_retries + 1, initial_delay=0.001)
    if "timeout" in kw:
        options["timeout"] = int(kw.pop("timeout") * 1000)
    client = hx.AsyncClient(transport=stub) if is_async else hx.Client(transport=stub)
    key = "httpx_async_client" if is_async else "httpx_client"
    return genai.Client(
        api_key=kw.pop("api_key", "test-key"), http_options=types.HttpOptions(**{key: client}, **options)
    )


def _g_answer(responses: list[Any]) -> Answer:
    answer = Answer()
    for response in responses:
        if response.usage_metadata is not None and response.usage_metadata.candidates_token_count is not None:
            answer.usage = (response.usage_metadata.prompt_token_count, response.usage_metadata.candidates_token_count)
        if not response.candidates:
            continue
        candidate = response.candidates[0]
        if candidate.finish_reason is not None:
            answer.stop = candidate.finish_reason.value
        for part in (candidate.content.parts if candidate.content else None) or []:
            if part.function_call is not None:
                answer.calls.append((part.function_call.name, part.function_call.args or {}))
            elif part.text is not None and part.thought:
                answer.thinking += part.text
            elif part.text is not None:
                answer.text += part.text
    return answer


def _g_raw(client: Any) -> Answer:
    return Answer(events=["chunk" for _ in client.models.generate_content_stream(**G_PARAMS)])


def _g_helper(client: Any) -> Answer:
    return _g_answer(list(client.models.generate_content_stream(**G_PARAMS)))


def _g_json(client: Any) -> Answer:
    return _g_answer([client.models.generate_content(**G_PARAMS)])


async def _g_raw_async(client: Any) -> Answer:
    return Answer(events=["chunk" async for _ in await client.aio.models.generate_content_stream(**G_PARAMS)])


async def _g_helper_async(client: Any) -> Answer:
    return _g_answer([chunk async for chunk in await client.aio.models.generate_content_stream(**G_PARAMS)])


async def _g_json_async(client: Any) -> Answer:
    return _g_answer([await client.aio.models.generate_content(**G_PARAMS)])


# --- the table


def _drivers() -> dict[str, Driver]:
    import openai

    openai_major = int(openai.__version__.split(".")[0])
    openai_hx = httpx2 if openai_major >= 3 else httpx
    assert openai_hx is not None
    drivers = {
        "anthropic": Driver(
            "anthropic",
            f"anthropic {ANTHROPIC_MAJOR}",
            ANTHROPIC_HX,
            anthropic_client,
            {"raw": _a_raw, "helper": _a_helper, "json": _a_json},
            {"raw": _a_raw_async, "helper": _a_helper_async, "json": _a_json_async},
            wraps_mid_stream=False,
        ),
        "openai_chat": Driver(
            "openai_chat",
            f"openai {openai_major}",
            openai_hx,
            openai_client,
            {"raw": _c_raw, "helper": _c_helper, "json": _c_json},
            {"raw": _c_raw_async, "helper": _c_helper_async, "json": _c_json_async},
            wraps_mid_stream=openai_major >= 3,
        ),
        "openai_responses": Driver(
            "openai_responses",
            f"openai {openai_major}",
            openai_hx,
            openai_client,
            {"raw": _r_raw, "helper": _r_helper, "json": _r_json},
            {"raw": _r_raw_async, "helper": _r_helper_async, "json": _r_json_async},
            wraps_mid_stream=openai_major >= 3,
        ),
    }
    if importlib.util.find_spec("google") is not None and importlib.util.find_spec("google.genai") is not None:
        from google import genai

        drivers["gemini"] = Driver(
            "gemini",
            f"google-genai {genai.__version__.split('.')[0]}",
            httpx2 if httpx2 is not None else httpx,  # type: ignore[arg-type]
            _g_client,
            {"raw": _g_raw, "helper": _g_helper, "json": _g_json},
            {"raw": _g_raw_async, "helper": _g_helper_async, "json": _g_json_async},
            wraps_mid_stream=False,
        )
    return drivers


DRIVERS = _drivers()
"""Every wire whose SDK is installed, by wire name."""
