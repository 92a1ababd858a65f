"""The OpenAI Chat Completions wire, through the real openai SDK (3.x on httpx2, 2.x on httpx)."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from _support import SAMPLE_TURNS, STACKS, chat_tools, examples, odd_bodies, openai_client
from wirescript import ScriptTransport
from wirescript.sse import parse_sse

OPENAI_MAJOR = int(openai.__version__.split(".")[0])
USER = [{"role": "user", "content": "Hi"}]
PARAMS: dict[str, Any] = {"model": "gpt-test", "messages": USER, "tools": chat_tools()}
HELPER: dict[str, Any] = {"model": "gpt-test", "messages": USER, "extra_body": {"tools": chat_tools()}}
"""The stream helper's: openai 2.x's async helper refuses `tools` that are not strict, so the body offers them."""
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

TURNS = SAMPLE_TURNS


def calls_of(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [turn["tool"]] if "tool" in turn else list(turn.get("tools", []))


def expected_message(turn: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """What `choices[0].message` must hold for a turn: content, reasoning and the tool calls."""
    return {
        "content": turn.get("text"),
        "reasoning_content": turn.get("thinking"),
        "tool_calls": [
            (call.get("id", f"call_{index:04d}_{k}"), call["name"], call["input"])
            for k, call in enumerate(calls_of(turn))
        ],
    }


def message_of(message: Any) -> dict[str, Any]:
    extra = message.model_extra or {}
    return {
        "content": message.content,
        "reasoning_content": extra.get("reasoning_content"),
        "tool_calls": [(c.id, c.function.name, json.loads(c.function.arguments)) for c in (message.tool_calls or [])],
    }


def strict_client(stub: ScriptTransport, *, is_async: bool = False, **kwargs: Any) -> Any:
    """An openai client that validates every response body against the SDK's models."""
    return openai_client(stub, is_async=is_async, _strict_response_validation=True, **kwargs)


def run(is_async: bool, stub: ScriptTransport, body: Callable[[Any], Any], **kwargs: Any) -> Any:
    """Call `body(client)` with a sync client, or await it with an async one."""
    if not is_async:
        return body(strict_client(stub, **kwargs))

    async def main() -> Any:
        return await body(strict_client(stub, is_async=True, **kwargs))

    return asyncio.run(main())


def accumulate(chunks: list[Any]) -> dict[str, Any]:
    """Rebuild a message from raw `create(stream=True)` chunks, checking the fragment rules on the way."""
    content: str | None = None
    reasoning: str | None = None
    calls: dict[int, dict[str, Any]] = {}
    finish: list[str] = []
    for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content is not None:
                content = (content or "") + delta.content
            extra = (delta.model_extra or {}).get("reasoning_content")
            if extra is not None:
                reasoning = (reasoning or "") + extra
            for fragment in delta.tool_calls or []:
                if fragment.index not in calls:
                    # The first fragment names the call; the arguments follow in later fragments.
                    assert fragment.id is not None
                    assert fragment.type == "function"
                    assert fragment.function is not None
                    assert fragment.function.name
                    assert fragment.function.arguments == ""
                    assert fragment.index == len(calls)
                    calls[fragment.index] = {"id": fragment.id, "name": fragment.function.name, "args": ""}
                else:
                    assert fragment.id is None
                    assert fragment.function is not None
                    assert fragment.function.name is None
                    calls[fragment.index]["args"] += fragment.function.arguments
            if choice.finish_reason is not None:
                finish.append(choice.finish_reason)
    assert len(finish) == 1
    return {
        "message": {
            "content": content,
            "reasoning_content": reasoning,
            "tool_calls": [(c["id"], c["name"], json.loads(c["args"])) for _, c in sorted(calls.items())],
        },
        "finish_reason": finish[0],
    }


async def alist(stream: Any) -> list[Any]:
    return [item async for item in stream]


