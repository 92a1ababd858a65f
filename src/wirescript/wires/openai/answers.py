"""The answer rules of OpenAI's Chat Completions and Responses: what a request lets the model answer with.

Strict function tools (`strict: true`) and strict structured outputs (`response_format` / `text.format`
of type `json_schema` with `strict: true`) guarantee their schema, in OpenAI's strict subset; a JSON
object format (`json_object`) guarantees JSON. `tool_choice` (`none`, `required`, a named function or
custom tool, `allowed_tools`) and `parallel_tool_calls: false` bind the calls. A turn of several calls
holds strict tools to nothing: OpenAI documents that parallel calls may not match their schemas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..._text import clip
from .._answers import AnswerRule, Choice, Offer, OfferedTool, Output, said
from .._decode import as_list
from .._schema import OPENAI_STRICT

__all__ = [
    "CHAT_ANSWER_FIELDS",
    "CHAT_ANSWER_RULES",
    "RESPONSES_ANSWER_FIELDS",
    "RESPONSES_ANSWER_RULES",
    "chat_offer",
    "responses_offer",
]

_FUNCTIONS = "https://developers.openai.com/api/docs/guides/function-calling"
_STRUCTURED = "https://developers.openai.com/api/docs/guides/structured-outputs"


def _rules(provider: str, api: str, tool_field: str, format_field: str) -> tuple[AnswerRule, ...]:
    return (
        AnswerRule(
            f"{provider}.answer.tool-not-offered",
            provider,
            "tool_offered",
            "A tool call naming a function or custom tool the request's `tools` does not hold (a typo), or any tool "
            "call when the request offers none.",
            f"Function calling: the model calls the functions the request defines in `tools`; strict mode 'will "
            f"ensure function calls reliably adhere to the function schema' ({_FUNCTIONS}). Observed exception: a "
            "model naming the internal `multi_tool_use.parallel` wrapper, a bug a test scripts with `unchecked`",
        ),
        AnswerRule(
            f"{provider}.answer.tool-choice",
            provider,
            "tool_choice",
            "`tool_choice` not honoured: a tool call for `none`, no tool call for `required` or a named tool, "
            "another tool than the named one, a tool outside `allowed_tools`.",
            f"Function calling, tool choice: 'Required: Call one or more functions', 'Forced Function: Call exactly "
            f"one specific function', allowed tools 'Restrict the tool calls the model can make to a subset', "
            f"`none` 'to imitate the behavior of passing no functions' ({_FUNCTIONS}#tool-choice)",
        ),
        AnswerRule(
            f"{provider}.answer.parallel-tool-calls",
            provider,
            "parallel_tool_calls",
            "Several tool calls in one answer while the request sets `parallel_tool_calls: false`.",
            f"Function calling, parallel function calling: 'setting parallel_tool_calls to false, which ensures "
            f"exactly zero or one tool is called' ({_FUNCTIONS}#parallel-function-calling)",
        ),
        AnswerRule(
            f"{provider}.answer.strict-tool-input",
            provider,
            "strict_tool_input",
            f"A call's arguments that break its function's `{tool_field}` when the function is strict (`strict: "
            "true`) and the turn makes that one call; held to the keywords strict mode enforces (types, required "
            "and known properties, enums, `anyOf`, local `$ref`s, numeric ranges, array lengths).",
            f"Function calling, strict mode: 'Setting strict to true will ensure function calls reliably adhere to "
            f"the function schema, instead of being best effort'; Structured Outputs 'is not compatible with parallel "
            f"function calls. When a parallel function call is generated, it may not match supplied schemas' "
            f"({_FUNCTIONS}#strict-mode, {_STRUCTURED}#supported-schemas)",
        ),
        AnswerRule(
            f"{provider}.answer.tool-input",
            provider,
            "tool_input",
            f"A call's arguments that break its function's `{tool_field}`, for a function that is not strict (a real "
            "model may send such arguments).",
            f"The function's own `{tool_field}` (JSON Schema), which the app declared: not a guarantee of the API's",
        ),
        AnswerRule(
            f"{provider}.answer.output-format",
            provider,
            "output",
            f"Text that breaks a strict `{format_field}` JSON schema (`json_schema` with `strict: true`), or that "
            f"is not JSON for `json_object`, in an answer that ends without a tool call or truncation.",
            f"Structured Outputs 'ensures the model will always generate responses that adhere to your supplied "
            f"JSON Schema'; 'JSON mode ensures that model output is valid JSON'; a refusal or a `length` stop may not "
            f"({_STRUCTURED}; {api})",
        ),
    )


CHAT_ANSWER_RULES: Sequence[AnswerRule] = _rules(
    "openai_chat", "Chat Completions `response_format`", "function.parameters", "response_format"
)
"""Chat Completions' answer rules, in the order they are checked."""
RESPONSES_ANSWER_RULES: Sequence[AnswerRule] = _rules(
    "openai_responses", "Responses `text.format`", "parameters", "text.format"
)
"""The Responses API's answer rules, in the order they are checked."""

CHAT_ANSWER_FIELDS = frozenset({"tool_choice", "response_format", "function_call"})
RESPONSES_ANSWER_FIELDS = frozenset({"tool_choice", "text"})

_CLIENT_BUILTINS = {
    "computer": "computer",
    "computer_use_preview": "computer",
    "local_shell": "local_shell",
    "shell": "shell",
    "apply_patch": "apply_patch",
}
"""Built-in tools the app runs, by `type`, with the name a turn's tool call gives them."""


