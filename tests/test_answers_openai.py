"""OpenAI's answer rules, request shape by request shape (`wires/openai/answers.py`), through the real openai SDK.

Where a Responses request's tools come from (its `tools`, the `additional_tools` and `tool_search_output`
items of its input, namespaces, the client built-in tools), where they cannot be known (a stored
`prompt`, a continuation with no tools of its own), what binds the calls (the legacy `functions` and
`function_call`, `allowed_tools` with a built-in tool among them, a forced built-in tool) and what binds
the text (`json_object`, a `json_schema` that is not strict, a `configuration_update` that sets the
format). Each case asserts both directions: what the real API could answer is served, what it could
never answer is an `impossible_answer` naming the rule.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import openai
import pytest

from _support import openai_client
from wirescript import ScriptTransport

HAS_JSONSCHEMA = importlib.util.find_spec("jsonschema") is not None
needs_jsonschema = pytest.mark.skipif(not HAS_JSONSCHEMA, reason="the schema checks need the jsonschema library")

ORDER = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"],
    "additionalProperties": False,
}
CALL = {"tool": {"name": "lookup_order", "input": {"order_id": "A-7"}}}
TYPO = {"tool": {"name": "lookup_orders", "input": {"order_id": "A-7"}}}
BAD_INPUT = {"tool": {"name": "lookup_order", "input": {"order_id": 7}}}
TEXT = {"text": "A-7 shipped."}
CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
GOOD_JSON = {"text": '{"city": "Paris"}'}
BAD_JSON = {"text": '{"city": 75}'}
USER = [{"role": "user", "content": "Where is A-7?"}]

RESPONSES = "openai_responses.answer"
CHAT = "openai_chat.answer"


def _function(name: str = "lookup_order", *, strict: bool = False) -> dict[str, Any]:
    """A Responses function tool."""
    return {"type": "function", "name": name, "parameters": ORDER, "strict": strict}


def _respond(turn: dict[str, Any], **request: Any) -> ScriptTransport:
    """A stub whose one turn answers `responses.create(**request)` (its input a question unless given)."""
    stub = ScriptTransport([turn])
    request.setdefault("input", "Where is A-7?")
    try:
        openai_client(stub, max_retries=0).responses.create(model="gpt-test", **request)
    except openai.BadRequestError:
        assert stub.problems, "the SDK's 400 is the stub's impossible answer"
    return stub


def _chat(turn: dict[str, Any], **request: Any) -> ScriptTransport:
    stub = ScriptTransport([turn])
    request.setdefault("messages", USER)
    try:
        openai_client(stub, max_retries=0).chat.completions.create(model="gpt-test", **request)
    except openai.BadRequestError:
        assert stub.problems
    return stub


def _served(stub: ScriptTransport) -> None:
    assert stub.problems == [], [problem.reason for problem in stub.problems]


def _refused(stub: ScriptTransport, rule: str, says: str) -> None:
    [problem] = stub.problems
    assert problem.kind == "impossible_answer", problem.reason
    assert f"answer rule {rule}" in problem.reason, problem.reason
    assert says in problem.reason, problem.reason


# ---------------------------------------------------------------- where a Responses request's tools come from


def _question(*items: dict[str, Any]) -> list[dict[str, Any]]:
    return [*items, {"role": "user", "content": "Where is A-7?"}]


def test_additional_tools_in_the_input_are_offered() -> None:
    """An `additional_tools` input item makes its tools available from that item on (the Responses input items)."""
    given = {"type": "additional_tools", "role": "developer", "tools": [_function()]}
    _served(_respond(CALL, input=_question(given)))
    _refused(_respond(TYPO, input=_question(given)), f"{RESPONSES}.tool-not-offered", "did you mean 'lookup_order'?")
    _refused(_respond(CALL), f"{RESPONSES}.tool-not-offered", "but the request offers no tools")


def test_a_client_tool_search_output_offers_the_tools_it_loaded() -> None:
    """A client-run tool search answers with `tool_search_output`, whose `tools` the model may call next;
    a namespace among them offers its functions, strict ones with their schema held."""
    loaded = {
        "type": "tool_search_output",
        "execution": "client",
        "call_id": "ts_1",
        "status": "completed",
        "tools": [
            {
                "type": "namespace",
                "name": "crm",
                "description": "Orders.",
                "tools": [_function(strict=True), {"type": "custom", "name": "note"}],
            }
        ],
    }
    request = {"input": _question(loaded), "tools": [{"type": "tool_search", "execution": "client"}]}
    _served(_respond(CALL, **request))
    _served(_respond({"tool": {"name": "note", "input": {}}}, **request))
    _refused(_respond(TYPO, **request), f"{RESPONSES}.tool-not-offered", "'lookup_order', 'note'")
    if HAS_JSONSCHEMA:
        _refused(_respond(BAD_INPUT, **request), f"{RESPONSES}.strict-tool-input", "7 is not of type 'string'")


def test_a_namespace_in_the_tools_offers_its_functions() -> None:
    tools = [{"type": "namespace", "name": "crm", "description": "Orders.", "tools": [_function()]}]
    _served(_respond(CALL, tools=tools))
    _refused(_respond(TYPO, tools=tools), f"{RESPONSES}.tool-not-offered", "did you mean 'lookup_order'?")


@pytest.mark.parametrize(
    ("tool", "name"),
    [
        pytest.param({"type": "computer"}, "computer", id="computer"),
        pytest.param(
            {"type": "computer_use_preview", "display_width": 1024, "display_height": 768, "environment": "browser"},
            "computer",
            id="computer_use_preview",
        ),
        pytest.param({"type": "shell", "environment": {"type": "local"}}, "shell", id="shell"),
        pytest.param({"type": "apply_patch"}, "apply_patch", id="apply_patch"),
        pytest.param({"type": "local_shell"}, "local_shell", id="local_shell"),
    ],
)
def test_a_client_built_in_tool_is_offered_by_the_name_its_calls_take(tool: dict[str, Any], name: str) -> None:
    """The built-in tools the app runs (computer use, shell, apply_patch, local shell): their calls are offered."""
    call = {"tool": {"name": name, "input": {"type": "screenshot"} if name == "computer" else {}}}
    _served(_respond(call, tools=[tool]))
    _refused(
        _respond({"tool": {"name": "lookup", "input": {}}}, tools=[tool]),
        f"{RESPONSES}.tool-not-offered",
        f"(its `tools`: {name!r})",
    )


def test_a_stored_prompt_leaves_the_tool_names_unchecked() -> None:
    """A stored prompt may hold tools the request does not show: any call is served; the tool choice is held."""
    prompt = {"id": "pmpt_123", "version": "2"}
    _served(_respond(TYPO, prompt=prompt))
    _served(_respond(TYPO, prompt=prompt, tools=[_function()]))
    _refused(
        _respond(TYPO, prompt=prompt, tool_choice="none"), f"{RESPONSES}.tool-choice", "lets the model call no tool"
    )


def _continued(key: str) -> tuple[ScriptTransport, Any, dict[str, Any]]:
    """A stub and client with one answered request (offering `lookup_order`), and how to continue it."""
    stub = ScriptTransport([CALL, TYPO, TYPO])
    client = openai_client(stub, max_retries=0)
    if key == "conversation":
        conversation = client.conversations.create()
        client.responses.create(model="gpt-test", input="A-7?", tools=[_function()], conversation=conversation.id)
        return stub, client, {"conversation": conversation.id}
    first = client.responses.create(model="gpt-test", input="A-7?", tools=[_function()])
    return stub, client, {"previous_response_id": first.id}


@pytest.mark.parametrize("key", ["previous_response_id", "conversation"])
def test_a_continuation_without_tools_of_its_own_leaves_the_tool_names_unchecked(key: str) -> None:
    stub, client, continued = _continued(key)
    output = {"type": "function_call_output", "call_id": "call_0000_0", "output": "shipped"}
    client.responses.create(model="gpt-test", input=[output], **continued)
    _served(stub)
    if key == "conversation":  # the conversation holds the second call now: its output goes next
        output = {**output, "call_id": "call_0001_0"}
    with pytest.raises(openai.BadRequestError):  # with tools of its own, they are what it offers
        client.responses.create(model="gpt-test", input=[output], tools=[_function()], **continued)
    _refused(stub, f"{RESPONSES}.tool-not-offered", "did you mean 'lookup_order'?")


# ---------------------------------------------------------------- what binds the calls


def _legacy(name: str = "lookup_order") -> list[dict[str, Any]]:
    return [{"name": name, "parameters": ORDER}]


def test_the_legacy_functions_are_offered() -> None:
    _served(_chat(CALL, functions=_legacy()))
    _refused(_chat(TYPO, functions=_legacy()), f"{CHAT}.tool-not-offered", "(its `functions`: 'lookup_order')")


def test_the_legacy_function_call_none_lets_no_function_be_called() -> None:
    _served(_chat(TEXT, functions=_legacy(), function_call="none"))
    _refused(_chat(CALL, functions=_legacy(), function_call="none"), f"{CHAT}.tool-choice", '`function_call` "none"')
    _served(_chat(TEXT, functions=_legacy(), function_call="auto"))


def test_the_legacy_function_call_forces_the_named_function() -> None:
    functions = [*_legacy(), *_legacy("cancel_order")]
    forced = {"name": "lookup_order"}
    _served(_chat(CALL, functions=functions, function_call=forced))
    _refused(
        _chat(TEXT, functions=functions, function_call=forced), f"{CHAT}.tool-choice", "call the tool 'lookup_order'"
    )
    cancel = {"tool": {"name": "cancel_order", "input": {"order_id": "A-7"}}}
    _refused(
        _chat(cancel, functions=functions, function_call=forced),
        f"{CHAT}.tool-choice",
        "forces the tool 'lookup_order'",
    )


def _allowed(*tools: dict[str, Any], mode: str = "auto") -> dict[str, Any]:
    return {"type": "allowed_tools", "mode": mode, "tools": list(tools)}


def test_allowed_tools_limit_the_calls_unless_a_built_in_tool_is_among_them() -> None:
    """`allowed_tools` of functions limits the calls to them; with a built-in tool among them the stub cannot
    tell which calls the built-in stands for, so it limits none (no false positive)."""
    tools = [_function(), _function("cancel_order"), {"type": "web_search"}]
    cancel = {"tool": {"name": "cancel_order", "input": {"order_id": "A-7"}}}
    only_lookup = _allowed({"type": "function", "name": "lookup_order"})
    _served(_respond(CALL, tools=tools, tool_choice=only_lookup))
    _refused(
        _respond(cancel, tools=tools, tool_choice=only_lookup), f"{RESPONSES}.tool-choice", "lets the model call only"
    )
    with_search = _allowed({"type": "function", "name": "lookup_order"}, {"type": "web_search"})
    _served(_respond(cancel, tools=tools, tool_choice=with_search))
    required = _allowed({"type": "function", "name": "lookup_order"}, mode="required")
    _refused(
        _respond(TEXT, tools=tools, tool_choice=required), f"{RESPONSES}.tool-choice", "makes the model call a tool"
    )


def test_chat_allowed_tools_with_a_custom_tool_and_a_built_in() -> None:
    tools = [
        {"type": "function", "function": {"name": "lookup_order", "parameters": ORDER}},
        {"type": "custom", "custom": {"name": "note"}},
    ]
    note = {"tool": {"name": "note", "input": {}}}
    only_note = {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "auto", "tools": [{"type": "custom", "custom": {"name": "note"}}]},
    }
    _served(_chat(note, tools=tools, tool_choice=only_note))
    _refused(_chat(CALL, tools=tools, tool_choice=only_note), f"{CHAT}.tool-choice", "lets the model call only 'note'")


def test_a_forced_built_in_tool_binds_no_call_of_the_app() -> None:
    """`tool_choice` forcing a built-in (`web_search`): its call is the provider's item, not held here."""
    tools = [_function(), {"type": "web_search"}]
    _served(_respond(TEXT, tools=tools, tool_choice={"type": "web_search"}))
    _refused(
        _respond(TEXT, tools=tools, tool_choice={"type": "function", "name": "lookup_order"}),
        f"{RESPONSES}.tool-choice",
        "call the tool 'lookup_order'",
    )


