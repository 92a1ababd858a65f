"""The answer rules: a scripted turn the real API could not give to its request, through the real SDKs.

Each case is a request and a turn its API could never answer it with (a tool the request does not
offer, input or text that breaks a schema the provider guarantees, text where a tool call is forced,
several calls where parallel calls are off); the same turn, fixed, is served; and the broken one with
`"unchecked": true` is served too, for a test of how the app copes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from _support import anthropic_client, no_aws_environment, openai_client
from wirescript import ScriptBuilder, ScriptTransport
from wirescript.errors import ScriptError
from wirescript.strict import ANSWER_RULES, answer_rules_table

ORDER = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"],
    "additionalProperties": False,
}
CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "degrees": {"type": "integer"}},
    "required": ["city", "degrees"],
    "additionalProperties": False,
}
CALL = {"name": "lookup_order", "input": {"order_id": "A-7"}}
TYPO = {"name": "lookup_orders", "input": {"order_id": "A-7"}}
BAD_INPUT = {"name": "lookup_order", "input": {"order_id": 7}}
GOOD_JSON = '{"city": "Paris", "degrees": 21}'
BAD_JSON = '{"city": "Paris", "degrees": "warm"}'
USER = [{"role": "user", "content": "Where is my order A-7?"}]


@dataclass
class Case:
    """A request, a turn its API cannot answer it with, and the nearest turn it can."""

    rule: str
    request: dict[str, Any]
    impossible: dict[str, Any]
    possible: dict[str, Any]
    says: str
    """A part of the problem's message."""
    options: dict[str, Any] = field(default_factory=dict)
    """The stub's (`check_tool_input=True`)."""


# ---------------------------------------------------------------- the SDKs, one call each


def _anthropic(stub: ScriptTransport, request: dict[str, Any]) -> Any:
    client = anthropic_client(stub, max_retries=2)
    return client.messages.create(model="claude-sonnet-5", max_tokens=256, messages=USER, **request)


def _chat(stub: ScriptTransport, request: dict[str, Any]) -> Any:
    return openai_client(stub, max_retries=2).chat.completions.create(model="gpt-test", messages=USER, **request)


def _responses(stub: ScriptTransport, request: dict[str, Any]) -> Any:
    return openai_client(stub, max_retries=2).responses.create(model="gpt-test", input="Where is A-7?", **request)


def _gemini(stub: ScriptTransport, request: dict[str, Any]) -> Any:
    genai = pytest.importorskip("google.genai")
    from _support import httpx2

    http = httpx2.Client(transport=stub)
    options = genai.types.HttpOptions(
        httpx_client=http, retry_options=genai.types.HttpRetryOptions(attempts=3, initial_delay=0.001)
    )
    client = genai.Client(api_key="test-key", http_options=options)
    return client.models.generate_content(model="gemini-test", contents="Where is A-7?", config=request or None)


def _bedrock(stub: ScriptTransport, request: dict[str, Any]) -> Any:
    boto3 = pytest.importorskip("boto3")
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKIDTEST", aws_secret_access_key="secret"
    )
    stub.attach(client)
    return client.converse(
        modelId="anthropic.claude-3-5-haiku-20241022-v1:0",
        messages=[{"role": "user", "content": [{"text": "Where is A-7?"}]}],
        **request,
    )


SEND: dict[str, Callable[[ScriptTransport, dict[str, Any]], Any]] = {
    "anthropic": _anthropic,
    "openai_chat": _chat,
    "openai_responses": _responses,
    "gemini": _gemini,
    "bedrock": _bedrock,
}


def _refused(exc: BaseException) -> bool:
    """Whether `exc` is the SDK's error for a 400 answer."""
    if isinstance(exc, (anthropic.BadRequestError, openai.BadRequestError)):
        return True
    status = getattr(exc, "code", None) or getattr(getattr(exc, "response", None), "get", lambda *_: None)(
        "ResponseMetadata", {}
    ).get("HTTPStatusCode")
    return status == 400


