"""Strict requests: refuse what the real provider API would refuse.

Pure functions over a parsed request body; nothing here touches the transport. Each check returns
the `Violation` of the first rule the body breaks, or None. A violation carries its `Rule` (a stable
id, the provider, the HTTP status, the documented source) and a message that starts with the real
API's own wording where it is known; the caller adds the rule id and the docs link, and wraps it
in the provider's error envelope.

```python
from wirescript.strict import check_request

violation = check_request("anthropic", {"model": "m", "max_tokens": 8, "messages": []})
assert violation is not None and violation.rule.id == "anthropic.messages-empty"
```

The rules and their sources are listed in `docs/strict-requests.md`. No false positives is the
contract: a rule exists only where the provider documents the refusal or its error has been
observed, and every check reads only what it must, letting anything else through.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from typing import Any

from ._text import did_you_mean
from .errors import ScriptError
from .wires._rules import Rule, Violation, is_int, is_number, json_type
from .wires.anthropic import rules as _strict_anthropic
from .wires.anthropic.rules import check_anthropic
from .wires.bedrock import rules as _strict_bedrock
from .wires.bedrock.rules import check_converse
from .wires.gemini import rules as _strict_gemini
from .wires.gemini.rules import check_gemini
from .wires.openai import rules as _strict_openai
from .wires.openai.rules import check_openai_chat, check_openai_responses, previous_response_not_found

__all__ = [
    "DOCS_PAGE",
    "RULES",
    "WIRES",
    "Rule",
    "Violation",
    "check_anthropic",
    "check_gemini",
    "check_openai_chat",
    "check_openai_responses",
    "check_request",
    "check_wire_mismatch",
    "explain",
    "previous_response_not_found",
    "skip_ids",
]

DOCS_PAGE = "docs/strict-requests.md"
"""The page listing every rule, its source and how to turn it off: what a refusal's message points to."""

WIRES = ("anthropic", "openai_chat", "openai_responses", "gemini")
"""The wire names the checks know (the `name` of each wire in `wirescript.wires`)."""

_LABELS = {
    "anthropic": "Anthropic Messages (POST /v1/messages)",
    "openai_chat": "OpenAI Chat Completions (POST /chat/completions)",
    "openai_responses": "OpenAI Responses (POST /responses)",
    "gemini": "Gemini generateContent",
}

BODY_FOR_ANOTHER_WIRE = Rule(
    "any.body-for-another-wire",
    "any",
    "The body carries a top-level field of another provider's API (Gemini `contents` on `/v1/messages`, ...).",
    "Each API refuses top-level fields it does not define. Observed: Anthropic 'response_format: Extra inputs are "
    "not permitted' (github.com/amrit110/oli/issues/7); OpenAI Chat 'Unrecognized request argument supplied: "
    "<field>' (github.com/nashsu/llm_wiki/issues/336, github.com/coroot/coroot/issues/698); OpenAI Responses "
    "\"Unknown parameter: '<field>'.\" (github.com/fhswf/openai-ui/issues/127); Gemini 'Invalid JSON payload "
    'received. Unknown name "<field>": Cannot find field.\' (github.com/fishjar/kiss-translator/issues/256)',
)
FIELD_TYPE = Rule(
    "any.field-type",
    "any",
    'A well-known field of the wrong JSON type (`"stream": "yes"`, `"max_tokens": "10"`, `"messages": "hi"`).',
    "Observed: Anthropic 'max_tokens: Input should be a valid integer' "
    "(github.com/strands-agents/harness-sdk/pull/588); "
    "OpenAI \"Invalid type for 'max_tokens': expected an integer, but got a string instead.\" "
    "(github.com/diffbot/code-gpt-docs/issues/273); Gemini \"Invalid value at '<field>' (<type>), <value>\"; the "
    "types are those of each SDK's request TypedDicts.",
)

