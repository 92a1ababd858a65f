"""The Gemini wire, through the real google-genai client (httpx2 and httpx, sync and async)."""

from __future__ import annotations

import asyncio
import json
import ssl
from types import ModuleType
from typing import Any

import pytest

genai = pytest.importorskip("google.genai")

from google.genai import errors, types  # noqa: E402

from _support import SAMPLE_TURNS, STACKS, TOOL_NAMES  # noqa: E402
from wirescript import ScriptTransport  # noqa: E402
from wirescript.errors import ScriptError  # noqa: E402
from wirescript.sse import parse_sse  # noqa: E402
from wirescript.wires import GeminiWire  # noqa: E402

MODEL = "gemini-test"
HX: ModuleType = STACKS[0]
# google-genai builds a TLS context for its websocket API in every Client (about 80 ms) unless
# `async_client_args` carries one; sharing one keeps this suite fast. No connection is ever made.
_TLS = ssl.create_default_context()

TOOLS = [{"function_declarations": [{"name": name} for name in TOOL_NAMES]}]
"""The functions the requests declare: every one the scripts call."""

# Gemini reports no cache writes.
TURNS = {
    **SAMPLE_TURNS,
    "usage": {"text": "Counted.", "usage": {"input_tokens": 123, "output_tokens": 45, "cache_read_input_tokens": 6}},
}


def gemini_client(stub: ScriptTransport, hx: ModuleType = HX, **options: Any) -> Any:
    """A real google-genai client whose sync and async HTTP clients carry `stub`."""
    http_options = types.HttpOptions(
        httpx_client=hx.Client(transport=stub),
        httpx_async_client=hx.AsyncClient(transport=stub),
        async_client_args={"ssl": _TLS},
        **options,
    )
    return genai.Client(api_key="test-key", http_options=http_options)


def generate(stub: ScriptTransport, *, stream: bool, is_async: bool, hx: ModuleType = HX, **params: Any) -> list[Any]:
    """One generate call; the responses it yields (one for JSON, the chunks for a stream)."""
    client = gemini_client(stub, hx)
    params = {"model": MODEL, "contents": "Hi", **params}
    params.setdefault("config", {"tools": TOOLS})
    if is_async:
        return asyncio.run(_generate_async(client, stream, params))
    if stream:
        return list(client.models.generate_content_stream(**params))
    return [client.models.generate_content(**params)]


async def _generate_async(client: Any, stream: bool, params: dict[str, Any]) -> list[Any]:
    if stream:
        return [chunk async for chunk in await client.aio.models.generate_content_stream(**params)]
    return [await client.aio.models.generate_content(**params)]