def complete(mode: str, is_async: bool, stub: ScriptTransport, **extra: Any) -> tuple[dict[str, Any], str, Any]:
    """Run one request in the given SDK mode: (message, finish_reason, usage or None)."""
    params = {**PARAMS, **extra}
    if mode == "create":

        def body(client: Any) -> Any:
            return client.chat.completions.create(**params)

        completion = run(is_async, stub, body)
        choice = completion.choices[0]
        assert completion.id == "chatcmpl-0000"
        assert completion.model == params["model"]
        return message_of(choice.message), choice.finish_reason, completion.usage
    if mode == "create-stream":
        if is_async:

            async def abody(client: Any) -> Any:
                return await alist(await client.chat.completions.create(**params, stream=True))

            chunks = run(True, stub, abody)
        else:
            chunks = run(False, stub, lambda client: list(client.chat.completions.create(**params, stream=True)))
        assert {c.id for c in chunks} == {"chatcmpl-0000"}
        usage = [c.usage for c in chunks if c.usage is not None]
        got = accumulate(chunks)
        return got["message"], got["finish_reason"], usage[0] if usage else None
    assert mode == "stream-helper"
    params = {**HELPER, **extra}
    if is_async:

        async def helper(client: Any) -> Any:
            async with client.chat.completions.stream(**params) as stream:
                return await stream.get_final_completion()

        completion = run(True, stub, helper)
    else:

        def sync_helper(client: Any) -> Any:
            with client.chat.completions.stream(**params) as stream:
                return stream.get_final_completion()

        completion = run(False, stub, sync_helper)
    choice = completion.choices[0]
    return message_of(choice.message), choice.finish_reason, completion.usage


MODES = ["create", "create-stream", "stream-helper"]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(TURNS))
def test_every_turn_is_rebuilt_exactly(name: str, mode: str, is_async: bool) -> None:
    turn = TURNS[name]
    stub = ScriptTransport([turn])
    extra = {} if mode == "create" else {"stream_options": {"include_usage": True}}
    message, finish, usage = complete(mode, is_async, stub, **extra)
    assert message == expected_message(turn)
    assert finish == ("tool_calls" if calls_of(turn) else "stop")
    scripted = turn.get("usage")
    if scripted:
        assert (usage.prompt_tokens, usage.completion_tokens) == (123, 45)
        assert usage.total_tokens == 168
        assert usage.prompt_tokens_details.cached_tokens == 6
        assert usage.prompt_tokens_details.cache_write_tokens == 7
    else:
        assert usage.prompt_tokens == 10
        assert usage.completion_tokens >= 1
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    reasoning = usage.completion_tokens_details.reasoning_tokens
    assert (reasoning > 0) is bool(turn.get("thinking"))
    assert reasoning <= usage.completion_tokens
    assert stub.requests[0].stream is (mode != "create")
    assert stub.overflow == 0


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_both_http_stacks_serve_the_stream_helper(hx: ModuleType, is_async: bool) -> None:
    stub = ScriptTransport([TURNS["parallel"]])

    def body(client: Any) -> Any:
        with client.chat.completions.stream(**HELPER) as stream:
            return stream.get_final_completion()

    async def abody(client: Any) -> Any:
        async with client.chat.completions.stream(**HELPER) as stream:
            return await stream.get_final_completion()

    client = strict_client(stub, is_async=is_async, hx=hx)
    completion = asyncio.run(abody(client)) if is_async else body(client)
    assert message_of(completion.choices[0].message) == expected_message(TURNS["parallel"])
    assert stub.requests[0].headers["x-stainless-helper-method"] == "chat.completions.stream"


# ---------------------------------------------------------------- the bytes on the wire


def raw_body(turn: dict[str, Any], **extra: Any) -> bytes:
    """The exact bytes the stub streams for a turn, read through a plain client."""
    stub = ScriptTransport([turn])
    with STACKS[0].Client(transport=stub) as http:
        response = http.post("https://api.openai.com/v1/chat/completions", json={**PARAMS, "stream": True, **extra})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-request-id"] == "req_0000"
    return bytes(response.content)