# ---------------------------------------------------------------- the cases


def _a_tools(*, strict: bool = False) -> list[dict[str, Any]]:
    tool: dict[str, Any] = {"name": "lookup_order", "description": "An order.", "input_schema": ORDER}
    return [{**tool, "strict": True}] if strict else [tool]


def _c_tools(*, strict: bool = False) -> list[dict[str, Any]]:
    function: dict[str, Any] = {"name": "lookup_order", "parameters": ORDER}
    return [{"type": "function", "function": {**function, "strict": True} if strict else function}]


def _r_tools(*, strict: bool = False) -> list[dict[str, Any]]:
    return [{"type": "function", "name": "lookup_order", "parameters": ORDER, "strict": strict}]


def _g_tools() -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
    return [{"function_declarations": [{"name": "lookup_order", "parameters": schema}]}]


def _b_tools(*, strict: bool = False, **config: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": "lookup_order", "inputSchema": {"json": ORDER}}
    return {"toolConfig": {"tools": [{"toolSpec": {**spec, "strict": True} if strict else spec}], **config}}


TWO = {"tools": [CALL, {"name": "lookup_order", "input": {"order_id": "B-8"}}]}
ONE = {"tool": CALL}
NOT_OFFERED = "which the request does not offer"
NO_TOOLS = "but the request offers no tools"

CASES: dict[str, Case] = {
    # --- Anthropic Messages
    "anthropic-typo": Case(
        "anthropic.answer.tool-not-offered", {"tools": _a_tools()}, {"tool": TYPO}, ONE, "did you mean 'lookup_order'"
    ),
    "anthropic-no-tools": Case("anthropic.answer.tool-not-offered", {}, ONE, {"text": "A-7 shipped."}, NO_TOOLS),
    "anthropic-strict-input": Case(
        "anthropic.answer.strict-tool-input",
        {"tools": _a_tools(strict=True)},
        {"tool": BAD_INPUT},
        ONE,
        "7 is not of type 'string'",
    ),
    "anthropic-loose-input-opt-in": Case(
        "anthropic.answer.tool-input",
        {"tools": _a_tools()},
        {"tool": BAD_INPUT},
        ONE,
        "check_tool_input=True",
        {"check_tool_input": True},
    ),
    "anthropic-output-format": Case(
        "anthropic.answer.output-format",
        {"output_config": {"format": {"type": "json_schema", "schema": CITY}}},
        {"text": BAD_JSON},
        {"text": GOOD_JSON},
        "'warm' is not of type 'integer'",
    ),
    "anthropic-forced-any": Case(
        "anthropic.answer.tool-choice",
        {"tools": _a_tools(), "tool_choice": {"type": "any"}},
        {"text": "Let me look."},
        ONE,
        "makes the model call a tool",
    ),
    "anthropic-forced-tool": Case(
        "anthropic.answer.tool-choice",
        {"tools": _a_tools(), "tool_choice": {"type": "tool", "name": "lookup_order"}},
        {"text": "Let me look."},
        ONE,
        "call the tool 'lookup_order'",
    ),
    "anthropic-parallel-off": Case(
        "anthropic.answer.parallel-tool-calls",
        {"tools": _a_tools(), "tool_choice": {"type": "auto", "disable_parallel_tool_use": True}},
        TWO,
        ONE,
        "at most one per turn",
    ),
    # --- OpenAI Chat Completions
    "chat-typo": Case(
        "openai_chat.answer.tool-not-offered", {"tools": _c_tools()}, {"tool": TYPO}, ONE, "did you mean 'lookup_order'"
    ),
    "chat-no-tools": Case("openai_chat.answer.tool-not-offered", {}, ONE, {"text": "A-7 shipped."}, NO_TOOLS),
    "chat-strict-input": Case(
        "openai_chat.answer.strict-tool-input",
        {"tools": _c_tools(strict=True)},
        {"tool": BAD_INPUT},
        ONE,
        "7 is not of type 'string'",
    ),
    "chat-loose-input-opt-in": Case(
        "openai_chat.answer.tool-input",
        {"tools": _c_tools()},
        {"tool": BAD_INPUT},
        ONE,
        "check_tool_input=True",
        {"check_tool_input": True},
    ),
    "chat-json-schema": Case(
        "openai_chat.answer.output-format",
        {"response_format": {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY, "strict": True}}},
        {"text": BAD_JSON},
        {"text": GOOD_JSON},
        "'warm' is not of type 'integer'",
    ),
    "chat-required": Case(
        "openai_chat.answer.tool-choice",
        {"tools": _c_tools(), "tool_choice": "required"},
        {"text": "Let me look."},
        ONE,
        "makes the model call a tool",
    ),
    "chat-parallel-off": Case(
        "openai_chat.answer.parallel-tool-calls",
        {"tools": _c_tools(), "parallel_tool_calls": False},
        TWO,
        ONE,
        "`parallel_tool_calls` false",
    ),
    # --- OpenAI Responses
    "responses-typo": Case(
        "openai_responses.answer.tool-not-offered",
        {"tools": _r_tools()},
        {"tool": TYPO},
        ONE,
        "did you mean 'lookup_order'",
    ),
    "responses-no-tools": Case("openai_responses.answer.tool-not-offered", {}, ONE, {"text": "Shipped."}, NO_TOOLS),
    "responses-strict-input": Case(
        "openai_responses.answer.strict-tool-input",
        {"tools": _r_tools(strict=True)},
        {"tool": BAD_INPUT},
        ONE,
        "7 is not of type 'string'",
    ),
    "responses-json-schema": Case(
        "openai_responses.answer.output-format",
        {"text": {"format": {"type": "json_schema", "name": "city", "schema": CITY, "strict": True}}},
        {"text": BAD_JSON},
        {"text": GOOD_JSON},
        "'warm' is not of type 'integer'",
    ),
    "responses-forced": Case(
        "openai_responses.answer.tool-choice",
        {"tools": _r_tools(), "tool_choice": {"type": "function", "name": "lookup_order"}},
        {"text": "Let me look."},
        ONE,
        "call the tool 'lookup_order'",
    ),
    "responses-parallel-off": Case(
        "openai_responses.answer.parallel-tool-calls",
        {"tools": _r_tools(), "parallel_tool_calls": False},
        TWO,
        ONE,
        "at most one per turn",
    ),
    # --- Gemini
    "gemini-typo": Case(
        "gemini.answer.tool-not-offered", {"tools": _g_tools()}, {"tool": TYPO}, ONE, "did you mean 'lookup_order'"
    ),
    "gemini-no-tools": Case("gemini.answer.tool-not-offered", {}, ONE, {"text": "Shipped."}, NO_TOOLS),
    "gemini-any-input": Case(
        "gemini.answer.strict-tool-input",
        {"tools": _g_tools(), "tool_config": {"function_calling_config": {"mode": "ANY"}}},
        {"tool": BAD_INPUT},
        ONE,
        "7 is not of type 'string'",
    ),
    "gemini-any-text": Case(
        "gemini.answer.tool-choice",
        {"tools": _g_tools(), "tool_config": {"function_calling_config": {"mode": "ANY"}}},
        {"text": "Let me look."},
        ONE,
        "makes the model call a tool",
    ),
    "gemini-response-schema": Case(
        "gemini.answer.output-format",
        {
            "response_mime_type": "application/json",
            "response_schema": {
                "type": "OBJECT",
                "properties": {"city": {"type": "STRING"}, "degrees": {"type": "INTEGER"}},
                "required": ["city", "degrees"],
            },
        },
        {"text": BAD_JSON},
        {"text": GOOD_JSON},
        "'warm' is not of type 'integer'",
    ),
    # --- Bedrock Converse
    "bedrock-typo": Case(
        "bedrock.answer.tool-not-offered", _b_tools(), {"tool": TYPO}, ONE, "did you mean 'lookup_order'"
    ),
    "bedrock-no-tools": Case("bedrock.answer.tool-not-offered", {}, ONE, {"text": "Shipped."}, NO_TOOLS),
    "bedrock-strict-input": Case(
        "bedrock.answer.strict-tool-input", _b_tools(strict=True), {"tool": BAD_INPUT}, ONE, "7 is not of type"
    ),
    "bedrock-any": Case(
        "bedrock.answer.tool-choice",
        _b_tools(toolChoice={"any": {}}),
        {"text": "Let me look."},
        ONE,
        "makes the model call a tool",
    ),
    "bedrock-output-format": Case(
        "bedrock.answer.output-format",
        {
            "outputConfig": {
                "textFormat": {
                    "type": "json_schema",
                    "structure": {"jsonSchema": {"schema": json.dumps(CITY), "name": "city"}},
                }
            }
        },
        {"text": BAD_JSON},
        {"text": GOOD_JSON},
        "'warm' is not of type 'integer'",
    ),
}