def calls_of(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [turn["tool"]] if "tool" in turn else list(turn.get("tools", []))


def expected_parts(turn: dict[str, Any], index: int = 0) -> list[dict[str, Any]]:
    """The parts a turn must come back as (in google-genai's field names)."""
    parts: list[dict[str, Any]] = []
    if "thinking" in turn:
        parts.append({"text": turn["thinking"], "thought": True})
    if "text" in turn:
        parts.append({"text": turn["text"]})
    for k, call in enumerate(calls_of(turn)):
        call_id = call.get("id", f"fc_{index:04d}_{k}")
        parts.append({"function_call": {"id": call_id, "name": call["name"], "args": call["input"]}})
    if "thinking" in turn:  # the signature rides on the first function call, else on the last part
        signed = next((p for p in parts if "function_call" in p), parts[-1])
        signed["thought_signature"] = f"sig_{index:04d}".encode()
    return parts


def merged_parts(responses: list[Any]) -> list[dict[str, Any]]:
    """The parts of all responses, consecutive text pieces of the same kind joined (as an accumulator would)."""
    parts: list[dict[str, Any]] = []
    for response in responses:
        for part in response.candidates[0].content.parts or []:
            piece = part.model_dump(exclude_none=True)
            last = parts[-1] if parts else None
            joinable = last is not None and "text" in last and "text" in piece and "thought_signature" not in last
            if joinable and last is not None and last.get("thought") == piece.get("thought"):
                last["text"] += piece.pop("text")
                last.update(piece)
            else:
                parts.append(piece)
    return parts


MODES = [(False, False), (False, True), (True, False), (True, True)]
MODE_IDS = ["json-sync", "json-async", "stream-sync", "stream-async"]


@pytest.mark.parametrize(("stream", "is_async"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize("name", list(TURNS))
def test_every_turn_is_rebuilt_exactly(name: str, stream: bool, is_async: bool) -> None:
    turn = TURNS[name]
    stub = ScriptTransport([turn])
    responses = generate(stub, stream=stream, is_async=is_async)
    assert merged_parts(responses) == expected_parts(turn)
    final = responses[-1]
    assert final.candidates[0].finish_reason == types.FinishReason.STOP
    assert final.model_version == MODEL
    assert {r.response_id for r in responses} == {"resp_0000"}
    usage = TURNS[name].get("usage")
    if usage is not None:
        assert final.usage_metadata.prompt_token_count == 123
        assert final.usage_metadata.candidates_token_count == 45
        assert final.usage_metadata.total_token_count == 168
        assert final.usage_metadata.cached_content_token_count == 6
    else:
        assert final.usage_metadata.prompt_token_count == 10
        assert final.usage_metadata.cached_content_token_count is None
    assert stub.requests[0].stream is stream
    assert stub.overflow == 0


@pytest.mark.parametrize("hx", STACKS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_both_http_stacks_serve_json_and_streams(hx: ModuleType, is_async: bool) -> None:
    stub = ScriptTransport(["Hello from one stack.", "And streamed from it."])
    [response] = generate(stub, stream=False, is_async=is_async, hx=hx)
    chunks = generate(stub, stream=True, is_async=is_async, hx=hx)
    assert response.text == "Hello from one stack."
    assert "".join(c.text for c in chunks) == "And streamed from it."
    assert [(r.provider, r.stream) for r in stub.requests] == [("gemini", False), ("gemini", True)]


def test_text_streams_in_several_chunks_cut_mid_word_and_only_the_last_finishes() -> None:
    stub = ScriptTransport([{"text": "The quick brown fox jumps."}])
    chunks = generate(stub, stream=True, is_async=False)
    assert [c.text for c in chunks] == ["The quic", "k brown ", "fox jump", "s."]
    assert [c.candidates[0].finish_reason for c in chunks] == [None, None, None, types.FinishReason.STOP]


def test_parallel_function_calls_arrive_one_per_chunk() -> None:
    stub = ScriptTransport([TURNS["parallel"]])
    chunks = generate(stub, stream=True, is_async=False)
    calls = [[(f.id, f.args["city"]) for f in c.function_calls or []] for c in chunks]
    assert [c for c in calls if c] == [[("fc_0000_0", "Paris")], [("fc_0000_1", "Zürich ☃")]]


def test_earlier_chunks_report_only_the_prompt_tokens_so_summing_usage_is_caught() -> None:
    stub = ScriptTransport([{"text": "Twelve chars", "usage": {"input_tokens": 7, "output_tokens": 3}}])
    chunks = generate(stub, stream=True, is_async=False)
    usages = [c.usage_metadata.model_dump(exclude_none=True) for c in chunks]
    assert usages == [
        {"prompt_token_count": 7, "total_token_count": 7},
        {"prompt_token_count": 7, "candidates_token_count": 3, "total_token_count": 10},
    ]


def test_the_stream_is_data_only_sse_with_one_generate_content_response_per_event() -> None:
    stub = ScriptTransport([TURNS["parallel"]])
    client = gemini_client(stub)
    with client._api_client._httpx_client.stream(
        "POST",
        f"https://generativelanguage.googleapis.com/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
        json={"contents": [{"role": "user", "parts": [{"text": "Hi"}]}], "tools": TOOLS},
    ) as response:
        assert response.headers["content-type"] == "text/event-stream"
        body = response.read()
    events, tail = parse_sse(body)
    assert tail == ""
    assert {e.event for e in events} == {None}
    chunks = [json.loads(e.data) for e in events]
    assert all(set(c) == {"candidates", "usageMetadata", "modelVersion", "responseId"} for c in chunks)
    assert [len(c["candidates"][0]["content"]["parts"]) for c in chunks] == [1] * len(chunks)
    assert "finishReason" in chunks[-1]["candidates"][0]
    assert not any("finishReason" in c["candidates"][0] for c in chunks[:-1])


def test_the_same_script_gives_the_same_bytes() -> None:
    bodies = []
    for _ in range(2):
        stub = ScriptTransport([TURNS["parallel"], TURNS["parallel"]])
        client = gemini_client(stub)
        url = f"https://generativelanguage.googleapis.com/v1beta/models/{MODEL}"
        request = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
        http = client._api_client._httpx_client
        bodies.append(
            (
                http.post(f"{url}:generateContent", json=request).content,
                http.post(f"{url}:streamGenerateContent?alt=sse", json=request).content,
            )
        )
    assert bodies[0] == bodies[1]


STOPS = [
    ("end_turn", "STOP"),
    ("tool_use", "STOP"),
    ("max_tokens", "MAX_TOKENS"),
    ("length", "MAX_TOKENS"),
    ("refusal", "SAFETY"),
    ("content_filter", "SAFETY"),
    ("STOP", "STOP"),
    ("RECITATION", "RECITATION"),
    ("MALFORMED_FUNCTION_CALL", "MALFORMED_FUNCTION_CALL"),
]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(("stop_reason", "finish"), STOPS)
def test_stop_reasons_become_finish_reasons(stop_reason: str, finish: str, stream: bool) -> None:
    stub = ScriptTransport([{"text": "Cut", "stop_reason": stop_reason}])
    responses = generate(stub, stream=stream, is_async=False)
    assert responses[-1].candidates[0].finish_reason == types.FinishReason(finish)


def test_a_tool_call_turn_finishes_with_stop_as_gemini_does() -> None:
    stub = ScriptTransport([TURNS["tool-only"]])
    [response] = generate(stub, stream=False, is_async=False)
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    assert [f.name for f in response.function_calls] == ["lookup"]


def test_an_unknown_stop_reason_is_sent_as_scripted_and_the_sdk_warns() -> None:
    stub = ScriptTransport([{"text": "Hm", "stop_reason": "pause_turn"}])
    with pytest.warns(UserWarning, match="^pause_turn is not a valid FinishReason$"):
        [response] = generate(stub, stream=False, is_async=False)
    assert response.candidates[0].finish_reason == "pause_turn"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_the_request_is_recorded_in_provider_neutral_fields(is_async: bool) -> None:
    stub = ScriptTransport(["Done."])
    declaration = types.FunctionDeclaration(
        name="weather",
        description="The weather in a city.",
        parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    history = [
        types.Content(role="user", parts=[types.Part(text="Weather in Paris?")]),
        types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(id="c1", name="weather", args={"city": "Paris"}))],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(function_response=types.FunctionResponse(id="c1", name="weather", response={"t": 21})),
                types.Part(text="And now?"),
            ],
        ),
    ]
    config = types.GenerateContentConfig(
        system_instruction="Be brief.",
        tools=[types.Tool(function_declarations=[declaration]), types.Tool(google_search=types.GoogleSearch())],
        max_output_tokens=321,
        temperature=0.25,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    generate(stub, stream=False, is_async=is_async, contents=history, config=config)
    [record] = stub.requests
    assert record.provider == "gemini"
    assert record.path == f"/v1/models/{MODEL}:generateContent"
    assert record.model == MODEL
    assert record.system == "Be brief."
    assert record.messages == record.body["contents"]
    assert record.messages[0] == {"parts": [{"text": "Weather in Paris?"}], "role": "user"}
    assert record.conversation == record.messages
    assert record.tool_names == ["weather"]
    assert record.tools == record.body["tools"]
    assert len(record.tools) == 2
    assert record.tool_results == [
        {"functionResponse": {"id": "c1", "name": "weather", "response": {"t": 21}}},
    ]
    assert record.max_tokens == 321
    assert record.temperature == 0.25
    assert record.stream is False
    assert record.last_user_text == "And now?"
    assert record.turn_index == 0


def test_a_system_instruction_of_several_parts_is_joined() -> None:
    stub = ScriptTransport(["ok"])
    config = types.GenerateContentConfig(system_instruction=["Be brief.", "Be kind."])
    generate(stub, stream=True, is_async=False, config=config)
    assert stub.requests[0].system == "Be brief.\nBe kind."
    assert stub.requests[0].stream is True


@pytest.mark.parametrize(
    ("path", "model", "stream"),
    [
        ("/v1beta/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", False),
        ("/v1/models/gemini-2.5-flash:streamGenerateContent", "gemini-2.5-flash", True),
        ("/v1beta/tunedModels/my-tune-7:generateContent", "my-tune-7", False),
        (
            "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.0:streamGenerateContent",
            "gemini-2.0",
            True,
        ),
    ],
)
def test_the_model_and_stream_flag_come_from_the_path(path: str, model: str, stream: bool) -> None:
    wire = GeminiWire()
    assert wire.matches("POST", path)
    parsed = wire.parse({"contents": []}, path)
    assert (parsed.model, parsed.stream) == (model, stream)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1beta/models/gemini-2.5-flash:generateContent"),
        ("POST", "/v1beta/models/gemini-2.5-flash:countTokens"),
        ("POST", "/v1beta/models/gemini-2.5-flash:embedContent"),
        ("POST", "/v1beta/models/gemini-2.5-flash:generateContentX"),
        ("POST", "/v1/messages"),
    ],
)
def test_other_endpoints_are_not_gemini_generate_calls(method: str, path: str) -> None:
    assert not GeminiWire().matches(method, path)


