"""ScriptTransport: both HTTP stacks, recording, script forms, hold/release, tool loops."""

from __future__ import annotations

import asyncio
import json
import threading
from types import ModuleType
from typing import Any

import anthropic
import pytest

from _support import ANTHROPIC_HX, ANTHROPIC_MAJOR, STACKS, anthropic_client
from wirescript import RecordedRequest, ScriptError, ScriptTransport, WaitTimeoutError

URL = "https://api.anthropic.com/v1/messages"
PARAMS: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}


# ---------------------------------------------------------------- one object, both stacks, sync and async


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
def test_one_instance_serves_sync_and_async_clients_of_both_stacks(hx: ModuleType) -> None:
    stub = ScriptTransport([{"text": f"answer {i}"} for i in range(4)] * len(STACKS))

    def body(response: Any) -> list[str]:
        return [
            json.loads(line[6:])["delta"]["text"]
            for line in response.text.splitlines()
            if line.startswith("data: ") and "text_delta" in line
        ]

    with hx.Client(transport=stub) as client:
        streamed = client.post(URL, json={**PARAMS, "stream": True})
        plain = client.post(URL, json=PARAMS)
    assert "".join(body(streamed)) == "answer 0"
    assert plain.json()["content"] == [{"type": "text", "text": "answer 1"}]
    assert isinstance(streamed, hx.Response)

    async def main() -> list[Any]:
        async with hx.AsyncClient(transport=stub) as client:
            return [await client.post(URL, json={**PARAMS, "stream": True}), await client.post(URL, json=PARAMS)]

    astreamed, aplain = asyncio.run(main())
    assert "".join(body(astreamed)) == "answer 2"
    assert aplain.json()["content"] == [{"type": "text", "text": "answer 3"}]
    assert [r.index for r in stub.requests] == [0, 1, 2, 3]


def test_every_stack_in_one_process_shares_one_stub() -> None:
    stub = ScriptTransport([f"t{i}" for i in range(2 * len(STACKS))])
    for hx in STACKS:
        with hx.Client(transport=stub) as client:
            assert client.post(URL, json=PARAMS).json()["content"][0]["text"].startswith("t")

        async def one(hx: ModuleType = hx) -> Any:
            async with hx.AsyncClient(transport=stub) as client:
                return (await client.post(URL, json=PARAMS)).json()

        assert asyncio.run(one())["content"][0]["text"].startswith("t")
    assert len(stub.requests) == 2 * len(STACKS)
    assert stub.pending == []


def test_anthropic_default_http_client_accepts_the_stub() -> None:
    stub = ScriptTransport(["via DefaultHttpxClient"])
    client = anthropic.Anthropic(api_key="test-key", http_client=anthropic.DefaultHttpxClient(transport=stub))
    assert client.messages.create(**PARAMS).content[0].text == "via DefaultHttpxClient"


def test_closing_the_sdk_client_closes_the_transport_and_keeps_the_records() -> None:
    stub = ScriptTransport(["a"])
    with anthropic_client(stub) as client:
        client.messages.create(**PARAMS)
    assert stub.closed
    assert len(stub.requests) == 1


# ---------------------------------------------------------------- recording


def test_a_request_is_recorded_with_its_provider_fields() -> None:
    stub = ScriptTransport(["ok"])
    client = anthropic_client(stub, api_key="sk-test-secret")
    client.messages.create(
        model="claude-test",
        max_tokens=99,
        system=[{"type": "text", "text": "You are terse."}, {"type": "text", "text": "Answer in French."}],
        messages=[{"role": "user", "content": "Bonjour"}],
        tools=[{"name": "lookup", "description": "d", "input_schema": {"type": "object"}}],
        extra_body={"temperature": 0.25},
        # API version 2026-10-21, the anthropic 2.x default, refuses `temperature`; 2023-06-01 takes it.
        extra_headers={"anthropic-version": "2023-06-01"},
    )
    record = stub.requests[0]
    assert record.provider == "anthropic"
    assert (record.method, record.path) == ("POST", "/v1/messages")
    assert record.model == "claude-test"
    assert record.system == "You are terse.\nAnswer in French."
    assert record.messages == [{"role": "user", "content": "Bonjour"}]
    assert record.conversation == record.messages
    assert record.tool_names == ["lookup"]
    assert record.tools[0]["input_schema"] == {"type": "object"}
    assert record.max_tokens == 99
    assert record.temperature == 0.25
    assert record.stream is False
    assert record.retry_count == 0
    assert record.api_key == "sk-test-secret"
    assert record.api_key is not None
    assert record.api_key.get_secret_value() == "sk-test-secret"
    assert record.body["max_tokens"] == 99
    assert json.loads(record.content) == record.body
    assert record.headers["anthropic-version"]
    assert record.last_user_text == "Bonjour"