HAS_JSONSCHEMA = importlib.util.find_spec("jsonschema") is not None
SCHEMA_RULES = (".strict-tool-input", ".tool-input", ".output-format")


def _held(case: Case) -> None:
    """Skip a case whose rule checks a schema where the jsonschema library is not installed (it holds nothing)."""
    if case.rule.endswith(SCHEMA_RULES) and not HAS_JSONSCHEMA:
        pytest.skip("the schema checks need the jsonschema library (not in this environment)")


@pytest.fixture(autouse=True)
def _no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    no_aws_environment(monkeypatch, tmp_path)


def _wire(name: str) -> str:
    return {"chat": "openai_chat", "responses": "openai_responses"}.get(name.split("-")[0], name.split("-")[0])


@pytest.mark.parametrize("name", list(CASES))
def test_an_impossible_answer_is_a_loud_problem_naming_the_turn_the_request_and_the_fix(name: str) -> None:
    case = CASES[name]
    _held(case)
    stub = ScriptTransport([case.impossible], **case.options)
    with pytest.raises(Exception) as info:  # noqa: PT011 - each SDK's own 400 error, checked below
        SEND[_wire(name)](stub, case.request)
    assert _refused(info.value), repr(info.value)
    assert len(stub.requests) == 1  # not retried: the answer is loud and says so
    [problem] = stub.problems
    assert problem.kind == "impossible_answer"
    assert problem.startswith("requests[0] POST ")
    assert "was answered with script[0], which the real API could not give to this request" in problem
    assert f"answer rule {case.rule}" in problem.reason
    assert case.says in problem.reason, problem.reason
    assert '"unchecked": true' in problem.reason
    assert f'strict_skip=["{case.rule}"]' in problem.reason
    assert case.rule in ANSWER_RULES


