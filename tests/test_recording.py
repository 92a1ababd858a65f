"""Record mode: real SDK traffic through `RecordingTransport` becomes a script that replays the same answers.

Nothing here touches the network: the upstream is a `ScriptTransport` standing in for the provider
(or, for the default network transport, one served on a loopback port).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import pytest

from _drivers import DRIVERS, SURFACES, run
from _support import ANTHROPIC_HX, SAMPLE_TURNS, anthropic_client, anthropic_tools, chat_tools, openai_client
from wirescript import (
    RecordingTransport,
    ScriptTransport,
    Turn,
    UsageError,
    load_script,
    script_json_schema,
)
from wirescript.wires import AnthropicWire, BedrockWire, GeminiWire, OpenAIChatWire, OpenAIResponsesWire
from wirescript.wires.bedrock import eventstream

FAKE_KEY = "sk-wirescript-FAKEKEY-7f3c9e21d4b8"
"""A distinctive key: if any header value reached the file, this string would be in its bytes."""

TOOLS = [{"name": "weather", "description": "Weather of a city", "input_schema": {"type": "object"}}]
CARD_TOOLS = anthropic_tools(["create_card"])  # what SAMPLE_TURNS["tool"] calls


def _record(tmp_path: Path, turns: Any, name: str = "rec.yaml") -> tuple[RecordingTransport, ScriptTransport]:
    upstream = ScriptTransport(turns)
    return RecordingTransport(tmp_path / name, upstream=upstream), upstream


_NOT_CARRIED = {"gemini": {"cache_creation_input_tokens"}}
"""Usage counts a wire's API has no field for (Gemini reports no cache writes)."""


def _same(recorded: Turn, scripted: dict[str, Any], wire: str = "anthropic") -> None:
    """The recorded turn says what the scripted one said: text, thinking, tool calls and the usage scripted."""
    original = Turn.model_validate(scripted)
    assert (recorded.text or "") == (original.text or "")
    assert (recorded.thinking or "") == (original.thinking or "")
    assert [(c.name, c.input) for c in recorded.tool_calls] == [(c.name, c.input) for c in original.tool_calls]
    if original.usage is not None:
        assert recorded.usage is not None
        for field, value in original.usage.model_dump(exclude_none=True).items():
            if field not in _NOT_CARRIED.get(wire, set()):
                assert getattr(recorded.usage, field) == value, field


# ---------------------------------------------------------------------- every wire, every surface


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("wire", list(DRIVERS))
def test_every_turn_shape_records_and_replays_the_same_answer(
    tmp_path: Path, wire: str, surface: str, is_async: bool
) -> None:
    driver = DRIVERS[wire]
    for shape, turn in SAMPLE_TURNS.items():
        rec, upstream = _record(tmp_path, [turn])
        live = run(driver, surface, rec, is_async=is_async)  # type: ignore[arg-type]
        assert upstream.problems == [], shape
        assert rec.notes == [], shape
        [recorded] = rec.turns
        _same(recorded, turn, wire)
        replay = ScriptTransport(load_script(rec.save()))
        assert run(driver, surface, replay, is_async=is_async) == live, shape
        assert replay.problems == [], shape


def test_the_answer_reaches_the_app_unchanged(tmp_path: Path) -> None:
    """The app reads the upstream's bytes: a recorder in the middle changes nothing it sees."""
    turn = {**SAMPLE_TURNS["parallel"], "fault": {"drop": ["ping"]}}  # a faulted stream is sent event by event
    direct = ScriptTransport([turn])
    rec, _ = _record(tmp_path, [turn])
    bodies = []
    for transport in (direct, rec):
        with ANTHROPIC_HX.Client(transport=transport) as client:
            body = {
                "model": "m",
                "max_tokens": 10,
                "stream": True,
                "messages": [{"role": "user", "content": "Hi"}],
                "tools": anthropic_tools(),
            }
            with client.stream("POST", "https://api.anthropic.com/v1/messages", json=body) as response:
                chunks = list(response.iter_raw())
                bodies.append((response.status_code, response.headers.get("content-type"), b"".join(chunks)))
    assert bodies[0] == bodies[1]
    assert len(chunks) > 1  # it streamed: the recorder passed the chunks on one by one


# ---------------------------------------------------------------------- the scenarios of the issue


