"""The OpenAI Responses wire, through the real openai SDK (3.x on httpx2, 2.x on httpx)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import openai
import pydantic
import pytest
from hypothesis import given, settings
from openai.types.responses import Response, ResponseStreamEvent

from _support import SAMPLE_TURNS, STACKS, examples, odd_bodies, openai_client, responses_tools
from wirescript import ScriptTransport
from wirescript.sse import parse_sse

OPENAI_MAJOR = int(openai.__version__.split(".")[0])
PARAMS: dict[str, Any] = {"model": "gpt-test", "input": "Hi", "tools": responses_tools()}
WEATHER_TOOL = {
    "type": "function",
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "strict": False,
}
EVENT = pydantic.TypeAdapter(ResponseStreamEvent)

TURNS = SAMPLE_TURNS


def calls_of(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [turn["tool"]] if "tool" in turn else list(turn.get("tools", []))


def expected_output(turn: dict[str, Any], index: int = 0) -> list[tuple[Any, ...]]:
    """The output items a turn must come back as, in order."""
    items: list[tuple[Any, ...]] = []
    if "thinking" in turn:
        items.append(("reasoning", f"rs_{index:04d}", turn["thinking"]))
    if "text" in turn:
        items.append(("message", f"msg_{index:04d}", turn["text"]))
    for k, call in enumerate(calls_of(turn)):
        items.append(
            (
                "function_call",
                f"fc_{index:04d}_{k}",
                call.get("id", f"call_{index:04d}_{k}"),
                call["name"],
                call["input"],
            )
        )
    return items


def output_of(response: Any) -> list[tuple[Any, ...]]:
    items: list[tuple[Any, ...]] = []
    for item in response.output:
        if item.type == "reasoning":
            items.append(("reasoning", item.id, "".join(s.text for s in item.summary)))
        elif item.type == "message":
            assert item.status == "completed"
            assert [p.type for p in item.content] == ["output_text"]
            items.append(("message", item.id, item.content[0].text))
        else:
            assert item.type == "function_call"
            items.append(("function_call", item.id, item.call_id, item.name, json.loads(item.arguments)))
    return items


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


async def alist(stream: Any) -> list[Any]:
    return [item async for item in stream]


def raw_events(is_async: bool, stub: ScriptTransport, **params: Any) -> list[Any]:
    """The typed events of `responses.create(stream=True)`."""
    params = {**PARAMS, **params}
    if is_async:

        async def abody(client: Any) -> Any:
            return await alist(await client.responses.create(**params, stream=True))

        return run(True, stub, abody)  # type: ignore[no-any-return]
    return run(False, stub, lambda client: list(client.responses.create(**params, stream=True)))  # type: ignore[no-any-return]


def final_response(mode: str, is_async: bool, stub: ScriptTransport, **params: Any) -> Any:
    """Run one request in the given SDK mode and return the final Response."""
    params = {**PARAMS, **params}
    if mode == "create":
        if is_async:

            async def acreate(client: Any) -> Any:
                return await client.responses.create(**params)

            return run(True, stub, acreate)
        return run(False, stub, lambda client: client.responses.create(**params))
    if mode == "create-stream":
        events = raw_events(is_async, stub, **params)
        assert events[-1].type == "response.completed"
        return events[-1].response
    assert mode == "stream-helper"
    if is_async:

        async def helper(client: Any) -> Any:
            async with client.responses.stream(**params) as stream:
                return await stream.get_final_response()

        return run(True, stub, helper)

    def sync_helper(client: Any) -> Any:
        with client.responses.stream(**params) as stream:
            return stream.get_final_response()

    return run(False, stub, sync_helper)


MODES = ["create", "create-stream", "stream-helper"]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(TURNS))
def test_every_turn_is_rebuilt_exactly(name: str, mode: str, is_async: bool) -> None:
    turn = TURNS[name]
    stub = ScriptTransport([turn])
    response = final_response(mode, is_async, stub)
    assert output_of(response) == expected_output(turn)
    assert response.id == "resp_0000"
    assert response.model == "gpt-test"
    assert response.status == "completed"
    assert response.output_text == turn.get("text", "")
    usage = response.usage
    if turn.get("usage"):
        assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (123, 45, 168)
        assert usage.input_tokens_details.cached_tokens == 6
        assert usage.input_tokens_details.cache_write_tokens == 7
    else:
        assert usage.input_tokens == 10
        assert usage.output_tokens >= 1
        assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    reasoning = usage.output_tokens_details.reasoning_tokens
    assert (reasoning > 0) is bool(turn.get("thinking"))
    assert stub.requests[0].stream is (mode != "create")
    assert stub.overflow == 0


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_both_http_stacks_serve_the_stream_helper(hx: ModuleType, is_async: bool) -> None:
    stub = ScriptTransport([TURNS["parallel"]])

    def body(client: Any) -> Any:
        with client.responses.stream(**PARAMS) as stream:
            return stream.get_final_response()

    async def abody(client: Any) -> Any:
        async with client.responses.stream(**PARAMS) as stream:
            return await stream.get_final_response()

    client = strict_client(stub, is_async=is_async, hx=hx)
    response = asyncio.run(abody(client)) if is_async else body(client)
    assert output_of(response) == expected_output(TURNS["parallel"])


def test_the_stream_helper_yields_text_deltas_that_join_into_the_text() -> None:
    stub = ScriptTransport([TURNS["text"]])
    with strict_client(stub).responses.stream(**PARAMS) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
    assert len(deltas) > 3
    assert "".join(deltas) == TURNS["text"]["text"]


# ---------------------------------------------------------------- the event sequence


def raw_body(turn: dict[str, Any], **extra: Any) -> bytes:
    """The exact bytes the stub streams for a turn, read through a plain client."""
    stub = ScriptTransport([turn])
    with STACKS[0].Client(transport=stub) as http:
        response = http.post("https://api.openai.com/v1/responses", json={**PARAMS, "stream": True, **extra})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-request-id"] == "req_0000"
    return bytes(response.content)


def events_of(body: bytes) -> list[dict[str, Any]]:
    """The events of a Responses stream, each validated against the SDK's event models."""
    events, tail = parse_sse(body)
    assert tail == ""
    datas = []
    for event in events:
        data = json.loads(event.data)
        assert event.event == data["type"]
        EVENT.validate_python(data)
        datas.append(data)
    return datas


