"""The fluent builder, driven by the real SDKs."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from _support import anthropic_client, anthropic_tools, httpx2, openai_client
from wirescript import ScriptBuilder, ScriptError, ScriptTransport, StubFactory, ToolCall, Turn
from wirescript.builder import tool_result_text

MODEL = "claude-test"


def ask(stub: ScriptTransport, content: Any = "Hi", *, model: str = MODEL, **kwargs: Any) -> Any:
    kwargs.setdefault("tools", anthropic_tools(["f", "g", "w", "fetch", "clock", "search", "get_weather"]))
    client = anthropic_client(stub, max_retries=0)
    return client.messages.create(model=model, max_tokens=64, messages=[{"role": "user", "content": content}], **kwargs)


def test_says_calls_and_reports_usage_through_the_sdk() -> None:
    stub = (
        ScriptBuilder()
        .calls("get_weather", {"city": "Paris"}, text="Let me check.")
        .usage(input_tokens=120, output_tokens=8)
        .says("Sunny in Paris.", thinking="The tool said sunny.")
        .says("Cut short", stop_reason="max_tokens")
        .build()
    )
    first = ask(stub)
    assert [block.type for block in first.content] == ["text", "tool_use"]
    assert first.content[0].text == "Let me check."
    assert (first.content[1].name, first.content[1].input, first.content[1].id) == (
        "get_weather",
        {"city": "Paris"},
        "toolu_0000_0",
    )
    assert first.stop_reason == "tool_use"
    assert (first.usage.input_tokens, first.usage.output_tokens) == (120, 8)
    second = ask(stub)
    assert [block.type for block in second.content] == ["thinking", "text"]
    assert second.content[0].thinking == "The tool said sunny."
    assert second.content[1].text == "Sunny in Paris."
    assert second.stop_reason == "end_turn"
    assert ask(stub).stop_reason == "max_tokens"
    assert not stub.pending
    assert not stub.problems


def test_calls_several_tools_in_one_turn_in_every_accepted_form() -> None:
    stub = (
        ScriptBuilder()
        .calls_tools(
            ("search", {"q": "wirescript"}),
            {"name": "fetch", "input": {"url": "https://example.test"}, "id": "toolu_fetch"},
            ToolCall(name="clock"),
            text="Three at once.",
        )
        .build()
    )
    message = ask(stub, stream=False)
    calls = [(b.name, b.input, b.id) for b in message.content if b.type == "tool_use"]
    assert calls == [
        ("search", {"q": "wirescript"}, "toolu_0000_0"),
        ("fetch", {"url": "https://example.test"}, "toolu_fetch"),
        ("clock", {}, "toolu_0000_2"),
    ]
    assert message.content[0].text == "Three at once."


def test_fails_answers_with_the_http_error() -> None:
    stub = ScriptBuilder().fails(429, message="Slow down.", code="too_fast").build()
    with pytest.raises(anthropic.RateLimitError) as info:
        ask(stub)
    assert info.value.body == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Slow down.", "details": {"error_code": "too_fast"}},
        "request_id": "req_0000",
    }


def test_turn_adds_any_turn() -> None:
    stub = ScriptBuilder().turn("plain").turn({"text": "dict"}).turn(Turn(text="model")).build()
    assert [ask(stub).content[0].text for _ in range(3)] == ["plain", "dict", "model"]


def test_each_model_is_served_from_its_own_queue() -> None:
    builder = (
        ScriptBuilder()
        .says("default 1")
        .for_model("claude-haiku")
        .says("haiku 1")
        .says("haiku 2")
        .for_other_models()
        .says("default 2")
    )
    assert builder.script == {
        "*": [Turn(text="default 1"), Turn(text="default 2")],
        "claude-haiku": [Turn(text="haiku 1"), Turn(text="haiku 2")],
    }
    stub = builder.build()
    assert ask(stub, model="claude-haiku").content[0].text == "haiku 1"
    assert ask(stub, model="claude-opus").content[0].text == "default 1"
    assert ask(stub, model="claude-haiku").content[0].text == "haiku 2"
    assert ask(stub, model="claude-sonnet").content[0].text == "default 2"
    assert [(r.queue, r.turn_index) for r in stub.requests] == [
        ("claude-haiku", 0),
        ("*", 0),
        ("claude-haiku", 1),
        ("*", 1),
    ]


def test_a_builder_with_model_queues_only_has_no_default_queue() -> None:
    stub = ScriptBuilder().for_model("claude-haiku").says("haiku").build()
    with pytest.raises(anthropic.BadRequestError):
        ask(stub, model="claude-opus")
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: no queue for model 'claude-opus' and no default queue '*' "
            "(queues: 'claude-haiku'). Add a queue for this model or a '*' queue."
        )
    ]


def test_exhaustion_stays_loud_without_an_opt_in() -> None:
    stub = ScriptBuilder().says("only").build()
    ask(stub)
    with pytest.raises(anthropic.BadRequestError, match="is past the end of the script"):
        ask(stub)
    assert stub.overflow == 1


def test_echoes_user_answers_a_drained_queue_from_the_request() -> None:
    stub = ScriptBuilder().says("scripted").echoes_user().build()
    assert ask(stub, "first").content[0].text == "scripted"
    assert ask(stub, "repeat after me").content[0].text == "repeat after me"
    assert (
        ask(stub, [{"type": "text", "text": "in "}, {"type": "text", "text": "blocks"}]).content[0].text == "in blocks"
    )
    assert not stub.problems
    assert [r.turn_index for r in stub.requests] == [0, None, None]


def test_a_drained_behaviour_belongs_to_its_queue() -> None:
    stub = ScriptBuilder().for_model("claude-echo").echoes_user().for_other_models().says("once").build()
    assert ask(stub, "hello", model="claude-echo").content[0].text == "hello"
    assert ask(stub, "x").content[0].text == "once"
    with pytest.raises(anthropic.BadRequestError):
        ask(stub, "the default queue is drained and does not echo")
    assert stub.overflow == 1


def test_echoes_user_with_no_user_text_is_a_reported_problem() -> None:
    # strict=False: a tool_result with no tool_use before it is refused by the real API (and by strict
    # mode) before the fallback could run; this is about the fallback.
    stub = ScriptBuilder().echoes_user().build(strict=False)
    with pytest.raises(anthropic.BadRequestError):
        ask(stub, [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "only a tool result"}])
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: the fallback raised LookupError: ScriptBuilder.echoes_user(): its queue is "
            "drained and the request has no user text to echo; add a turn for it"
        )
    ]


@pytest.mark.parametrize(
    "content",
    ["Sunny, 21c", [{"type": "text", "text": "Sunny, "}, {"type": "text", "text": "21c"}]],
    ids=["string", "blocks"],
)
def test_echoes_tool_result_from_anthropic_tool_result_blocks(content: Any) -> None:
    stub = ScriptBuilder().calls("get_weather", {"city": "Paris"}).echoes_tool_result(prefix="Tool said: ").build()
    call = ask(stub).content[0]
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [call.model_dump(include={"type", "id", "name", "input"})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": content}]},
    ]
    client = anthropic_client(stub, max_retries=0)
    answer = client.messages.create(model=MODEL, max_tokens=64, messages=history)
    assert answer.content[0].text == "Tool said: Sunny, 21c"


def test_echoes_tool_result_through_the_anthropic_tool_runner() -> None:
    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: The city.
        """
        return f"Sunny in {city}"

    stub = ScriptBuilder().calls("get_weather", {"city": "Paris"}).echoes_tool_result(prefix="Tool said: ").build()
    runner = anthropic_client(stub).beta.messages.tool_runner(
        model=MODEL, max_tokens=64, tools=[get_weather], messages=[{"role": "user", "content": "Weather?"}]
    )
    assert runner.until_done().content[0].text == "Tool said: Sunny in Paris"