def _weather_loop(client: Any) -> list[str]:
    """A streamed Anthropic tool loop: ask, run every tool called, send the results, until the model stops."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris and Rome?"}]
    said = []
    for _ in range(5):
        with client.messages.stream(model="claude-test", max_tokens=1024, messages=messages, tools=TOOLS) as stream:
            message = stream.get_final_message()
        said.append(message.stop_reason)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]})
        calls = [b for b in message.content if b.type == "tool_use"]
        if not calls:
            said.append("".join(b.text for b in message.content if b.type == "text"))
            return said
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": c.id, "content": f"sunny in {c.input['city']}"}
                    for c in calls
                ],
            }
        )
    raise AssertionError("the loop did not end")


LOOP = [
    {
        "thinking": "Two cities: two calls.",
        "tools": [
            {"name": "weather", "input": {"city": "Paris"}},
            {"name": "weather", "input": {"city": "Rome"}},
        ],
        "usage": {"input_tokens": 50, "output_tokens": 20},
    },
    {"error": {"status": 429, "type": "rate_limit_error", "message": "Slow down"}},
    {
        "thinking": "Both sunny.",
        "text": "Sunny in Paris and in Rome.",
        "usage": {"input_tokens": 90, "output_tokens": 9},
    },
]


def test_a_streamed_tool_loop_with_thinking_a_429_and_parallel_calls_replays(tmp_path: Path) -> None:
    rec, upstream = _record(tmp_path, LOOP)
    live = _weather_loop(anthropic_client(rec, max_retries=2))
    assert live == ["tool_use", "end_turn", "Sunny in Paris and in Rome."]
    assert len(upstream.requests) == 3
    assert upstream.problems == []

    path = rec.save()
    text = path.read_text(encoding="utf-8")
    data = __import__("yaml").safe_load(text)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(script_json_schema()).validate(data)
    assert data[1] == {"error": {"status": 429, "type": "rate_limit_error", "message": "Slow down"}}
    assert data[0]["thinking"] == "Two cities: two calls."
    assert len(data[0]["tools"]) == 2
    # Each turn is preceded by the summary of the request it answered, tools offered included.
    comments = [line for line in text.splitlines() if line.startswith("# requests[")]
    assert len(comments) == 3
    assert "model='claude-test'" in comments[0]
    assert "tools=[weather]" in comments[0]
    assert "Weather in Paris" in comments[0]
    assert "tool_result" in comments[2]
    assert text.startswith("# Recorded by wirescript")
    assert f"anthropic {anthropic.__version__}" in text.splitlines()[0]

    replay = ScriptTransport(load_script(path))
    assert _weather_loop(anthropic_client(replay, max_retries=2)) == live
    assert replay.problems == []
    assert replay.pending == []
    assert [r.tool_results != [] for r in replay.requests] == [r.tool_results != [] for r in upstream.requests]


def test_a_recording_made_on_anthropic_replays_on_openai_chat(tmp_path: Path) -> None:
    rec, _ = _record(tmp_path, LOOP)
    _weather_loop(anthropic_client(rec, max_retries=2))
    replay = ScriptTransport(load_script(rec.save()))
    client = openai_client(replay, max_retries=2)
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris and Rome?"}]
    first = client.chat.completions.create(model="gpt-test", messages=messages, tools=chat_tools(["weather"]))
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert [(c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls] == [
        ("weather", {"city": "Paris"}),
        ("weather", {"city": "Rome"}),
    ]
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (50, 20)
    second = client.chat.completions.create(model="gpt-test", messages=messages)  # the 429, retried
    assert second.choices[0].message.content == "Sunny in Paris and in Rome."
    assert second.choices[0].finish_reason == "stop"
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (90, 9)
    assert replay.problems == []
    assert len(replay.requests) == 3


def test_two_models_record_as_one_queue_each(tmp_path: Path) -> None:
    rec, _ = _record(tmp_path, {"claude-a": ["A1", "A2"], "claude-b": ["B1"]})
    client = anthropic_client(rec)

    def ask(model: str) -> str:
        message = client.messages.create(model=model, max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
        return "".join(b.text for b in message.content if b.type == "text")

    live = [ask("claude-a"), ask("claude-b"), ask("claude-a")]
    client.close()  # closing the client saves
    script = load_script(rec.path)
    assert isinstance(script, dict)
    assert list(script) == ["claude-a", "claude-b"]
    assert [t.text for t in script["claude-a"]] == ["A1", "A2"]
    assert [t.text for t in script["claude-b"]] == ["B1"]
    pytest.importorskip("jsonschema").Draft202012Validator(script_json_schema()).validate(
        __import__("yaml").safe_load(rec.path.read_text(encoding="utf-8"))
    )
    replay = ScriptTransport(script)
    client = anthropic_client(replay)
    assert [ask("claude-b"), ask("claude-a"), ask("claude-a")] == ["B1", live[0], live[2]]
    assert replay.problems == []


def test_one_model_records_as_a_plain_list_and_json_holds_the_turns_alone(tmp_path: Path) -> None:
    rec, _ = _record(tmp_path, ["Hello", {"text": "Bye", "stop_reason": "max_tokens"}], name="rec.json")
    client = anthropic_client(rec)
    for _ in range(2):
        client.messages.create(model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    client.close()
    data = json.loads(rec.path.read_text(encoding="utf-8"))
    # A turn records the usage the provider reported (here the stand-in's defaults).
    assert data == [
        {"text": "Hello", "usage": {"input_tokens": 10, "output_tokens": 2}},
        {"text": "Bye", "stop_reason": "max_tokens", "usage": {"input_tokens": 10, "output_tokens": 1}},
    ]
    pytest.importorskip("jsonschema").Draft202012Validator(script_json_schema()).validate(data)
    assert [t.text for t in load_script(rec.path)] == ["Hello", "Bye"]  # type: ignore[union-attr]


# ---------------------------------------------------------------------- never a header value


@pytest.mark.parametrize("name", ["rec.yaml", "rec.json"])
def test_no_key_header_or_cookie_reaches_the_file(tmp_path: Path, name: str) -> None:
    rec, upstream = _record(tmp_path, [SAMPLE_TURNS["tool"], {"error": {"status": 401}}], name=name)
    client = anthropic.Anthropic(
        api_key=FAKE_KEY,
        max_retries=0,
        default_headers={
            "cookie": f"session={FAKE_KEY}",
            "x-custom-token": FAKE_KEY,
            "authorization": f"Bearer {FAKE_KEY}",
        },
        http_client=ANTHROPIC_HX.Client(transport=rec),
    )
    client.messages.create(
        model="claude-a",
        max_tokens=10,
        messages=[{"role": "user", "content": "marker-in-the-prompt"}],
        tools=CARD_TOOLS,
    )
    with pytest.raises(anthropic.AuthenticationError):
        client.messages.create(model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "again"}])
    client.close()
    # The key was sent (so the search below can find something), and the file was written from the same requests.
    for record in [*upstream.requests, *rec.requests]:
        assert record.api_key is not None
        assert record.api_key.get_secret_value() == FAKE_KEY
    raw = rec.path.read_bytes()
    assert b"marker-in-the-prompt" in raw or name.endswith(".json")  # YAML comments quote the prompt
    assert FAKE_KEY.encode() not in raw
    assert b"sk-wirescript" not in raw
    assert b"session=" not in raw
    assert b"Bearer" not in raw


# ---------------------------------------------------------------------- errors and odd answers, per wire


_ERRORS = {
    "anthropic": {"status": 429, "type": "rate_limit_error", "message": "Slow down", "code": "too_fast"},
    "openai_chat": {"status": 429, "type": "rate_limit_exceeded", "message": "Slow down", "code": "too_fast"},
    "openai_responses": {"status": 503, "type": "server_error", "message": "Try later", "code": "busy"},
    "gemini": {"status": 429, "type": "RESOURCE_EXHAUSTED", "message": "Quota"},
}


@pytest.mark.parametrize("wire", list(DRIVERS))
def test_an_error_answer_records_its_status_type_and_message(tmp_path: Path, wire: str) -> None:
    error = _ERRORS[wire]
    rec, _ = _record(tmp_path, [{"error": error}])
    with pytest.raises(Exception):  # noqa: B017, PT011 - each SDK raises its own error class
        run(DRIVERS[wire], "json", rec, max_retries=0)  # type: ignore[arg-type]
    [turn] = rec.turns
    assert turn.error is not None
    assert turn.error.model_dump(exclude_none=True) == error
    assert turn.error.headers is None  # the retry-after the stand-in sent is not kept


@pytest.mark.parametrize("wire", ["anthropic", "openai_chat", "openai_responses"])
def test_an_in_stream_error_records_as_a_stream_error_fault(tmp_path: Path, wire: str) -> None:
    turn = {"text": "Partial answer", "fault": {"stream_error": {"type": "overloaded_error", "message": "Busy"}}}
    rec, _ = _record(tmp_path, [turn])
    with contextlib.suppress(Exception):  # each SDK raises its own error class (openai's Responses yields an event)
        run(DRIVERS[wire], "raw", rec)  # type: ignore[arg-type]
    [recorded] = rec.turns
    assert recorded.fault is not None
    assert recorded.fault.stream_error is not None
    assert recorded.fault.stream_error.message == "Busy"


def test_stop_reasons_record_in_the_canonical_vocabulary(tmp_path: Path) -> None:
    for wire in DRIVERS:
        for stop in ("max_tokens", "refusal"):
            rec, _ = _record(tmp_path, [{"text": "Cut", "stop_reason": stop}])
            run(DRIVERS[wire], "json", rec)  # type: ignore[arg-type]
            assert rec.turns[0].stop_reason == stop, (wire, stop)


def test_a_compressed_answer_is_decoded_as_the_client_decodes_it(tmp_path: Path) -> None:
    hx = ANTHROPIC_HX
    body = json.dumps(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-a",
            "content": [{"type": "text", "text": "Squeezed"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 2},
        }
    ).encode()
    upstream = hx.MockTransport(
        lambda request: hx.Response(
            200, headers={"content-type": "application/json", "content-encoding": "gzip"}, content=gzip.compress(body)
        )
    )
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=upstream)
    message = anthropic_client(rec).messages.create(
        model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
    )
    assert message.content[0].text == "Squeezed"
    assert rec.turns == [Turn(text="Squeezed", usage={"input_tokens": 3, "output_tokens": 2})]


def test_what_no_wire_serves_is_passed_through_and_noted(tmp_path: Path) -> None:
    rec, upstream = _record(tmp_path, ["never served"])
    with ANTHROPIC_HX.Client(transport=rec) as client:
        response = client.get("https://api.anthropic.com/v1/skills")
    assert response.status_code == 404  # the upstream's answer, unchanged
    assert rec.turns == []
    assert len(rec.requests) == 1
    assert len(rec.notes) == 1
    assert "GET /v1/skills" in rec.notes[0]
    assert "not recorded" in rec.notes[0]
    assert upstream.requests[0].path == "/v1/skills"


@pytest.mark.parametrize(
    ("wire", "body"),
    [
        (AnthropicWire(), b'{"type": "message", "content": [{"type": "tool_use", "id": "t", "name": "f"}]}'),
        (
            OpenAIChatWire(),
            b'{"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{"}}]}}]}',
        ),
        (OpenAIResponsesWire(), b'{"output": [{"type": "function_call", "name": "f", "arguments": "[1]"}]}'),
        (GeminiWire(), b'{"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]}'),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, bytes) else "",
)
def test_a_tool_call_a_turn_cannot_hold_is_not_recorded(wire: Any, body: bytes) -> None:
    """Arguments that are not a JSON object, or a call without a name, are no turn (the answer is still passed on)."""
    turn = wire.decode(200, {"content-type": "application/json"}, body)
    if turn is not None:  # Anthropic: a block without input is an empty input, a call all the same
        assert turn == {"tool": {"id": "t", "name": "f", "input": {}}}
        assert isinstance(wire, AnthropicWire)


@pytest.mark.parametrize("wire", [AnthropicWire(), OpenAIChatWire(), OpenAIResponsesWire(), GeminiWire()])
@pytest.mark.parametrize("body", [b"", b"not json", b"[]", b"{}", b'{"error": 1}', b"\xff\xfe"])
def test_a_body_that_is_no_answer_decodes_to_nothing_or_an_error_turn(wire: Any, body: bytes) -> None:
    for content_type in ("application/json", "text/event-stream"):
        assert wire.decode(200, {"content-type": content_type}, body) in (None, {})
        error = wire.decode(500, {"content-type": content_type}, body)
        assert Turn.model_validate(error).error is not None
        assert error["error"]["status"] == 500


EVENTSTREAM = {"content-type": "application/vnd.amazon.eventstream"}


@pytest.mark.parametrize("body", [b"", b"not json", b"[]", b"{}", b'{"output": {"message": 1}}', b"\xff\xfe"])
def test_a_bedrock_body_that_is_no_answer_decodes_to_nothing_or_an_error_turn(body: bytes) -> None:
    wire = BedrockWire()
    for headers in ({"content-type": "application/json"}, EVENTSTREAM):
        assert wire.decode(200, headers, body) is None
        error = wire.decode(500, {**headers, "x-amzn-errortype": "InternalServerException:http://internal"}, body)
        assert Turn.model_validate(error).error is not None
        assert error["error"]["status"] == 500
        assert error["error"]["type"] == "InternalServerException"


def _invoke_stream(delta: bytes) -> bytes:
    """An InvokeModelWithResponseStream body: the Anthropic events, one `chunk` message each; `delta` the text's."""
    events = [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        None,
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    return b"".join(delta if e is None else eventstream.chunk(json.dumps(e).encode()) for e in events)


GOOD_DELTA = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}