TEXT_SEQUENCE = [
    "response.output_item.added",
    "response.content_part.added",
    *["response.output_text.delta"] * 2,
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
]


def test_a_text_turn_is_the_documented_sequence() -> None:
    kinds = [e["type"] for e in events_of(raw_body({"text": "Hi there"}))]
    assert kinds == ["response.created", "response.in_progress", *TEXT_SEQUENCE, "response.completed"]


def test_a_thinking_and_tools_turn_is_the_documented_sequence() -> None:
    turn = {"thinking": "Hm", "text": "Hi", "tools": [{"name": "a", "input": {}}, {"name": "b", "input": {}}]}
    kinds = [e["type"] for e in events_of(raw_body(turn))]
    call = [
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * 2,
        "response.function_call_arguments.done",
        "response.output_item.done",
    ]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        *["response.reasoning_summary_text.delta"] * 2,
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        *TEXT_SEQUENCE,
        *call,
        *call,
        "response.completed",
    ]


@pytest.mark.parametrize("name", list(TURNS))
def test_sequence_numbers_identity_and_deltas_agree_with_the_completed_response(name: str) -> None:
    events = events_of(raw_body(TURNS[name]))
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    lifecycle = [e["response"] for e in events if "response" in e]
    assert [r["id"] for r in lifecycle] == ["resp_0000"] * 3
    assert [r["status"] for r in lifecycle] == ["in_progress", "in_progress", "completed"]
    assert lifecycle[0]["output"] == lifecycle[1]["output"] == []
    completed = lifecycle[-1]
    Response.model_validate(completed)
    output = completed["output"]
    # Each item announced at its index, finished with exactly what `completed` reports.
    added = [(e["output_index"], e["item"]["id"]) for e in events if e["type"] == "response.output_item.added"]
    done = [(e["output_index"], e["item"]) for e in events if e["type"] == "response.output_item.done"]
    assert added == [(i, item["id"]) for i, item in enumerate(output)]
    assert done == list(enumerate(output))
    for i, item in enumerate(output):
        mine = [e for e in events if e.get("output_index") == i]
        assert {e.get("item_id", e.get("item", {}).get("id")) for e in mine} == {item["id"]}
        if item["type"] == "message":
            text = "".join(e["delta"] for e in mine if e["type"] == "response.output_text.delta")
            assert text == item["content"][0]["text"]
            (text_done,) = [e for e in mine if e["type"] == "response.output_text.done"]
            assert text_done["text"] == text
        elif item["type"] == "function_call":
            args = "".join(e["delta"] for e in mine if e["type"] == "response.function_call_arguments.delta")
            assert args == item["arguments"]
            (args_done,) = [e for e in mine if e["type"] == "response.function_call_arguments.done"]
            assert (args_done["arguments"], args_done["name"]) == (args, item["name"])
        else:
            summary = "".join(e["delta"] for e in mine if e["type"] == "response.reasoning_summary_text.delta")
            assert summary == "".join(s["text"] for s in item["summary"])