# ---------------------------------------------------------------- what binds the text


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_json_object_makes_the_text_json(api: str) -> None:
    """JSON mode 'ensures that model output is valid JSON': any JSON is served, other text is not."""
    fmt = {"type": "json_object"}

    def send(turn: dict[str, Any]) -> ScriptTransport:
        if api == "chat":  # JSON mode needs the word JSON in the messages
            return _chat(turn, response_format=fmt, messages=[{"role": "user", "content": "A-7 as JSON?"}])
        return _respond(turn, text={"format": fmt}, input="A-7 as JSON?")

    field = "response_format" if api == "chat" else "text.format"
    _served(send({"text": '{"anything": [1, 2]}'}))
    _refused(
        send(TEXT),
        f"openai_{api}.answer.output-format",
        f"is not JSON (Expecting value: line 1 column 1 (char 0)), which the request's `{field}` json_object "
        "guarantees",
    )
    _served(send({"text": "Cut sho", "stop_reason": "max_tokens"}))  # a `length` stop may break it


@needs_jsonschema
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_json_schema_that_is_not_strict_holds_the_text_to_nothing(api: str) -> None:
    def send(turn: dict[str, Any], strict: bool | None) -> ScriptTransport:
        spec: dict[str, Any] = {"name": "city", "schema": CITY}
        if strict is not None:
            spec["strict"] = strict
        if api == "chat":
            return _chat(turn, response_format={"type": "json_schema", "json_schema": spec})
        return _respond(turn, text={"format": {"type": "json_schema", **spec}})

    for strict in (False, None):
        _served(send(BAD_JSON, strict))
        _served(send(TEXT, strict))
    _refused(send(BAD_JSON, True), f"openai_{api}.answer.output-format", "75 is not of type 'string'")
    plain = {"type": "text"}
    _served(_chat(TEXT, response_format=plain) if api == "chat" else _respond(TEXT, text={"format": plain}))