_ANY_RULES = (BODY_FOR_ANOTHER_WIRE, FIELD_TYPE)

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        *_ANY_RULES,
        *_strict_anthropic.RULES,
        *_strict_openai.CHAT_RULES,
        *_strict_openai.RESPONSES_RULES,
        *_strict_gemini.RULES,
        *_strict_bedrock.RULES,
    )
}
"""Every rule, by id."""

# Top-level fields that only another wire defines: (field, the wire it belongs to).
_FOREIGN: dict[str, tuple[tuple[str, str], ...]] = {
    "anthropic": (
        ("contents", "gemini"),
        ("generationConfig", "gemini"),
        ("generation_config", "gemini"),
        ("systemInstruction", "gemini"),
        ("system_instruction", "gemini"),
        ("input", "openai_responses"),
        ("instructions", "openai_responses"),
        ("previous_response_id", "openai_responses"),
        ("max_output_tokens", "openai_responses"),
        ("max_completion_tokens", "openai_chat"),
        ("response_format", "openai_chat"),
    ),
    "openai_chat": (
        ("contents", "gemini"),
        ("generationConfig", "gemini"),
        ("generation_config", "gemini"),
        ("systemInstruction", "gemini"),
        ("system_instruction", "gemini"),
        ("input", "openai_responses"),
        ("instructions", "openai_responses"),
        ("previous_response_id", "openai_responses"),
        ("max_output_tokens", "openai_responses"),
        ("system", "anthropic"),
    ),
    "openai_responses": (
        ("contents", "gemini"),
        ("generationConfig", "gemini"),
        ("generation_config", "gemini"),
        ("systemInstruction", "gemini"),
        ("system_instruction", "gemini"),
        ("messages", ""),  # Chat or Anthropic: decided from the rest of the body
        ("system", "anthropic"),
        ("max_completion_tokens", "openai_chat"),
    ),
    "gemini": (
        ("messages", ""),
        ("input", "openai_responses"),
        ("instructions", "openai_responses"),
        ("max_tokens", "anthropic"),
        ("max_completion_tokens", "openai_chat"),
        ("max_output_tokens", "openai_responses"),
    ),
}

# Well-known fields and the JSON types each wire takes for them (null is always let through).
_INT, _NUM, _BOOL, _STR, _LIST, _OBJ = "integer", "number", "boolean", "string", "array", "object"
_TYPES: dict[str, dict[str, tuple[str, ...]]] = {
    "anthropic": {
        "model": (_STR,),
        "max_tokens": (_INT,),
        "messages": (_LIST,),
        "stream": (_BOOL,),
        "system": (_STR, _LIST),
        "tools": (_LIST,),
        "temperature": (_NUM,),
    },
    "openai_chat": {
        "model": (_STR,),
        "messages": (_LIST,),
        "stream": (_BOOL,),
        "max_tokens": (_INT,),
        "max_completion_tokens": (_INT,),
        "n": (_INT,),
        "temperature": (_NUM,),
        "tools": (_LIST,),
    },
    "openai_responses": {
        "model": (_STR,),
        "input": (_STR, _LIST),
        "stream": (_BOOL,),
        "max_output_tokens": (_INT,),
        "temperature": (_NUM,),
        "tools": (_LIST,),
        "previous_response_id": (_STR,),
    },
    "gemini": {
        # protobuf JSON takes a lone object for a repeated field
        "contents": (_LIST, _OBJ),
        "tools": (_LIST, _OBJ),
    },
}

_FOREIGN_KEYS: dict[str, frozenset[str]] = {
    wire: frozenset(key for key, _ in pairs) for wire, pairs in _FOREIGN.items()
}

_GEMINI_TYPES = {
    "contents": "type.googleapis.com/google.ai.generativelanguage.v1beta.Content",
    "tools": "type.googleapis.com/google.ai.generativelanguage.v1beta.Tool",
}


_IS: dict[str, Callable[[Any], bool]] = {
    _INT: is_int,
    _NUM: is_number,
    _BOOL: lambda v: isinstance(v, bool),
    _STR: lambda v: isinstance(v, str),
    _LIST: lambda v: isinstance(v, list),
    _OBJ: lambda v: isinstance(v, dict),
}