@pytest.mark.parametrize("name", list(CASES))
def test_the_nearest_possible_answer_is_served(name: str) -> None:
    case = CASES[name]
    stub = ScriptTransport([case.possible], **case.options)
    SEND[_wire(name)](stub, case.request)
    assert stub.problems == []


@pytest.mark.parametrize("name", list(CASES))
def test_unchecked_serves_the_impossible_answer(name: str) -> None:
    case = CASES[name]
    stub = ScriptTransport([{**case.impossible, "unchecked": True}], **case.options)
    SEND[_wire(name)](stub, case.request)
    assert stub.problems == []


@pytest.mark.parametrize("name", list(CASES))
def test_strict_skip_or_strict_false_serves_it(name: str) -> None:
    case = CASES[name]
    _held(case)
    for options in ({"strict_skip": [case.rule]}, {"strict": False}):
        stub = ScriptTransport([case.impossible], **{**case.options, **options})
        SEND[_wire(name)](stub, case.request)
        assert stub.problems == [], options


@pytest.mark.parametrize("wire", ["anthropic", "openai_chat"])
def test_a_non_strict_tool_input_that_breaks_its_schema_is_served_by_default(wire: str) -> None:
    """A real model may send such input to a tool that is not strict: only the opt-in check refuses it."""
    request = {"tools": _a_tools()} if wire == "anthropic" else {"tools": _c_tools()}
    stub = ScriptTransport([{"tool": BAD_INPUT}])
    SEND[wire](stub, request)
    assert stub.problems == []