@pytest.mark.parametrize(
    "body",
    [
        _invoke_stream(eventstream.event("chunk", {"bytes": "not base64!"})),
        _invoke_stream(eventstream.chunk(b"{not json")),
        eventstream.event("contentBlockDelta", {"delta": {"text": "Hi"}}),  # a ConverseStream without messageStart
    ],
    ids=["chunk-not-base64", "chunk-not-json", "no-message-start"],
)
def test_a_bedrock_event_stream_with_a_message_that_is_no_answer_decodes_to_nothing(body: bytes) -> None:
    """One unreadable message makes no turn: a turn with a piece missing would replay as an answer never given."""
    assert BedrockWire().decode(200, EVENTSTREAM, body) is None


def test_the_same_bedrock_event_streams_well_formed_are_turns() -> None:
    wire = BedrockWire()
    invoked = wire.decode(200, EVENTSTREAM, _invoke_stream(eventstream.chunk(json.dumps(GOOD_DELTA).encode())))
    assert invoked is not None
    assert invoked["text"] == "Hi"
    converse = eventstream.event("messageStart", {"role": "assistant"}) + eventstream.event(
        "contentBlockDelta", {"delta": {"text": "Hi"}}
    )
    assert wire.decode(200, EVENTSTREAM, converse) == {"text": "Hi"}