def test_a_malformed_body_field_is_recorded_as_empty_not_guessed() -> None:
    parsed = GeminiWire().parse(
        {"contents": "nope", "tools": [{"functionDeclarations": [{"name": 3}, "x"]}], "generationConfig": []},
        "/v1beta/models/m:generateContent",
    )
    assert (parsed.messages, parsed.tool_names, parsed.max_tokens, parsed.temperature) == ([], [], None, None)


def test_the_count_tokens_endpoint_is_served_and_consumes_nothing() -> None:
    stub = ScriptTransport(["never served"])
    assert gemini_client(stub).models.count_tokens(model=MODEL, contents="Hi").total_tokens > 0
    assert stub.overflow == 0
    assert len(stub.pending) == 1
    [record] = stub.requests
    assert (record.provider, record.path) == ("count_tokens", f"/v1/models/{MODEL}:countTokens")


# ---------------------------------------------------------------- the api key


def test_the_header_api_key_is_recorded_but_never_shown() -> None:
    stub = ScriptTransport(["one"])
    client = gemini_client(stub)
    client.models.generate_content(model=MODEL, contents="Hi")
    with pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model=MODEL, contents="Hi again")
    record = stub.requests[0]
    assert record.api_key == "test-key"
    assert record.api_key.get_secret_value() == "test-key"
    assert record.headers["x-goog-api-key"] == "<redacted>"
    shown = [repr(stub.requests), str(record), record.model_dump_json(), repr(stub), *stub.problems, str(info.value)]
    assert all("test-key" not in text for text in shown)