def test_openai_strict_input_is_not_guaranteed_in_a_parallel_call() -> None:
    """Structured Outputs is not compatible with parallel function calls: their arguments are held to nothing."""
    stub = ScriptTransport([{"tools": [BAD_INPUT, CALL]}])
    _chat(stub, {"tools": _c_tools(strict=True)})
    assert stub.problems == []


def test_a_cut_short_answer_is_held_to_no_schema() -> None:
    """A `max_tokens` stop or a refusal may break the requested schema: structured outputs say so."""
    request = {"response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": CITY, "strict": True}}}
    stub = ScriptTransport([{"text": '{"city": "Par', "stop_reason": "max_tokens"}])
    _chat(stub, request)
    assert stub.problems == []


def test_unchecked_serves_a_server_tool_the_request_did_not_enable_too() -> None:
    turn = {"server_tools": [{"name": "web_search", "input": {"query": "A-7"}, "result": []}], "text": "Found."}
    refused = ScriptTransport([turn])
    with pytest.raises(anthropic.BadRequestError):
        _anthropic(refused, {})
    assert [problem.kind for problem in refused.problems] == ["impossible_answer"]
    served = ScriptTransport([{**turn, "unchecked": True}])
    _anthropic(served, {})
    assert served.problems == []


def test_the_builder_marks_the_last_turn_unchecked() -> None:
    stub = ScriptBuilder().calls("lookup_orders", {"order_id": "A-7"}).unchecked().build()
    _anthropic(stub, {"tools": _a_tools()})
    assert stub.problems == []
    with pytest.raises(ScriptError, match=r"no turn to mark"):
        ScriptBuilder().unchecked()


def test_unchecked_must_be_a_bool() -> None:
    with pytest.raises(ScriptError, match="unchecked"):
        ScriptTransport([{"text": "x", "unchecked": "maybe"}])
    with pytest.raises(ScriptError, match="check_tool_input: expected True or False"):
        ScriptTransport([], check_tool_input=1)  # type: ignore[arg-type]


def test_an_error_turn_cannot_be_unchecked() -> None:
    with pytest.raises(ScriptError, match="unchecked"):
        ScriptTransport([{"error": {"status": 500}, "unchecked": True}])


def test_the_async_clients_get_the_same_loud_answer() -> None:
    stub = ScriptTransport([{"tool": TYPO}])

    async def main() -> None:
        client = anthropic_client(stub, is_async=True, max_retries=2)
        with pytest.raises(anthropic.BadRequestError):
            await client.messages.create(model="claude-sonnet-5", max_tokens=64, messages=USER, tools=_a_tools())

    asyncio.run(main())
    assert [problem.kind for problem in stub.problems] == ["impossible_answer"]


def test_a_streamed_request_gets_the_loud_answer_before_any_event() -> None:
    stub = ScriptTransport([{"tool": TYPO}])
    client = openai_client(stub, max_retries=0)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="gpt-test", messages=USER, tools=_c_tools(), stream=True)
    assert [problem.kind for problem in stub.problems] == ["impossible_answer"]


# ---------------------------------------------------------------- the hosts, Ollama, InvokeModel


def test_a_dialect_holds_the_tool_names() -> None:
    stub = ScriptTransport([{"tool": TYPO}], dialect="groq")
    with pytest.raises(openai.BadRequestError):
        _chat(stub, {"tools": _c_tools()})
    [problem] = stub.problems
    assert "answer rule dialect.answer.tool-not-offered" in problem.reason
    served = ScriptTransport([ONE], dialect="groq")
    _chat(served, {"tools": _c_tools()})
    assert served.problems == []