# ---------------------------------------------------------------------- concurrency, both stacks


def test_concurrent_threads_lose_nothing(tmp_path: Path) -> None:
    upstream = ScriptTransport(lambda r: {"text": f"echo {r.last_user_text}"})
    rec = RecordingTransport(tmp_path / "rec.yaml", upstream=upstream)
    client = anthropic_client(rec)
    prompts = [f"prompt {i}" for i in range(24)]
    gate = threading.Barrier(8)

    def ask(prompt: str) -> str:
        gate.wait() if prompt in prompts[:8] else None
        message = client.messages.create(
            model="claude-a", max_tokens=10, stream=False, messages=[{"role": "user", "content": prompt}]
        )
        return message.content[0].text

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(ask, prompts))
    assert answers == [f"echo {p}" for p in prompts]
    records = rec.requests
    assert [r.index for r in records] == list(range(24))
    # Each turn sits at its request's place, so the script replays them in arrival order.
    assert [t.text for t in rec.turns] == [f"echo {r.last_user_text}" for r in records]


def test_concurrent_async_requests_lose_nothing_on_both_stacks(tmp_path: Path) -> None:
    from _support import STACKS

    for hx in STACKS:
        upstream = ScriptTransport(lambda r: {"text": f"echo {r.last_user_text}"})
        rec = RecordingTransport(tmp_path / f"{hx.__name__}.yaml", upstream=upstream)

        async def main(rec: RecordingTransport = rec, hx: Any = hx) -> list[str]:
            async with hx.AsyncClient(transport=rec) as client:

                async def ask(i: int) -> str:
                    body = {"model": "gpt-a", "stream": True, "messages": [{"role": "user", "content": f"p{i}"}]}
                    async with client.stream("POST", "https://api.openai.com/v1/chat/completions", json=body) as r:
                        return (await r.aread()).decode()

                return await asyncio.gather(*(ask(i) for i in range(20)))

        bodies = asyncio.run(main())
        assert all("[DONE]" in b for b in bodies)
        assert sorted(t.text or "" for t in rec.turns) == sorted(f"echo p{i}" for i in range(20))
        assert [t.text for t in rec.turns] == [f"echo {r.last_user_text}" for r in rec.requests]
        assert rec.path.exists()  # the client's aclose() saved
        assert len(load_script(rec.path)) == 20