def test_function_arguments_arrive_in_several_fragments() -> None:
    turn = {"tool": {"name": "f", "input": {"body": "x" * 100}}}
    events = events_of(raw_body(turn))
    fragments = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert len(fragments) >= 3
    added = next(e["item"] for e in events if e["type"] == "response.output_item.added")
    assert added == {
        "id": "fc_0000_0",
        "type": "function_call",
        "status": "in_progress",
        "call_id": "call_0000_0",
        "name": "f",
        "arguments": "",
    }


def test_the_same_script_gives_the_same_bytes() -> None:
    assert raw_body(TURNS["parallel"]) == raw_body(TURNS["parallel"])


def test_the_response_echoes_the_request_settings() -> None:
    stub = ScriptTransport([{"tool": {"name": "weather", "input": {"city": "Paris"}}}])  # a call: it is required
    response = strict_client(stub).responses.create(
        model="gpt-test",
        input="Hi",
        instructions="Be brief.",
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        tool_choice="required",
        parallel_tool_calls=False,
        max_output_tokens=99,
        temperature=0.5,
        metadata={"k": "v"},
    )
    assert response.instructions == "Be brief."
    assert [t.name for t in response.tools] == ["weather"]
    assert response.tool_choice == "required"
    assert response.parallel_tool_calls is False
    assert (response.max_output_tokens, response.temperature) == (99, 0.5)
    assert response.metadata == {"k": "v"}
    assert response._request_id == "req_0000"


def test_reasoning_items_carry_encrypted_content_when_the_request_includes_it() -> None:
    stub = ScriptTransport([TURNS["thinking"], TURNS["thinking"]])
    client = strict_client(stub)
    plain = client.responses.create(**PARAMS)
    included = client.responses.create(**PARAMS, include=["reasoning.encrypted_content"])
    assert plain.output[0].encrypted_content is None
    assert included.output[0].encrypted_content == "wirescript-reasoning-0001"


# ---------------------------------------------------------------- stop reasons


@pytest.mark.parametrize(
    ("stop_reason", "reason"),
    [("max_tokens", "max_output_tokens"), ("length", "max_output_tokens"), ("refusal", "content_filter")],
)
def test_a_cut_off_turn_is_an_incomplete_response(stop_reason: str, reason: str) -> None:
    turn = {"text": "Cut off", "stop_reason": stop_reason}
    stub = ScriptTransport([turn, turn, turn])
    response = final_response("create", False, stub)
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == reason
    assert response.output[0].status == "incomplete"
    events = raw_events(False, stub)
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == reason
    assert events[-1].response.output_text == "Cut off"
    # As with OpenAI, the stream helper wants `response.completed`, which an incomplete response never sends.
    with pytest.raises(RuntimeError) as info:
        final_response("stream-helper", False, stub)
    assert str(info.value) == "Didn't receive a `response.completed` event."