def chat_offer(body: dict[str, Any]) -> Offer:
    """What a Chat Completions request lets the model answer with (its `tools` and the legacy `functions`)."""
    tools: dict[str, OfferedTool] = {}
    for tool in as_list(body.get("tools")):
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type", "function")
        inner = tool.get(kind) if isinstance(kind, str) else None
        if isinstance(inner, dict) and isinstance(inner.get("name"), str):
            _add(tools, inner, "function.parameters", function=kind == "function")
    for function in as_list(body.get("functions")):
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            _add(tools, function, "functions[].parameters", function=True)
    choice = _choice(body.get("tool_choice"), nested=True)
    if choice is None:
        choice = _legacy_choice(body.get("function_call"))
    field = "tools" if "tools" in body or "functions" not in body else "functions"
    return Offer(
        tools,
        tools_field=field,
        choice=choice,
        single_call="`parallel_tool_calls` false" if body.get("parallel_tool_calls") is False else None,
        parallel_strict=False,
        output=_format(body.get("response_format"), "response_format", nested=True),
    )


def responses_offer(body: dict[str, Any], conversation: Iterable[Any]) -> Offer:
    """What a Responses request lets the model answer with.

    Its tools are the body's `tools` and those its input adds (`additional_tools` items, a client tool
    search's `tool_search_output`), namespaces' tools included. A request with a stored `prompt` (which may
    hold tools), or one continuing a response or a conversation with no `tools` of its own, has its tool
    names unchecked; a `configuration_update` item that sets the text format leaves the output unchecked.
    """
    tools: dict[str, OfferedTool] = {}
    _responses_tools(tools, as_list(body.get("tools")))
    updated = False
    for item in conversation:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in ("additional_tools", "tool_search_output"):
            _responses_tools(tools, as_list(item.get("tools")))
        elif kind == "configuration_update" and "text" in item:
            updated = True
    unknown = "prompt" in body or (
        not tools and "tools" not in body and ("previous_response_id" in body or "conversation" in body)
    )
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    return Offer(
        None if unknown else tools,
        choice=_choice(body.get("tool_choice"), nested=False),
        single_call="`parallel_tool_calls` false" if body.get("parallel_tool_calls") is False else None,
        parallel_strict=False,
        output=None if updated else _format(fmt, "text.format", nested=False),
    )


def _add(tools: dict[str, OfferedTool], spec: dict[str, Any], field: str, *, function: bool) -> None:
    schema = spec.get("parameters") if function else None
    strict = function and spec.get("strict") is True
    tools.setdefault(
        spec["name"],
        OfferedTool(
            spec["name"],
            schema if isinstance(schema, dict) else None,
            strict=strict,
            dialect=OPENAI_STRICT,
            field=field,
        ),
    )


def _responses_tools(tools: dict[str, OfferedTool], listed: list[Any]) -> None:
    for tool in listed:
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        if kind == "namespace":
            _responses_tools(tools, as_list(tool.get("tools")))
        if isinstance(tool.get("name"), str):
            _add(tools, tool, "parameters", function=kind == "function")
        builtin = _CLIENT_BUILTINS.get(kind) if isinstance(kind, str) else None
        if builtin is not None:
            tools.setdefault(builtin, OfferedTool(builtin))


def _choice(value: Any, *, nested: bool) -> Choice | None:
    """A `tool_choice` as Chat (`nested`: `{"type": "function", "function": {"name": ...}}`) or Responses writes it."""
    if value == "none":
        return Choice(said("tool_choice", '"none"'), none=True)
    if value == "required":
        return Choice(said("tool_choice", '"required"'), required=True)
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    spec = value.get(kind) if nested and isinstance(kind, str) else value
    if not isinstance(spec, dict):
        return None
    if kind in ("function", "custom") and isinstance(spec.get("name"), str):
        return Choice(said("tool_choice", value), forced=spec["name"])
    if kind == "allowed_tools":
        return _allowed(value, spec.get("mode"), spec.get("tools"), nested=nested)
    return None  # a built-in tool forced (`file_search`, ...): its item is the provider's, not held here


def _legacy_choice(value: Any) -> Choice | None:
    if value == "none":
        return Choice(said("function_call", '"none"'), none=True)
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return Choice(said("function_call", value), forced=value["name"])
    return None


def _allowed(value: dict[str, Any], mode: Any, listed: Any, *, nested: bool) -> Choice | None:
    """`allowed_tools`: the calls limited to the named function and custom tools (any other tool: not limited)."""
    names: set[str] = set()
    for tool in as_list(listed):
        if not isinstance(tool, dict):
            return None
        kind = tool.get("type")
        spec = tool.get(kind) if nested and isinstance(kind, str) else tool
        if kind not in ("function", "custom") or not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            return None  # a built-in tool among them: its calls are the provider's, so the names are not limited
        names.add(spec["name"])
    return Choice(said("tool_choice", value), required=mode == "required", allowed=frozenset(names))


def _format(value: Any, field: str, *, nested: bool) -> Output | None:
    """A strict `json_schema` format (Chat nests it in `json_schema`), or `json_object`; None for any other."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "json_object":
        return Output(f"`{field}` json_object")
    if kind != "json_schema":
        return None
    spec = value.get("json_schema") if nested else value
    if not isinstance(spec, dict) or spec.get("strict") is not True or not isinstance(spec.get("schema"), dict):
        return None
    name = spec.get("name")
    named = f" {clip(name, 40)!r}" if isinstance(name, str) else ""
    return Output(f"`{field}` json_schema{named} (strict)", spec["schema"], OPENAI_STRICT)
