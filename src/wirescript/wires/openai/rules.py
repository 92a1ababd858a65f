"""Strict-request rules of the OpenAI Chat Completions and Responses APIs.

The model-dependent rules read `models.OPENAI_MODELS` (an unknown model is never refused by them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from .._rules import ModelTable, Rule, Violation, dicts, is_int, is_number
from .models import OPENAI_MODELS, OpenAIModel

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

_STRUCTURED = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
_SDK_RESPONSES = "openai SDK `types/responses/response_create_params.py`"

CHAT_INVALID_ROLE = Rule(
    "openai_chat.invalid-role",
    "openai_chat",
    "A message role other than `system`, `developer`, `user`, `assistant`, `tool` or `function`.",
    f"{_SDK_CHAT}: `ChatCompletionMessageParam` is the union of those six roles; OpenAI's enum wording, observed for "
    "Responses: \"Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.\" (code "
    "invalid_value; github.com/openai/openai-java/issues/302)",
    code="invalid_value",
)
CHAT_TOOL_CHOICE_WITHOUT_TOOLS = Rule(
    "openai_chat.tool-choice-without-tools",
    "openai_chat",
    "`tool_choice` set without `tools`.",
    "Observed: \"Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.\" "
    "(param 'tool_choice'; the same words for parallel_tool_calls: github.com/openai/swarm/issues/30)",
)
CHAT_PARALLEL_WITHOUT_TOOLS = Rule(
    "openai_chat.parallel-tool-calls-without-tools",
    "openai_chat",
    "`parallel_tool_calls` set without `tools`.",
    "Observed: \"Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are "
    "specified.\" (param 'parallel_tool_calls'; github.com/openai/swarm/issues/30, "
    "github.com/Upsonic/Upsonic/issues/323)",
)
CHAT_STRICT_JSON_SCHEMA = Rule(
    "openai_chat.strict-json-schema",
    "openai_chat",
    "A strict `response_format` JSON schema with an object lacking `additionalProperties: false`, or with a "
    "property missing from `required`.",
    f"Structured Outputs, supported schemas: 'additionalProperties: false must always be set in objects' and 'all "
    f"fields must be required' ({_STRUCTURED}); observed \"Invalid schema for response_format 'default': In "
    "context=(), 'additionalProperties' is required to be supplied and to be false.\" (param 'response_format'; "
    "github.com/dottxt-ai/outlines/issues/844, github.com/moeru-ai/xsai/issues/202)",
)
CHAT_STRICT_FUNCTION_SCHEMA = Rule(
    "openai_chat.strict-function-schema",
    "openai_chat",
    "A `strict: true` function whose `parameters` have an object lacking `additionalProperties: false`, or a "
    "property missing from `required`.",
    f'Structured Outputs, supported schemas ({_STRUCTURED}); observed "Invalid schema for function '
    "'search_documents': In context=('properties', 'body'), 'additionalProperties' is required to be supplied and to "
    "be false.\" (param 'tools[6].function.parameters', code invalid_function_parameters; "
    "github.com/camel-ai/camel/issues/2231) and \"... 'required' must be an array that includes every key in "
    '`properties`." (github.com/dotnet/extensions/issues/6302)',
    code="invalid_function_parameters",
)
CHAT_PENALTY_RANGE = Rule(
    "openai_chat.penalty-range",
    "openai_chat",
    "`presence_penalty` or `frequency_penalty` outside [-2, 2].",
    f"{_SDK_CHAT}: 'Number between -2.0 and 2.0.' (both penalties); OpenAI's range wording as for `temperature`",
)
CHAT_TOP_LOGPROBS_RANGE = Rule(
    "openai_chat.top-logprobs-range",
    "openai_chat",
    "`top_logprobs` outside [0, 20].",
    f"{_SDK_CHAT}: 'An integer between 0 and 20'; OpenAI's range wording as for `n`",
)
CHAT_JSON_OBJECT_WITHOUT_JSON = Rule(
    "openai_chat.json-object-without-json",
    "openai_chat",
    "`response_format` of type `json_object` while no message mentions JSON.",
    f"{_SDK_CHAT} (`response_format`): 'you must also instruct the model to produce JSON yourself via a system or "
    "user message'; observed \"'messages' must contain the word 'json' in some form, to use 'response_format' of type "
    "'json_object'.\" (the invalid_request_error JSON mode answers)",
)
CHAT_MAX_TOKENS_MODEL = Rule(
    "openai_chat.max-tokens-unsupported-model",
    "openai_chat",
    "`max_tokens` on a reasoning model (the o-series, per the model table), which takes `max_completion_tokens`.",
    "Observed: \"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
    "instead.\" (param 'max_tokens', code unsupported_parameter; github.com/teilomillet/gollm/issues/33, "
    "github.com/memochou1993/gpt-ai-assistant/issues/361); https://platform.openai.com/docs/guides/reasoning",
    code="unsupported_parameter",
)
CHAT_TEMPERATURE_MODEL = Rule(
    "openai_chat.temperature-unsupported-model",
    "openai_chat",
    "A `temperature` other than 1 on a reasoning model (the o-series, per the model table).",
    "Observed: \"Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) value "
    "is supported.\" (param 'temperature', code unsupported_value; github.com/OpenHands/OpenHands/issues/4131: "
    "o1-mini)",
    code="unsupported_value",
)

CHAT_RULES: tuple[Rule, ...] = (
    CHAT_MODEL_MISSING,
    CHAT_MESSAGES_MISSING,
    CHAT_MESSAGES_EMPTY,
    CHAT_INVALID_ROLE,
    CHAT_TOOL_CALLS_WITHOUT_RESULTS,
    CHAT_TOOL_MESSAGE_WITHOUT_CALL,
    CHAT_FUNCTION_NAME,
    CHAT_TOOL_CHOICE_WITHOUT_TOOLS,
    CHAT_PARALLEL_WITHOUT_TOOLS,
    CHAT_STRICT_FUNCTION_SCHEMA,
    CHAT_TEMPERATURE_RANGE,
    CHAT_PENALTY_RANGE,
    CHAT_TOP_LOGPROBS_RANGE,
    CHAT_N_BELOW_ONE,
    CHAT_JSON_SCHEMA_NAME,
    CHAT_STRICT_JSON_SCHEMA,
    CHAT_JSON_OBJECT_WITHOUT_JSON,
    CHAT_STREAM_OPTIONS,
    CHAT_MAX_TOKENS_MODEL,
    CHAT_TEMPERATURE_MODEL,
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


RESPONSES_WITH_CONVERSATION = Rule(
    "openai_responses.previous-response-with-conversation",
    "openai_responses",
    "`previous_response_id` and `conversation` in one request.",
    f"{_SDK_RESPONSES} (`previous_response_id`): 'Cannot be used in conjunction with `conversation`.' (the 400's "
    "words are not observed; the message follows OpenAI's 'Mutually exclusive parameters' wording)",
)
RESPONSES_INVALID_ROLE = Rule(
    "openai_responses.invalid-role",
    "openai_responses",
    "An input message role other than `user`, `assistant`, `system` or `developer` (a Chat-style `tool` message).",
    f"{_SDK_RESPONSES}: `EasyInputMessageParam.role` is 'user', 'assistant', 'system' or 'developer'; observed "
    "enum wording \"Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.\" (param "
    "'input[1].content[0]', code invalid_value; github.com/openai/openai-java/issues/302)",
    code="invalid_value",
)
RESPONSES_TOOL_WITHOUT_NAME = Rule(
    "openai_responses.tool-without-name",
    "openai_responses",
    'A `function` tool without a top-level `name` (a Chat-style `{"type": "function", "function": {...}}` tool).',
    f"{_SDK_RESPONSES}: `FunctionToolParam.name` is Required (the function is flat in Responses); OpenAI's wording "
    "for a missing parameter: \"Missing required parameter: '<name>'.\"",
)
RESPONSES_UNKNOWN_PARAMETER = Rule(
    "openai_responses.unknown-parameter",
    "openai_responses",
    "Chat Completions' `max_tokens` or `max_completion_tokens` (Responses takes `max_output_tokens`).",
    f"{_SDK_RESPONSES}: the output limit is `max_output_tokens`; Responses refuses a parameter it does not define: "
    '"Unknown parameter: \'<field>\'." (github.com/fhswf/openai-ui/issues/127; "Unknown parameter: '
    "'input[3].tool_calls'.\", github.com/openai/openai-python/issues/2677)",
)
RESPONSES_TEMPERATURE_RANGE = Rule(
    "openai_responses.temperature-range",
    "openai_responses",
    "`temperature` outside [0, 2].",
    f"{_SDK_RESPONSES}: 'What sampling temperature to use, between 0 and 2.'; the wording of Chat's range refusal",
)
RESPONSES_MAX_OUTPUT_TOKENS = Rule(
    "openai_responses.max-output-tokens-below-minimum",
    "openai_responses",
    "`max_output_tokens` below 16.",
    "Observed: \"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 "
    "instead.\" (param 'max_output_tokens', code integer_below_min_value; github.com/vectorize-io/hindsight/issues/58, "
    "github.com/QuantumNous/new-api/issues/2438)",
    code="integer_below_min_value",
)
RESPONSES_JSON_SCHEMA_NAME = Rule(
    "openai_responses.json-schema-without-name",
    "openai_responses",
    "`text.format` of type `json_schema` without its `name`.",
    "openai SDK `types/responses/response_format_text_json_schema_config_param.py`: `name: Required[str]`; "
    "'The OpenAI Responses API expects a text.format.name parameter when using the json_schema format' "
    "(github.com/jamesrochabrun/SwiftOpenAI/pull/150)",
)
RESPONSES_STRICT_JSON_SCHEMA = Rule(
    "openai_responses.strict-json-schema",
    "openai_responses",
    "A strict `text.format` JSON schema with an object lacking `additionalProperties: false`, or with a property "
    "missing from `required`.",
    f'Structured Outputs, supported schemas ({_STRUCTURED}); observed "Invalid schema for response_format '
    "'codex_output_schema': In context=(), 'additionalProperties' is required to be supplied and to be false.\" "
    "(param 'text.format.schema', code invalid_json_schema; github.com/mavam/pi-web-providers/issues/14)",
    code="invalid_json_schema",
)
RESPONSES_STRICT_FUNCTION_SCHEMA = Rule(
    "openai_responses.strict-function-schema",
    "openai_responses",
    "A `strict: true` function tool whose `parameters` have an object lacking `additionalProperties: false`, or a "
    "property missing from `required`.",
    f'Structured Outputs, supported schemas ({_STRUCTURED}); observed "Invalid schema for function '
    "'filesystem-set_permissions': In context=('properties', 'permissions'), 'additionalProperties' is required to be "
    "supplied and to be false.\" (param 'tools[22].parameters', code invalid_function_parameters; "
    "github.com/lastmile-ai/openai-agents-mcp/issues/2)",
    code="invalid_function_parameters",
)


RESPONSES_RULES: tuple[Rule, ...] = (
    RESPONSES_MODEL_MISSING,
    RESPONSES_WITH_CONVERSATION,
    RESPONSES_INVALID_ROLE,
    RESPONSES_TOOL_WITHOUT_NAME,
    RESPONSES_UNKNOWN_PARAMETER,
    RESPONSES_TEMPERATURE_RANGE,
    RESPONSES_MAX_OUTPUT_TOKENS,
    RESPONSES_JSON_SCHEMA_NAME,
    RESPONSES_STRICT_JSON_SCHEMA,
    RESPONSES_STRICT_FUNCTION_SCHEMA,
    RESPONSES_BUILTIN_FIELD_MISSING,
    RESPONSES_OUTPUT_WITHOUT_CALL,
    RESPONSES_CALL_WITHOUT_OUTPUT,
    PREVIOUS_RESPONSE_NOT_FOUND,
)

_FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_.-]+")


def check_openai_chat(
    body: dict[str, Any], *, skip: frozenset[str] = frozenset(), models: ModelTable[OpenAIModel] = OPENAI_MODELS
) -> Violation | None:
    """The first Chat Completions rule the request breaks, or None.

    Args:
        body: The parsed JSON body of a `POST /chat/completions` request.
        skip: Rule ids not to check.
        models: The model table the model-dependent rules read (an unknown model is never refused by them).

    Returns:
        The violation of the first broken rule, in the order of `CHAT_RULES`; None when the request passes.

    """
    if plainly_valid_chat(body, models):  # what nearly every request sends: no rule can refuse it
        return None
    return chat_rules_violation(body, skip=skip, models=models)


def plainly_valid_chat(body: dict[str, Any], models: ModelTable[OpenAIModel] = OPENAI_MODELS) -> bool:
    """Whether no Chat Completions rule can refuse `body`, decided in one pass without running each.

    True only for the shape most requests have, a tool loop's included: a `model` the model table
    does not list as a reasoning model; a non-empty list of `system`, `developer`, `user`,
    `assistant` and `tool` messages, where an assistant's `tool_calls` (each with a string `id`)
    are answered, each, by the run of `tool` messages right after it, which answer nothing else;
    `tools`, if any, functions with names of the documented pattern and no `strict` schema; no
    `tool_choice` or `parallel_tool_calls`; no penalty or `top_logprobs`; a `temperature`, if any,
    in [0, 2]; an integer `n`, if any, of at least 1; a `response_format`, if any, of type `text`;
    `stream_options` only with `stream: true`. Then no tool call or tool message is unanswered or
    unasked and no other rule has anything to refuse. Anything else, and so every request a rule
    refuses, is left to the rules. `tests/test_strict_fast.py` checks that this says True only of
    bodies every rule passes.
    """
    model = body.get("model")
    if model is None or not body.keys().isdisjoint(_NOT_PLAIN_KEYS):
        return False
    tools = body.get("tools")
    if tools and not _plain_functions(tools):
        return False
    n, fmt = body.get("n"), body.get("response_format")
    if (n is not None and not (type(n) is int and n >= 1)) or (fmt is not None and fmt != _PLAIN_FORMAT):
        return False
    if body.get("stream_options") is not None and body.get("stream") is not True:
        return False
    temperature = body.get("temperature")
    if temperature is not None and not (type(temperature) in (int, float) and 0 <= temperature <= 2):
        return False
    known = models.lookup(model)
    if known is not None and known.reasoning:
        return False
    messages = body.get("messages")
    if type(messages) is not list or not messages:
        return False
    calls: list[str] | None = None  # the tool calls of the assistant message the current run of tool messages answers
    answered: list[str] = []
    for message in messages:
        if type(message) is not dict:
            return False
        role = message.get("role")
        if role == "tool":
            answer = message.get("tool_call_id")
            if calls is None or type(answer) is not str or answer not in calls:
                return False
            answered.append(answer)
            continue
        if role not in _PLAIN_CHAT_ROLES or (calls is not None and any(c not in answered for c in calls)):
            return False
        calls = None
        if "tool_calls" in message:
            if role != "assistant":
                return False
            calls = _plain_call_ids(message["tool_calls"])
            if calls is None:
                return False
            answered = []
    return calls is None or all(c in answered for c in calls)


def _plain_functions(tools: Any) -> bool:
    """Whether `tools` are functions no rule refuses: a name of the pattern (64 characters at most), not `strict`."""
    if type(tools) is not list:
        return False
    for tool in tools:
        if type(tool) is not dict or tool.get("type") != "function":
            return False
        function = tool.get("function")
        if type(function) is not dict or function.get("strict") is True:
            return False
        name = function.get("name")
        if type(name) is not str or len(name) > 64 or _FUNCTION_NAME.fullmatch(name) is None:
            return False
    return True


def _plain_call_ids(calls: Any) -> list[str] | None:
    """The ids of an assistant message's `tool_calls` when each is an object with a string id (one at least)."""
    if type(calls) is not list or not calls:
        return None
    ids = []
    for call in calls:
        if type(call) is not dict or type(call.get("id")) is not str:
            return None
        ids.append(call["id"])
    return ids