def test_echoes_tool_result_from_openai_chat_and_responses() -> None:
    pytest.importorskip("openai")
    stub = ScriptBuilder().echoes_tool_result(prefix="> ").build()
    client = openai_client(stub, max_retries=0)
    chat = client.chat.completions.create(
        model="gpt-test",
        messages=[
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "Rainy"},
        ],
    )
    assert chat.choices[0].message.content == "> Rainy"
    response = client.responses.create(
        model="gpt-test",
        input=[
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "call_1", "name": "w", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "Snowy"},
        ],
    )
    assert response.output_text == "> Snowy"


def test_echoes_tool_result_from_gemini_function_responses() -> None:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    assert httpx2 is not None
    stub = ScriptBuilder().echoes_tool_result(prefix="> ").build()
    client = genai.Client(api_key="test-key", http_options={"httpx_client": httpx2.Client(transport=stub)})

    def answer(response: dict[str, Any]) -> str:
        contents = [
            types.Content(role="user", parts=[types.Part(text="Weather?")]),
            types.Content(role="model", parts=[types.Part.from_function_call(name="w", args={})]),
            types.Content(role="user", parts=[types.Part.from_function_response(name="w", response=response)]),
        ]
        return str(client.models.generate_content(model="gemini-test", contents=contents).text)

    assert answer({"output": "Foggy"}) == "> Foggy"
    assert answer({"temperature": 21, "sky": "clear"}) == '> {"temperature":21,"sky":"clear"}'