_EXACT: dict[str, tuple[type, ...]] = {
    _INT: (int,),
    _NUM: (int, float),
    _BOOL: (bool,),
    _STR: (str,),
    _LIST: (list,),
    _OBJ: (dict,),
}
"""The Python types a parsed JSON value of each kind has (a bool is not an int here: `type` is exact)."""

_PLAIN_TYPES: dict[str, dict[str, frozenset[type]]] = {
    wire: {key: frozenset(t for kind in kinds for t in _EXACT[kind]) for key, kinds in fields.items()}
    for wire, fields in _TYPES.items()
}
"""Per wire and field: the exact types of a value that surely has the field's kind, tested in one lookup."""


def _has_type(value: Any, kinds: tuple[str, ...]) -> bool:
    for kind in kinds:  # noqa: SIM110 - a loop, not any(): no generator per field per request
        if _IS[kind](value):
            return True
    return False


def _guess_messages_wire(body: dict[str, Any]) -> str:
    """Whether a `messages` body looks like Anthropic Messages or Chat Completions ("" when it cannot tell)."""
    anthropic = any(key in body for key in ("system", "thinking", "stop_sequences", "anthropic_version"))
    chat = any(key in body for key in ("max_completion_tokens", "response_format", "n", "stream_options"))
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        if message.get("role") in ("system", "developer", "tool") or "tool_calls" in message:
            chat = True
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result", "thinking"):
                anthropic = True
    if anthropic != chat:
        return "anthropic" if anthropic else "openai_chat"
    return ""


def _unknown_field_message(wire: str, key: str) -> str:
    if wire == "anthropic":
        return f"{key}: Extra inputs are not permitted"
    if wire == "openai_chat":
        return f"Unrecognized request argument supplied: {key}"
    if wire == "openai_responses":
        return f"Unknown parameter: '{key}'."
    return f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _type_message(wire: str, key: str, value: Any, kinds: tuple[str, ...]) -> str:
    got = json_type(value)
    if wire == "anthropic":
        pydantic = {_LIST: "list", _OBJ: "dictionary"}
        return f"{key}: Input should be a valid {pydantic.get(kinds[0], kinds[0])}"
    if wire in ("openai_chat", "openai_responses"):
        expected = " or ".join(_article(kind) for kind in kinds)
        shown = "decimal" if got == "number" else got
        return f"Invalid type for '{key}': expected {expected}, but got {_article(shown)} instead."
    return f"Invalid value at '{key}' ({_GEMINI_TYPES.get(key, kinds[0])}), {json.dumps(value)}"


def check_wire_mismatch(wire: str, body: dict[str, Any], *, skip: frozenset[str] = frozenset()) -> Violation | None:
    """The `any.*` rules: a body meant for another wire, or a well-known field of the wrong JSON type.

    Args:
        wire: The wire the request arrived on: one of `WIRES`.
        body: The parsed JSON body.
        skip: Rule ids not to check.

    Returns:
        The violation, naming the field and (where it can tell) the wire the body looks meant for;
        None when the body fits the wire, or the wire is not one of `WIRES`.

    """
    if wire not in WIRES:
        return None
    if BODY_FOR_ANOTHER_WIRE.id not in skip and (violation := _foreign_field(wire, body)) is not None:
        return violation
    return _field_type(wire, body) if FIELD_TYPE.id not in skip else None


def _foreign_field(wire: str, body: dict[str, Any]) -> Violation | None:
    if body.keys().isdisjoint(_FOREIGN_KEYS[wire]):  # the usual case, decided in one set operation
        return None
    for key, owner in _FOREIGN[wire]:
        if key not in body:
            continue
        meant = owner or _guess_messages_wire(body)
        looks = f"the body looks meant for {_LABELS[meant]}" if meant else "the body looks meant for another API"
        message = f"{_unknown_field_message(wire, key)} ({looks}, not {_LABELS[wire]})"
        return Violation(BODY_FOR_ANOTHER_WIRE, message, key)
    return None