def test_a_query_parameter_api_key_is_recorded_but_never_shown() -> None:
    # strict=False: empty `contents` is refused by the real API; this is about the unscripted answer.
    stub = ScriptTransport([], strict=False)
    http = HX.Client(transport=stub)
    url = f"https://generativelanguage.googleapis.com/v1beta/models/{MODEL}:generateContent?key=query-secret&x=1"
    response = http.post(url, json={"contents": []})
    assert response.status_code == 400
    [record] = stub.requests
    assert record.api_key == "query-secret"
    assert record.query == {"key": "<redacted>", "x": "1"}
    shown = [repr(record), str(record), record.model_dump_json(), *stub.problems, response.text]
    assert all("query-secret" not in text for text in shown)


# ---------------------------------------------------------------- errors and retries

ERRORS = [
    (400, errors.ClientError, "INVALID_ARGUMENT"),
    (401, errors.ClientError, "UNAUTHENTICATED"),
    (403, errors.ClientError, "PERMISSION_DENIED"),
    (404, errors.ClientError, "NOT_FOUND"),
    (409, errors.ClientError, "ABORTED"),
    (418, errors.ClientError, "UNKNOWN"),
    (429, errors.ClientError, "RESOURCE_EXHAUSTED"),
    (499, errors.ClientError, "CANCELLED"),
    (500, errors.ServerError, "INTERNAL"),
    (501, errors.ServerError, "UNIMPLEMENTED"),
    (502, errors.ServerError, "UNKNOWN"),
    (503, errors.ServerError, "UNAVAILABLE"),
    (504, errors.ServerError, "DEADLINE_EXCEEDED"),
]