def chunks_of(body: bytes) -> list[dict[str, Any]]:
    """The JSON chunks of a chat stream, each validated against the SDK's `ChatCompletionChunk`."""
    events, tail = parse_sse(body)
    assert tail == ""
    assert all(e.event is None for e in events)  # data-only, like OpenAI
    assert events[-1].data == "[DONE]"
    datas = [json.loads(e.data) for e in events[:-1]]
    for data in datas:
        ChatCompletionChunk.model_validate(data, strict=False)
    return datas


@pytest.mark.parametrize("name", list(TURNS))
def test_every_chunk_is_a_valid_chat_completion_chunk(name: str) -> None:
    datas = chunks_of(raw_body(TURNS[name]))
    assert {d["id"] for d in datas} == {"chatcmpl-0000"}
    assert {d["object"] for d in datas} == {"chat.completion.chunk"}
    assert datas[0]["choices"][0]["delta"]["role"] == "assistant"
    assert [d["choices"][0]["finish_reason"] for d in datas][:-1] == [None] * (len(datas) - 1)
    assert datas[-1]["choices"][0]["delta"] == {}
    assert "usage" not in datas[-1]


def test_text_arrives_in_several_chunks_cut_mid_word() -> None:
    datas = chunks_of(raw_body(TURNS["text"]))
    pieces = [d["choices"][0]["delta"]["content"] for d in datas[1:-1]]
    assert len(pieces) > 3
    assert "".join(pieces) == TURNS["text"]["text"]
    assert any(a[-1].isalpha() and b[0].isalpha() for a, b in itertools.pairwise(pieces))


def test_parallel_tool_calls_have_one_index_each_and_arguments_in_later_fragments() -> None:
    turn = {"tools": [{"name": "a", "input": {"x": "y" * 80}}, {"name": "b", "input": {"n": 1}}]}
    datas = chunks_of(raw_body(turn))
    fragments = [f for d in datas for f in d["choices"][0]["delta"].get("tool_calls", [])] if datas else []
    firsts = [f for f in fragments if "id" in f]
    assert firsts == [
        {"index": 0, "id": "call_0000_0", "type": "function", "function": {"name": "a", "arguments": ""}},
        {"index": 1, "id": "call_0000_1", "type": "function", "function": {"name": "b", "arguments": ""}},
    ]
    args_a = [f["function"]["arguments"] for f in fragments if f["index"] == 0 and "id" not in f]
    assert len(args_a) >= 3
    assert json.loads("".join(args_a)) == {"x": "y" * 80}
    assert datas[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_the_usage_chunk_comes_only_with_include_usage() -> None:
    without = chunks_of(raw_body(TURNS["text"]))
    assert all("usage" not in d for d in without)
    datas = chunks_of(raw_body(TURNS["text"], stream_options={"include_usage": True}))
    assert datas[-1]["choices"] == []
    assert datas[-1]["usage"]["prompt_tokens"] == 10
    # As OpenAI does: every other chunk says `usage: null`, and the finish chunk comes before the usage.
    assert [d["usage"] for d in datas[:-1]] == [None] * (len(datas) - 1)
    assert datas[-2]["choices"][0]["finish_reason"] == "stop"


def test_thinking_streams_as_reasoning_content_deltas_before_the_text() -> None:
    datas = chunks_of(raw_body(TURNS["thinking"]))
    deltas = [d["choices"][0]["delta"] for d in datas]
    reasoning = [d["reasoning_content"] for d in deltas if "reasoning_content" in d]
    assert len(reasoning) > 1
    assert "".join(reasoning) == TURNS["thinking"]["thinking"]
    first_text = next(i for i, d in enumerate(deltas) if d.get("content"))
    last_reasoning = max(i for i, d in enumerate(deltas) if "reasoning_content" in d)
    assert last_reasoning < first_text


def test_the_same_script_gives_the_same_bytes() -> None:
    assert raw_body(TURNS["parallel"]) == raw_body(TURNS["parallel"])


def test_the_non_streaming_body_is_a_valid_chat_completion() -> None:
    stub = ScriptTransport([TURNS["parallel"]])
    with STACKS[0].Client(transport=stub) as http:
        response = http.post("https://api.openai.com/v1/chat/completions", json=PARAMS)
    assert response.headers["content-type"] == "application/json"
    completion = ChatCompletion.model_validate(response.json())
    assert completion.object == "chat.completion"
    assert completion.created == 1_700_000_000
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.choices[0].logprobs is None


# ---------------------------------------------------------------- stop reasons


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("stop", "stop"),
        ("max_tokens", "length"),
        ("length", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "content_filter"),
        ("content_filter", "content_filter"),
        ("tool_use", "tool_calls"),
        ("function_call", "tool_calls"),
    ],
)
@pytest.mark.parametrize("mode", ["create", "create-stream"])
def test_stop_reasons_become_finish_reasons(stop_reason: str, finish: str, mode: str) -> None:
    stub = ScriptTransport([{"text": "Cut off", "stop_reason": stop_reason}])
    _, got, _ = complete(mode, False, stub)
    assert got == finish