def test_the_key_is_read_from_the_header_the_major_sends_and_never_shown() -> None:
    stub = ScriptTransport(["ok"])
    anthropic_client(stub, api_key="sk-ant-very-secret").messages.create(**PARAMS)
    record = stub.requests[0]
    # anthropic 2.x sends `Authorization: Bearer`, 0.x sends `x-api-key`: both are read.
    header = "authorization" if ANTHROPIC_MAJOR >= 1 else "x-api-key"
    assert record.headers[header] == "<redacted>"
    assert record.api_key == "sk-ant-very-secret"
    for text in (repr(record), str(record), repr(stub.requests), record.model_dump_json(), repr(stub)):
        assert "very-secret" not in text


def test_auth_token_is_read_from_the_bearer_header() -> None:
    stub = ScriptTransport(["ok"])
    client = anthropic.Anthropic(auth_token="tok-123", http_client=ANTHROPIC_HX.Client(transport=stub))
    client.messages.create(**PARAMS)
    assert stub.requests[0].api_key == "tok-123"


_BODIES = {
    "utf-8": '{"model":"m","messages":[{"role":"user","content":"é"}]}'.encode(),
    "array": b"[1, 2]",
    "leading space": b' {"a": 1}',
    "utf-8 BOM": b'\xef\xbb\xbf{"a": 1}',
    "utf-16": '{"a": "é"}'.encode("utf-16"),
    "utf-16-le": '{"a": 1}'.encode("utf-16-le"),
    "utf-32": '{"a": 1}'.encode("utf-32"),
    "lone surrogate bytes": '{"a": "\ud800"}'.encode("utf-8", "surrogatepass"),
    "invalid utf-8": b'{"a": "\xff"}',
    "trailing data": b'{"a": 1} x',
    "truncated": b"{",
}


@pytest.mark.parametrize("content", _BODIES.values(), ids=_BODIES.keys())
def test_a_body_is_parsed_as_json_loads_parses_it(content: bytes) -> None:
    """Every encoding `json.loads` accepts from bytes (BOM, UTF-16/32, surrogate escapes) and every error it raises."""
    try:
        expected, error = json.loads(content), None
    except ValueError as exc:  # UnicodeDecodeError included
        expected, error = None, f"not JSON: {exc}"
    stub = ScriptTransport(["a"], strict=False)  # `{"a": 1}` is no Messages request: this is about parsing
    with ANTHROPIC_HX.Client(transport=stub) as client:
        client.post(URL, content=content, headers={"content-type": "application/json"})
    (record,) = stub.requests
    assert (record.body, record.body_error) == (expected, error)