@pytest.mark.parametrize(("stream", "is_async"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize(("status", "cls", "name"), ERRORS, ids=[str(e[0]) for e in ERRORS])
def test_error_turns_raise_the_sdks_error_class_with_googles_status(
    status: int, cls: type[Exception], name: str, stream: bool, is_async: bool
) -> None:
    stub = ScriptTransport([{"error": {"status": status}}, "next"])
    with pytest.raises(cls) as info:
        generate(stub, stream=stream, is_async=is_async)
    error = info.value
    assert type(error) is cls
    assert (error.code, error.status) == (status, name)
    assert error.message == f"wirescript: scripted {status} error"
    assert error.details == {"error": {"code": status, "message": error.message, "status": name}}
    assert str(error) == f"{status} {name}. {error.details}"
    assert len(stub.requests) == 1, "google-genai retries nothing by default"


def test_a_scripted_status_message_and_code_pass_through() -> None:
    turn = {"error": {"status": 400, "type": "FAILED_PRECONDITION", "message": "No billing.", "code": "BILLING"}}
    stub = ScriptTransport([turn])
    with pytest.raises(errors.ClientError) as info:
        generate(stub, stream=False, is_async=False)
    assert info.value.details == {
        "error": {
            "code": 400,
            "message": "No billing.",
            "status": "FAILED_PRECONDITION",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "BILLING",
                    "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"},
                }
            ],
        }
    }


INSTANT = types.HttpRetryOptions(attempts=3, initial_delay=0, jitter=0)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_with_retry_options_the_sdk_retries_429_and_503_and_zero_delays_make_it_instant(
    stream: bool, is_async: bool
) -> None:
    stub = ScriptTransport([{"error": {"status": 429}}, {"error": {"status": 503}}, "Third time lucky."])
    client = gemini_client(stub, retry_options=INSTANT)
    params = {"model": MODEL, "contents": "Hi"}

    async def run_async() -> str:
        if stream:
            return "".join([c.text async for c in await client.aio.models.generate_content_stream(**params)])
        return str((await client.aio.models.generate_content(**params)).text)

    if is_async:
        text = asyncio.run(run_async())
    elif stream:
        text = "".join(c.text for c in client.models.generate_content_stream(**params))
    else:
        text = client.models.generate_content(**params).text
    assert text == "Third time lucky."
    assert [r.turn_index for r in stub.requests] == [0, 1, 2]
    assert stub.overflow == 0


