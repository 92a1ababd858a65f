"""The answer rules of Gemini's generateContent: what a request lets the model answer with.

Function declarations are offered in `tools[].functionDeclarations`; `toolConfig.functionCallingConfig`
binds the calls (`ANY`: at least one, `NONE`: none, `allowedFunctionNames`: only those) and, in its
constrained modes (`ANY`, `VALIDATED`), guarantees each call's arguments fit the declaration's schema
(`parameters`, Gemini's OpenAPI `Schema`, or `parametersJsonSchema`). `responseMimeType:
application/json` guarantees JSON, conforming to `responseSchema` or `responseJsonSchema` when given.
Every field is read by either of its JSON names (camelCase or the proto's snake_case), as the API reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._answers import AnswerRule, Choice, Offer, OfferedTool, Output, said
from .._decode import as_list
from .._schema import GEMINI, GEMINI_JSON

__all__ = ["ANSWER_FIELDS", "ANSWER_RULES", "gemini_offer"]

_CALLING = "https://ai.google.dev/gemini-api/docs/function-calling"
_STRUCTURED = "https://ai.google.dev/gemini-api/docs/structured-output"
_REFERENCE = "https://ai.google.dev/api/caching#FunctionCallingConfig"

ANSWER_RULES: Sequence[AnswerRule] = (
    AnswerRule(
        "gemini.answer.tool-not-offered",
        "gemini",
        "tool_offered",
        "A `functionCall` naming a function the request's `functionDeclarations` do not hold (a typo), or any "
        "function call when the request declares none.",
        "FinishReason `UNEXPECTED_TOOL_CALL`: 'The model generated a function call that is semantically invalid. "
        "This can happen, for example, if function calling is not enabled or the generated function is not in "
        "the function declaration' (google-genai `types.FinishReason`; the API answers such a call with that "
        "finish reason, which a turn scripts as `stop_reason`, not with a `functionCall` part)",
    ),
    AnswerRule(
        "gemini.answer.tool-choice",
        "gemini",
        "tool_choice",
        "`functionCallingConfig` not honoured: no function call in mode `ANY`, a call in mode `NONE`, a call of a "
        "function outside `allowedFunctionNames` (modes `ANY` and `VALIDATED`).",
        f"FunctionCallingConfig.Mode: 'ANY: Model is constrained to always predicting function calls only. If "
        f'"allowed_function_names" are set, the predicted function calls will be limited to any one of '
        f"\"allowed_function_names\"'; 'NONE: Model will not predict any function calls'; VALIDATED limits the "
        f"calls the same way ({_REFERENCE}; {_CALLING}#function_calling_modes)",
    ),
    AnswerRule(
        "gemini.answer.strict-tool-input",
        "gemini",
        "strict_tool_input",
        "A call's `args` that break its declaration's `parameters` (or `parametersJsonSchema`) in mode `ANY` or "
        "`VALIDATED`; held to the schema's shape (types, `nullable`, required properties, enums, `anyOf`).",
        f"Function calling modes: `ANY` 'guarantees function schema adherence', `VALIDATED` 'ensures function "
        f"schema adherence' ({_CALLING}#function_calling_modes)",
    ),
    AnswerRule(
        "gemini.answer.tool-input",
        "gemini",
        "tool_input",
        "A call's `args` that break its declaration's schema in mode `AUTO` (a real model may send such arguments).",
        "The declaration's own `parameters` (or `parametersJsonSchema`), which the app declared: not a guarantee "
        "of the API's in mode `AUTO`",
    ),
    AnswerRule(
        "gemini.answer.output-format",
        "gemini",
        "output",
        "Text that is not JSON while `responseMimeType` is `application/json`, or that breaks its "
        "`responseSchema` or `responseJsonSchema`, in an answer that ends `STOP` without a function call.",
        f"Structured output: `responseMimeType: application/json` makes the response JSON, and a `responseSchema` "
        f"or `responseJsonSchema` constrains it to the schema; a `MAX_TOKENS` or `SAFETY` finish may cut it short "
        f"({_STRUCTURED})",
    ),
)
"""Gemini's answer rules, in the order they are checked."""