@pytest.mark.parametrize("stop_reason", ["end_turn", "stop_sequence", "pause_turn", "tool_use"])
def test_other_stop_reasons_complete(stop_reason: str) -> None:
    response = final_response("create", False, ScriptTransport([{"text": "x", "stop_reason": stop_reason}]))
    assert response.status == "completed"
    assert response.incomplete_details is None


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (400, openai.BadRequestError, "invalid_request_error"),
        (401, openai.AuthenticationError, "invalid_request_error"),
        (429, openai.RateLimitError, "rate_limit_error"),
        (500, openai.InternalServerError, "server_error"),
        (503, openai.InternalServerError, "service_unavailable_error"),
    ],
)
def test_error_turns_have_openai_shape(status: int, error: type[Exception], kind: str) -> None:
    stub = ScriptTransport([{"error": {"status": status, "message": "Scripted failure.", "code": "some_code"}}])
    with pytest.raises(error) as info:
        strict_client(stub, max_retries=0).responses.create(**PARAMS)
    exc = info.value
    assert isinstance(exc, openai.APIStatusError)
    assert exc.status_code == status
    assert exc.request_id == "req_0000"
    assert exc.body == {"message": "Scripted failure.", "type": kind, "param": None, "code": "some_code"}
    assert (exc.type, exc.code) == (kind, "some_code")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_retryable_errors_are_retried_then_succeed(is_async: bool) -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, {"error": {"status": 500}}, "Recovered."])
    response = final_response("stream-helper", is_async, stub)
    assert response.output_text == "Recovered."
    assert [r.retry_count for r in stub.requests] == [0, 1, 2]


def test_a_request_past_the_script_is_a_loud_non_retried_400() -> None:
    stub = ScriptTransport([])
    with pytest.raises(openai.BadRequestError) as info:
        strict_client(stub, max_retries=2).responses.create(**PARAMS)
    assert info.value.body == {
        "message": "wirescript: requests[0] POST /v1/responses (model 'gpt-test') is past the end of the script: "
        "it has 0 turn(s), all served. The app made a model call the script does not expect; add a turn for it "
        "or find the extra call. It is the 1st request (requests[0]).",
        "type": "invalid_request_error",
        "param": None,
        "code": "wirescript_unscripted",
    }
    assert len(stub.requests) == 1
    assert stub.overflow == 1


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_in_stream_error_is_an_error_event(is_async: bool) -> None:
    turn = {
        "text": "Partial answer",
        "fault": {"stream_error": {"type": "server_error", "message": "Boom.", "after": 3}},
    }
    stub = ScriptTransport([turn, turn])
    events = raw_events(is_async, stub)
    assert [e.type for e in events][-2:] == ["response.output_item.added", "error"]
    error = events[-1]
    assert (error.code, error.message, error.param, error.sequence_number) == ("server_error", "Boom.", None, 3)
    with pytest.raises(RuntimeError) as info:
        final_response("stream-helper", is_async, stub)
    assert str(info.value) == "Didn't receive a `response.completed` event."
    assert len(stub.requests) == 2  # an error after a 200 is never retried


# ---------------------------------------------------------------- the record


def test_a_string_input_is_recorded_as_one_user_message() -> None:
    stub = ScriptTransport(["ok"])
    strict_client(stub).responses.create(model="gpt-test", input="Weather in Paris?", max_output_tokens=64)
    record = stub.requests[0]
    assert record.provider == "openai_responses"
    assert record.messages == [{"role": "user", "content": "Weather in Paris?"}]
    assert record.last_user_text == "Weather in Paris?"
    assert record.system is None
    assert record.max_tokens == 64
    assert record.api_key == "test-key"


def test_input_items_instructions_tools_and_outputs_are_recorded() -> None:
    stub = ScriptTransport(["ok"])
    items = [
        {"role": "developer", "content": "Use metric units."},
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21 C"},
    ]
    strict_client(stub).responses.create(
        model="gpt-test",
        input=items,  # type: ignore[arg-type]
        instructions="You are terse.",
        tools=[WEATHER_TOOL, {"type": "web_search"}],  # type: ignore[list-item]
        temperature=0.2,
    )
    record = stub.requests[0]
    assert record.system == "You are terse.\nUse metric units."
    assert record.messages == items
    assert record.tools == [WEATHER_TOOL, {"type": "web_search"}]
    assert record.tool_names == ["weather"]
    assert record.tool_results == [{"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21 C"}]
    assert record.temperature == 0.2
    assert record.last_user_text == "Weather in Paris?"