def _field_type(wire: str, body: dict[str, Any]) -> Violation | None:
    types, plain = _TYPES[wire], _PLAIN_TYPES[wire]
    for key, value in body.items():  # the fields sent, usually a few; the table's order decides only when one is wrong
        exact = plain.get(key)
        if exact is None or value is None or type(value) in exact:
            continue
        if not _has_type(value, types[key]):
            break
    else:
        return None
    for key, kinds in types.items():
        value = body.get(key)
        if value is not None and not _has_type(value, kinds):
            return Violation(FIELD_TYPE, _type_message(wire, key, value, kinds), key)
    return None


def check_request(
    wire: str,
    body: dict[str, Any],
    *,
    history: list[Any] | None = None,
    previous_items: list[Any] | None = None,
    served_without_thinking: Collection[str] = frozenset(),
    skip: frozenset[str] = frozenset(),
) -> Violation | None:
    """Every rule for one request: the `any.*` rules first, then the wire's own.

    Args:
        wire: The wire the request arrived on: one of `WIRES`.
        body: The parsed JSON body.
        history: Anthropic only: a continued thread's earlier messages (see `check_anthropic`).
        previous_items: Responses only: the previous response's stored items (see `check_openai_responses`).
        served_without_thinking: Anthropic only: the `tool_use` ids the server sent in turns without
            thinking (see `check_anthropic`).
        skip: Rule ids not to check.

    Returns:
        The first violation, or None.

    """
    violation = check_wire_mismatch(wire, body, skip=skip)
    if violation is not None:
        return violation
    if wire == "anthropic":
        return check_anthropic(body, history=history, served_without_thinking=served_without_thinking, skip=skip)
    if wire == "openai_chat":
        return check_openai_chat(body, skip=skip)
    if wire == "openai_responses":
        return check_openai_responses(body, previous_items=previous_items, skip=skip)
    if wire == "gemini":
        return check_gemini(body, skip=skip)
    if wire == "bedrock":  # Converse (the Bedrock wire checks no InvokeModel body: it is the model's own)
        return check_converse(body, skip=skip)
    return None


def explain(violation: Violation) -> str:
    """The error message a refused request gets: the real API's wording, then the rule id and how to skip it.

    ```python
    from wirescript.strict import check_request, explain

    violation = check_request("openai_chat", {"model": "gpt-test", "messages": []})
    assert violation is not None
    assert explain(violation) == (
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array "
        'instead. (wirescript strict rule openai_chat.messages-empty; turn it off with '
        'strict_skip=["openai_chat.messages-empty"]: docs/strict-requests.md)'
    )
    ```
    """
    rule = violation.rule.id
    return f'{violation.message} (wirescript strict rule {rule}; turn it off with strict_skip=["{rule}"]: {DOCS_PAGE})'


def skip_ids(value: object, name: str = "strict_skip") -> frozenset[str]:
    """Validate a list of rule ids to skip (`strict_skip`), at construction.

    Args:
        value: The ids: a list, tuple or set of strings, each a key of `RULES`.
        name: The option's name, for the message.

    Returns:
        The ids.

    Raises:
        ScriptError: `value` is a lone string or not a collection of strings, or names an unknown
            rule; the message names the closest rule id.

    """
    if isinstance(value, str) or not isinstance(value, Iterable) or isinstance(value, dict):
        hint = f"; write {name}=[{value!r}]" if isinstance(value, str) else ""
        raise ScriptError(f"{name}: expected a list of strict rule ids, got {type(value).__name__} {value!r}{hint}")
    ids = list(value)
    for item in ids:
        if not isinstance(item, str):
            raise ScriptError(f"{name}: expected strict rule ids (strings), got {type(item).__name__} {item!r}")
        if item not in RULES:
            raise ScriptError(
                f"{name}: unknown strict rule {item!r}{did_you_mean(item, RULES)} (every rule id is listed in "
                f"{DOCS_PAGE}; wirescript.strict.RULES holds them)"
            )
    return frozenset(ids)
