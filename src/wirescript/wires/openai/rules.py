"""Strict-request rules of the OpenAI Chat Completions and Responses APIs."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .._rules import Rule, Violation, dicts, first_violation, is_int, is_number

__all__ = [
    "CHAT_RULES",
    "PREVIOUS_RESPONSE_NOT_FOUND",
    "RESPONSES_RULES",
    "check_openai_chat",
    "check_openai_responses",
    "previous_response_not_found",
]

_SDK_CHAT = "openai SDK `types/chat/completion_create_params.py`"

CHAT_MODEL_MISSING = Rule(
    "openai_chat.model-missing",
    "openai_chat",
    "`model` is missing.",
    "Observed: 'you must provide a model parameter' (invalid_request_error; "
    "github.com/danielmiessler/Fabric/issues/239, "
    "github.com/transitive-bullshit/agentic/issues/530)",
)
CHAT_MESSAGES_MISSING = Rule(
    "openai_chat.messages-missing",
    "openai_chat",
    "`messages` is missing.",
    f"`messages` is Required in `CompletionCreateParams` ({_SDK_CHAT}); OpenAI's wording for a missing "
    "parameter: \"Missing required parameter: '<name>'.\"",
)
CHAT_MESSAGES_EMPTY = Rule(
    "openai_chat.messages-empty",
    "openai_chat",
    "`messages` is an empty list.",
    "Observed: \"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array "
    'instead." (code empty_array; github.com/CopilotKit/CopilotKit/issues/529)',
    code="empty_array",
)
CHAT_TOOL_CALLS_WITHOUT_RESULTS = Rule(
    "openai_chat.tool-calls-without-results",
    "openai_chat",
    "An assistant message with `tool_calls` not followed by `tool` messages answering each `tool_call_id`.",
    "Observed: \"An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: <id>\" (param 'messages.[N].role'; "
    "github.com/sdcb/chats/pull/132, github.com/aliasrobotics/cai/issues/111)",
)
CHAT_TOOL_MESSAGE_WITHOUT_CALL = Rule(
    "openai_chat.tool-message-without-call",
    "openai_chat",
    "A `tool` message that answers no `tool_calls` of the assistant message before it.",
    "Observed: \"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
    "'tool_calls'.\" (param 'messages.[N].role'; github.com/openai/openai-go/issues/43, "
    "github.com/run-llama/llama_index/issues/10493)",
)
CHAT_FUNCTION_NAME = Rule(
    "openai_chat.function-name-pattern",
    "openai_chat",
    "A function tool name with characters outside letters, digits, `_`, `-` (and `.`), or over 64 characters.",
    f"{_SDK_CHAT} (`FunctionDefinition.name`): 'Must be a-z, A-Z, 0-9, or contain underscores and dashes, with a "
    "maximum length of 64.' Observed: \"Invalid 'tools[0].function.name': string does not match pattern. Expected a "
    "string that matches the pattern '^[a-zA-Z0-9_-]+$'.\" (github.com/brekkylab/ailoy/pull/109) and \"string too "
    'long. Expected a string with maximum length 64, but got a string with length 81 instead." '
    "(github.com/ravitemer/mcphub.nvim/pull/243). A dot is let through: one observed pattern is '^[a-zA-Z0-9_\\.-]+$'.",
)
CHAT_TEMPERATURE_RANGE = Rule(
    "openai_chat.temperature-range",
    "openai_chat",
    "`temperature` outside [0, 2].",
    f"{_SDK_CHAT}: 'What sampling temperature to use, between 0 and 2.'",
)
CHAT_N_BELOW_ONE = Rule(
    "openai_chat.n-below-one",
    "openai_chat",
    "`n` below 1.",
    f"{_SDK_CHAT}: 'How many chat completion choices to generate for each input message.' with OpenAI's range wording "
    "\"Invalid 'n': integer below minimum value. Expected a value >= 1\".",
)
CHAT_JSON_SCHEMA_NAME = Rule(
    "openai_chat.json-schema-without-name",
    "openai_chat",
    "`response_format` of type `json_schema` without `json_schema` or without its `name`.",
    "openai SDK `types/shared_params/response_format_json_schema.py`: `json_schema: Required[JSONSchema]`, "
    "`name: Required[str]` (the `schema` itself is optional there, so it is not required here)",
)
CHAT_STREAM_OPTIONS = Rule(
    "openai_chat.stream-options-without-stream",
    "openai_chat",
    "`stream_options` set while `stream` is not `true`.",
    "Observed: \"The 'stream_options' parameter is only allowed when 'stream' is enabled.\" (param 'stream_options'; "
    f"github.com/BerriAI/litellm/issues/5803); {_SDK_CHAT}: 'Only set this when you set `stream: true`.'",
)

CHAT_RULES: tuple[Rule, ...] = (
    CHAT_MODEL_MISSING,
    CHAT_MESSAGES_MISSING,
    CHAT_MESSAGES_EMPTY,
    CHAT_TOOL_CALLS_WITHOUT_RESULTS,
    CHAT_TOOL_MESSAGE_WITHOUT_CALL,
    CHAT_FUNCTION_NAME,
    CHAT_TEMPERATURE_RANGE,
    CHAT_N_BELOW_ONE,
    CHAT_JSON_SCHEMA_NAME,
    CHAT_STREAM_OPTIONS,
)

RESPONSES_MODEL_MISSING = Rule(
    "openai_responses.model-missing",
    "openai_responses",
    "`model` is missing (and no stored `prompt` supplies one).",
    "openai SDK `types/responses/response_create_params.py`: `model` is optional only because a stored `prompt` can "
    "carry it; OpenAI's wording for a missing parameter: \"Missing required parameter: '<name>'.\"",
)
RESPONSES_OUTPUT_WITHOUT_CALL = Rule(
    "openai_responses.output-without-call",
    "openai_responses",
    "A `function_call_output` whose `call_id` matches no `function_call` in the input or the previous response.",
    "Observed: 'No tool call found for function call output with call_id <id>.' (param 'input'; "
    "github.com/continuedev/continue/issues/10092, github.com/agentscope-ai/AgentTeams/issues/299)",
)
RESPONSES_CALL_WITHOUT_OUTPUT = Rule(
    "openai_responses.call-without-output",
    "openai_responses",
    "A `function_call` (in the input or ending the previous response) with no `function_call_output`.",
    "Observed: 'No tool output found for function call <id>.' (param 'input'; "
    "github.com/tjardoo/openai-client/pull/124, "
    "github.com/ranxianglei/billion-context/issues/766)",
)
PREVIOUS_RESPONSE_NOT_FOUND = Rule(
    "openai_responses.previous-response-not-found",
    "openai_responses",
    "`previous_response_id` names a response this stub never stored (or stored with `store: false`).",
    "Observed: \"Previous response with id 'resp_…' not found.\" (code previous_response_not_found, param "
    "previous_response_id; github.com/maximhq/bifrost/issues/2441, "
    "github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1188)",
    status=404,
    code="previous_response_not_found",
)

RESPONSES_BUILTIN_FIELD_MISSING = Rule(
    "openai_responses.builtin-tool-field-missing",
    "openai_responses",
    "A built-in tool without its required field: `code_interpreter` without `container`, `file_search` without "
    "`vector_store_ids`, `mcp` without `server_label`.",
    "openai SDK `types/responses/tool_param.py` and `file_search_tool_param.py`: `container`, `vector_store_ids` and "
    "`server_label` are `Required`; observed \"Missing required parameter: 'tools[0].container'.\" "
    "(github.com/QuantumNous/new-api/issues/1305, github.com/microsoft/agent-framework/pull/5414), code "
    "missing_required_parameter (github.com/icebear0828/codex-proxy/issues/399)",
    code="missing_required_parameter",
)

RESPONSES_RULES: tuple[Rule, ...] = (
    RESPONSES_MODEL_MISSING,
    RESPONSES_OUTPUT_WITHOUT_CALL,
    RESPONSES_CALL_WITHOUT_OUTPUT,
    PREVIOUS_RESPONSE_NOT_FOUND,
    RESPONSES_BUILTIN_FIELD_MISSING,
)

_FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_.-]+")


def check_openai_chat(body: dict[str, Any], *, skip: frozenset[str] = frozenset()) -> Violation | None:
    """The first Chat Completions rule the request breaks, or None.

    Args:
        body: The parsed JSON body of a `POST /chat/completions` request.
        skip: Rule ids not to check.

    Returns:
        The violation of the first broken rule, in the order of `CHAT_RULES`; None when the request passes.

    """
    if plainly_valid_chat(body):  # what nearly every request sends: no rule can refuse it
        return None
    return chat_rules_violation(body, skip=skip)


def plainly_valid_chat(body: dict[str, Any]) -> bool:
    """Whether no Chat Completions rule can refuse `body`, decided in one pass without running each.

    True only for the shape most requests have: a `model`; a non-empty list of `system`,
    `developer`, `user` and `assistant` messages without `tool_calls`; no `tools`; a
    `temperature`, if any, in [0, 2]; an integer `n`, if any, of at least 1; a `response_format`,
    if any, of type `text` or `json_object`; `stream_options` only with `stream: true`. Then no tool
    call or tool message exists and no other rule has anything to refuse. Anything else, and so every
    request a rule refuses, is left to the rules. `tests/test_strict_fast.py` checks that this
    says True only of bodies every rule passes.
    """
    if body.get("model") is None or body.get("tools"):
        return False
    n, fmt = body.get("n"), body.get("response_format")
    if (n is not None and not (type(n) is int and n >= 1)) or (fmt is not None and fmt not in _PLAIN_FORMATS):
        return False
    if body.get("stream_options") is not None and body.get("stream") is not True:
        return False
    temperature = body.get("temperature")
    if temperature is not None and not (type(temperature) in (int, float) and 0 <= temperature <= 2):
        return False
    messages = body.get("messages")
    if type(messages) is not list or not messages:
        return False
    for message in messages:
        if type(message) is not dict or message.get("role") not in _PLAIN_CHAT_ROLES or "tool_calls" in message:
            return False
    return True


_PLAIN_CHAT_ROLES = ("system", "developer", "user", "assistant")
_PLAIN_FORMATS = ({"type": "text"}, {"type": "json_object"})


def chat_rules_violation(body: dict[str, Any], *, skip: frozenset[str] = frozenset()) -> Violation | None:
    """`check_openai_chat` without its shortcut for plainly valid bodies: every rule, run in turn."""
    checks: list[tuple[Rule, Callable[[], Violation | None]]] = [
        (CHAT_MODEL_MISSING, lambda: _chat_model(body)),
        (CHAT_MESSAGES_MISSING, lambda: _chat_messages_missing(body)),
        (CHAT_MESSAGES_EMPTY, lambda: _chat_messages_empty(body)),
        (CHAT_TOOL_CALLS_WITHOUT_RESULTS, lambda: _chat_calls_without_results(body)),
        (CHAT_TOOL_MESSAGE_WITHOUT_CALL, lambda: _chat_tool_without_call(body)),
        (CHAT_FUNCTION_NAME, lambda: _chat_function_names(body)),
        (CHAT_TEMPERATURE_RANGE, lambda: _chat_temperature(body)),
        (CHAT_N_BELOW_ONE, lambda: _chat_n(body)),
        (CHAT_JSON_SCHEMA_NAME, lambda: _chat_json_schema(body)),
        (CHAT_STREAM_OPTIONS, lambda: _chat_stream_options(body)),
    ]
    return first_violation(checks, skip)


def _chat_model(body: dict[str, Any]) -> Violation | None:
    if body.get("model") is None:
        return Violation(CHAT_MODEL_MISSING, "you must provide a model parameter")
    return None


def _chat_messages_missing(body: dict[str, Any]) -> Violation | None:
    if body.get("messages") is None:
        return Violation(CHAT_MESSAGES_MISSING, "Missing required parameter: 'messages'.", "messages")
    return None


def _chat_messages_empty(body: dict[str, Any]) -> Violation | None:
    if body.get("messages") == []:
        return Violation(
            CHAT_MESSAGES_EMPTY,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            "messages",
        )
    return None


def _call_ids(message: dict[str, Any]) -> list[str]:
    return [c["id"] for _, c in dicts(message.get("tool_calls")) if isinstance(c.get("id"), str)]


def _chat_calls_without_results(body: dict[str, Any]) -> Violation | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for i, message in dicts(messages):
        if message.get("role") != "assistant":
            continue
        ids = _call_ids(message)
        if not ids:
            continue
        answered: set[Any] = set()
        for follower in messages[i + 1 :]:
            if not isinstance(follower, dict) or follower.get("role") != "tool":
                break
            answered.add(follower.get("tool_call_id"))
        missing = [x for x in ids if x not in answered]
        if missing:
            return Violation(
                CHAT_TOOL_CALLS_WITHOUT_RESULTS,
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(missing)}",
                f"messages.[{i}].role",
            )
    return None


def _chat_tool_without_call(body: dict[str, Any]) -> Violation | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    calls: set[str] | None = None  # the tool_call ids of the assistant message the current tool run answers
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            calls = None
            continue
        role = message.get("role")
        if role == "tool":
            if calls is None or message.get("tool_call_id") not in calls:
                return Violation(
                    CHAT_TOOL_MESSAGE_WITHOUT_CALL,
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
                    "'tool_calls'.",
                    f"messages.[{i}].role",
                )
            continue
        calls = set(_call_ids(message)) if role == "assistant" and _call_ids(message) else None
    return None


def _chat_function_names(body: dict[str, Any]) -> Violation | None:
    for i, tool in dicts(body.get("tools")):
        function = tool.get("function")
        if tool.get("type", "function") != "function" or not isinstance(function, dict):
            continue
        name = function.get("name")
        if not isinstance(name, str):
            continue
        where = f"tools[{i}].function.name"
        if len(name) > 64:
            return Violation(
                CHAT_FUNCTION_NAME,
                f"Invalid '{where}': string too long. Expected a string with maximum length 64, but got a string "
                f"with length {len(name)} instead.",
                where,
            )
        if not _FUNCTION_NAME.fullmatch(name):
            return Violation(
                CHAT_FUNCTION_NAME,
                f"Invalid '{where}': string does not match pattern. Expected a string that matches the pattern "
                "'^[a-zA-Z0-9_-]+$'.",
                where,
            )
    return None


def _chat_temperature(body: dict[str, Any]) -> Violation | None:
    value = body.get("temperature")
    if not is_number(value):
        return None
    if value > 2:
        message = f"Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got {value} instead."
        return Violation(CHAT_TEMPERATURE_RANGE, message, "temperature")
    if value < 0:
        message = f"Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got {value} instead."
        return Violation(CHAT_TEMPERATURE_RANGE, message, "temperature")
    return None


def _chat_n(body: dict[str, Any]) -> Violation | None:
    value = body.get("n")
    if is_int(value) and value < 1:
        message = f"Invalid 'n': integer below minimum value. Expected a value >= 1, but got {int(value)} instead."
        return Violation(CHAT_N_BELOW_ONE, message, "n")
    return None


def _chat_json_schema(body: dict[str, Any]) -> Violation | None:
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    schema = fmt.get("json_schema")
    if not isinstance(schema, dict):
        message = "Missing required parameter: 'response_format.json_schema'."
        return Violation(CHAT_JSON_SCHEMA_NAME, message, "response_format.json_schema")
    if schema.get("name") is None:
        message = "Missing required parameter: 'response_format.json_schema.name'."
        return Violation(CHAT_JSON_SCHEMA_NAME, message, "response_format.json_schema.name")
    return None


def _chat_stream_options(body: dict[str, Any]) -> Violation | None:
    if body.get("stream_options") is not None and body.get("stream") is not True:
        message = "The 'stream_options' parameter is only allowed when 'stream' is enabled."
        return Violation(CHAT_STREAM_OPTIONS, message, "stream_options")
    return None


def check_openai_responses(
    body: dict[str, Any], *, previous_items: list[Any] | None = None, skip: frozenset[str] = frozenset()
) -> Violation | None:
    """The first Responses rule the request breaks, or None.

    Args:
        body: The parsed JSON body of a `POST /responses` request.
        previous_items: When the request continues a response (`previous_response_id`), the stored
            conversation of that response (its input items and output items), as the wire holds it.
            None when there is no `previous_response_id` or it is unknown (the integrator answers an
            unknown id with `previous_response_not_found` itself); the call/output pairing is then
            checked only where the input alone decides it.
        skip: Rule ids not to check.

    Returns:
        The violation of the first broken rule; None when the request passes.

    """
    checks: list[tuple[Rule, Callable[[], Violation | None]]] = [
        (RESPONSES_MODEL_MISSING, lambda: _responses_model(body)),
        (RESPONSES_OUTPUT_WITHOUT_CALL, lambda: _output_without_call(body, previous_items)),
        (RESPONSES_CALL_WITHOUT_OUTPUT, lambda: _call_without_output(body, previous_items)),
        (RESPONSES_BUILTIN_FIELD_MISSING, lambda: _builtin_field_missing(body)),
    ]
    return first_violation(checks, skip)


_BUILTIN_REQUIRED = {"code_interpreter": "container", "file_search": "vector_store_ids", "mcp": "server_label"}
"""The field each built-in tool cannot go without (the openai SDK's `Required` fields of its tool params)."""


def _builtin_field_missing(body: dict[str, Any]) -> Violation | None:
    for i, tool in dicts(body.get("tools")):
        kind = tool.get("type")
        field = _BUILTIN_REQUIRED.get(kind) if isinstance(kind, str) else None  # a list `type` is no key
        if field is not None and tool.get(field) is None:
            where = f"tools[{i}].{field}"
            return Violation(RESPONSES_BUILTIN_FIELD_MISSING, f"Missing required parameter: '{where}'.", where)
    return None


def previous_response_not_found(response_id: str) -> Violation:
    """The 404 violation of a `previous_response_id` the stub never stored."""
    return Violation(
        PREVIOUS_RESPONSE_NOT_FOUND, f"Previous response with id '{response_id}' not found.", "previous_response_id"
    )


def _responses_model(body: dict[str, Any]) -> Violation | None:
    if body.get("model") is None and body.get("prompt") is None:
        return Violation(RESPONSES_MODEL_MISSING, "Missing required parameter: 'model'.", "model")
    return None


def _items(value: Any) -> list[dict[str, Any]]:
    return [item for _, item in dicts(value)]


def _server_state_unknown(body: dict[str, Any], previous_items: list[Any] | None) -> bool:
    """Whether items live on the server, unknown here.

    That is an unknown previous response, a `conversation`, or `item_reference` items (stored items named by id).
    """
    if body.get("previous_response_id") is not None and previous_items is None:
        return True
    return body.get("conversation") is not None or any(
        i.get("type") == "item_reference" for i in _items(body.get("input"))
    )


def _output_without_call(body: dict[str, Any], previous_items: list[Any] | None) -> Violation | None:
    if _server_state_unknown(body, previous_items):
        return None
    items = _items(body.get("input"))
    known = {i.get("call_id") for i in [*_items(previous_items), *items] if i.get("type") == "function_call"}
    for item in items:
        if item.get("type") == "function_call_output" and item.get("call_id") not in known:
            message = f"No tool call found for function call output with call_id {item.get('call_id')}."
            return Violation(RESPONSES_OUTPUT_WITHOUT_CALL, message, "input")
    return None


def _call_without_output(body: dict[str, Any], previous_items: list[Any] | None) -> Violation | None:
    if _server_state_unknown(body, previous_items):
        return None
    items = [*_items(previous_items), *_items(body.get("input"))]
    answered = {i.get("call_id") for i in items if i.get("type") == "function_call_output"}
    for item in items:
        if item.get("type") == "function_call" and item.get("call_id") not in answered:
            return Violation(
                RESPONSES_CALL_WITHOUT_OUTPUT, f"No tool output found for function call {item.get('call_id')}.", "input"
            )
    return None