def test_a_body_nested_too_deeply_to_parse_is_recorded_and_answered_loudly() -> None:
    """`json.loads` raises RecursionError there: it must not escape the transport as a retried connection error."""
    stub = ScriptTransport(["kept"])
    content = b'{"messages": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    with ANTHROPIC_HX.Client(transport=stub) as client:
        response = client.post(URL, content=content, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.headers["x-should-retry"] == "false"
    (record,) = stub.requests
    assert record.body is None
    assert record.body_error == "not JSON that can be read: nested deeper than Python's recursion limit"
    assert "nested deeper than Python's recursion limit" in response.json()["error"]["message"]
    assert stub.overflow == 1


def test_an_unparseable_body_is_recorded_and_answered_loudly() -> None:
    stub = ScriptTransport(["kept"])
    with ANTHROPIC_HX.Client(transport=stub) as client:
        response = client.post(URL, content=b"{not json", headers={"content-type": "application/json"})
        client.post(URL)
    assert response.status_code == 400
    assert response.headers["x-should-retry"] == "false"
    record = stub.requests[0]
    assert record.body is None
    assert record.body_error is not None
    assert record.body_error.startswith("not JSON: Expecting property name")
    assert record.content == b"{not json"
    assert stub.requests[1].body_error == "empty body"
    assert stub.overflow == 2
    assert [p.turn.text for p in stub.pending] == ["kept"]


# ---------------------------------------------------------------- script forms


def test_a_function_script_answers_by_who_asked() -> None:
    def script(request: RecordedRequest) -> dict[str, Any] | None:
        if request.system == "planner":
            return {"text": "plan"}
        if request.system == "worker":
            return {"text": f"worked on {request.last_user_text}"}
        return None

    stub = ScriptTransport(script)
    client = anthropic_client(stub)
    worker = client.messages.create(**PARAMS, system="worker")
    planner = client.messages.create(**PARAMS, system="planner")
    assert (worker.content[0].text, planner.content[0].text) == ("worked on Hi", "plan")
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(**PARAMS, system="stranger")
    assert stub.overflow == 1
    assert stub.problems == ["requests[2] POST /v1/messages: the script function returned None (unscripted request)."]


def test_a_function_that_raises_or_returns_garbage_is_loud_not_a_crash() -> None:
    answers: list[Any] = [ZeroDivisionError("boom"), {"txt": "typo"}, "fine"]

    def script(request: RecordedRequest) -> Any:
        answer = answers[request.index]
        if isinstance(answer, Exception):
            raise answer
        return answer

    stub = ScriptTransport(script)
    client = anthropic_client(stub)
    for _ in range(2):
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(**PARAMS)
    assert client.messages.create(**PARAMS).content[0].text == "fine"
    assert stub.problems == [
        "requests[0] POST /v1/messages: the script function raised ZeroDivisionError: boom",
        (
            "requests[1] POST /v1/messages: invalid script function's answer to requests[1]: unknown field 'txt' "
            "(expected one of: text, citations, server_tools, tool, tools, thinking, thinking_signature, usage, "
            "stop_reason, error, fault, unchecked); "
            "did you mean 'text'?"
        ),
    ]
    assert stub.overflow == 2


def test_per_model_queues_serve_each_model_its_own_turns() -> None:
    stub = ScriptTransport({"claude-small": ["small 1", "small 2"], "*": ["default 1"]})
    client = anthropic_client(stub)

    def ask(model: str) -> str:
        return str(client.messages.create(**{**PARAMS, "model": model}).content[0].text)

    assert [ask("claude-small"), ask("claude-big"), ask("claude-small")] == ["small 1", "default 1", "small 2"]
    assert [(r.queue, r.turn_index) for r in stub.requests] == [("claude-small", 0), ("*", 0), ("claude-small", 1)]
    with pytest.raises(anthropic.BadRequestError, match="past the end of the queue for model 'claude-small'"):
        ask("claude-small")


def test_a_model_with_no_queue_and_no_default_is_an_overflow() -> None:
    stub = ScriptTransport({"claude-small": ["small"]})
    with pytest.raises(anthropic.BadRequestError):
        anthropic_client(stub).messages.create(**{**PARAMS, "model": "claude-big"})
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: no queue for model 'claude-big' and no default queue '*' "
            "(queues: 'claude-small'). Add a queue for this model or a '*' queue."
        )
    ]


def test_a_fallback_answers_only_once_the_script_is_drained() -> None:
    stub = ScriptTransport(["scripted"], fallback=lambda r: {"text": f"echo: {r.last_user_text}"})
    client = anthropic_client(stub)
    assert client.messages.create(**PARAMS).content[0].text == "scripted"
    assert client.messages.create(**PARAMS).content[0].text == "echo: Hi"
    assert stub.overflow == 0
    none_fallback = ScriptTransport([], fallback=lambda r: None)
    with pytest.raises(anthropic.BadRequestError):
        anthropic_client(none_fallback).messages.create(**PARAMS)
    assert none_fallback.overflow == 1
    assert none_fallback.problems[0].endswith(
        "find the extra call. It is the 1st request (requests[0]). The fallback returned None for it too."
    )


# ---------------------------------------------------------------- hold / release