@pytest.mark.parametrize(
    ("stop_reason", "error", "message"),
    [
        (
            "max_tokens",
            openai.LengthFinishReasonError,
            "Could not parse response content as the length limit was reached",
        ),
        (
            "refusal",
            openai.ContentFilterFinishReasonError,
            "Could not parse response content as the request was rejected by the content filter",
        ),
    ],
)
def test_the_stream_helper_raises_on_length_and_content_filter(
    stop_reason: str, error: type[Exception], message: str
) -> None:
    stub = ScriptTransport([{"text": "Cut off", "stop_reason": stop_reason}])
    with pytest.raises(error) as info:
        complete("stream-helper", False, stub)
    assert str(info.value).startswith(message)


# ---------------------------------------------------------------- errors

STATUS_ERRORS = [
    (400, openai.BadRequestError, "invalid_request_error"),
    (401, openai.AuthenticationError, "invalid_request_error"),
    (403, openai.PermissionDeniedError, "invalid_request_error"),
    (404, openai.NotFoundError, "invalid_request_error"),
    (418, openai.APIStatusError, "invalid_request_error"),
    (422, openai.UnprocessableEntityError, "invalid_request_error"),
    (429, openai.RateLimitError, "rate_limit_error"),
    (500, openai.InternalServerError, "server_error"),
    (503, openai.InternalServerError, "service_unavailable_error"),
    (529, openai.InternalServerError, "server_error"),
]


def create(client: Any, stream: bool) -> Any:
    """A chat request, reading the whole stream when it streams."""
    if stream:
        return list(client.chat.completions.create(**PARAMS, stream=True))
    return client.chat.completions.create(**PARAMS)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(("status", "error", "kind"), STATUS_ERRORS)
def test_error_turns_have_openai_shape_and_default_types(
    status: int, error: type[Exception], kind: str, stream: bool
) -> None:
    stub = ScriptTransport([{"error": {"status": status, "message": "Scripted failure."}}])
    client = strict_client(stub, max_retries=0)
    with pytest.raises(error) as info:
        create(client, stream)
    exc = info.value
    assert isinstance(exc, openai.APIStatusError)
    assert type(exc) is error
    assert exc.status_code == status
    assert exc.request_id == "req_0000"
    assert exc.body == {"message": "Scripted failure.", "type": kind, "param": None, "code": None}
    assert exc.type == kind
    if OPENAI_MAJOR >= 3:
        assert exc.message == f"Error code: {status} - Scripted failure."
    else:
        assert exc.message == f"Error code: {status} - {{'error': {exc.body}}}"
    assert len(stub.requests) == 1


