"""Strict-request rules of the Gemini API (`…:generateContent`, `…:streamGenerateContent`).

The API reads protobuf JSON, so every field may be spelled in snake_case or camelCase
(`function_call` / `functionCall`); both are read here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .._rules import Rule, Violation, is_number

__all__ = ["RULES", "check_gemini", "gemini_rules_violation", "plainly_valid_gemini"]

CONTENTS_MISSING = Rule(
    "gemini.contents-missing",
    "gemini",
    "`contents` is missing or empty.",
    "Observed: '* GenerateContentRequest.contents: contents is not specified' (INVALID_ARGUMENT); "
    "API reference: `contents` is required, https://ai.google.dev/api/generate-content",
)
INVALID_ROLE = Rule(
    "gemini.invalid-role",
    "gemini",
    "A content role other than `user` or `model` (`function`, the legacy role of function responses, is let through).",
    "Observed: 'Please use a valid role: user, model.' (INVALID_ARGUMENT; "
    "github.com/router-for-me/CLIProxyAPI/issues/17, "
    "github.com/the-open-agent/openagent/issues/1666); API reference, Content.role: \"Must be either 'user' or "
    "'model'.\" https://ai.google.dev/api/caching#Content",
)
FUNCTION_CALL_FIRST = Rule(
    "gemini.function-call-first",
    "gemini",
    "A function call turn with no user turn before it (the conversation starts with the model's turn).",
    "Observed: 'Please ensure that function call turn comes immediately after a user turn or after a function "
    "response turn.' 'when the sent conversation history starts with a function call' "
    "(github.com/google-gemini/gemini-cli/issues/11814, filed by a maintainer)",
)
FUNCTION_RESPONSE_POSITION = Rule(
    "gemini.function-response-position",
    "gemini",
    "A function response turn that does not come right after a function call turn.",
    "Observed: 'Please ensure that function response turn comes immediately after a function call turn.' "
    "(github.com/GoogleCloudPlatform/generative-ai/pull/368, github.com/langchain-ai/langchain/issues/27799)",
)
FUNCTION_RESPONSE_COUNT = Rule(
    "gemini.function-response-count",
    "gemini",
    "A function response turn with a different number of function responses than the call turn has calls.",
    "Observed: 'Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn.' (github.com/google-gemini/gemini-cli/issues/4217, #17208)",
)
DUPLICATE_FUNCTION_DECLARATION = Rule(
    "gemini.duplicate-function-declaration",
    "gemini",
    "Two function declarations with the same name.",
    "Observed: 'Duplicate function declaration found: get_current_weather' (INVALID_ARGUMENT; "
    "github.com/smarter-sh/smarter/issues/537)",
)

EMPTY_PARTS = Rule(
    "gemini.empty-parts",
    "gemini",
    "A content with no `parts` (missing or `[]`).",
    "Observed: '* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.' (INVALID_ARGUMENT; "
    "github.com/vercel/ai/issues/3775, github.com/egoist/chatwise-releases/issues/250)",
)
FUNCTION_NAME_PATTERN = Rule(
    "gemini.function-name-pattern",
    "gemini",
    "A function declaration name with a character other than letters, digits, `_`, `.`, `:` and `-` (a space).",
    "Observed: '* GenerateContentRequest.tools[0].function_declarations[18].name: Invalid function name. Must start "
    "with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or "
    "dashes (-), with a maximum length of 64.' (github.com/google-gemini/gemini-cli/issues/9535). Only the characters "
    "every published variant refuses are checked; the length (64 or 128) and the first character vary by model.",
)
TEMPERATURE_RANGE = Rule(
    "gemini.temperature-range",
    "gemini",
    "`generationConfig.temperature` outside [0, 2].",
    "Observed: 3.0 and -1.0 refused with 'supported range is from 0 (inclusive) to 2.0001 (exclusive)' (a recorded "
    "probe of the live API); API reference, GenerationConfig.temperature: 'Values can range from [0.0, 2.0].' "
    "https://ai.google.dev/api/generate-content#generationconfig",
)
RESPONSE_MIME_TYPE = Rule(
    "gemini.response-mime-type",
    "gemini",
    "A `responseMimeType` other than `text/plain`, `application/json`, `application/xml`, `application/yaml` or "
    "`text/x.enum`.",
    "Observed: 'GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are text/plain, "
    "application/json, application/xml, application/yaml and text/x.enum' (400); API reference, "
    "GenerationConfig.responseMimeType, https://ai.google.dev/api/generate-content#generationconfig",
)

RULES: tuple[Rule, ...] = (
    CONTENTS_MISSING,
    INVALID_ROLE,
    EMPTY_PARTS,
    FUNCTION_CALL_FIRST,
    FUNCTION_RESPONSE_COUNT,
    FUNCTION_RESPONSE_POSITION,
    DUPLICATE_FUNCTION_DECLARATION,
    FUNCTION_NAME_PATTERN,
    TEMPERATURE_RANGE,
    RESPONSE_MIME_TYPE,
)
"""Every Gemini rule, in the order they are checked (the function-response count before its position, as the API
reports them)."""

_ROLES = ("user", "model", "function")
_FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_.:\-]*")
_MIME_TYPES = ("text/plain", "application/json", "application/xml", "application/yaml", "text/x.enum")
_PLAIN_ROLES = ("user", "model")
_FUNCTION_PARTS = frozenset({"functionCall", "function_call", "functionResponse", "function_response"})


def field(obj: dict[str, Any], snake: str) -> Any:
    """A field by its snake_case name or its camelCase spelling (protobuf JSON accepts both)."""
    if snake in obj:
        return obj[snake]
    camel = _CAMEL.get(snake)
    if camel is None:
        head, *rest = snake.split("_")
        camel = _CAMEL[snake] = head + "".join(word.capitalize() for word in rest)
    return obj.get(camel)


_CAMEL: dict[str, str] = {}
"""The camelCase spelling of each snake_case field name asked for (a handful, worked out once each)."""


def _as_list(value: Any) -> list[Any]:
    """A repeated field: a list, or a single value (protobuf JSON takes a lone object for a repeated field)."""
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _contents(body: dict[str, Any]) -> list[Any]:
    return _as_list(field(body, "contents"))


def _count(content: Any, part_field: str) -> int:
    if not isinstance(content, dict):
        return 0
    return sum(1 for p in _as_list(field(content, "parts")) if isinstance(p, dict) and field(p, part_field) is not None)


def check_gemini(body: dict[str, Any], *, skip: frozenset[str] = frozenset()) -> Violation | None:
    """The first Gemini rule the request breaks, or None.

    Args:
        body: The parsed JSON body of a `generateContent` / `streamGenerateContent` request.
        skip: Rule ids not to check.

    Returns:
        The violation of the first broken rule, in the order of `RULES`; None when the request passes.

    """
    if plainly_valid_gemini(body):  # what nearly every request sends: no rule can refuse it
        return None
    return gemini_rules_violation(body, skip=skip)


def plainly_valid_gemini(body: dict[str, Any]) -> bool:
    """Whether no Gemini rule can refuse `body`, decided in one pass without running each.

    True only for the shape most requests have: a non-empty list of `contents`, each a dict with the
    role `user` or `model` and a non-empty list of parts, each a dict with neither a function call
    nor a function response (in either spelling); no `tools`, or a list of dicts whose function
    declarations (in either spelling, as the rules read them), if any, are a list of dicts each
    with a string `name` of the allowed characters, no two alike; a `generationConfig` (in either
    spelling), if any, a dict whose `temperature`, if any, is a number in [0, 2] and whose
    `responseMimeType`, if any, is one the API takes. Then no role is foreign, no parts are empty,
    no function call or response is out of place, no declaration clashes or is misnamed.
    Anything else, and so every request a rule refuses, is left to the rules.
    `tests/test_gemini_strict_fast.py` checks that this says True only of bodies every rule passes.
    """
    contents = body.get("contents")
    if type(contents) is not list or not contents:
        return False
    tools = body.get("tools")
    if tools and not _plainly_declared(tools):
        return False
    for content in contents:
        if type(content) is not dict or content.get("role") not in _PLAIN_ROLES:
            return False
        parts = content.get("parts")
        if type(parts) is not list or not parts:
            return False
        for part in parts:
            if type(part) is not dict or not part.keys().isdisjoint(_FUNCTION_PARTS):
                return False
    # `field(body, "generation_config")` and `field(config, "response_mime_type")`, spelled out
    config = body["generation_config"] if "generation_config" in body else body.get("generationConfig")
    if config is None:
        return True
    if type(config) is not dict:
        return False
    temperature = config.get("temperature")
    if temperature is not None and not (type(temperature) in (int, float) and 0 <= temperature < 2.0001):
        return False
    mime = config["response_mime_type"] if "response_mime_type" in config else config.get("responseMimeType")
    return mime is None or mime in _MIME_TYPES


def _plainly_declared(tools: Any) -> bool:
    """Whether `tools` is a list of dicts whose declarations no rule can refuse: well named, each name once."""
    if type(tools) is not list:
        return False
    names: set[str] = set()
    for tool in tools:
        if type(tool) is not dict:
            return False
        declarations = (
            tool["function_declarations"] if "function_declarations" in tool else tool.get("functionDeclarations")
        )  # `field(tool, "function_declarations")`, spelled out
        if declarations is None:
            continue
        if type(declarations) is not list:
            return False
        for declaration in declarations:
            name = declaration.get("name") if type(declaration) is dict else None
            if type(name) is not str or name in names:
                return False
            if name not in _NAMED and not _named(name):
                return False
            names.add(name)
    return True


def _named(name: str) -> bool:
    """Whether a function name has only the characters the API allows (`FUNCTION_NAME_PATTERN`), kept if so."""
    if _FUNCTION_NAME.fullmatch(name) is None:
        return False
    if len(_NAMED) < 4096 and len(name) <= 256:  # an app declares the same few functions with every request
        _NAMED.add(name)
    return True


_NAMED: set[str] = set()
"""The function names seen that have only allowed characters: a property of the name alone, so never stale."""


def gemini_rules_violation(body: dict[str, Any], *, skip: frozenset[str] = frozenset()) -> Violation | None:
    """The first Gemini rule the request breaks, each rule run in turn (`check_gemini` without its shortcut)."""
    for rule, check in _CHECKS:  # a table built once, not closures per request
        if rule.id in skip:
            continue
        violation = check(body)
        if violation is not None:
            return violation
    return None


def _contents_missing(body: dict[str, Any]) -> Violation | None:
    if not _contents(body):
        return Violation(CONTENTS_MISSING, "* GenerateContentRequest.contents: contents is not specified", "contents")
    return None


def _invalid_role(body: dict[str, Any]) -> Violation | None:
    for i, content in enumerate(_contents(body)):
        role = content.get("role") if isinstance(content, dict) else None
        if isinstance(role, str) and role and role not in _ROLES:
            return Violation(INVALID_ROLE, "Please use a valid role: user, model.", f"contents[{i}].role")
    return None


def _empty_parts(body: dict[str, Any]) -> Violation | None:
    for i, content in enumerate(_contents(body)):
        if isinstance(content, dict) and not _as_list(field(content, "parts")):
            where = f"contents[{i}].parts"
            return Violation(EMPTY_PARTS, f"* GenerateContentRequest.{where}: contents.parts must not be empty.", where)
    return None


def _function_call_first(body: dict[str, Any]) -> Violation | None:
    """A function call turn must follow a user turn or a function response turn: refused when none precedes it.

    Consecutive model contents are one turn (google-genai's streamed automatic function calling sends
    the text and the call of one answer as separate model contents), so a call after model text is
    refused only when no user content comes before them: the conversation starts with the model's turn.
    """
    for i, content in enumerate(_contents(body)):
        if isinstance(content, dict) and content.get("role") != "model":
            return None  # a user (or function) content precedes every later call turn
        if _count(content, "function_call"):
            return Violation(
                FUNCTION_CALL_FIRST,
                "Please ensure that function call turn comes immediately after a user turn or after a function "
                "response turn.",
                f"contents[{i}]",
            )
    return None


def _function_response_position(body: dict[str, Any]) -> Violation | None:
    contents = _contents(body)
    for i, content in enumerate(contents):
        if _count(content, "function_response") and (i == 0 or not _count(contents[i - 1], "function_call")):
            return Violation(
                FUNCTION_RESPONSE_POSITION,
                "Please ensure that function response turn comes immediately after a function call turn.",
                f"contents[{i}]",
            )
    return None


def _function_response_count(body: dict[str, Any]) -> Violation | None:
    contents = _contents(body)
    for i, content in enumerate(contents):
        responses = _count(content, "function_response")
        if responses and i > 0 and responses != _count(contents[i - 1], "function_call"):
            return Violation(
                FUNCTION_RESPONSE_COUNT,
                "Please ensure that the number of function response parts is equal to the number of function call "
                "parts of the function call turn.",
                f"contents[{i}]",
            )
    return None


def _duplicate_declarations(body: dict[str, Any]) -> Violation | None:
    seen: set[str] = set()
    for i, tool in enumerate(_as_list(field(body, "tools"))):
        if not isinstance(tool, dict):
            continue
        for k, declaration in enumerate(_as_list(field(tool, "function_declarations"))):
            name = declaration.get("name") if isinstance(declaration, dict) else None
            if not isinstance(name, str):
                continue
            if name in seen:
                message = f"Duplicate function declaration found: {name}"
                return Violation(DUPLICATE_FUNCTION_DECLARATION, message, f"tools[{i}].function_declarations[{k}].name")
            seen.add(name)
    return None


def _function_names(body: dict[str, Any]) -> Violation | None:
    for i, tool in enumerate(_as_list(field(body, "tools"))):
        if not isinstance(tool, dict):
            continue
        for k, declaration in enumerate(_as_list(field(tool, "function_declarations"))):
            name = declaration.get("name") if isinstance(declaration, dict) else None
            if isinstance(name, str) and not _FUNCTION_NAME.fullmatch(name):
                where = f"tools[{i}].function_declarations[{k}].name"
                return Violation(
                    FUNCTION_NAME_PATTERN,
                    f"* GenerateContentRequest.{where}: Invalid function name. Must start with a letter or an "
                    "underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes "
                    "(-), with a maximum length of 64.",
                    where,
                )
    return None


def _config(body: dict[str, Any]) -> dict[str, Any]:
    config = field(body, "generation_config")
    return config if isinstance(config, dict) else {}


def _temperature(body: dict[str, Any]) -> Violation | None:
    value = _config(body).get("temperature")
    if is_number(value) and not 0 <= value < 2.0001:
        return Violation(
            TEMPERATURE_RANGE,
            f"Unable to submit request because it has a temperature value of {value} but the supported range is from "
            "0 (inclusive) to 2.0001 (exclusive). Update the value and try again.",
            "generation_config.temperature",
        )
    return None


def _response_mime_type(body: dict[str, Any]) -> Violation | None:
    value = field(_config(body), "response_mime_type")
    if isinstance(value, str) and value not in _MIME_TYPES:
        return Violation(
            RESPONSE_MIME_TYPE,
            "* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are text/plain, "
            "application/json, application/xml, application/yaml and text/x.enum",
            "generation_config.response_mime_type",
        )
    return None


_CHECKS: tuple[tuple[Rule, Callable[[dict[str, Any]], Violation | None]], ...] = (
    (CONTENTS_MISSING, _contents_missing),
    (INVALID_ROLE, _invalid_role),
    (EMPTY_PARTS, _empty_parts),
    (FUNCTION_CALL_FIRST, _function_call_first),
    (FUNCTION_RESPONSE_COUNT, _function_response_count),
    (FUNCTION_RESPONSE_POSITION, _function_response_position),
    (DUPLICATE_FUNCTION_DECLARATION, _duplicate_declarations),
    (FUNCTION_NAME_PATTERN, _function_names),
    (TEMPERATURE_RANGE, _temperature),
    (RESPONSE_MIME_TYPE, _response_mime_type),
)
"""Every Gemini check, in the order of `RULES`."""