@needs_jsonschema
def test_a_configuration_update_that_sets_the_text_leaves_the_output_unchecked() -> None:
    """A `configuration_update` item's `text` replaces the format for what follows: the body's no longer binds."""
    fmt = {"format": {"type": "json_schema", "name": "city", "schema": CITY, "strict": True}}
    update = {"type": "configuration_update", "text": {"format": {"type": "text"}}}
    _served(_respond(TEXT, text=fmt, input=_question(update)))
    effort = {"type": "configuration_update", "reasoning": {"effort": "low"}}
    _refused(_respond(BAD_JSON, text=fmt, input=_question(effort)), f"{RESPONSES}.output-format", "75 is not of type")
    _refused(_respond(BAD_JSON, text=fmt), f"{RESPONSES}.output-format", "json_schema 'city' (strict)")


# ---------------------------------------------------------------- shapes no SDK sends: the offer read directly


def test_entries_that_are_no_tool_are_skipped() -> None:
    from wirescript.wires.openai.answers import chat_offer, responses_offer

    chat = chat_offer({"tools": ["lookup_order", {"type": "function", "function": {"name": "f"}}]})
    assert list(chat.tools or {}) == ["f"]
    responses = responses_offer(
        {"tools": [7, _function()]}, ["not an item", {"type": "additional_tools", "tools": [3]}]
    )
    assert list(responses.tools or {}) == ["lookup_order"]
    listed = responses_offer({"tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": ["f"]}}, [])
    assert listed.choice is None  # an entry that is no tool: the calls are not limited
    assert chat_offer({"tool_choice": {"type": "function", "function": "f"}}).choice is None