@pytest.mark.parametrize(("status", "retried"), [(408, True), (502, True), (504, True), (409, False), (501, False)])
def test_the_retried_statuses_are_googles_list_not_every_5xx(status: int, retried: bool) -> None:
    stub = ScriptTransport([{"error": {"status": status}}, "ok"])
    client = gemini_client(stub, retry_options=INSTANT)
    if retried:
        assert client.models.generate_content(model=MODEL, contents="Hi").text == "ok"
    else:
        with pytest.raises(errors.APIError):
            client.models.generate_content(model=MODEL, contents="Hi")
    assert len(stub.requests) == (2 if retried else 1)


def test_a_read_timeout_before_the_response_is_retried_with_retry_options() -> None:
    stub = ScriptTransport([{"text": "lost", "fault": {"timeout_after": 0}}, "found"])
    assert gemini_client(stub, retry_options=INSTANT).models.generate_content(model=MODEL, contents="Hi").text == (
        "found"
    )
    assert len(stub.requests) == 2


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_request_past_the_script_is_a_loud_400_that_even_retry_options_do_not_retry(stream: bool) -> None:
    stub = ScriptTransport(["only one"])
    generate(stub, stream=stream, is_async=False)
    with pytest.raises(errors.ClientError) as info:
        generate(stub, stream=stream, is_async=False)
    path = stub.requests[1].path
    message = (
        f"wirescript: requests[1] POST {path} (model '{MODEL}') is past the end of the script: it has 1 turn(s), "
        "all served. The app made a model call the script does not expect; add a turn for it or find the extra call. "
        "It is the 2nd request (requests[1])."
    )
    assert (info.value.code, info.value.status, info.value.message) == (400, "INVALID_ARGUMENT", message)
    assert info.value.details["error"]["details"][0]["reason"] == "wirescript_unscripted"
    assert stub.overflow == 1
    with pytest.raises(errors.ClientError):
        gemini_client(stub, retry_options=INSTANT).models.generate_content(model=MODEL, contents="Hi")
    assert len(stub.requests) == 3
    assert stub.overflow == 2


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("error_type", "cls", "code", "status"),
    [
        ("overloaded_error", errors.ServerError, 503, "UNAVAILABLE"),
        ("rate_limit_error", errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
        ("RESOURCE_EXHAUSTED", errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
        ("DEADLINE_EXCEEDED", errors.ServerError, 504, "DEADLINE_EXCEEDED"),
        ("SOMETHING_ELSE", errors.ServerError, 500, "SOMETHING_ELSE"),
    ],
)
def test_an_in_stream_error_chunk_raises_mid_stream_after_the_text_so_far(
    error_type: str, cls: type[Exception], code: int, status: str, is_async: bool
) -> None:
    fault = {"stream_error": {"type": error_type, "message": "Went away.", "after": 2}}
    stub = ScriptTransport([{"text": "Hello there world", "fault": fault}])
    client = gemini_client(stub)
    seen: list[str] = []

    async def run_async() -> None:
        async for chunk in await client.aio.models.generate_content_stream(model=MODEL, contents="Hi"):
            seen.append(chunk.text)

    def run() -> None:
        if is_async:
            asyncio.run(run_async())
        else:
            seen.extend(chunk.text for chunk in client.models.generate_content_stream(model=MODEL, contents="Hi"))

    with pytest.raises(cls) as info:
        run()
    assert seen == ["Hello th", "ere worl"]
    assert (info.value.code, info.value.status, info.value.message) == (code, status, "Went away.")
    assert len(stub.requests) == 1


def test_a_stream_error_on_a_json_answer_is_refused_before_anything_is_sent() -> None:
    stub = ScriptTransport([{"text": "x", "fault": {"stream_error": {}}}])
    with pytest.raises(errors.ClientError) as info:
        generate(stub, stream=False, is_async=False)
    [problem] = stub.problems  # the core's message (pinned with the core), carried in Google's error shape
    assert problem.startswith(f"requests[0] POST /v1/models/{MODEL}:generateContent: fault.stream_error needs ")
    assert (info.value.code, info.value.message) == (400, f"wirescript: {problem}")


# ---------------------------------------------------------------- wire faults


def test_a_cut_stream_or_a_dropped_final_chunk_ends_with_no_finish_reason_and_no_error() -> None:
    for fault in ({"cut_after": 2}, {"drop": ["final_chunk"]}):
        stub = ScriptTransport([{"text": "Hello there world", "fault": fault}])
        chunks = generate(stub, stream=True, is_async=False)
        assert [c.text for c in chunks] == ["Hello th", "ere worl"]
        assert chunks[-1].candidates[0].finish_reason is None


def test_a_mid_stream_disconnect_reaches_the_app_as_the_raw_http_error() -> None:
    stub = ScriptTransport([{"text": "Hello there world", "fault": {"disconnect_after": 1}}])
    with pytest.raises(HX.RemoteProtocolError, match=r"^wirescript: scripted disconnect after 1 events$"):
        generate(stub, stream=True, is_async=False)


@pytest.mark.parametrize(("stream", "is_async"), MODES, ids=MODE_IDS)
def test_malformed_tool_json_becomes_geminis_malformed_function_call(stream: bool, is_async: bool) -> None:
    turn = {"text": "Calling.", "tool": {"name": "lookup"}, "fault": {"malformed_tool_json": True}}
    stub = ScriptTransport([turn])
    responses = generate(stub, stream=stream, is_async=is_async)
    assert not any(r.function_calls for r in responses)
    assert "".join(r.text for r in responses) == "Calling."
    assert responses[-1].candidates[0].finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL
    assert stub.problems == []


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ('event: chunk\ndata: {"candidates": []}\n\n', "Raw response: event: chunk"),
        ('data:{"candidates": []}\n\n', 'Raw response: data:{"candidates": []}'),
        (': keep-alive\n\ndata: {"candidates": []}\n\n', "Raw response: : keep-alive"),
        ('data: {"candidates": [{"content": {"par', 'Raw response: {"candidates": [{"content": {"par'),
    ],
    ids=["event-line", "no-space", "comment", "truncated"],
)
def test_the_sdk_rejects_framing_the_wire_never_sends(raw: str, error: str) -> None:
    stub = ScriptTransport([{"text": "x", "fault": {"raw": raw}}])
    with pytest.raises(errors.UnknownApiResponseError, match=r"^Failed to parse response as JSON") as info:
        generate(stub, stream=True, is_async=False)
    assert error in str(info.value)