_PLAIN_CHAT_ROLES = ("system", "developer", "user", "assistant")
_PLAIN_FORMAT = {"type": "text"}
_NOT_PLAIN_KEYS = frozenset(
    {"tool_choice", "parallel_tool_calls", "presence_penalty", "frequency_penalty", "top_logprobs"}
)
_CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def chat_rules_violation(
    body: dict[str, Any], *, skip: frozenset[str] = frozenset(), models: ModelTable[OpenAIModel] = OPENAI_MODELS
) -> Violation | None:
    """`check_openai_chat` without its shortcut for plainly valid bodies: every rule, run in turn."""
    model = models.lookup(body.get("model"))
    for rule, check in _CHAT_CHECKS:  # a table built once, not closures per request
        if rule.id in skip:
            continue
        violation = check(body, model)
        if violation is not None:
            return violation
    return None


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


def _chat_invalid_role(body: dict[str, Any]) -> Violation | None:
    for i, message in dicts(body.get("messages")):
        role = message.get("role")
        if isinstance(role, str) and role not in _CHAT_ROLES:
            return Violation(
                CHAT_INVALID_ROLE,
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', "
                "and 'developer'.",
                f"messages[{i}].role",
            )
    return None


def _has_tools(body: dict[str, Any]) -> bool:
    tools = body.get("tools")
    return isinstance(tools, list) and bool(tools)