def test_hold_records_requests_and_answers_none_until_release_threads() -> None:
    stub = ScriptTransport([f"worker {i}" for i in range(3)])
    client = anthropic_client(stub)
    stub.hold()
    results: list[str] = []

    def worker(i: int) -> None:
        results.append(client.messages.create(**{**PARAMS, "system": f"w{i}"}).content[0].text)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    seen = stub.wait_for_requests(3, timeout=5)
    assert len(seen) == 3
    assert results == []  # three requests in flight at once, none answered
    stub.release()
    for t in threads:
        t.join(5)
    assert sorted(results) == ["worker 0", "worker 1", "worker 2"]


def test_hold_release_with_asyncio_does_not_block_the_loop() -> None:
    async def main() -> tuple[list[str], int]:
        stub = ScriptTransport([f"a{i}" for i in range(5)])
        client = anthropic_client(stub, is_async=True)
        stub.hold()
        tasks = [asyncio.create_task(client.messages.create(**PARAMS)) for _ in range(5)]
        await stub.wait_for_requests_async(5, timeout=5)
        await asyncio.sleep(0.01)
        done_while_held = sum(t.done() for t in tasks)
        stub.release()
        answers = [m.content[0].text for m in await asyncio.gather(*tasks)]
        return answers, done_while_held

    answers, done_while_held = asyncio.run(main())
    assert done_while_held == 0
    assert sorted(answers) == [f"a{i}" for i in range(5)]


def test_release_then_hold_frees_exactly_the_requests_held_so_far() -> None:
    async def main() -> list[str]:
        stub = ScriptTransport(["first", "second"])
        client = anthropic_client(stub, is_async=True)
        stub.hold()
        first = asyncio.create_task(client.messages.create(**PARAMS))
        await stub.wait_for_requests_async(1)
        stub.release()
        stub.hold()  # back to back: the first request is still released
        message = await asyncio.wait_for(first, 5)
        second = asyncio.create_task(client.messages.create(**PARAMS))
        await stub.wait_for_requests_async(2)
        await asyncio.sleep(0.01)
        assert not second.done()  # held by the new hold
        stub.release()
        return [message.content[0].text, (await second).content[0].text]

    assert asyncio.run(main()) == ["first", "second"]


def test_a_held_request_never_released_fails_with_a_message_instead_of_hanging() -> None:
    stub = ScriptTransport(["never served"], hold_timeout=0.05)
    stub.hold()
    with pytest.raises(anthropic.BadRequestError) as info:
        anthropic_client(stub).messages.create(**PARAMS)
    problem = (
        "requests[0] POST /v1/messages was held for 0.05 s and never released: call stub.release() once the test "
        "has seen what it needs (or raise hold_timeout)."
    )
    assert problem in str(info.value)
    assert stub.problems == [problem]
    assert len(stub.requests) == 1  # not retried


def test_wait_for_requests_times_out_with_a_message() -> None:
    stub = ScriptTransport([])
    expected = (
        "wirescript: waited 0.01 s for 2 request(s), 0 arrived. Is the app still running, or did it send fewer "
        "requests than the test expects?"
    )
    with pytest.raises(WaitTimeoutError) as info:
        stub.wait_for_requests(2, timeout=0.01)
    assert str(info.value) == expected
    with pytest.raises(WaitTimeoutError) as info:
        asyncio.run(stub.wait_for_requests_async(2, timeout=0.01))
    assert str(info.value) == expected


# ---------------------------------------------------------------- tool loops


def get_weather(city: str) -> str:
    """Get the weather for a city.

    Args:
        city: The city.
    """
    return f"Sunny, 21c in {city}"


TOOL_SCRIPT = [
    {"text": "Checking.", "tool": {"name": "get_weather", "input": {"city": "Paris"}}},
    {"text": "It is sunny in Paris."},
]