def test_previous_response_id_continues_the_stored_conversation() -> None:
    turn = {"tool": {"name": "weather", "input": {"city": "Paris"}}}
    stub = ScriptTransport([turn, "It is sunny."])
    client = strict_client(stub)
    first = client.responses.create(model="gpt-test", input="Weather in Paris?", tools=[WEATHER_TOOL])  # type: ignore[list-item]
    call = first.output[0]
    output = {"type": "function_call_output", "call_id": call.call_id, "output": "Sunny"}
    second = client.responses.create(
        model="gpt-test",
        input=[output],  # type: ignore[list-item]
        previous_response_id=first.id,
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
    )
    assert second.previous_response_id == "resp_0000"
    record = stub.requests[1]
    assert record.messages == [output]
    assert record.tool_results == [output]
    assert [m.get("role") or m.get("type") for m in record.conversation] == [
        "user",
        "function_call",
        "function_call_output",
    ]
    assert record.conversation[1]["call_id"] == "call_0000_0"


def test_a_response_stored_false_cannot_be_continued() -> None:
    stub = ScriptTransport(["a", "b"])
    client = strict_client(stub)
    first = client.responses.create(model="gpt-test", input="Hi", store=False)
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.create(model="gpt-test", input="Again", previous_response_id=first.id)
    # The structured error, not str(err): openai 2.x puts the repr of the whole body in the message.
    err = caught.value
    assert (err.status_code, err.code, err.param, err.type) == (
        404,
        "previous_response_not_found",
        "previous_response_id",
        "invalid_request_error",
    )
    assert isinstance(err.body, dict)
    assert err.body["message"].startswith(f"Previous response with id '{first.id}' not found.")
    assert stub.requests[1].conversation == [{"role": "user", "content": "Again"}]
    assert [p.kind for p in stub.problems] == ["strict"]


def test_sub_resources_of_responses_are_not_served_as_new_responses() -> None:
    stub = ScriptTransport(["never"])
    with pytest.raises(openai.NotFoundError) as caught:
        strict_client(stub, max_retries=0).responses.cancel("resp_1")
    assert "Response with id 'resp_1' not found." in str(caught.value)
    # the stored responses' endpoint answers it: no turn is consumed, and asking for what was never stored is no problem
    assert (stub.requests[0].provider, stub.requests[0].path_params) == ("openai_responses", {"response_id": "resp_1"})
    assert stub.pending[0].turn.text == "never"
    assert stub.problems == []


# ---------------------------------------------------------------- the tool runner (openai 3.x)


@pytest.mark.skipif(OPENAI_MAJOR < 3, reason="ResponsesToolRunner is new in openai 3")
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_the_responses_tool_runner_runs_the_scripted_call_and_sends_its_output(is_async: bool, stream: bool) -> None:
    from openai.lib import responses_tool_runner as runners  # type: ignore[attr-defined,unused-ignore]

    class Weather(pydantic.BaseModel):
        city: str

    seen: list[str] = []

    def execute(args: Weather) -> str:
        seen.append(args.city)
        return f"Sunny in {args.city}"

    async def aexecute(args: Weather) -> str:
        return execute(args)

    tool = openai.pydantic_responses_function_tool(Weather, name="weather")
    stub = ScriptTransport([{"tool": {"name": "weather", "input": {"city": "Paris"}}}, "It is sunny in Paris."])
    params = {"model": "gpt-test", "input": [{"role": "user", "content": "Weather in Paris?"}]}
    if is_async:

        async def main() -> Any:
            function = runners.AsyncRegisteredFunction.from_tool(tool, execute=aexecute)
            runner = runners.AsyncResponsesToolRunner(functions=[function])
            return await runner.run(strict_client(stub, is_async=True), params, stream=stream)

        result = asyncio.run(main())
    else:
        runner = runners.ResponsesToolRunner(functions=[runners.RegisteredFunction.from_tool(tool, execute=execute)])
        result = runner.run(strict_client(stub), params, stream=stream)
    assert seen == ["Paris"]
    assert result.output_text == "It is sunny in Paris."
    first, second = stub.requests
    assert first.tool_names == second.tool_names == ["weather"]
    assert first.stream is second.stream is stream
    assert second.tool_results == [
        {"type": "function_call_output", "call_id": "call_0000_0", "output": "Sunny in Paris"}
    ]
    assert second.last_user_text == "Weather in Paris?"
    assert stub.overflow == 0