def _chat_tool_choice(body: dict[str, Any]) -> Violation | None:
    if body.get("tool_choice") is not None and not _has_tools(body):
        message = "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
        return Violation(CHAT_TOOL_CHOICE_WITHOUT_TOOLS, message, "tool_choice")
    return None


def _chat_parallel_tool_calls(body: dict[str, Any]) -> Violation | None:
    if body.get("parallel_tool_calls") is not None and not _has_tools(body):
        message = (
            "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified."
        )
        return Violation(CHAT_PARALLEL_WITHOUT_TOOLS, message, "parallel_tool_calls")
    return None


def _schema_nodes(schema: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[dict[str, Any], tuple[str, ...]]]:
    """Every subschema of a JSON schema with its path, the schema first (depth-first, in document order)."""
    if not isinstance(schema, dict):
        return
    yield schema, path
    for key in ("properties", "$defs", "definitions"):
        children = schema.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                yield from _schema_nodes(child, (*path, key, str(name)))
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _schema_nodes(items, (*path, "items"))
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        children = schema.get(key)
        if isinstance(children, list):
            for k, child in enumerate(children):
                yield from _schema_nodes(child, (*path, key, str(k)))


def strict_schema_problem(schema: Any) -> str | None:
    """What OpenAI's strict mode refuses in a JSON schema (`In context=(...), ...`), or None.

    Every object schema must set `additionalProperties: false` and list each of its `properties` in
    `required` (Structured Outputs, supported schemas). Other keywords are not judged.
    """
    for node, path in _schema_nodes(schema):
        kind = node.get("type")
        if kind != "object" and not (isinstance(kind, list) and "object" in kind):
            continue
        context = repr(path)
        if node.get("additionalProperties") is not False:
            return f"In context={context}, 'additionalProperties' is required to be supplied and to be false."
        properties = node.get("properties")
        required = node.get("required")
        listed = required if isinstance(required, list) else []
        missing = [key for key in properties if key not in listed] if isinstance(properties, dict) else []
        if missing:
            return (
                f"In context={context}, 'required' is required to be supplied and to be an array including every key "
                f"in properties. Missing '{missing[0]}'."
            )
    return None