def test_a_hand_written_tool_loop_sends_the_tool_result_back() -> None:
    stub = ScriptTransport(TOOL_SCRIPT)
    client = anthropic_client(stub)
    tools = [{"name": "get_weather", "description": "weather", "input_schema": {"type": "object"}}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
    model_calls = 0
    while True:
        with client.messages.stream(model="claude-test", max_tokens=64, messages=messages, tools=tools) as stream:
            reply = stream.get_final_message()
        model_calls += 1
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        results = [
            {"type": "tool_result", "tool_use_id": b.id, "content": get_weather(**b.input)}
            for b in reply.content
            if b.type == "tool_use"
        ]
        messages.append({"role": "user", "content": results})
    assert reply.content[0].text == "It is sunny in Paris."
    assert len(stub.requests) == model_calls == 2  # the app's count equals what the wire saw
    second = stub.requests[1]
    assert second.tool_results == [
        {"type": "tool_result", "tool_use_id": "toolu_0000_0", "content": "Sunny, 21c in Paris"}
    ]
    assert second.last_message["role"] == "user"
    assert second.last_message["content"][0]["type"] == "tool_result"
    assert stub.overflow == 0


def test_the_sdk_tool_runner_works_and_the_record_shows_the_whole_conversation() -> None:
    stub = ScriptTransport(TOOL_SCRIPT)
    client = anthropic_client(stub)
    runner = client.beta.messages.tool_runner(
        model="claude-test",
        max_tokens=64,
        system="Be brief.",
        tools=[anthropic.beta_tool(get_weather)],
        messages=[{"role": "user", "content": "Weather in Paris?"}],
    )
    final = runner.until_done()
    assert final.content[0].text == "It is sunny in Paris."
    assert len(stub.requests) == 2
    second = stub.requests[1]
    assert second.tool_results == [
        {"type": "tool_result", "tool_use_id": "toolu_0000_0", "content": "Sunny, 21c in Paris"}
    ]
    # anthropic 2.x threads by default: request 2 sends only the tool result, and omits tools and system.
    if ANTHROPIC_MAJOR >= 1:
        assert second.body["thread"] == {"type": "continue", "previous_message_id": "msg_0000"}
        assert "tools" not in second.body
        assert len(second.messages) == 1
    # Either way the record shows what the model was given: the whole conversation, tools and system.
    assert [m["role"] for m in second.conversation] == ["user", "assistant", "user"]
    assert second.conversation[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_0000_0",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert second.tool_names == ["get_weather"]
    assert second.system == "Be brief."
    assert stub.overflow == 0


def test_async_tool_runner() -> None:
    async def get_weather(city: str) -> str:
        """Get the weather for a city.

        Args:
            city: The city.
        """
        return f"Rainy in {city}"

    async def main() -> Any:
        stub = ScriptTransport(TOOL_SCRIPT)
        client = anthropic_client(stub, is_async=True)
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=64,
            tools=[anthropic.beta_async_tool(get_weather)],
            messages=[{"role": "user", "content": "Weather in Paris?"}],
        )
        return stub, await runner.until_done()

    stub, final = asyncio.run(main())
    assert final.content[0].text == "It is sunny in Paris."
    assert stub.requests[1].tool_results[0]["content"] == "Rainy in Paris"


def test_repr_summarises_the_stub() -> None:
    stub = ScriptTransport(["a", "b"])
    anthropic_client(stub).messages.create(**PARAMS)
    stub.hold()
    assert repr(stub) == "<ScriptTransport requests=1 pending=1 overflow=0 held>"
    assert stub.requests[0].summary() == "requests[0] POST /v1/messages model='claude-test' last=user:'Hi'"


def test_a_wire_that_fails_to_parse_is_loud_not_a_retried_connection_error() -> None:
    from wirescript.wires import AnthropicWire

    class Broken(AnthropicWire):
        def parse(self, body: Any, path: str) -> Any:
            raise KeyError("role")

    stub = ScriptTransport(["kept"], wires=[Broken()])
    with pytest.raises(anthropic.BadRequestError):
        anthropic_client(stub).messages.create(**PARAMS)
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: the anthropic wire could not parse the body (KeyError: 'role'); "
            "nothing was consumed from the script."
        )
    ]
    assert len(stub.requests) == 1


def test_an_async_script_function_is_refused_at_construction() -> None:
    async def answer(request: RecordedRequest) -> str:
        return "never"

    with pytest.raises(ScriptError) as info:
        ScriptTransport(answer)  # type: ignore[arg-type]
    assert str(info.value) == (
        "script: answer is async, but script functions must be plain functions (they answer sync and async "
        "clients alike); make it a plain def"
    )
    with pytest.raises(ScriptError, match=r"^fallback: answer is async"):
        ScriptTransport([], fallback=answer)  # type: ignore[arg-type]


def _sdk_clients() -> list[Any]:
    import openai

    return [anthropic.Anthropic, anthropic.AsyncAnthropic, openai.OpenAI, openai.AsyncOpenAI]


