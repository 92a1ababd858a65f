"""Strict-request rules of the Gemini API (`…:generateContent`, `…:streamGenerateContent`).

The API reads protobuf JSON, so every field may be spelled in snake_case or camelCase
(`function_call` / `functionCall`); both are read here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._rules import Rule, Violation, first_violation

__all__ = ["RULES", "check_gemini"]

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
    "The conversation starts with a function call turn.",
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

RULES: tuple[Rule, ...] = (
    CONTENTS_MISSING,
    INVALID_ROLE,
    FUNCTION_CALL_FIRST,
    FUNCTION_RESPONSE_POSITION,
    FUNCTION_RESPONSE_COUNT,
    DUPLICATE_FUNCTION_DECLARATION,
)

_ROLES = ("user", "model", "function")


def field(obj: dict[str, Any], snake: str) -> Any:
    """A field by its snake_case name or its camelCase spelling (protobuf JSON accepts both)."""
    if snake in obj:
        return obj[snake]
    head, *rest = snake.split("_")
    return obj.get(head + "".join(word.capitalize() for word in rest))


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
    checks: list[tuple[Rule, Callable[[], Violation | None]]] = [
        (CONTENTS_MISSING, lambda: _contents_missing(body)),
        (INVALID_ROLE, lambda: _invalid_role(body)),
        (FUNCTION_CALL_FIRST, lambda: _function_call_first(body)),
        (FUNCTION_RESPONSE_POSITION, lambda: _function_response_position(body)),
        (FUNCTION_RESPONSE_COUNT, lambda: _function_response_count(body)),
        (DUPLICATE_FUNCTION_DECLARATION, lambda: _duplicate_declarations(body)),
    ]
    return first_violation(checks, skip)


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


def _function_call_first(body: dict[str, Any]) -> Violation | None:
    contents = _contents(body)
    if contents and _count(contents[0], "function_call"):
        return Violation(
            FUNCTION_CALL_FIRST,
            "Please ensure that function call turn comes immediately after a user turn or after a function response "
            "turn.",
            "contents[0]",
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