def _chat_strict_functions(body: dict[str, Any]) -> Violation | None:
    for i, tool in dicts(body.get("tools")):
        function = tool.get("function")
        if not isinstance(function, dict) or function.get("strict") is not True:
            continue
        problem = strict_schema_problem(function.get("parameters"))
        if problem is not None:
            message = f"Invalid schema for function '{function.get('name')}': {problem}"
            return Violation(CHAT_STRICT_FUNCTION_SCHEMA, message, f"tools[{i}].function.parameters")
    return None


def _range_message(key: str, value: float, bound: float, *, above: bool, integer: bool = False) -> str:
    kind = "integer" if integer else "decimal"
    if above:
        return f"Invalid '{key}': {kind} above maximum value. Expected a value <= {bound}, but got {value} instead."
    return f"Invalid '{key}': {kind} below minimum value. Expected a value >= {bound}, but got {value} instead."


def _chat_penalties(body: dict[str, Any]) -> Violation | None:
    for key in ("frequency_penalty", "presence_penalty"):
        value = body.get(key)
        if is_number(value) and not -2 <= value <= 2:
            return Violation(
                CHAT_PENALTY_RANGE, _range_message(key, value, 2 if value > 2 else -2, above=value > 2), key
            )
    return None


def _chat_top_logprobs(body: dict[str, Any]) -> Violation | None:
    value = body.get("top_logprobs")
    if is_int(value) and not 0 <= value <= 20:
        shown = int(value)
        message = _range_message("top_logprobs", shown, 20 if shown > 20 else 0, above=shown > 20, integer=True)
        return Violation(CHAT_TOP_LOGPROBS_RANGE, message, "top_logprobs")
    return None