def test_scripted_type_code_and_headers_pass_through() -> None:
    turn = {
        "error": {
            "status": 429,
            "type": "insufficient_quota",
            "code": "insufficient_quota",
            "headers": {"X-RateLimit-Remaining-Requests": "0", "retry-after": "121"},
        }
    }
    stub = ScriptTransport([turn])
    with pytest.raises(openai.RateLimitError) as info:
        strict_client(stub).chat.completions.create(**PARAMS)
    exc = info.value
    assert (exc.type, exc.code) == ("insufficient_quota", "insufficient_quota")
    assert exc.body["message"] == "wirescript: scripted 429 error"  # type: ignore[index]
    assert exc.response.headers["x-ratelimit-remaining-requests"] == "0"
    # retry-after above 120 s: the SDK does not retry at all, and the stub added no retry-after-ms.
    assert "retry-after-ms" not in exc.response.headers
    assert len(stub.requests) == 1


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_retryable_errors_are_retried_by_the_sdk_without_backoff(is_async: bool) -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, {"error": {"status": 500}}, "Recovered."])

    async def abody(client: Any) -> Any:
        return await client.chat.completions.create(**PARAMS)

    def body(client: Any) -> Any:
        if is_async:
            return abody(client)
        return client.chat.completions.create(**PARAMS)

    completion = run(is_async, stub, body, max_retries=2)
    assert completion.choices[0].message.content == "Recovered."
    assert [r.retry_count for r in stub.requests] == [0, 1, 2]
    # What makes the retries instant: a positive server delay of 1 ms instead of the 0.375 s+ backoff.
    with STACKS[0].Client(transport=ScriptTransport([{"error": {"status": 500}}])) as http:
        response = http.post("https://api.openai.com/v1/chat/completions", json=PARAMS)
    assert response.headers["retry-after-ms"] == "1"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_request_past_the_script_is_a_loud_non_retried_400(stream: bool) -> None:
    stub = ScriptTransport(["only one"])
    client = strict_client(stub, max_retries=2)
    client.chat.completions.create(**PARAMS)
    with pytest.raises(openai.BadRequestError) as info:
        create(client, stream)
    message = (
        "wirescript: requests[1] POST /v1/chat/completions (model 'gpt-test') is past the end of the script: "
        "it has 1 turn(s), all served. The app made a model call the script does not expect; add a turn for it "
        "or find the extra call. It is the 2nd request (requests[1])."
    )
    assert info.value.body == {
        "message": message,
        "type": "invalid_request_error",
        "param": None,
        "code": "wirescript_unscripted",
    }
    assert info.value.response.headers["x-should-retry"] == "false"
    assert len(stub.requests) == 2  # not retried
    assert stub.overflow == 1


@pytest.mark.parametrize("mode", ["create-stream", "stream-helper"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_in_stream_error_raises_api_error(mode: str, is_async: bool) -> None:
    turn = {
        "text": "Partial answer",
        "fault": {"stream_error": {"type": "server_error", "message": "Boom.", "after": 2}},
    }
    stub = ScriptTransport([turn])
    with pytest.raises(openai.APIError) as info:
        complete(mode, is_async, stub)
    assert type(info.value) is openai.APIError
    assert info.value.message == "Boom."
    assert info.value.body == {"message": "Boom.", "type": "server_error", "param": None, "code": None}
    assert len(stub.requests) == 1  # an error after a 200 is never retried


# ---------------------------------------------------------------- the record


def test_the_request_is_recorded_in_provider_neutral_fields() -> None:
    stub = ScriptTransport(["Done."])
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "developer", "content": [{"type": "text", "text": "Use metric units."}]},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 C"},
    ]
    strict_client(stub).chat.completions.create(
        model="gpt-test",
        messages=messages,  # type: ignore[arg-type]
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        max_completion_tokens=321,
        temperature=0.25,
    )
    record = stub.requests[0]
    assert record.provider == "openai_chat"
    assert record.path == "/v1/chat/completions"
    assert record.model == "gpt-test"
    assert record.system == "You are terse.\nUse metric units."
    assert record.messages == messages
    assert record.conversation == messages
    assert record.tools == [WEATHER_TOOL]
    assert record.tool_names == ["weather"]
    assert record.tool_results == [{"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 C"}]
    assert record.stream is False
    assert record.max_tokens == 321
    assert record.temperature == 0.25
    assert record.api_key == "test-key"
    assert record.headers["authorization"] == "<redacted>"
    assert record.last_user_text == "Weather in Paris?"


def test_legacy_max_tokens_is_recorded_too() -> None:
    stub = ScriptTransport(["a"])
    strict_client(stub).chat.completions.create(**PARAMS, max_tokens=77)
    assert stub.requests[0].max_tokens == 77
    assert stub.requests[0].system is None