# ---------------------------------------------------------------- the checks can fail


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def lifecycle(kind: str, response_id: str, sequence: int, output: list[Any]) -> dict[str, Any]:
    status = "completed" if kind == "response.completed" else "in_progress"
    response = {
        "id": response_id,
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    return {"type": kind, "response": response, "sequence_number": sequence}


def test_a_hand_written_consistent_stream_passes() -> None:
    body = sse(lifecycle("response.created", "resp_1", 0, []), lifecycle("response.completed", "resp_1", 1, []))
    assert final_response("stream-helper", False, ScriptTransport([{"fault": {"raw": body}}])).id == "resp_1"


def test_openai_3_rejects_a_stream_whose_completed_id_differs() -> None:
    body = sse(lifecycle("response.created", "resp_1", 0, []), lifecycle("response.completed", "resp_2", 1, []))
    stub = ScriptTransport([{"fault": {"raw": body}}])
    if OPENAI_MAJOR < 3:
        # openai 2.x does not check the identity: the wire's one id throughout is what keeps 3.x working.
        assert final_response("stream-helper", False, stub).id == "resp_2"
        return
    with pytest.raises(RuntimeError) as info:
        final_response("stream-helper", False, stub)
    assert str(info.value) == "Lifecycle response identity changed."


def test_the_stream_helper_rejects_a_stream_without_response_created() -> None:
    stub = ScriptTransport([{"text": "Hi there", "fault": {"drop": ["response.created"]}}])
    with pytest.raises(RuntimeError) as info:
        final_response("stream-helper", False, stub)
    assert str(info.value) == "Expected to have received `response.created` before `response.in_progress`"


def test_the_stream_helper_rejects_a_stream_without_response_completed() -> None:
    stub = ScriptTransport([{"text": "Hi there", "fault": {"drop": ["response.completed"]}}])
    with pytest.raises(RuntimeError) as info:
        final_response("stream-helper", False, stub)
    assert str(info.value) == "Didn't receive a `response.completed` event."


def test_strict_validation_rejects_usage_without_cache_write_tokens() -> None:
    body = json.loads(raw_json(TURNS["text"]))
    del body["usage"]["input_tokens_details"]["cache_write_tokens"]
    stub = ScriptTransport([{"fault": {"raw": json.dumps(body)}}] * 2)
    with pytest.raises(openai.APIResponseValidationError):
        strict_client(stub).responses.create(**PARAMS)
    # The lenient default accepts it: only strict validation proves our bodies complete.
    assert openai_client(stub).responses.create(**PARAMS).output_text == TURNS["text"]["text"]


def raw_json(turn: dict[str, Any]) -> bytes:
    stub = ScriptTransport([turn])
    with STACKS[0].Client(transport=stub) as http:
        response = http.post("https://api.openai.com/v1/responses", json=PARAMS)
    assert response.headers["content-type"] == "application/json"
    return bytes(response.content)


def test_malformed_tool_json_breaks_the_arguments_everywhere_alike() -> None:
    turn = {"tool": {"name": "weather", "input": {"city": "Paris"}}, "fault": {"malformed_tool_json": True}}
    events = events_of(raw_body(turn))
    args = "".join(e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta")
    assert args == '{"city":"Paris", "oops": }'
    assert events[-1]["response"]["output"][0]["arguments"] == args
    response = final_response("create", False, ScriptTransport([turn]))
    assert response.output[0].arguments == args


# ---------------------------------------------------------------- any request body

VOCABULARY = ["model", "input", "role", "content", "text", "type", "tools", "name", "call_id", "output", "stream"]
ODD_BODIES = odd_bodies(
    VOCABULARY,
    [
        "instructions",
        "include",
        "previous_response_id",
        "store",
        "max_output_tokens",
        "temperature",
        "top_p",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "metadata",
        "truncation",
    ],
)


@settings(max_examples=examples(60), deadline=None)
@given(body=ODD_BODIES)
def test_any_json_object_is_recorded_and_answered(body: dict[str, Any]) -> None:
    # strict=False: the bodies are arbitrary JSON on purpose, most of which the real API refuses.
    stub = ScriptTransport(lambda request: TURNS["parallel"], strict=False)
    with STACKS[0].Client(transport=stub) as http:
        for _ in range(2):  # the second may continue the first (previous_response_id)
            response = http.post("https://api.openai.com/v1/responses", json=body)
            content = response.content
            assert response.status_code == 200, content
    record = stub.requests[1]
    assert record.provider == "openai_responses"
    assert isinstance(record.messages, list)
    assert all(isinstance(name, str) for name in record.tool_names)
    assert record.system is None or isinstance(record.system, str)
    assert stub.problems == []