def _strict_format(fmt: Any) -> dict[str, Any] | None:
    """The `json_schema` of a strict Chat `response_format`, or None."""
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    schema = fmt.get("json_schema")
    return schema if isinstance(schema, dict) and schema.get("strict") is True else None


def _chat_strict_json_schema(body: dict[str, Any]) -> Violation | None:
    config = _strict_format(body.get("response_format"))
    problem = strict_schema_problem(config.get("schema")) if config is not None else None
    if config is None or problem is None:
        return None
    message = f"Invalid schema for response_format '{config.get('name')}': {problem}"
    return Violation(CHAT_STRICT_JSON_SCHEMA, message, "response_format")


def _mentions_json(value: Any) -> bool:
    """Whether a message content (a string, or parts with text) holds the word 'json', in any case."""
    if isinstance(value, str):
        return "json" in value.lower()
    if isinstance(value, list):
        return any(_mentions_json(part.get("text")) for part in value if isinstance(part, dict))
    return False


def _chat_json_object(body: dict[str, Any]) -> Violation | None:
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_object":
        return None
    if any(_mentions_json(message.get("content")) for _, message in dicts(body.get("messages"))):
        return None
    message = "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."
    return Violation(CHAT_JSON_OBJECT_WITHOUT_JSON, message, "messages")