def test_azure_holds_openai_strict_functions() -> None:
    pytest.importorskip("jsonschema")
    stub = ScriptTransport([{"tool": BAD_INPUT}], dialect="azure")
    with pytest.raises(openai.BadRequestError):
        _chat(stub, {"tools": _c_tools(strict=True)})
    assert "answer rule openai_chat.answer.strict-tool-input" in stub.problems[0].reason


def test_ollama_holds_the_tool_names() -> None:
    ollama = pytest.importorskip("ollama")
    from _support import httpx

    if httpx is None:
        pytest.skip("the ollama client runs on httpx")
    stub = ScriptTransport([{"tool": TYPO}])
    client = ollama.Client(host="http://localhost:11434", transport=stub)
    tools = [{"type": "function", "function": {"name": "lookup_order", "parameters": ORDER}}]
    with pytest.raises(ollama.ResponseError):
        client.chat(model="llama3", messages=USER, tools=tools)
    assert "answer rule ollama_native.answer.tool-not-offered" in stub.problems[0].reason
    served = ScriptTransport([ONE])
    reply = ollama.Client(host="http://localhost:11434", transport=served).chat(
        model="llama3", messages=USER, tools=tools
    )
    assert reply.message.tool_calls[0].function.name == "lookup_order"
    assert served.problems == []


def test_claude_on_bedrock_invoke_is_held_to_the_messages_rules() -> None:
    pytest.importorskip("botocore")  # AnthropicBedrock signs with it
    from _support import ANTHROPIC_HX

    stub = ScriptTransport([{"tool": TYPO}])
    client = anthropic.AnthropicBedrock(
        aws_region="us-east-1",
        aws_access_key="AKIDTEST",
        aws_secret_key="secret",
        max_retries=0,
        http_client=ANTHROPIC_HX.Client(transport=stub),
    )
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(
            model="anthropic.claude-3-5-haiku-20241022-v1:0", max_tokens=64, messages=USER, tools=_a_tools()
        )
    assert "answer rule anthropic.answer.tool-not-offered" in stub.problems[0].reason


# ---------------------------------------------------------------- the SDKs' own helpers pass untouched


def test_chat_completions_parse_and_responses_parse_are_served() -> None:
    from pydantic import BaseModel

    class City(BaseModel):
        city: str
        degrees: int

    stub = ScriptTransport([{"text": GOOD_JSON}, {"text": GOOD_JSON}, {"tool": {"name": "City", "input": {}}}])
    client = openai_client(stub)
    parsed = client.chat.completions.parse(model="gpt-test", messages=USER, response_format=City)
    assert parsed.choices[0].message.parsed == City(city="Paris", degrees=21)
    answer = client.responses.parse(model="gpt-test", input="Paris?", text_format=City)
    assert answer.output_parsed == City(city="Paris", degrees=21)
    # a strict pydantic function tool: an input breaking it is impossible
    if not HAS_JSONSCHEMA:
        return
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.parse(model="gpt-test", messages=USER, tools=[openai.pydantic_function_tool(City)])
    assert "openai_chat.answer.strict-tool-input" in stub.problems[0].reason
    assert "'city' is a required property" in stub.problems[0].reason