# ---------------------------------------------------------------------- the real network transport, on loopback


def test_without_an_upstream_it_forwards_over_the_real_network(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    stub = ScriptTransport(["Over the wire"])
    rec = RecordingTransport(tmp_path / "rec.yaml")
    with stub.serve() as url:
        client = anthropic_client(rec, base_url=url)
        message = client.messages.create(model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
        client.close()
    assert message.content[0].text == "Over the wire"
    assert [t.text for t in load_script(rec.path)] == ["Over the wire"]  # type: ignore[union-attr]
    assert rec._network == {}  # the network transport it built was closed with it


# ---------------------------------------------------------------------- construction


def test_bad_arguments_fail_at_construction_naming_the_argument(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"path: expected a script file ending in \.yaml, \.yml or \.json"):
        RecordingTransport(tmp_path / "rec.txt")
    with pytest.raises(UsageError, match="upstream: expected an httpx or httpx2 transport"):
        RecordingTransport(tmp_path / "rec.yaml", upstream="https://api.anthropic.com")


def test_yaml_without_pyyaml_fails_at_construction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(UsageError, match=r"needs PyYAML: pip install 'wirescript\[yaml\]'"):
        RecordingTransport(tmp_path / "rec.yml")
    RecordingTransport(tmp_path / "rec.json")  # JSON needs nothing


def test_a_comment_cannot_be_broken_out_of(tmp_path: Path) -> None:
    """A prompt with line breaks (YAML 1.1's too) stays inside its comment: the file still loads as written."""
    rec, _ = _record(tmp_path, ["Fine"])
    prompt = "line one\nsecret: injected\u2028- text: injected\x85more"
    anthropic_client(rec).messages.create(
        model="claude-a", max_tokens=10, messages=[{"role": "user", "content": prompt}]
    )
    path = rec.save()
    assert [t.text for t in load_script(path)] == ["Fine"]  # type: ignore[union-attr]
    assert all(line.startswith(("#", "-", " ")) for line in path.read_text(encoding="utf-8").splitlines())


# ---------------------------------------------------------------------- drift


def test_drift_compares_each_replayed_request_with_the_summary_recorded_for_its_turn(tmp_path: Path) -> None:
    from wirescript.recording import drift, recorded_summaries

    def ask(transport: Any, model: str, prompt: str) -> None:
        anthropic_client(transport).messages.create(
            model=model, max_tokens=10, messages=[{"role": "user", "content": prompt}], tools=TOOLS
        )

    rec, _ = _record(tmp_path, {"claude-a": ["A1", {"text": "A2\nsecond line"}], "claude-b": ["B1"]})
    for model, prompt in [("claude-a", "one"), ("claude-b", "two"), ("claude-a", "three")]:
        ask(rec, model, prompt)
    text = rec.save().read_text(encoding="utf-8")
    summaries = recorded_summaries(text)
    assert sorted(summaries) == [("claude-a", 0), ("claude-a", 1), ("claude-b", 0)]
    assert "last=user:'three'" in summaries[("claude-a", 1)]

    same = ScriptTransport(load_script(rec.path))
    for model, prompt in [
        ("claude-b", "two"),
        ("claude-a", "one"),
        ("claude-a", "three"),
    ]:  # order across queues may change
        ask(same, model, prompt)
    assert drift(same.requests, summaries) == []

    changed = ScriptTransport(load_script(rec.path))
    for model, prompt in [("claude-a", "one"), ("claude-b", "two"), ("claude-a", "THREE")]:
        ask(changed, model, prompt)
    [found] = drift(changed.requests, summaries)
    assert "requests[2] POST /v1/messages asks something else" in found
    assert "recorded: POST /v1/messages model='claude-a' last=user:'three' tools=[weather]" in found
    assert "now:      POST /v1/messages model='claude-a' last=user:'THREE' tools=[weather]" in found


def test_a_plain_list_script_has_its_summaries_read_too() -> None:
    from wirescript.recording import recorded_summaries

    text = (
        "# Recorded by wirescript\n# requests[0] POST /v1/messages model='m'\n- Hi\n- tools:\n  - name: x\n"
        "# requests[2] POST /v1/messages model='m'\n- text: |\n    a\n    - b\n"
    )
    assert recorded_summaries(text) == {
        ("*", 0): "requests[0] POST /v1/messages model='m'",
        ("*", 2): "requests[2] POST /v1/messages model='m'",
    }


# ---------------------------------------------------------------------- the recording server


def test_the_record_command_records_an_app_in_another_process(tmp_path: Path) -> None:
    """`python -m wirescript record --out FILE`, forwarding to a stand-in provider on loopback."""
    import os
    import signal
    import subprocess
    import sys

    pytest.importorskip("uvicorn")
    provider = ScriptTransport([SAMPLE_TURNS["tool"], "Done."])
    out = tmp_path / "server.yaml"
    with provider.serve() as provider_url:
        process = subprocess.Popen(
            [sys.executable, "-m", "wirescript", "record", "--out", str(out), "--upstream", provider_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().strip()
            token = process.stdout.readline().strip()  # the control API's, on the second line
            assert base_url.startswith("http://127.0.0.1:")
            client = anthropic.Anthropic(api_key=FAKE_KEY, base_url=base_url, max_retries=0)
            first = client.messages.create(
                model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "Card?"}], tools=CARD_TOOLS
            )
            with client.messages.stream(
                model="claude-a", max_tokens=10, messages=[{"role": "user", "content": "Again"}]
            ) as stream:
                second = stream.get_final_message()
            client.close()  # its pooled connection: left open, it warns in whichever later test collects it
            status = ANTHROPIC_HX.get(f"{base_url}/_wirescript/status", headers={"X-Wirescript-Token": token})
        finally:
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=20)
    assert process.returncode == 0, stderr
    assert [b.type for b in first.content] == ["text", "tool_use"]
    assert second.content[0].text == "Done."
    assert status.json() == {"recording": str(out), "requests": 2, "turns": 2, "notes": []}
    assert provider.requests[0].api_key is not None  # the app's key went on to the provider...
    assert FAKE_KEY.encode() not in out.read_bytes()  # ...and not into the file
    script = load_script(out)
    assert isinstance(script, list)
    assert [t.describe() for t in script] == ["text 'Filing a card.', tool create_card", "text 'Done.'"]
    assert "wrote 2 turn(s) of 2 request(s)" in stderr


def test_the_recording_server_sends_each_request_to_its_providers_host() -> None:
    from wirescript.recording import Rehost

    # strict=False: one shorthand body goes to four APIs, each of which would refuse it; the hosts are the point.
    seen = ScriptTransport(lambda r: {"text": r.headers["host"]}, strict=False)
    hx = ANTHROPIC_HX
    with hx.Client(transport=Rehost(seen)) as client:
        for path, host in [
            ("/v1/messages", "api.anthropic.com"),
            ("/v1/chat/completions", "api.openai.com"),
            ("/v1/responses", "api.openai.com"),
            ("/v1beta/models/gemini-x:generateContent", "generativelanguage.googleapis.com"),
        ]:
            response = client.post(f"http://127.0.0.1:9/{path.lstrip('/')}", json={"model": "m", "messages": []})
            assert response.status_code == 200, path
            assert host in response.text, path
        assert client.get("http://127.0.0.1:9/elsewhere").status_code == 404  # no provider: not forwarded
    assert [r.path for r in seen.requests][-1] == "/v1beta/models/gemini-x:generateContent"
    assert len(seen.requests) == 4


# ---------------------------------------------------------------------- answers as the real APIs send them


def _sse(*events: tuple[str | None, dict[str, Any] | str]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n")
    return "".join(out).encode()


SSE = {"content-type": "text/event-stream; charset=utf-8"}


def test_an_anthropic_stream_as_the_api_sends_it() -> None:
    """The event shapes of Anthropic's streaming documentation: nested `cache_creation`, a signature
    delta, a `redacted_thinking` block, input tokens repeated in `message_delta`, a `ping`."""
    body = _sse(
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 472,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 100,
                        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                        "output_tokens": 2,
                        "service_tier": "standard",
                    },
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
        ),
        ("ping", {"type": "ping"}),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "look."}},
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}},
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": '{"location": "San Fra'},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": 'ncisco, CA"}'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 2}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {
                    "input_tokens": 472,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 100,
                    "output_tokens": 89,
                },
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    )
    assert AnthropicWire().decode(200, SSE, body) == {
        "thinking": "Let me look.",
        "thinking_signature": "EqQBCgIYAhIM",
        "tool": {"id": "toolu_01", "name": "get_weather", "input": {"location": "San Francisco, CA"}},
        "usage": {"input_tokens": 472, "output_tokens": 89, "cache_read_input_tokens": 100},
    }