@pytest.mark.parametrize("sdk_client", _sdk_clients(), ids=lambda c: f"{c.__module__.split('.')[0]}.{c.__name__}")
def test_the_stub_passed_as_the_http_client_is_refused_naming_the_client_to_build(sdk_client: Any) -> None:
    # The natural slip `http_client=stub`: the SDK reads the client's `timeout` first, and gets the fix
    # (the SDK's own message would be "'ScriptTransport' object has no attribute 'timeout'").
    from wirescript import UsageError

    stub = ScriptTransport(["never served"])
    with pytest.raises(UsageError) as info:
        sdk_client(api_key="test-key", http_client=stub)
    assert str(info.value) == (
        "http_client=stub: a ScriptTransport is the transport of an HTTP client, not the client. Pass "
        "http_client=httpx2.Client(transport=stub) (httpx2.AsyncClient(transport=stub) for an async client; "
        "httpx.Client / httpx.AsyncClient for anthropic 0.x and openai 2.x)."
    )
    assert type(info.value).__name__ == "NotAClientError"
    assert isinstance(info.value, AttributeError)  # so `hasattr(stub, "timeout")` stays an honest False
    assert not hasattr(stub, "timeout")
    assert stub.request_count == 0


def test_google_genai_refuses_the_stub_as_its_httpx_client_itself() -> None:
    # google-genai validates `HttpOptions(httpx_client=...)` with pydantic's isinstance check, before
    # anything of the stub is read: its own error names the field (the troubleshooting page says so).
    types = pytest.importorskip("google.genai.types")
    import pydantic

    with pytest.raises(
        pydantic.ValidationError, match=r"httpx_client\.is-instance\[Client\]\n\s+Input should be an instance of Client"
    ):
        types.HttpOptions(httpx_client=ScriptTransport([]))


def test_holding_releases_when_the_block_ends() -> None:
    stub = ScriptTransport(["a", "b"])
    client = anthropic_client(stub)
    answers: list[str] = []
    with stub.holding():
        assert stub.held
        worker = threading.Thread(target=lambda: answers.append(client.messages.create(**PARAMS).content[0].text))
        worker.start()
        stub.wait_for_requests(1)
        assert answers == []
    worker.join(5)
    assert answers == ["a"]
    assert not stub.held


def test_holding_works_as_an_async_context_manager_too() -> None:
    # `async with stub.holding():` is what an async test reaches for first: it holds and releases as
    # `with` does, and hands over the stub.
    stub = ScriptTransport(["a", "b"])
    client = anthropic_client(stub, is_async=True)

    async def main() -> list[str]:
        async with stub.holding() as held:
            assert held is stub
            assert stub.held
            tasks = [asyncio.create_task(client.messages.create(**PARAMS)) for _ in range(2)]
            await stub.wait_for_requests_async(2)
            assert not any(task.done() for task in tasks)  # both in flight at once, neither answered
        assert not stub.held
        return sorted(reply.content[0].text for reply in await asyncio.gather(*tasks))

    assert asyncio.run(main()) == ["a", "b"]


def test_holding_releases_on_error_in_an_async_block() -> None:
    stub = ScriptTransport([])

    async def main() -> None:
        async with stub.holding():
            raise KeyError("the test failed inside the block")

    with pytest.raises(KeyError):
        asyncio.run(main())
    assert not stub.held


def test_an_unfaulted_stream_travels_in_batches_of_whole_events_unless_asked_per_event() -> None:
    from wirescript.transport import PER_EVENT

    body = {**PARAMS, "stream": True}
    with (
        ANTHROPIC_HX.Client(transport=ScriptTransport(["abcdefghijklmnop" * 4])) as client,
        client.stream("POST", URL, json=body) as response,
    ):
        batched = list(response.iter_raw())
    with ANTHROPIC_HX.Client(transport=ScriptTransport(["abcdefghijklmnop" * 4])) as client:
        request = client.build_request("POST", URL, json=body, extensions={PER_EVENT: True})
        response = client.send(request, stream=True)
        per_event = list(response.iter_raw())
        response.close()
    # A short answer: one chunk of whole events, but for its tail, sent apart to know it was read to its end.
    assert len(batched) == 2
    assert batched[1].startswith(b"}\n\nevent: message_stop")
    assert b"".join(batched) == b"".join(per_event)
    *events, head, tail, closing = per_event  # the last event with content split at its tail, then message_stop
    assert [chunk.count(b"event: ") for chunk in [*events, head + tail, closing]] == [1] * (len(events) + 2)
    assert (tail, closing.startswith(b"event: message_stop")) == (b"}\n\n", True)
    assert len(per_event) - 1 == b"".join(batched).count(b"event: ") > 10