def test_an_error_chunk_without_an_integer_code_breaks_the_sdk_so_the_wire_always_sends_one() -> None:
    stub = ScriptTransport([{"text": "x", "fault": {"raw": 'data: {"error": {"message": "m", "status": "X"}}\n\n'}}])
    with pytest.raises(TypeError, match="'<=' not supported between instances of 'int' and 'NoneType'"):
        generate(stub, stream=True, is_async=False)


# ---------------------------------------------------------------- the SDK's own loops


def weather_tool(ran: list[dict[str, Any]]) -> Any:
    def get_weather(city: str, unit: str) -> str:
        """The weather in a city.

        Args:
            city: The city.
            unit: C or F.
        """
        ran.append({"city": city, "unit": unit})
        return f"21 {unit} in {city}"

    return get_weather


@pytest.mark.parametrize(("stream", "is_async"), MODES, ids=MODE_IDS)
def test_automatic_function_calling_runs_the_python_function_and_sends_its_result(stream: bool, is_async: bool) -> None:
    stub = ScriptTransport(
        [
            {"text": "Checking.", "tool": {"name": "get_weather", "input": {"city": "Paris", "unit": "C"}}},
            {"text": "It is 21 C in Paris."},
        ]
    )
    ran: list[dict[str, Any]] = []
    config = types.GenerateContentConfig(tools=[weather_tool(ran)])
    chunks = generate(stub, stream=stream, is_async=is_async, config=config, contents="Weather in Paris?")
    assert ran == [{"city": "Paris", "unit": "C"}]
    assert "".join(c.text or "" for c in chunks).endswith("It is 21 C in Paris.")
    first, second = stub.requests
    assert first.tool_names == second.tool_names == ["get_weather"]
    assert first.tool_results == []
    answer = second.messages[1:-1]  # one model content, or one per chunk when streamed
    assert {m["role"] for m in answer} == {"model"}
    assert model_text(answer) == "Checking."
    assert [p for m in answer for p in m["parts"] if "text" not in p] == [
        {"functionCall": {"id": "fc_0000_0", "args": {"city": "Paris", "unit": "C"}, "name": "get_weather"}},
    ]
    assert second.tool_results == [
        {"functionResponse": {"name": "get_weather", "response": {"result": "21 C in Paris"}}},
    ]
    assert stub.overflow == 0