def test_an_openai_chat_stream_as_the_api_sends_it() -> None:
    """`stream_options.include_usage`: every chunk has `usage: null`, the last has no choices and the usage."""
    head = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-x",
        "system_fingerprint": "fp",
        "usage": None,
    }
    body = _sse(
        (
            None,
            {
                **head,
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_a",
                                    "type": "function",
                                    "function": {"name": "get_weather", "arguments": ""},
                                }
                            ],
                        },
                        "logprobs": None,
                        "finish_reason": None,
                    }
                ],
            },
        ),
        (
            None,
            {
                **head,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]},
                        "finish_reason": None,
                    }
                ],
            },
        ),
        (
            None,
            {
                **head,
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 1,
                                    "id": "call_b",
                                    "type": "function",
                                    "function": {"name": "get_weather", "arguments": '{"ci'},
                                }
                            ]
                        },
                        "finish_reason": None,
                    }
                ],
            },
        ),
        (
            None,
            {
                **head,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": 1, "function": {"arguments": 'ty": "Rome"}'}}]},
                        "finish_reason": None,
                    }
                ],
            },
        ),
        (None, {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        (
            None,
            {
                **head,
                "choices": [],
                "usage": {
                    "prompt_tokens": 80,
                    "completion_tokens": 40,
                    "total_tokens": 120,
                    "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 0},
                },
            },
        ),
        (None, "[DONE]"),
    )
    assert OpenAIChatWire().decode(200, SSE, body) == {
        "tools": [
            {"id": "call_a", "name": "get_weather", "input": {"city": "Paris"}},
            {"id": "call_b", "name": "get_weather", "input": {"city": "Rome"}},
        ],
        "usage": {"input_tokens": 80, "output_tokens": 40, "cache_read_input_tokens": 64},
    }


def test_a_gemini_stream_and_a_responses_answer_as_the_apis_send_them() -> None:
    """Gemini: thought parts with a `thoughtSignature`, calls without ids, `STOP` with calls, and
    `thoughtsTokenCount`. Responses: a reasoning item with only encrypted content, an output message."""
    chunk = {"modelVersion": "gemini-x", "responseId": "r1"}
    body = _sse(
        (
            None,
            {
                **chunk,
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "Thinking it over.", "thought": True}]},
                        "index": 0,
                    }
                ],
                "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12},
            },
        ),
        (
            None,
            {
                **chunk,
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [
                                {
                                    "functionCall": {"name": "get_weather", "args": {"city": "Oslo"}},
                                    "thoughtSignature": "CiQB",
                                }
                            ],
                        },
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": 12,
                    "candidatesTokenCount": 7,
                    "thoughtsTokenCount": 30,
                    "totalTokenCount": 49,
                },
            },
        ),
    )
    assert GeminiWire().decode(200, SSE, body) == {
        "thinking": "Thinking it over.",
        "tool": {"name": "get_weather", "input": {"city": "Oslo"}},
        "usage": {"input_tokens": 12, "output_tokens": 7},
    }
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-x",
        "incomplete_details": None,
        "output": [
            {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA"},
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Hi there.", "annotations": []}],
            },
        ],
        "usage": {
            "input_tokens": 9,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 4,
            "output_tokens_details": {"reasoning_tokens": 64},
            "total_tokens": 13,
        },
    }
    wire = OpenAIResponsesWire()
    assert wire.decode(200, {"content-type": "application/json"}, json.dumps(response).encode()) == {
        "text": "Hi there.",
        "usage": {"input_tokens": 9, "output_tokens": 4},
    }
    cut = {**response, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    assert wire.decode(200, {"content-type": "application/json"}, json.dumps(cut).encode())["stop_reason"] == (
        "max_tokens"
    )