def _chat_max_tokens_model(body: dict[str, Any], model: OpenAIModel | None) -> Violation | None:
    if model is None or not model.reasoning or body.get("max_tokens") is None:
        return None
    message = (
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
    )
    return Violation(CHAT_MAX_TOKENS_MODEL, message, "max_tokens")


def _chat_temperature_model(body: dict[str, Any], model: OpenAIModel | None) -> Violation | None:
    value = body.get("temperature")
    if model is None or not model.reasoning or not is_number(value) or value == 1:
        return None
    message = (
        f"Unsupported value: 'temperature' does not support {value} with this model. Only the default (1) value is "
        "supported."
    )
    return Violation(CHAT_TEMPERATURE_MODEL, message, "temperature")


def _body_only(
    check: Callable[[dict[str, Any]], Violation | None],
) -> Callable[[dict[str, Any], Any], Violation | None]:
    return lambda body, model: check(body)


_CHAT_CHECKS: tuple[tuple[Rule, Callable[[dict[str, Any], OpenAIModel | None], Violation | None]], ...] = (
    (CHAT_MODEL_MISSING, _body_only(_chat_model)),
    (CHAT_MESSAGES_MISSING, _body_only(_chat_messages_missing)),
    (CHAT_MESSAGES_EMPTY, _body_only(_chat_messages_empty)),
    (CHAT_INVALID_ROLE, _body_only(_chat_invalid_role)),
    (CHAT_TOOL_CALLS_WITHOUT_RESULTS, _body_only(_chat_calls_without_results)),
    (CHAT_TOOL_MESSAGE_WITHOUT_CALL, _body_only(_chat_tool_without_call)),
    (CHAT_FUNCTION_NAME, _body_only(_chat_function_names)),
    (CHAT_TOOL_CHOICE_WITHOUT_TOOLS, _body_only(_chat_tool_choice)),
    (CHAT_PARALLEL_WITHOUT_TOOLS, _body_only(_chat_parallel_tool_calls)),
    (CHAT_STRICT_FUNCTION_SCHEMA, _body_only(_chat_strict_functions)),
    (CHAT_TEMPERATURE_RANGE, _body_only(_chat_temperature)),
    (CHAT_PENALTY_RANGE, _body_only(_chat_penalties)),
    (CHAT_TOP_LOGPROBS_RANGE, _body_only(_chat_top_logprobs)),
    (CHAT_N_BELOW_ONE, _body_only(_chat_n)),
    (CHAT_JSON_SCHEMA_NAME, _body_only(_chat_json_schema)),
    (CHAT_STRICT_JSON_SCHEMA, _body_only(_chat_strict_json_schema)),
    (CHAT_JSON_OBJECT_WITHOUT_JSON, _body_only(_chat_json_object)),
    (CHAT_STREAM_OPTIONS, _body_only(_chat_stream_options)),
    (CHAT_MAX_TOKENS_MODEL, _chat_max_tokens_model),
    (CHAT_TEMPERATURE_MODEL, _chat_temperature_model),
)
"""Every Chat Completions check, in the order of `CHAT_RULES`."""


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
        The violation of the first broken rule, in the order of `RESPONSES_RULES`; None when the request passes.

    """
    if previous_items is None and plainly_valid_responses(body):  # what nearly every request sends
        return None
    return responses_rules_violation(body, previous_items=previous_items, skip=skip)


def plainly_valid_responses(body: dict[str, Any]) -> bool:
    """Whether no Responses rule can refuse `body`, decided in one pass without running each.

    True only for the shape most requests have: a `model`; no `previous_response_id`, `conversation`,
    `tools`, `max_tokens` or `max_completion_tokens`; a `temperature`, if any, in [0, 2]; an integer
    `max_output_tokens`, if any, of at least 16; a `text`, if any, an object whose `format` is not a
    JSON schema; an `input` that is a string, or a list of message items (no `type`, or `message`) of
    the roles the API takes. Then no tool, tool call, tool output or stored item exists and no other
    rule has anything to refuse. Anything else, and so every request a rule refuses, is left to the
    rules. `tests/test_strict_fast.py` checks that this says True only of bodies every rule passes.
    """
    if body.get("model") is None or body.get("tools") or not body.keys().isdisjoint(_NOT_PLAIN_RESPONSES_KEYS):
        return False
    temperature = body.get("temperature")
    if temperature is not None and not (type(temperature) in (int, float) and 0 <= temperature <= 2):
        return False
    limit = body.get("max_output_tokens")
    if limit is not None and not (type(limit) is int and limit >= 16):
        return False
    text = body.get("text")
    if text is not None:
        if type(text) is not dict:
            return False
        fmt = text.get("format")
        if fmt is not None and (type(fmt) is not dict or fmt.get("type") == "json_schema"):
            return False
    items = body.get("input")
    if type(items) is str:
        return True
    if type(items) is not list:
        return False
    for item in items:
        if type(item) is not dict or item.get("type", "message") != "message" or item.get("role") not in _PLAIN_ROLES:
            return False
    return True


_NOT_PLAIN_RESPONSES_KEYS = frozenset({"previous_response_id", "conversation", "max_tokens", "max_completion_tokens"})
_PLAIN_ROLES = ("user", "assistant", "system", "developer")


def responses_rules_violation(
    body: dict[str, Any], *, previous_items: list[Any] | None = None, skip: frozenset[str] = frozenset()
) -> Violation | None:
    """`check_openai_responses` without its shortcut for plainly valid bodies: every rule, run in turn."""
    for rule, check in _RESPONSES_CHECKS:  # a table built once, not closures per request
        if rule.id in skip:
            continue
        violation = check(body, previous_items)
        if violation is not None:
            return violation
    return None


def _with_conversation(body: dict[str, Any]) -> Violation | None:
    if body.get("previous_response_id") is not None and body.get("conversation") is not None:
        message = (
            "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or "
            "'conversation'."
        )
        return Violation(RESPONSES_WITH_CONVERSATION, message, "previous_response_id")
    return None


_RESPONSES_ROLES = ("user", "assistant", "system", "developer")


def _responses_invalid_role(body: dict[str, Any]) -> Violation | None:
    for i, item in dicts(body.get("input")):
        role = item.get("role")
        if item.get("type", "message") == "message" and isinstance(role, str) and role not in _RESPONSES_ROLES:
            return Violation(
                RESPONSES_INVALID_ROLE,
                f"Invalid value: '{role}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.",
                f"input[{i}].role",
            )
    return None


def _responses_tool_name(body: dict[str, Any]) -> Violation | None:
    for i, tool in dicts(body.get("tools")):
        if tool.get("type") == "function" and tool.get("name") is None:
            return Violation(
                RESPONSES_TOOL_WITHOUT_NAME, f"Missing required parameter: 'tools[{i}].name'.", f"tools[{i}].name"
            )
    return None


def _responses_unknown(body: dict[str, Any]) -> Violation | None:
    for key in ("max_tokens", "max_completion_tokens"):
        if key in body:
            return Violation(RESPONSES_UNKNOWN_PARAMETER, f"Unknown parameter: '{key}'.", key)
    return None


def _responses_temperature(body: dict[str, Any]) -> Violation | None:
    value = body.get("temperature")
    if is_number(value) and not 0 <= value <= 2:
        message = _range_message("temperature", value, 2 if value > 2 else 0, above=value > 2)
        return Violation(RESPONSES_TEMPERATURE_RANGE, message, "temperature")
    return None


def _responses_max_output(body: dict[str, Any]) -> Violation | None:
    value = body.get("max_output_tokens")
    if is_int(value) and value < 16:
        message = _range_message("max_output_tokens", int(value), 16, above=False, integer=True)
        return Violation(RESPONSES_MAX_OUTPUT_TOKENS, message, "max_output_tokens")
    return None


def _text_format(body: dict[str, Any]) -> dict[str, Any] | None:
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    return fmt if isinstance(fmt, dict) and fmt.get("type") == "json_schema" else None


def _responses_schema_name(body: dict[str, Any]) -> Violation | None:
    fmt = _text_format(body)
    if fmt is not None and fmt.get("name") is None:
        return Violation(
            RESPONSES_JSON_SCHEMA_NAME, "Missing required parameter: 'text.format.name'.", "text.format.name"
        )
    return None


def _responses_strict_json_schema(body: dict[str, Any]) -> Violation | None:
    fmt = _text_format(body)
    problem = strict_schema_problem(fmt.get("schema")) if fmt is not None and fmt.get("strict") is True else None
    if fmt is None or problem is None:
        return None
    message = f"Invalid schema for response_format '{fmt.get('name')}': {problem}"
    return Violation(RESPONSES_STRICT_JSON_SCHEMA, message, "text.format.schema")


def _responses_strict_functions(body: dict[str, Any]) -> Violation | None:
    for i, tool in dicts(body.get("tools")):
        if tool.get("type") != "function" or tool.get("strict") is not True:
            continue
        problem = strict_schema_problem(tool.get("parameters"))
        if problem is not None:
            message = f"Invalid schema for function '{tool.get('name')}': {problem}"
            return Violation(RESPONSES_STRICT_FUNCTION_SCHEMA, message, f"tools[{i}].parameters")
    return None


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


def _input_only(
    check: Callable[[dict[str, Any]], Violation | None],
) -> Callable[[dict[str, Any], Any], Violation | None]:
    return lambda body, previous_items: check(body)


_RESPONSES_CHECKS: tuple[tuple[Rule, Callable[[dict[str, Any], list[Any] | None], Violation | None]], ...] = (
    (RESPONSES_MODEL_MISSING, _input_only(_responses_model)),
    (RESPONSES_WITH_CONVERSATION, _input_only(_with_conversation)),
    (RESPONSES_INVALID_ROLE, _input_only(_responses_invalid_role)),
    (RESPONSES_TOOL_WITHOUT_NAME, _input_only(_responses_tool_name)),
    (RESPONSES_UNKNOWN_PARAMETER, _input_only(_responses_unknown)),
    (RESPONSES_TEMPERATURE_RANGE, _input_only(_responses_temperature)),
    (RESPONSES_MAX_OUTPUT_TOKENS, _input_only(_responses_max_output)),
    (RESPONSES_JSON_SCHEMA_NAME, _input_only(_responses_schema_name)),
    (RESPONSES_STRICT_JSON_SCHEMA, _input_only(_responses_strict_json_schema)),
    (RESPONSES_STRICT_FUNCTION_SCHEMA, _input_only(_responses_strict_functions)),
    (RESPONSES_BUILTIN_FIELD_MISSING, _input_only(_builtin_field_missing)),
    (RESPONSES_OUTPUT_WITHOUT_CALL, _output_without_call),
    (RESPONSES_CALL_WITHOUT_OUTPUT, _call_without_output),
)
"""Every Responses check the body decides, in the order of `RESPONSES_RULES` (the 404 is the wire's)."""