def test_records_of_unparsed_requests_share_no_mutable_state() -> None:
    stub = ScriptTransport([])
    with ANTHROPIC_HX.Client(transport=stub) as client:
        client.post(URL, content=b"not json")
        client.post(URL, content=b"nor this")
    first, second = stub.requests
    first.messages.append({"role": "user", "content": "mutated"})
    assert second.messages == []


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
def test_recorded_headers_are_what_the_library_reads_repeats_and_non_ascii_included(hx: ModuleType) -> None:
    """Headers are recorded as `dict(request.headers.items())` gives them: names lower-cased, a repeated
    name joined with ", ", a Latin-1 or UTF-8 value decoded as the library decodes it. They are read
    from the bytes sent, as by every way into a stub (botocore's, the loopback server's): an encoding
    set by hand on the client's headers object changes what it reads, not what it sends."""
    stub = ScriptTransport(["a", "b", "c", "d"], strict=False)  # `messages: []` is refused by the real API
    body = json.dumps({"model": "m", "max_tokens": 5, "messages": []}).encode()
    repeated = [("X-Trace", "one"), ("x-trace", "two"), ("Content-Type", "application/json")]
    latin = [("X-Note", "caf\xe9".encode("latin-1")), ("content-type", b"application/json")]
    utf8 = [("X-Note", "caf\xe9".encode()), ("content-type", b"application/json")]
    with hx.Client(transport=stub, base_url="https://api.test") as client:
        sent = [
            client.build_request("POST", "/v1/messages", content=body, headers=h) for h in (repeated, latin, utf8, utf8)
        ]
        sent[3].headers.encoding = "iso-8859-1"
        for request in sent:
            assert client.send(request).status_code == 200
    for record, request in zip(stub.requests[:3], sent, strict=False):
        assert record.headers == dict(request.headers.items())
    first, second, third, fourth = stub.requests
    assert first.headers["x-trace"] == "one, two"
    assert second.headers["x-note"] == third.headers["x-note"] == fourth.headers["x-note"] == "caf\xe9"
    assert dict(sent[3].headers.items())["x-note"] == "caf\xc3\xa9"  # what the client reads, not what it sent


def test_records_share_their_repeated_strings_and_key_but_no_container() -> None:
    """What every request repeats (method, path, body keys, the API key) is one object for all records;
    what a test may change (the body, its messages, headers, filled lists) is each record's own, and the
    body is exactly what `json.loads` reads, in order. An empty field is the one read-only empty list
    every record shares, which refuses a change loudly (`test_record_empties`)."""
    stub = ScriptTransport(["a", "b"])
    body = {"model": "claude-x", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "stream": False}
    with ANTHROPIC_HX.Client(transport=stub) as client:
        for _ in range(2):  # each request's body is new bytes, read anew
            client.post(URL, content=json.dumps(body).encode(), headers={"x-api-key": "test-key"})
    first, second = stub.requests
    assert first.body == second.body == json.loads(json.dumps(body))
    assert list(first.body) == list(body)
    assert list(first.messages[0]) == ["role", "content"]
    assert first.api_key is second.api_key
    assert first.api_key == "test-key"
    assert first.method is second.method
    assert first.path is second.path
    for a, b in ((first.body, second.body), (first.messages[0], second.messages[0])):
        assert all(x is y for x, y in zip(a, b, strict=True))  # the keys: one copy
    assert first.body is not second.body
    assert first.messages is not second.messages
    assert first.messages[0] is not second.messages[0]
    assert first.headers is not second.headers
    assert first.tools is second.tools  # empty: the shared one, which takes no items
    with pytest.raises(TypeError, match="copy it to change it"):
        first.tools.append({"name": "x"})
    assert second.tools == []
    first.messages[0]["content"] = "mutated"
    assert second.messages[0]["content"] == "hi"