ANSWER_FIELDS = frozenset({"toolConfig", "tool_config", "generationConfig", "generation_config"})
"""The fields that bind an answer without a function call."""

_OPEN_TOOLS = ("computerUse", "computer_use")
"""Tools whose functions the request does not declare (computer use's predefined actions)."""


def _field(message: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = message.get(camel)
    return message.get(snake) if value is None else value


def gemini_offer(body: dict[str, Any]) -> Offer:
    """What a generateContent request lets the model answer with.

    A request that reads a cached content (`cachedContent`, which may hold tools), or enables computer use
    (whose actions no declaration names), has its function names unchecked.
    """
    config = _field(body, "toolConfig", "tool_config")
    calling = _field(config, "functionCallingConfig", "function_calling_config") if isinstance(config, dict) else None
    calling = calling if isinstance(calling, dict) else {}
    mode = calling.get("mode") if calling else None
    mode = mode.upper() if isinstance(mode, str) else "AUTO"
    constrained = mode in ("ANY", "VALIDATED")
    listed = body.get("tools")
    tools_list = [listed] if isinstance(listed, dict) else as_list(listed)  # protobuf JSON takes a lone object
    tools: dict[str, OfferedTool] = {}
    unknown = False
    for tool in tools_list:
        if not isinstance(tool, dict):
            continue
        if any(key in tool for key in _OPEN_TOOLS):
            unknown = True
            break
        for declaration in as_list(_field(tool, "functionDeclarations", "function_declarations")):
            if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
                continue
            json_schema = _field(declaration, "parametersJsonSchema", "parameters_json_schema")
            schema: Any = json_schema if isinstance(json_schema, dict) else declaration.get("parameters")
            dialect, where = (GEMINI_JSON, "parametersJsonSchema") if json_schema is schema else (GEMINI, "parameters")
            tools.setdefault(
                declaration["name"],
                OfferedTool(
                    declaration["name"],
                    schema if isinstance(schema, dict) else None,
                    strict=constrained,
                    dialect=dialect,
                    field=where,
                ),
            )
    if _field(body, "cachedContent", "cached_content") is not None:
        unknown = True
    return Offer(
        None if unknown else tools,
        tools_field="functionDeclarations",
        choice=_choice(mode, calling) if calling else None,  # no config: mode `AUTO`, every function allowed
        output=_output(_field(body, "generationConfig", "generation_config")),
    )


def _choice(mode: str, calling: dict[str, Any]) -> Choice | None:
    names = _field(calling, "allowedFunctionNames", "allowed_function_names")
    allowed = (
        frozenset(name for name in names if isinstance(name, str))
        if isinstance(names, list) and names and mode in ("ANY", "VALIDATED")
        else None
    )
    if mode == "ANY":
        return Choice(said(_CHOICE_FIELD, calling), required=True, allowed=allowed)
    if mode == "NONE":
        return Choice(said(_CHOICE_FIELD, calling), none=True)
    if allowed is not None:
        return Choice(said(_CHOICE_FIELD, calling), allowed=allowed)
    return None  # mode `AUTO`, the default: nothing to say (`said` encodes the config: only for a choice)


_CHOICE_FIELD = "toolConfig.functionCallingConfig"


def _output(config: Any) -> Output | None:
    if not isinstance(config, dict):
        return None
    mime = _field(config, "responseMimeType", "response_mime_type")
    if not isinstance(mime, str) or mime.lower() != "application/json":
        return None
    json_schema = _field(config, "responseJsonSchema", "response_json_schema")
    if isinstance(json_schema, dict):
        return Output("`generationConfig.responseJsonSchema` (application/json)", json_schema, GEMINI_JSON)
    schema = _field(config, "responseSchema", "response_schema")
    if isinstance(schema, dict):
        return Output("`generationConfig.responseSchema` (application/json)", schema, GEMINI)
    return Output("`generationConfig.responseMimeType` application/json")