def test_echoes_tool_result_with_no_tool_result_is_a_reported_problem() -> None:
    stub = ScriptBuilder().echoes_tool_result().build()
    with pytest.raises(anthropic.BadRequestError):
        ask(stub, "no tool was called")
    assert stub.problems == [
        (
            "requests[0] POST /v1/messages: the fallback raised LookupError: ScriptBuilder.echoes_tool_result(): "
            "its queue is drained and the request sends no tool result to echo; add a turn for it"
        )
    ]


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ({"type": "tool_result", "tool_use_id": "t", "content": "plain"}, "plain"),
        (
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "a"}, {"type": "image"}]},
            "a",
        ),
        ({"type": "tool_result", "tool_use_id": "t"}, ""),
        ({"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "parts"}]}, "parts"),
        ({"type": "function_call_output", "call_id": "c", "output": [{"type": "input_text", "text": "out"}]}, "out"),
        ({"functionResponse": {"name": "f", "response": {"error": "denied"}}}, "denied"),
        ({"functionResponse": {"name": "f", "response": {"output": 3}}}, '{"output":3}'),
        ({"role": "user", "content": "not a tool result"}, None),
        ("a string", None),
    ],
)
def test_tool_result_text_reads_every_provider_shape(result: object, text: str | None) -> None:
    assert tool_result_text(result) == text


def test_builds_independent_stubs_and_shows_its_queues() -> None:
    builder = ScriptBuilder().says("a").for_model("claude-b").says("b").echoes_user()
    first, second = builder.build(hold_timeout=3.0), builder.build()
    assert first is not second
    assert first.hold_timeout == 3.0
    ask(first)
    assert len(first.pending) == 1
    assert len(second.pending) == 2
    assert repr(builder) == "<ScriptBuilder '*': 1 turn(s), 'claude-b': 1 turn(s), 'claude-b' then echoes_user()>"
    assert ScriptBuilder().fallback is None