@pytest.mark.parametrize("base_url", ["http://localhost:8000", "http://localhost:8000/v1", "http://proxy/openai/v1"])
def test_any_base_url_ending_in_chat_completions_is_served(base_url: str) -> None:
    stub = ScriptTransport(["Hello."])
    completion = strict_client(stub, base_url=base_url).chat.completions.create(**PARAMS)
    assert completion.choices[0].message.content == "Hello."
    assert stub.requests[0].provider == "openai_chat"


def test_azure_deployments_are_served() -> None:
    stub = ScriptTransport(["Hello from Azure."])
    hx = STACKS[0] if OPENAI_MAJOR >= 3 else next(m for m in STACKS if m.__name__ == "httpx")
    client = openai.AzureOpenAI(
        api_key="test-key",
        api_version="2024-10-21",
        azure_endpoint="https://example.openai.azure.com",
        http_client=hx.Client(transport=stub),
        _strict_response_validation=True,
    )
    completion = client.chat.completions.create(model="my-deployment", messages=USER)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "Hello from Azure."
    record = stub.requests[0]
    assert record.path == "/openai/deployments/my-deployment/chat/completions"
    assert record.api_key == "test-key"


# ---------------------------------------------------------------- the checks can fail


def serve_raw(body: str) -> ScriptTransport:
    return ScriptTransport([{"fault": {"raw": body}}])


def test_strict_validation_rejects_a_completion_without_finish_reason() -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}}],
    }
    with pytest.raises(openai.APIResponseValidationError):
        strict_client(serve_raw(json.dumps(body))).chat.completions.create(**PARAMS)
    # The lenient default lets the same body through: only strict validation proves our bodies complete.
    lenient = openai_client(serve_raw(json.dumps(body))).chat.completions.create(**PARAMS)
    assert lenient.choices[0].finish_reason is None


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    data = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(data)}\n\n"


def test_the_stream_helper_rejects_a_tool_call_whose_first_index_is_not_zero() -> None:
    first = {"index": 1, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    body = chunk({"role": "assistant"}) + chunk({"tool_calls": [first]}) + chunk({}, "tool_calls") + "data: [DONE]\n\n"
    with pytest.raises(IndexError):
        complete("stream-helper", False, serve_raw(body))


def test_malformed_tool_json_reaches_the_app_as_unparsable_arguments() -> None:
    turn = {"tool": {"name": "weather", "input": {"city": "Paris"}}, "fault": {"malformed_tool_json": True}}
    stub = ScriptTransport([turn, turn])
    client = strict_client(stub)
    completion = client.chat.completions.create(**PARAMS)
    with client.chat.completions.stream(**HELPER) as stream:
        streamed = stream.get_final_completion()
    for got in (completion, streamed):
        arguments = got.choices[0].message.tool_calls[0].function.arguments
        assert arguments == '{"city":"Paris", "oops": }'
        with pytest.raises(json.JSONDecodeError):
            json.loads(arguments)


# ---------------------------------------------------------------- any request body

VOCABULARY = ["model", "messages", "role", "content", "text", "type", "tools", "function", "name", "stream"]
ODD_BODIES = odd_bodies(VOCABULARY, ["stream_options", "max_completion_tokens", "max_tokens", "temperature"])


@settings(max_examples=examples(60), deadline=None)
@given(body=ODD_BODIES)
def test_any_json_object_is_recorded_and_answered(body: dict[str, Any]) -> None:
    # strict=False: the bodies are arbitrary JSON on purpose, most of which the real API refuses.
    stub = ScriptTransport(lambda request: TURNS["parallel"], strict=False)
    with STACKS[0].Client(transport=stub) as http:
        response = http.post("https://api.openai.com/v1/chat/completions", json=body)
        content = response.content
    assert response.status_code == 200, content
    record = stub.requests[0]
    assert record.provider == "openai_chat"
    assert isinstance(record.messages, list)
    assert all(isinstance(name, str) for name in record.tool_names)
    assert record.system is None or isinstance(record.system, str)
    assert stub.problems == []