def test_a_chat_keeps_a_streamed_answer_in_its_history() -> None:
    # The chat keeps a streamed answer only when every chunk has content and one has a finishReason;
    # otherwise it drops the exchange from the history it sends next.
    stub = ScriptTransport(["First answer, streamed.", "Second."])
    chat = gemini_client(stub).chats.create(model=MODEL)
    assert "".join(c.text for c in chat.send_message_stream("One")) == "First answer, streamed."
    assert chat.send_message("Two").text == "Second."
    sent = stub.requests[1].messages
    assert sent[0] == {"parts": [{"text": "One"}], "role": "user"}
    assert sent[-1] == {"parts": [{"text": "Two"}], "role": "user"}
    assert {m["role"] for m in sent[1:-1]} == {"model"}
    assert model_text(sent[1:-1]) == "First answer, streamed."


def model_text(contents: list[dict[str, Any]]) -> str:
    """The text of model contents as a chat sends them back: one content per streamed chunk."""
    return "".join(p.get("text", "") for c in contents for p in c["parts"])


def test_an_unknown_fault_event_name_is_refused_at_construction() -> None:
    with pytest.raises(ScriptError, match=r"did you mean 'final_chunk'\?$"):
        ScriptTransport([{"text": "x", "fault": {"drop": ["final_chunks"]}}])


def test_vertex_ai_express_mode_is_served_by_the_same_wire() -> None:
    stub = ScriptTransport(["From Vertex.", "Streamed from Vertex."])
    http_options = types.HttpOptions(
        httpx_client=HX.Client(transport=stub),
        httpx_async_client=HX.AsyncClient(transport=stub),
        async_client_args={"ssl": _TLS},
    )
    client = genai.Client(vertexai=True, api_key="test-key", http_options=http_options)
    assert client.models.generate_content(model=MODEL, contents="Hi").text == "From Vertex."
    assert "".join(c.text for c in client.models.generate_content_stream(model=MODEL, contents="Hi")) == (
        "Streamed from Vertex."
    )
    assert [(r.path, r.model, r.stream) for r in stub.requests] == [
        (f"/v1beta1/publishers/google/models/{MODEL}:generateContent", MODEL, False),
        (f"/v1beta1/publishers/google/models/{MODEL}:streamGenerateContent", MODEL, True),
    ]
    assert stub.requests[0].api_key == "test-key"


def test_the_one_line_summary_names_each_parts_kind() -> None:
    # strict=False: a function response with no function call before it is refused by the real API.
    stub = ScriptTransport(["ok"], strict=False)
    contents = [
        types.Content(
            role="user",
            parts=[
                types.Part(function_response=types.FunctionResponse(name="weather", response={"t": 21})),
                types.Part(text="And tomorrow?"),
            ],
        )
    ]
    generate(stub, stream=False, is_async=False, contents=contents)
    assert stub.requests[0].summary() == (
        f"requests[0] POST /v1/models/{MODEL}:generateContent model='{MODEL}' "
        "last=user[functionResponse,text] 'And tomorrow?'"
    )