def test_the_fixture_takes_a_builder(wirescript: StubFactory) -> None:
    stub = wirescript(ScriptBuilder().says("from the fixture"))
    assert ask(stub).content[0].text == "from the fixture"
    assert wirescript.stubs == [stub]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda b: b.says(5),
            "turn script[0] from .says(): text must be a str, got int 5",
        ),
        (
            lambda b: b.says("a").calls("", {}),
            (
                "invalid turn script[1] from .calls(): field 'tool.name': String should have at least 1 character, "
                "got str ''"
            ),
        ),
        (
            lambda b: b.calls("f", [1, 2]),
            (
                "invalid turn script[0] from .calls(): field 'tool.input': Input should be a valid dictionary, "
                "got list [1, 2]"
            ),
        ),
        (
            lambda b: b.for_model("claude-b").calls("f", {}, id=""),
            (
                "invalid turn script['claude-b'][0] from .calls(): field 'tool.id': String should have at least "
                "1 character, got str ''"
            ),
        ),
        (
            lambda b: b.calls_tools(("f", {})),
            "ScriptBuilder.calls_tools(): expected two or more calls, got 1; use .calls(name, input) for a single call",
        ),
        (
            lambda b: b.calls_tools(("f", {}), "g"),
            "ScriptBuilder.calls_tools(): call 1: expected a (name, input) pair, a dict or a ToolCall, got str: 'g'",
        ),
        (
            lambda b: b.calls_tools(("f", {}), {"name": "g", "args": {}}),
            (
                "invalid turn script[0] from .calls_tools(): unknown field 'tools.1.args' "
                "(expected one of: name, input, id)"
            ),
        ),
        (
            lambda b: b.fails(200),
            (
                "invalid turn script[0] from .fails(): field 'error.status': Input should be greater than or equal to "
                "400, got int 200"
            ),
        ),
        (
            lambda b: b.usage(input_tokens=5),
            (
                "ScriptBuilder.usage(): the default queue has no turn to report usage on; add one first "
                "(.says(), .calls(), ...)"
            ),
        ),
        (
            lambda b: b.says("a").for_model("claude-b").usage(input_tokens=5),
            (
                "ScriptBuilder.usage(): the queue for 'claude-b' has no turn to report usage on; add one first "
                "(.says(), .calls(), ...)"
            ),
        ),
        (
            lambda b: b.fails(500).usage(input_tokens=5),
            "ScriptBuilder.usage(): the last turn, script[0], is an error (error 500), which reports no usage",
        ),
        (
            lambda b: b.says("a").usage(output_tokens=-1),
            (
                "invalid turn script[0] from .usage(): field 'usage.output_tokens': Input should be greater than or "
                "equal to 0, got int -1"
            ),
        ),
        (
            lambda b: b.for_model(""),
            "ScriptBuilder.for_model(): expected a model name, got ''",
        ),
        (
            lambda b: b.for_model("*"),
            "ScriptBuilder.for_model(): expected a model name, got '*'; use .for_other_models() for the default queue",
        ),
        (
            lambda b: b.echoes_user().echoes_tool_result(),
            (
                "ScriptBuilder.echoes_tool_result(): the default queue already answers with .echoes_user() once "
                "drained; a queue has one such behaviour"
            ),
        ),
        (
            lambda b: b.echoes_tool_result(prefix=None),
            "ScriptBuilder.echoes_tool_result(): prefix must be a str, got NoneType",
        ),
        (
            lambda b: b.turn(3),
            (
                "turn script[0] from .turn(): expected a turn (a dict such as {'text': 'Hi'}, a Turn, or a string), "
                "got int: 3"
            ),
        ),
        (
            lambda b: b.says("a").usage(),
            (
                "ScriptBuilder.usage(): give at least one count (input_tokens, output_tokens, cache_read_input_tokens, "
                "cache_creation_input_tokens)"
            ),
        ),
    ],
    ids=[
        "says-not-str",
        "calls-empty-name",
        "calls-input-list",
        "calls-empty-id",
        "calls_tools-one",
        "calls_tools-bad-shape",
        "calls_tools-unknown-field",
        "fails-200",
        "usage-no-turn",
        "usage-empty-model-queue",
        "usage-on-error",
        "usage-negative",
        "for_model-empty",
        "for_model-star",
        "echoes-twice",
        "echoes-prefix-none",
        "turn-int",
        "usage-no-counts",
    ],
)
def test_mistakes_fail_at_the_call_that_made_them(build: Any, message: str) -> None:
    with pytest.raises(ScriptError) as info:
        build(ScriptBuilder())
    assert str(info.value) == message


def test_usage_keeps_the_rest_of_the_turn() -> None:
    builder = (
        ScriptBuilder()
        .calls("f", {"a": 1}, text="t", thinking="th")
        .usage(cache_read_input_tokens=4, output_tokens=1)
        .usage(output_tokens=9)
    )
    assert builder.script["*"] == [
        Turn(
            text="t",
            thinking="th",
            tool=ToolCall(name="f", input={"a": 1}),
            usage={"cache_read_input_tokens": 4, "output_tokens": 9},  # type: ignore[arg-type]
        )
    ]
    message = ask(builder.build())
    assert (message.usage.cache_read_input_tokens, message.usage.output_tokens) == (4, 9)
    assert json.loads(message.model_dump_json())["content"][2]["input"] == {"a": 1}