@pytest.mark.skipif(not HAS_JSONSCHEMA, reason="the schema checks need jsonschema")
def test_a_decimal_step_is_held_as_the_decimals_a_model_writes() -> None:
    """`multipleOf: 0.01` (a money field): 19.99 conforms, though 19.99 / 0.01 is not whole in binary floats."""
    from pydantic import BaseModel, Field

    class Price(BaseModel):
        amount: float = Field(multiple_of=0.01)

    stub = ScriptTransport(
        [{"text": '{"amount": 19.99}'}, {"text": '{"amount": 0.07}'}, {"text": '{"amount": 19.991}'}]
    )
    client = openai_client(stub)
    for amount in (19.99, 0.07):
        parsed = client.chat.completions.parse(model="gpt-test", messages=USER, response_format=Price)
        assert parsed.choices[0].message.parsed == Price(amount=amount)
    with pytest.raises(openai.BadRequestError):  # the step is still held
        client.chat.completions.parse(model="gpt-test", messages=USER, response_format=Price)
    [problem] = stub.problems
    assert "openai_chat.answer.output-format" in problem.reason
    assert "19.991 is not a multiple of 0.01" in problem.reason


def test_anthropic_tool_runner_and_parse_are_served() -> None:
    from pydantic import BaseModel

    class City(BaseModel):
        city: str
        degrees: int

    @anthropic.beta_tool
    def lookup_order(order_id: str) -> str:
        """Look an order up.

        Args:
            order_id: The order.
        """
        return f"{order_id} shipped"

    stub = ScriptTransport([ONE, {"text": "Shipped."}, {"text": GOOD_JSON}])
    client = anthropic_client(stub)
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5", max_tokens=256, tools=[lookup_order], messages=USER
    )
    assert runner.until_done().content[0].text == "Shipped."
    if hasattr(client.messages, "parse"):
        parsed = client.messages.parse(model="claude-sonnet-5", max_tokens=256, messages=USER, output_format=City)
        assert parsed.parsed_output == City(city="Paris", degrees=21)
    assert stub.problems == []


# ---------------------------------------------------------------- the docs table, jsonschema absent


def test_every_answer_rule_cites_its_source_and_is_in_the_table() -> None:
    table = answer_rules_table()
    for rule_id, rule in ANSWER_RULES.items():
        assert rule.source, rule_id
        assert rule.summary, rule_id
        assert f"| `{rule_id}` |" in table


def test_without_jsonschema_the_schema_checks_warn_and_hold_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from wirescript.wires import _schema

    monkeypatch.setitem(sys.modules, "jsonschema", None)
    for cached in (_schema._jsonschema, _schema._validator, _schema._missing):
        cached.cache_clear()
    try:
        stub = ScriptTransport([{"tool": BAD_INPUT}, {"tool": TYPO}])
        with pytest.warns(UserWarning, match=r"pip install jsonschema"):
            _chat(stub, {"tools": _c_tools(strict=True)})
        assert stub.problems == []  # served: nothing to hold its input to
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # warned once per process, not once per request
            with pytest.raises(openai.BadRequestError):
                _chat(stub, {"tools": _c_tools(strict=True)})  # the tool names need no library
        assert [problem.kind for problem in stub.problems] == ["impossible_answer"]
        # warnings made errors (`-W error`) do not make the answer one: it is served all the same
        _schema._missing.cache_clear()
        again = ScriptTransport([{"tool": BAD_INPUT}])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _chat(again, {"tools": _c_tools(strict=True)})
        assert again.problems == []
    finally:
        for cached in (_schema._jsonschema, _schema._validator, _schema._missing):
            cached.cache_clear()


# ---------------------------------------------------------------- the page's table is the rules'

PAGE = Path(__file__).resolve().parent.parent / "docs" / "answers.md"
BEGIN = "<!-- answer rules table: generated from the rules by wirescript.strict.answer_rules_table; do not edit -->"
END = "<!-- end of the generated answer rules table -->"


def _rewritten(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN) + 1, text.index(END)
    return text[:start] + answer_rules_table() + text[end:]


def test_the_page_shows_the_answer_rules_as_they_are() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text == _rewritten(text), "run `uv run python tests/test_answers.py` to regenerate docs/answers.md"
    broken = text.replace("| `gemini.answer.tool-choice` |", "| `gemini.answer.tool-chosen` |")
    assert broken != _rewritten(broken)  # the check can fail


if __name__ == "__main__":
    PAGE.write_text(_rewritten(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
