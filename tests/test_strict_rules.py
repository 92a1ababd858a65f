"""The strict-request rule engine (issue 15): each rule refuses its case and lets the nearest valid body
through, and nothing the real SDKs send for a valid conversation is refused (no false positives)."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import ANTHROPIC_MAJOR, anthropic_client, examples, odd_bodies, openai_client
from test_docs import needs_current_sdks
from wirescript import ScriptTransport
from wirescript.recorded import RecordedRequest
from wirescript.strict import (
    RULES,
    WIRES,
    Violation,
    check_anthropic,
    check_gemini,
    check_openai_chat,
    check_openai_responses,
    check_request,
    check_wire_mismatch,
    previous_response_not_found,
)
from wirescript.wires.anthropic.models import CLAUDE_MODELS
from wirescript.wires.bedrock.rules import check_invoke

# --- bodies -----------------------------------------------------------------------------------------

USER = {"role": "user", "content": "Hi"}
A: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": [USER]}
TOOL = {"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object", "properties": {}}}


def tool_use(*ids: str, first: dict[str, Any] | None = None) -> dict[str, Any]:
    blocks = [first] if first else []
    blocks += [{"type": "tool_use", "id": i, "name": "get_weather", "input": {}} for i in ids]
    return {"role": "assistant", "content": blocks}


def tool_result(*ids: str, text: str | None = None, text_first: bool = False) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "tool_result", "tool_use_id": i, "content": "Sunny"} for i in ids]
    if text is not None:
        blocks.insert(0 if text_first else len(blocks), {"type": "text", "text": text})
    return {"role": "user", "content": blocks}


def anth(**fields: Any) -> dict[str, Any]:
    body = {**copy.deepcopy(A), **fields}
    return {k: v for k, v in body.items() if v is not None}


def without(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != key}


THINK = {"type": "thinking", "thinking": "Hmm.", "signature": "sig"}
THINKING = {"type": "enabled", "budget_tokens": 1024}
CACHE = {"type": "ephemeral"}


def cached_system(n: int) -> list[dict[str, Any]]:
    return [{"type": "text", "text": f"part {i}", "cache_control": CACHE} for i in range(n)]


C: dict[str, Any] = {"model": "gpt-test", "messages": [USER]}


def chat(**fields: Any) -> dict[str, Any]:
    body = {**copy.deepcopy(C), **fields}
    return {k: v for k, v in body.items() if v is not None}


def calls(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}} for i in ids
        ],
    }


def tool_msg(i: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": i, "content": "Sunny"}


def function(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}


R: dict[str, Any] = {"model": "gpt-test", "input": "Hi"}
FC = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
FCO = {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"}
MSG = {"role": "user", "content": "Hi"}

G: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
G_USER = {"role": "user", "parts": [{"text": "Weather?"}]}


def g_calls(n: int, camel: bool = True) -> dict[str, Any]:
    key = "functionCall" if camel else "function_call"
    return {"role": "model", "parts": [{key: {"name": "get_weather", "args": {}}} for _ in range(n)]}


def g_responses(n: int, camel: bool = True) -> dict[str, Any]:
    key = "functionResponse" if camel else "function_response"
    return {"role": "user", "parts": [{key: {"name": "get_weather", "response": {"r": 1}}} for _ in range(n)]}


def declarations(*names: str) -> list[dict[str, Any]]:
    return [{"functionDeclarations": [{"name": n} for n in names]}]


# --- one case per rule: the refused body, and the nearest body the real API accepts -----------------


@dataclass
class Case:
    rule: str
    wire: str
    bad: dict[str, Any]
    good: dict[str, Any]
    message: str
    param: str | None
    context: dict[str, Any] = field(default_factory=dict)
    good_context: dict[str, Any] | None = None


CASES: list[Case] = [
    # Anthropic
    Case("anthropic.model-missing", "anthropic", without(A, "model"), A, "model: Field required", "model"),
    Case(
        "anthropic.max-tokens-invalid",
        "anthropic",
        without(A, "max_tokens"),
        anth(max_tokens=0),  # 0 pre-warms the prompt cache: documented as valid
        "max_tokens: Field required",
        "max_tokens",
    ),
    Case(
        "anthropic.max-tokens-invalid",
        "anthropic",
        anth(max_tokens=-1),
        anth(max_tokens=1),
        "max_tokens: Input should be greater than or equal to 0",
        "max_tokens",
    ),
    Case("anthropic.messages-missing", "anthropic", without(A, "messages"), A, "messages: Field required", "messages"),
    Case(
        "anthropic.messages-empty",
        "anthropic",
        anth(messages=[]),
        A,
        "messages: at least one message is required",
        "messages",
    ),
    Case(
        "anthropic.invalid-role",
        "anthropic",
        anth(messages=[USER, {"role": "tool", "content": "x"}]),
        anth(messages=[USER, {"role": "assistant", "content": "x"}, {"role": "assistant", "content": "y"}]),
        'messages: Unexpected role "tool". Allowed roles are "user" or "assistant". For instructions on how to use '
        "tools, see https://docs.anthropic.com/en/docs/tool-use",
        "messages.1.role",
    ),
    Case(
        "anthropic.system-role-misplaced",
        "anthropic",
        anth(messages=[{"role": "system", "content": "Be brief."}, USER]),
        # Opus 4.8's mid-conversation system message, right after a user message
        anth(messages=[USER, {"role": "system", "content": "Be brief."}]),
        'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter',
        "messages.0.role",
    ),
    Case(
        "anthropic.system-role-misplaced",
        "anthropic",
        anth(messages=[USER, {"role": "assistant", "content": "Hello"}, {"role": "system", "content": "Be brief."}]),
        anth(system=[{"type": "text", "text": "Be brief."}]),
        'messages: Unexpected role "system".',
        "messages.2.role",
    ),
    Case(
        "anthropic.tool-use-without-result",
        "anthropic",
        anth(tools=[TOOL], messages=[USER, tool_use("toolu_1", "toolu_2"), tool_result("toolu_1")]),
        anth(tools=[TOOL], messages=[USER, tool_use("toolu_1", "toolu_2"), tool_result("toolu_2", "toolu_1")]),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2. Each",
        "messages.1",
    ),
    Case(
        "anthropic.tool-use-without-result",
        "anthropic",
        anth(tools=[TOOL], messages=[USER, tool_use("toolu_1"), USER, tool_result("toolu_1")]),
        # a trailing assistant tool_use is a prefill, not a conversation missing its result
        anth(tools=[TOOL], messages=[USER, tool_use("toolu_1")]),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        "messages.1",
    ),
    Case(
        "anthropic.tool-result-without-use",
        "anthropic",
        anth(messages=[USER, {"role": "assistant", "content": "Let me see."}, tool_result("toolu_9")]),
        anth(messages=[USER, tool_use("toolu_9"), tool_result("toolu_9")]),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each",
        "messages.2.content.0.tool_use_id",
    ),
    Case(
        "anthropic.tool-result-not-first",
        "anthropic",
        anth(messages=[USER, tool_use("toolu_1"), tool_result("toolu_1", text="Here:", text_first=True)]),
        anth(messages=[USER, tool_use("toolu_1"), tool_result("toolu_1", text="And also this.")]),
        "messages.2.content.0: In the user message containing tool results, the tool_result blocks must come first",
        "messages.2.content.0",
    ),
    Case(
        "anthropic.duplicate-tool-names",
        "anthropic",
        anth(tools=[TOOL, TOOL]),
        anth(tools=[TOOL, {**TOOL, "name": "get_time"}]),
        "tools: Tool names must be unique.",
        "tools.1.name",
    ),
    Case(
        "anthropic.tool-name-pattern",
        "anthropic",
        anth(tools=[{**TOOL, "name": "mcp.get weather"}]),
        anth(tools=[{**TOOL, "name": "mcp__get-weather_2"}, {"type": "web_search_20250305", "name": "web_search"}]),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        "tools.0.name",
    ),
    Case(
        "anthropic.tool-name-pattern",
        "anthropic",
        anth(tools=[{**TOOL, "name": "x" * 129}]),
        anth(tools=[{**TOOL, "name": "x" * 128}]),
        "tools.0.custom.name: String should have at most 128 characters",
        "tools.0.name",
    ),
    Case(
        "anthropic.cache-control-limit",
        "anthropic",
        anth(
            system=cached_system(3),
            messages=[{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": CACHE}] * 2}],
        ),
        anth(
            system=cached_system(2),
            tools=[{**TOOL, "cache_control": CACHE}],
            messages=[{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": CACHE}]}],
        ),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        None,
    ),
    Case(
        "anthropic.thinking-budget-too-small",
        "anthropic",
        anth(max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 1023}),
        # budget_tokens >= max_tokens is let through: interleaved thinking allows it
        anth(max_tokens=1024, thinking={"type": "enabled", "budget_tokens": 8192}),
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        "thinking.budget_tokens",
    ),
    Case(
        "anthropic.temperature-range",
        "anthropic",
        anth(temperature=1.5),
        anth(temperature=1),
        "temperature: range: -1 or 0..1",
        "temperature",
    ),
    # Anthropic threads: the thread's earlier messages come in `history`
    Case(
        "anthropic.tool-use-without-result",
        "anthropic",
        anth(thread={"type": "continue", "previous_message_id": "msg_0000"}, messages=[USER]),
        anth(thread={"type": "continue", "previous_message_id": "msg_0000"}, messages=[tool_result("toolu_1")]),
        "messages.0: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        "messages.0",
        context={"history": [USER, tool_use("toolu_1")]},
    ),
    Case(
        "anthropic.tool-result-without-use",
        "anthropic",
        anth(thread={"type": "continue", "previous_message_id": "msg_0000"}, messages=[tool_result("toolu_2")]),
        # a continued thread whose history is unknown is not checked across its first message
        anth(thread={"type": "continue", "previous_message_id": "msg_0000"}, messages=[tool_result("toolu_2")]),
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2.",
        "messages.0.content.0.tool_use_id",
        context={"history": [USER, {"role": "assistant", "content": "Hello"}]},
        good_context={},
    ),
    # OpenAI Chat Completions
    Case(
        "openai_chat.model-missing", "openai_chat", without(C, "model"), C, "you must provide a model parameter", None
    ),
    Case(
        "openai_chat.messages-missing",
        "openai_chat",
        without(C, "messages"),
        C,
        "Missing required parameter: 'messages'.",
        "messages",
    ),
    Case(
        "openai_chat.messages-empty",
        "openai_chat",
        chat(messages=[]),
        C,
        "Invalid 'messages': empty array. Expected an array with minimum length 1",
        "messages",
    ),
    Case(
        "openai_chat.tool-calls-without-results",
        "openai_chat",
        chat(messages=[USER, calls("call_1", "call_2"), tool_msg("call_1"), USER]),
        chat(messages=[USER, calls("call_1", "call_2"), tool_msg("call_2"), tool_msg("call_1"), USER]),
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
        "The following tool_call_ids did not have response messages: call_2",
        "messages.[1].role",
    ),
    Case(
        "openai_chat.tool-message-without-call",
        "openai_chat",
        chat(messages=[USER, {"role": "assistant", "content": "Hm."}, tool_msg("call_1")]),
        chat(messages=[USER, calls("call_1"), tool_msg("call_1")]),
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        "messages.[2].role",
    ),
    Case(
        "openai_chat.function-name-pattern",
        "openai_chat",
        chat(tools=[function("get weather")]),
        chat(tools=[function("mcp.get-weather_2")]),
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern",
        "tools[0].function.name",
    ),
    Case(
        "openai_chat.function-name-pattern",
        "openai_chat",
        chat(tools=[function("x" * 65)]),
        chat(tools=[function("x" * 64)]),
        "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, but got a string "
        "with length 65 instead.",
        "tools[0].function.name",
    ),
    Case(
        "openai_chat.temperature-range",
        "openai_chat",
        chat(temperature=2.5),
        chat(temperature=2),
        "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.",
        "temperature",
    ),
    Case(
        "openai_chat.n-below-one",
        "openai_chat",
        chat(n=0),
        chat(n=1),
        "Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead.",
        "n",
    ),
    Case(
        "openai_chat.json-schema-without-name",
        "openai_chat",
        chat(response_format={"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}),
        chat(response_format={"type": "json_schema", "json_schema": {"name": "card"}}),
        "Missing required parameter: 'response_format.json_schema.name'.",
        "response_format.json_schema.name",
    ),
    Case(
        "openai_chat.stream-options-without-stream",
        "openai_chat",
        chat(stream_options={"include_usage": True}),
        chat(stream=True, stream_options={"include_usage": True}),
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        "stream_options",
    ),
    # OpenAI Responses
    Case(
        "openai_responses.model-missing",
        "openai_responses",
        without(R, "model"),
        {"prompt": {"id": "pmpt_1"}, "input": "Hi"},  # a stored prompt carries the model
        "Missing required parameter: 'model'.",
        "model",
    ),
    Case(
        "openai_responses.output-without-call",
        "openai_responses",
        {**R, "input": [MSG, FCO]},
        {**R, "input": [MSG, FC, FCO]},
        "No tool call found for function call output with call_id call_1.",
        "input",
    ),
    Case(
        "openai_responses.output-without-call",
        "openai_responses",
        {**R, "previous_response_id": "resp_0000", "input": [FCO]},
        {**R, "previous_response_id": "resp_0000", "input": [FCO]},
        "No tool call found for function call output with call_id call_1.",
        "input",
        context={"previous_items": [MSG, {"type": "message", "role": "assistant", "content": []}]},
        good_context={"previous_items": [MSG, FC]},
    ),
    Case(
        "openai_responses.output-without-call",
        "openai_responses",
        {**R, "input": [MSG, FCO]},
        # a stored item named by id may be the call: server state, not guessed at here
        {**R, "input": [MSG, {"type": "item_reference", "id": "fc_1"}, FCO]},
        "No tool call found for function call output with call_id call_1.",
        "input",
    ),
    Case(
        "openai_responses.call-without-output",
        "openai_responses",
        {**R, "input": [MSG, FC]},
        {**R, "input": [MSG, FC, FCO]},
        "No tool output found for function call call_1.",
        "input",
    ),
    Case(
        "openai_responses.call-without-output",
        "openai_responses",
        {**R, "previous_response_id": "resp_0000", "input": [MSG]},
        # an unknown previous response (the integrator's 404) is not guessed at here
        {**R, "previous_response_id": "resp_0000", "input": [MSG]},
        "No tool output found for function call call_1.",
        "input",
        context={"previous_items": [MSG, FC]},
        good_context={},
    ),
    # Gemini
    Case(
        "gemini.contents-missing",
        "gemini",
        {"generationConfig": {}},
        G,
        "* GenerateContentRequest.contents: contents is not specified",
        "contents",
    ),
    Case(
        "gemini.contents-missing",
        "gemini",
        {"contents": []},
        {"contents": {"parts": {"text": "Hi"}}},  # protobuf JSON takes a lone object for a repeated field
        "* GenerateContentRequest.contents: contents is not specified",
        "contents",
    ),
    Case(
        "gemini.invalid-role",
        "gemini",
        {"contents": [G_USER, {"role": "assistant", "parts": [{"text": "Hello"}]}]},
        {"contents": [{"parts": [{"text": "no role"}]}, {"role": "model", "parts": [{"text": "Hello"}]}]},
        "Please use a valid role: user, model.",
        "contents[1].role",
    ),
    Case(
        "gemini.function-call-first",
        "gemini",
        {"contents": [g_calls(1), g_responses(1)]},
        {"contents": [G_USER, g_calls(1), g_responses(1)]},
        "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        "contents[0]",
    ),
    Case(
        "gemini.function-response-position",
        "gemini",
        {"contents": [g_responses(1), {"role": "model", "parts": [{"text": "Sure."}]}]},
        {"contents": [G_USER, g_calls(1, camel=False), g_responses(1, camel=False)]},
        "Please ensure that function response turn comes immediately after a function call turn.",
        "contents[0]",
    ),
    Case(  # after a model turn without calls, the API reports the count before the position
        "gemini.function-response-count",
        "gemini",
        {"contents": [G_USER, {"role": "model", "parts": [{"text": "Sure."}]}, g_responses(1)]},
        {"contents": [G_USER, g_calls(1), g_responses(1)]},
        "Please ensure that the number of function response parts is equal to the number of function call parts",
        "contents[2]",
    ),
    Case(
        "gemini.function-response-count",
        "gemini",
        {"contents": [G_USER, g_calls(2), g_responses(1)]},
        {"contents": [G_USER, g_calls(2), {**g_responses(2, camel=False), "role": "function"}]},
        "Please ensure that the number of function response parts is equal to the number of function call parts",
        "contents[2]",
    ),
    Case(
        "gemini.duplicate-function-declaration",
        "gemini",
        {**G, "tools": [*declarations("get_weather"), {"function_declarations": [{"name": "get_weather"}]}]},
        {**G, "tools": declarations("get_weather", "get_time")},
        "Duplicate function declaration found: get_weather",
        "tools[1].function_declarations[0].name",
    ),
    # Any wire
    Case(
        "any.body-for-another-wire",
        "anthropic",
        {"model": "claude-test", "max_tokens": 64, **G},
        A,
        "contents: Extra inputs are not permitted (the body looks meant for Gemini generateContent",
        "contents",
    ),
    Case(
        "any.body-for-another-wire",
        "openai_chat",
        {**A, "system": "Be brief."},
        {**C, "max_tokens": 64, "messages": [{"role": "system", "content": "Be brief."}, USER]},
        "Unrecognized request argument supplied: system (the body looks meant for Anthropic Messages",
        "system",
    ),
    Case(
        "any.body-for-another-wire",
        "openai_responses",
        {**C, "messages": [{"role": "developer", "content": "Be brief."}, USER]},
        {**R, "instructions": "Be brief."},
        "Unknown parameter: 'messages'. (the body looks meant for OpenAI Chat Completions",
        "messages",
    ),
    Case(
        "any.body-for-another-wire",
        "gemini",
        C,
        G,
        'Invalid JSON payload received. Unknown name "messages": Cannot find field.',
        "messages",
    ),
    Case(
        "any.field-type",
        "anthropic",
        anth(stream="yes"),
        anth(stream=True),
        "stream: Input should be a valid boolean",
        "stream",
    ),
    Case(
        "any.field-type",
        "anthropic",
        anth(messages="hi"),
        anth(system="Be brief."),
        "messages: Input should be a valid list",
        "messages",
    ),
    Case(
        "any.field-type",
        "openai_chat",
        chat(max_tokens="10"),
        chat(max_tokens=10, temperature=None, n=None),
        "Invalid type for 'max_tokens': expected an integer, but got a string instead.",
        "max_tokens",
    ),
    Case(
        "any.field-type",
        "openai_responses",
        {**R, "input": 3},
        {**R, "input": [MSG]},
        "Invalid type for 'input': expected a string or an array, but got an integer instead.",
        "input",
    ),
    Case(
        "any.field-type",
        "gemini",
        {"contents": "hi"},
        G,
        "Invalid value at 'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), \"hi\"",
        "contents",
    ),
]


B_USER = {"role": "user", "content": [{"text": "Weather?"}]}
B_USE = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "w", "input": {}}}]}
B_RESULT = {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "21"}]}}]}
B_TOOLS = {"tools": [{"toolSpec": {"name": "w", "inputSchema": {"json": {"type": "object"}}}}]}
CASES += [
    Case(
        "bedrock.roles-must-alternate",
        "bedrock",
        {"messages": [B_USER, B_USER]},
        {"messages": [B_USER]},
        "A conversation must alternate between user and assistant roles.",
        "messages.1.role",
    ),
    Case(
        "bedrock.tool-use-without-result",
        "bedrock",
        {"messages": [B_USER, B_USE, B_USER], "toolConfig": B_TOOLS},
        {"messages": [B_USER, B_USE, B_RESULT], "toolConfig": B_TOOLS},
        "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_1",
        "messages.2.content",
    ),
    Case(
        "bedrock.tool-result-without-use",
        "bedrock",
        {"messages": [B_RESULT], "toolConfig": B_TOOLS},
        {"messages": [B_USER], "toolConfig": B_TOOLS},
        "The number of toolResult blocks at messages.0.content exceeds the number of toolUse blocks",
        "messages.0.content",
    ),
    Case(
        "bedrock.tool-config-missing",
        "bedrock",
        {"messages": [B_USER, B_USE, B_RESULT]},
        {"messages": [B_USER, B_USE, B_RESULT], "toolConfig": B_TOOLS},
        "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
        "toolConfig",
    ),
]


# --- the rules of the second round: model-dependent, cross-field, ranges, enums, empty content, order ---------

SONNET45 = "claude-sonnet-4-5-20250929"
OPUS46 = "claude-opus-4-6"
NEW_VERSION = {"anthropic_version": "2026-10-21"}
PREFILL = {"role": "assistant", "content": "The answer is"}
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "aGk="}}
STRICT_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "string"}},
    "required": ["a"],
    "additionalProperties": False,
}
LOOSE_SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
PARTIAL_SCHEMA = {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"], "additionalProperties": False}


def strict_function(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "get_weather", "strict": True, "parameters": schema}}


def response_function(**fields: Any) -> dict[str, Any]:
    return {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}, **fields}


CASES += [
    # Anthropic: API version 2026-10-21 (the anthropic 2.x SDKs' own) removed the sampling parameters
    Case(
        "anthropic.sampling-parameters-removed",
        "anthropic",
        anth(temperature=0.5),
        anth(temperature=0.5),  # the same body on API version 2023-06-01 is fine
        "temperature: Extra inputs are not permitted",
        "temperature",
        context=NEW_VERSION,
        good_context={"anthropic_version": "2023-06-01"},
    ),
    Case(
        "anthropic.sampling-parameters-removed",
        "anthropic",
        anth(top_k=5),
        anth(),
        "top_k: Extra inputs are not permitted",
        "top_k",
        context=NEW_VERSION,
    ),
    Case(
        "anthropic.invalid-role",
        "anthropic",
        anth(messages=[USER, {"role": "bot", "content": "x"}]),
        anth(messages=[USER, {"role": "assistant", "content": "x"}]),
        'messages: Unexpected role "bot". Allowed roles are "user" or "assistant".',
        "messages.1.role",
    ),
    Case(
        "anthropic.empty-content",
        "anthropic",
        anth(messages=[{"role": "user", "content": ""}]),
        anth(messages=[USER, {"role": "assistant", "content": ""}]),  # the optional final assistant message
        "messages.0: all messages must have non-empty content except for the optional final assistant message",
        "messages.0.content",
    ),
    Case(
        "anthropic.empty-content",
        "anthropic",
        anth(messages=[USER, {"role": "assistant", "content": []}, USER]),
        anth(messages=[USER, {"role": "assistant", "content": "Hm."}, USER]),
        "messages.1: all messages must have non-empty content",
        "messages.1.content",
    ),
    Case(
        "anthropic.empty-text-block",
        "anthropic",
        anth(messages=[{"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "Hi"}]}]),
        anth(messages=[{"role": "user", "content": [{"type": "text", "text": " "}, {"type": "text", "text": "Hi"}]}]),
        "messages: text content blocks must be non-empty",
        "messages.0.content.0.text",
    ),
    Case(
        "anthropic.final-assistant-trailing-whitespace",
        "anthropic",
        anth(messages=[USER, {"role": "assistant", "content": "The answer is "}]),
        anth(messages=[USER, {"role": "assistant", "content": "The answer is "}, USER]),  # not final: fine
        "messages: final assistant content cannot end with trailing whitespace",
        "messages.1.content",
    ),
    Case(
        "anthropic.image-media-type",
        "anthropic",
        anth(
            messages=[
                {"role": "user", "content": [{**IMAGE, "source": {**IMAGE["source"], "media_type": "image/jpg"}}]}
            ]
        ),
        anth(messages=[{"role": "user", "content": [IMAGE, {"type": "image", "source": {"type": "url", "url": "x"}}]}]),
        "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' "
        "or 'image/webp'",
        "messages.0.content.0.image.source.base64.media_type",
    ),
    Case(
        "anthropic.image-media-type",
        "anthropic",
        anth(
            tools=[TOOL],
            messages=[
                USER,
                tool_use("toolu_1"),
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": [{**IMAGE, "source": {**IMAGE["source"], "media_type": "image/bmp"}}],
                        }
                    ],
                },
            ],
        ),
        anth(
            tools=[TOOL],
            messages=[
                USER,
                tool_use("toolu_1"),
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [IMAGE]}]},
            ],
        ),
        "messages.2.content.0.tool_result.content.0.image.source.base64.media_type: Input should be 'image/jpeg'",
        "messages.2.content.0.tool_result.content.0.image.source.base64.media_type",
    ),
    Case(
        "anthropic.tool-input-schema-missing",
        "anthropic",
        anth(tools=[{"name": "get_weather", "description": "Weather."}]),
        anth(tools=[TOOL, {"type": "web_search_20250305", "name": "web_search"}]),  # server tools carry no schema
        "tools.0.custom.input_schema: Field required",
        "tools.0.input_schema",
    ),
    Case(
        "anthropic.tool-input-schema-missing",
        "anthropic",
        anth(tools=[{"name": "get_weather", "input_schema": {"properties": {}}}]),
        anth(tools=[{"name": "get_weather", "input_schema": {"type": "object"}}]),
        "tools.0.custom.input_schema.type: Field required",
        "tools.0.input_schema.type",
    ),
    Case(
        "anthropic.thinking-budget-not-below-max-tokens",
        "anthropic",
        anth(model=SONNET45, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 4096}),
        anth(model=SONNET45, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 4096}),
        "`max_tokens` must be greater than `thinking.budget_tokens`.",
        "max_tokens",
        good_context={"betas": ["interleaved-thinking-2025-05-14"]},  # interleaved thinking lifts it
    ),
    Case(
        "anthropic.thinking-budget-not-below-max-tokens",
        "anthropic",
        anth(model=SONNET45, max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 8192}),
        anth(max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 8192}),  # a model the table does not list
        "`max_tokens` must be greater than `thinking.budget_tokens`.",
        "max_tokens",
    ),
    Case(
        "anthropic.thinking-with-forced-tool-choice",
        "anthropic",
        anth(max_tokens=2048, thinking=THINKING, tools=[TOOL], tool_choice={"type": "any"}),
        anth(max_tokens=2048, thinking=THINKING, tools=[TOOL], tool_choice={"type": "auto"}),
        "Thinking may not be enabled when tool_choice forces tool use.",
        "tool_choice",
    ),
    Case(
        "anthropic.thinking-with-forced-tool-choice",
        "anthropic",
        anth(max_tokens=2048, thinking=THINKING, tools=[TOOL], tool_choice={"type": "tool", "name": "get_weather"}),
        anth(max_tokens=2048, tools=[TOOL], tool_choice={"type": "tool", "name": "get_weather"}),
        "Thinking may not be enabled when tool_choice forces tool use.",
        "tool_choice",
    ),
    Case(
        "anthropic.thinking-with-temperature",
        "anthropic",
        anth(max_tokens=2048, thinking=THINKING, temperature=0.5),
        anth(max_tokens=2048, thinking=THINKING, temperature=1),
        "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.",
        "temperature",
    ),
    Case(
        "anthropic.thinking-with-temperature",
        "anthropic",
        anth(thinking={"type": "adaptive"}, temperature=0),
        anth(thinking={"type": "disabled"}, temperature=0),
        "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.",
        "temperature",
    ),
    Case(
        "anthropic.max-tokens-above-model-limit",
        "anthropic",
        anth(model="claude-sonnet-4-20250514", max_tokens=100_000),
        anth(model="claude-sonnet-4-20250514", max_tokens=64_000),
        "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514",
        "max_tokens",
    ),
    Case(
        "anthropic.max-tokens-above-model-limit",
        "anthropic",
        anth(model=OPUS46, max_tokens=200_000),
        anth(model="claude-opus-4-6-next", max_tokens=200_000),  # a model the table does not list
        "max_tokens: 200000 > 128000, which is the maximum allowed number of output tokens for claude-opus-4-6",
        "max_tokens",
    ),
    Case(
        "anthropic.max-tokens-above-model-limit",
        "anthropic",
        anth(model="claude-sonnet-4-5", max_tokens=100_000),
        anth(model="claude-sonnet-4-5", max_tokens=100_000),
        "max_tokens: 100000 > 64000",
        "max_tokens",
        good_context={"betas": ["output-128k-2025-02-19"]},  # an output beta raises the limit
    ),
    Case(
        "anthropic.prefill-unsupported",
        "anthropic",
        anth(model=OPUS46, messages=[USER, PREFILL]),
        anth(model=SONNET45, messages=[USER, PREFILL]),  # Sonnet 4.5 still takes a prefill
        "This model does not support assistant message prefill. The conversation must end with a user message.",
        "messages.1",
    ),
    Case(
        "anthropic.prefill-unsupported",
        "anthropic",
        anth(
            model="claude-sonnet-4-6",
            messages=[USER, {"role": "assistant", "content": [{"type": "text", "text": "{"}]}],
        ),
        # a pause_turn continuation ends with the assistant's server tool use: not a prefill
        anth(
            model="claude-sonnet-4-6",
            messages=[
                USER,
                {
                    "role": "assistant",
                    "content": [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}],
                },
            ],
        ),
        "This model does not support assistant message prefill.",
        "messages.1",
    ),
    Case(
        "anthropic.temperature-with-top-p",
        "anthropic",
        anth(model=SONNET45, temperature=0.7, top_p=0.9),
        anth(model="claude-3-7-sonnet-20250219", temperature=0.7, top_p=0.9),
        "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
        "top_p",
    ),
    # OpenAI Chat Completions
    Case(
        "openai_chat.invalid-role",
        "openai_chat",
        chat(messages=[{"role": "bot", "content": "Hi"}]),
        chat(messages=[{"role": "developer", "content": "Be brief."}, USER]),
        "Invalid value: 'bot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and "
        "'developer'.",
        "messages[0].role",
    ),
    Case(
        "openai_chat.tool-choice-without-tools",
        "openai_chat",
        chat(tool_choice="auto"),
        chat(tool_choice="auto", tools=[function("get_weather")]),
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        "tool_choice",
    ),
    Case(
        "openai_chat.parallel-tool-calls-without-tools",
        "openai_chat",
        chat(parallel_tool_calls=False, tools=[]),
        chat(parallel_tool_calls=False, tools=[function("get_weather")]),
        "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
        "parallel_tool_calls",
    ),
    Case(
        "openai_chat.strict-function-schema",
        "openai_chat",
        chat(tools=[strict_function(LOOSE_SCHEMA)]),
        chat(tools=[strict_function(STRICT_SCHEMA), function("loose")]),  # a non-strict function is not judged
        "Invalid schema for function 'get_weather': In context=(), 'additionalProperties' is required to be supplied "
        "and to be false.",
        "tools[0].function.parameters",
    ),
    Case(
        "openai_chat.strict-function-schema",
        "openai_chat",
        chat(
            tools=[
                strict_function(
                    {**STRICT_SCHEMA, "properties": {"a": {"type": "object", "properties": {}}}, "required": ["a"]}
                )
            ]
        ),
        chat(
            tools=[
                strict_function(
                    {
                        **STRICT_SCHEMA,
                        "properties": {"a": {"type": "object", "properties": {}, "additionalProperties": False}},
                        "required": ["a"],
                    }
                )
            ]
        ),
        "Invalid schema for function 'get_weather': In context=('properties', 'a'), 'additionalProperties' is "
        "required to be supplied and to be false.",
        "tools[0].function.parameters",
    ),
    Case(
        "openai_chat.strict-json-schema",
        "openai_chat",
        chat(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "card", "strict": True, "schema": PARTIAL_SCHEMA},
            }
        ),
        chat(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "card", "strict": False, "schema": PARTIAL_SCHEMA},
            }
        ),
        "Invalid schema for response_format 'card': In context=(), 'required' is required to be supplied and to be an "
        "array including every key in properties. Missing 'b'.",
        "response_format",
    ),
    Case(
        "openai_chat.penalty-range",
        "openai_chat",
        chat(presence_penalty=3),
        chat(presence_penalty=2, frequency_penalty=-2),
        "Invalid 'presence_penalty': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
        "presence_penalty",
    ),
    Case(
        "openai_chat.top-logprobs-range",
        "openai_chat",
        chat(logprobs=True, top_logprobs=21),
        chat(logprobs=True, top_logprobs=20),
        "Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20, but got 21 instead.",
        "top_logprobs",
    ),
    Case(
        "openai_chat.json-object-without-json",
        "openai_chat",
        chat(response_format={"type": "json_object"}),
        chat(
            response_format={"type": "json_object"}, messages=[{"role": "system", "content": "Answer in JSON."}, USER]
        ),
        "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
        "messages",
    ),
    Case(
        "openai_chat.max-tokens-unsupported-model",
        "openai_chat",
        chat(model="o3-mini", max_tokens=100),
        chat(model="o3-mini", max_completion_tokens=100),
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        "max_tokens",
    ),
    Case(
        "openai_chat.temperature-unsupported-model",
        "openai_chat",
        chat(model="o4-mini-2025-04-16", temperature=0.5),
        chat(model="o4-mini-2025-04-16", temperature=1),
        "Unsupported value: 'temperature' does not support 0.5 with this model. Only the default (1) value is "
        "supported.",
        "temperature",
    ),
    # OpenAI Responses
    Case(
        "openai_responses.previous-response-with-conversation",
        "openai_responses",
        {**R, "previous_response_id": "resp_1", "conversation": "conv_1"},
        {**R, "conversation": "conv_1"},
        "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or "
        "'conversation'.",
        "previous_response_id",
    ),
    Case(
        "openai_responses.invalid-role",
        "openai_responses",
        {**R, "input": [MSG, {"role": "tool", "content": "Sunny", "tool_call_id": "call_1"}]},
        {**R, "input": [{"role": "developer", "content": "Be brief."}, MSG]},
        "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.",
        "input[1].role",
    ),
    Case(
        "openai_responses.tool-without-name",
        "openai_responses",
        {**R, "tools": [function("get_weather")]},
        {**R, "tools": [response_function(), {"type": "web_search"}]},
        "Missing required parameter: 'tools[0].name'.",
        "tools[0].name",
    ),
    Case(
        "openai_responses.unknown-parameter",
        "openai_responses",
        {**R, "max_tokens": 100},
        {**R, "max_output_tokens": 100},
        "Unknown parameter: 'max_tokens'.",
        "max_tokens",
    ),
    Case(
        "openai_responses.temperature-range",
        "openai_responses",
        {**R, "temperature": 3},
        {**R, "temperature": 2},
        "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
        "temperature",
    ),
    Case(
        "openai_responses.max-output-tokens-below-minimum",
        "openai_responses",
        {**R, "max_output_tokens": 10},
        {**R, "max_output_tokens": 16},
        "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead.",
        "max_output_tokens",
    ),
    Case(
        "openai_responses.json-schema-without-name",
        "openai_responses",
        {**R, "text": {"format": {"type": "json_schema", "schema": STRICT_SCHEMA}}},
        {**R, "text": {"format": {"type": "json_schema", "name": "card", "schema": STRICT_SCHEMA}}},
        "Missing required parameter: 'text.format.name'.",
        "text.format.name",
    ),
    Case(
        "openai_responses.strict-json-schema",
        "openai_responses",
        {**R, "text": {"format": {"type": "json_schema", "name": "card", "strict": True, "schema": LOOSE_SCHEMA}}},
        {**R, "text": {"format": {"type": "json_schema", "name": "card", "strict": True, "schema": STRICT_SCHEMA}}},
        "Invalid schema for response_format 'card': In context=(), 'additionalProperties' is required to be supplied "
        "and to be false.",
        "text.format.schema",
    ),
    Case(
        "openai_responses.strict-function-schema",
        "openai_responses",
        {**R, "tools": [response_function(strict=True, parameters=PARTIAL_SCHEMA)]},
        {**R, "tools": [response_function(strict=True, parameters=STRICT_SCHEMA), response_function(name="loose")]},
        "Invalid schema for function 'get_weather': In context=(), 'required' is required to be supplied and to be an "
        "array including every key in properties. Missing 'b'.",
        "tools[0].parameters",
    ),
    # Gemini
    Case(
        "gemini.empty-parts",
        "gemini",
        {"contents": [G_USER, {"role": "model", "parts": []}]},
        {"contents": [G_USER, {"role": "model", "parts": [{"text": "", "thought": True}]}]},
        "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.",
        "contents[1].parts",
    ),
    Case(
        "gemini.function-call-first",
        "gemini",
        {"contents": [{"role": "model", "parts": [{"text": "Let me see."}]}, g_calls(1), g_responses(1)]},
        # consecutive model contents are one turn: google-genai's streamed automatic function calling sends them
        {"contents": [G_USER, {"role": "model", "parts": [{"text": "Let me see."}]}, g_calls(1), g_responses(1)]},
        "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        "contents[1]",
    ),
    Case(
        "gemini.function-name-pattern",
        "gemini",
        {**G, "tools": declarations("get weather")},
        {**G, "tools": declarations("mcp:get.weather-2_x")},
        "* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name.",
        "tools[0].function_declarations[0].name",
    ),
    Case(
        "gemini.temperature-range",
        "gemini",
        {**G, "generationConfig": {"temperature": 3}},
        {**G, "generation_config": {"temperature": 2}},
        "Unable to submit request because it has a temperature value of 3 but the supported range is from 0 "
        "(inclusive) to 2.0001 (exclusive).",
        "generation_config.temperature",
    ),
    Case(
        "gemini.response-mime-type",
        "gemini",
        {**G, "generationConfig": {"responseMimeType": "text/yaml"}},
        {**G, "generationConfig": {"responseMimeType": "application/yaml"}},
        "* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are text/plain, "
        "application/json, application/xml, application/yaml and text/x.enum",
        "generation_config.response_mime_type",
    ),
    # Bedrock Converse
    Case(
        "bedrock.first-message-not-user",
        "bedrock",
        {"messages": [{"role": "assistant", "content": [{"text": "Hello!"}]}, B_USER]},
        {"messages": [{"role": "assistant", "content": [{"text": "Hello!"}]}, B_USER]},
        "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
        "messages.0.role",
        context={"model": "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
        good_context={"model": "openai.gpt-oss-120b-1:0"},  # a model observed to accept it
    ),
    Case(
        "bedrock.invalid-role",
        "bedrock",
        {"messages": [B_USER, {"role": "human", "content": [{"text": "Hi"}]}]},
        {"messages": [B_USER, {"role": "assistant", "content": [{"text": "Hi"}]}]},
        "1 validation error detected: Value 'human' at 'messages.2.member.role' failed to satisfy constraint: Member "
        "must satisfy enum value set: [user, assistant, system]",
        "messages.1.role",
    ),
    Case(
        "bedrock.blank-text",
        "bedrock",
        {"messages": [{"role": "user", "content": [{"text": " \n"}]}]},
        {"messages": [{"role": "user", "content": [{"text": "."}]}]},
        "The text field in the ContentBlock object at messages.0.content.0 is blank. Add text to the text field, and "
        "try again.",
        "messages.0.content.0.text",
    ),
    Case(
        "bedrock.tool-name-pattern",
        "bedrock",
        {"messages": [B_USER], "toolConfig": {"tools": [*B_TOOLS["tools"], {"toolSpec": {"name": "get weather"}}]}},
        {"messages": [B_USER], "toolConfig": {"tools": [*B_TOOLS["tools"], {"toolSpec": {"name": "get_weather-2"}}]}},
        "1 validation error detected: Value 'get weather' at 'toolConfig.tools.2.member.toolSpec.name' failed to "
        "satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
        "toolConfig.tools.1.toolSpec.name",
    ),
    Case(
        "bedrock.tool-name-pattern",
        "bedrock",
        {"messages": [B_USER], "toolConfig": {"tools": [{"toolSpec": {"name": "x" * 65}}]}},
        {"messages": [B_USER], "toolConfig": {"tools": [{"toolSpec": {"name": "x" * 64}}]}},
        "1 validation error detected: Value '" + "x" * 65 + "' at 'toolConfig.tools.1.member.toolSpec.name' failed to "
        "satisfy constraint: Member must have length less than or equal to 64",
        "toolConfig.tools.0.toolSpec.name",
    ),
    Case(
        "bedrock.inference-config-range",
        "bedrock",
        {"messages": [B_USER], "inferenceConfig": {"temperature": 1.5}},
        {"messages": [B_USER], "inferenceConfig": {"temperature": 1, "topP": 1}},
        "1 validation error detected: Value '1.5' at 'inferenceConfig.temperature' failed to satisfy constraint: "
        "Member must have value less than or equal to 1",
        "inferenceConfig.temperature",
    ),
    Case(
        "bedrock.inference-config-range",
        "bedrock",
        {"messages": [B_USER], "inferenceConfig": {"topP": 2}},
        {"messages": [B_USER], "inferenceConfig": {"topP": 0.9}},
        "1 validation error detected: Value '2' at 'inferenceConfig.topP' failed to satisfy constraint: Member must "
        "have value less than or equal to 1",
        "inferenceConfig.topP",
    ),
    # Bedrock InvokeModel: Claude's Messages body, without `model` or `stream`, with `anthropic_version`
    Case(
        "bedrock.invoke-anthropic-version-missing",
        "bedrock_invoke",
        {"max_tokens": 64, "messages": [USER]},
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": [USER]},
        "Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try "
        "again.",
        "anthropic_version",
    ),
    Case(
        "bedrock.invoke-extraneous-key",
        "bedrock_invoke",
        {"anthropic_version": "bedrock-2023-05-31", "model": "claude-test", "max_tokens": 64, "messages": [USER]},
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": [USER]},
        "Malformed input request: #: extraneous key [model] is not permitted, please reformat your input and try "
        "again.",
        "model",
    ),
    Case(
        "bedrock.invoke-extraneous-key",
        "bedrock_invoke",
        {"anthropic_version": "bedrock-2023-05-31", "stream": True, "max_tokens": 64, "messages": [USER]},
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": [USER]},
        "Malformed input request: #: extraneous key [stream] is not permitted",
        "stream",
    ),
    Case(  # the Messages rules run on the invoke body, relayed as Bedrock relays the model's refusals
        "anthropic.messages-empty",
        "bedrock_invoke",
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": []},
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": [USER]},
        "The model returned the following errors: messages: at least one message is required",
        "messages",
    ),
    Case(
        "anthropic.sampling-parameters-removed",
        "bedrock_invoke",
        {"anthropic_version": "2026-10-21", "max_tokens": 64, "messages": [USER], "temperature": 0.5},
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": [USER], "temperature": 0.5},
        "The model returned the following errors: temperature: Extra inputs are not permitted",
        "temperature",
    ),
    # Unknown fields: Chat Completions' `stop` on the Messages API
    Case(
        "any.body-for-another-wire",
        "anthropic",
        anth(stop=["\n"]),
        anth(stop_sequences=["\n"]),
        "stop: Extra inputs are not permitted (the body looks meant for OpenAI Chat Completions",
        "stop",
    ),
]


WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}
MCP_SERVER = {"type": "url", "url": "https://mcp.example/mcp", "name": "docs"}
CASES += [
    Case(
        "anthropic.server-tool-version",
        "anthropic",
        anth(tools=[{"type": "web_search", "name": "web_search"}]),  # OpenAI's form
        anth(tools=[WEB_SEARCH]),
        "tools.0: Input tag 'web_search' found using 'type' does not match any of the expected tags: "
        "'web_search_20250305'",
        "tools.0.type",
    ),
    Case(
        "anthropic.server-tool-version",
        "anthropic",
        anth(tools=[{"type": "web_fetch_20250101", "name": "web_fetch"}]),  # no version of that date
        # a version newer than wirescript knows is let through: the API may have released it
        anth(tools=[{"type": "web_fetch_20991231", "name": "web_fetch"}, {"type": "tool_search_tool_bm25"}]),
        "tools.0: Input tag 'web_fetch_20250101' found using 'type' does not match any of the expected tags:",
        "tools.0.type",
    ),
    Case(
        "anthropic.server-tool-empty-domains",
        "anthropic",
        anth(tools=[{**WEB_SEARCH, "blocked_domains": []}]),
        anth(tools=[{**WEB_SEARCH, "blocked_domains": ["spam.example"], "allowed_domains": None}]),
        "tools.0.web_search_20250305.blocked_domains: Empty list of domains is ambiguous. Provide at least one "
        "domain or null.",
        "tools.0.blocked_domains",
    ),
    Case(
        "anthropic.server-tool-domains-both",
        "anthropic",
        anth(tools=[{**WEB_SEARCH, "allowed_domains": ["a.example"], "blocked_domains": ["b.example"]}]),
        anth(tools=[{**WEB_SEARCH, "allowed_domains": ["a.example"]}]),
        "tools.0.web_search_20250305: Cannot specify both allowed_domains and blocked_domains in the same request",
        "tools.0.blocked_domains",
    ),
    Case(
        "anthropic.mcp-server-toolset",
        "anthropic",
        anth(mcp_servers=[MCP_SERVER], tools=[{"type": "mcp_toolset", "mcp_server_name": "wiki"}]),
        anth(mcp_servers=[MCP_SERVER], tools=[{"type": "mcp_toolset", "mcp_server_name": "docs"}]),
        "tools.0.mcp_server_name: 'wiki' is not the name of a server in `mcp_servers`",
        "tools.0.mcp_server_name",
    ),
    Case(
        "anthropic.mcp-server-toolset",
        "anthropic",
        anth(mcp_servers=[MCP_SERVER], tools=[{"type": "mcp_toolset", "mcp_server_name": "docs"}] * 2),
        # the deprecated connector (mcp-client-2025-04-04) has no toolsets: its servers are not checked
        anth(mcp_servers=[{**MCP_SERVER, "tool_configuration": {"enabled": True}}]),
        "tools.1.mcp_server_name: the MCP server 'docs' has a toolset already",
        "tools.1.mcp_server_name",
    ),
    Case(
        "anthropic.mcp-server-toolset",
        "anthropic",
        anth(
            mcp_servers=[MCP_SERVER, {**MCP_SERVER, "name": "wiki"}],
            tools=[{"type": "mcp_toolset", "mcp_server_name": "docs"}],
        ),
        anth(
            mcp_servers=[MCP_SERVER, {**MCP_SERVER, "name": "wiki"}],
            tools=[{"type": "mcp_toolset", "mcp_server_name": n} for n in ("docs", "wiki")],
        ),
        "mcp_servers.1: the MCP server 'wiki' is not referenced by an MCP toolset",
        "mcp_servers.1",
    ),
    Case(
        "openai_responses.builtin-tool-field-missing",
        "openai_responses",
        {**R, "tools": [{"type": "web_search"}, {"type": "code_interpreter"}]},
        {**R, "tools": [{"type": "web_search"}, {"type": "code_interpreter", "container": {"type": "auto"}}]},
        "Missing required parameter: 'tools[1].container'.",
        "tools[1].container",
    ),
    Case(
        "openai_responses.builtin-tool-field-missing",
        "openai_responses",
        {**R, "tools": [{"type": "mcp", "server_url": "https://mcp.example/mcp"}]},
        {**R, "tools": [{"type": "mcp", "server_label": "docs", "server_url": "https://mcp.example/mcp"}]},
        "Missing required parameter: 'tools[0].server_label'.",
        "tools[0].server_label",
    ),
    Case(
        "openai_responses.builtin-tool-field-missing",
        "openai_responses",
        {**R, "tools": [{"type": "file_search"}]},
        {**R, "tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}]},
        "Missing required parameter: 'tools[0].vector_store_ids'.",
        "tools[0].vector_store_ids",
    ),
]


def run(
    wire: str, body: dict[str, Any], context: dict[str, Any], skip: frozenset[str] = frozenset()
) -> Violation | None:
    if wire == "bedrock_invoke":
        return check_invoke(body, "anthropic.claude-sonnet-4-5-20250929-v1:0", skip=skip, **context)
    return check_request(wire, body, skip=skip, **context)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule}-{i}" for i, c in enumerate(CASES)])
def test_each_rule_refuses_its_case_and_lets_the_nearest_valid_body_through(case: Case) -> None:
    violation = run(case.wire, case.bad, case.context)
    assert violation is not None, f"{case.rule} did not refuse {json.dumps(case.bad)}"
    assert violation.rule.id == case.rule
    assert violation.rule is RULES[case.rule]
    assert violation.message.startswith(case.message), violation.message
    assert violation.param == case.param
    good_context = case.context if case.good_context is None else case.good_context
    assert run(case.wire, case.good, good_context) is None
    # Skipping the rule lets the refused body past that rule.
    skipped = run(case.wire, case.bad, case.context, skip=frozenset({case.rule}))
    assert skipped is None or skipped.rule.id != case.rule


def test_every_rule_has_a_case_a_source_and_a_summary() -> None:
    covered = {c.rule for c in CASES} | {"openai_responses.previous-response-not-found"}
    assert {rule_id for rule_id, rule in RULES.items() if rule.retired is None} == covered
    assert {rule_id for rule_id, rule in RULES.items() if rule.retired} == {
        "anthropic.thinking-not-first",
        "anthropic.thinking-in-final-message-when-disabled",
    }
    for rule_id, rule in RULES.items():
        assert rule.id == rule_id
        assert rule.provider == rule_id.split(".")[0]
        assert rule.provider in (*WIRES, "bedrock", "any")
        assert rule.summary
        assert rule.source
        assert rule.status in (400, 404)


def test_an_unknown_previous_response_is_a_404_with_the_real_wording() -> None:
    violation = previous_response_not_found("resp_9999")
    assert violation.rule.status == 404
    assert violation.rule is RULES["openai_responses.previous-response-not-found"]
    assert violation.message == "Previous response with id 'resp_9999' not found."
    assert violation.param == "previous_response_id"


def test_the_per_wire_checks_are_the_ones_check_request_runs() -> None:
    bad = anth(messages=[])
    assert check_anthropic(bad) == check_request("anthropic", bad)
    assert check_openai_chat(chat(n=0)) == check_request("openai_chat", chat(n=0))
    assert check_openai_responses({**R, "input": [FC]}) == check_request("openai_responses", {**R, "input": [FC]})
    assert check_gemini({"contents": []}) == check_request("gemini", {"contents": []})
    # The per-wire checks leave the any.* rules to check_wire_mismatch.
    assert check_anthropic(anth(stream="yes")) is None
    assert check_wire_mismatch("anthropic", anth(stream="yes")) is not None
    assert check_wire_mismatch("anthropic", anth(stream="yes"), skip=frozenset({"any.field-type"})) is None
    assert check_wire_mismatch("unknown-wire", {"contents": []}) is None


def test_null_optional_fields_and_integral_floats_are_not_refused() -> None:
    assert check_request("openai_chat", chat(temperature=None, n=None, stream=None, stream_options=None)) is None
    assert check_request("anthropic", anth(max_tokens=64.0)) is None
    assert check_request("openai_chat", {**C, "max_tokens": 10.0}) is None


def test_odd_values_never_crash_a_check() -> None:
    odd: list[Any] = [None, 1, "x", [], {}, [1, "x", None, {}], {"type": 1}, True]
    keys = ["model", "max_tokens", "messages", "tools", "system", "thinking", "input", "contents", "tool_choice"]
    for wire in WIRES:
        for key in keys:
            for value in odd:
                check_request(wire, {key: value}, history=[{"role": 1}], previous_items=[None, {"type": 3}])
                check_request(wire, {"messages": [{"role": "user", "content": value}], "contents": [{"parts": value}]})


STRICT_VOCABULARY = [
    "model", "max_tokens", "messages", "role", "content", "type", "id", "tool_use_id", "tool_use", "tool_result",
    "thinking", "text", "tools", "name", "cache_control", "system", "thread", "tool_calls", "tool_call_id",
    "function", "input", "call_id", "function_call", "function_call_output", "contents", "parts", "functionCall",
    "function_response", "functionDeclarations", "budget_tokens", "temperature", "n", "stream", "stream_options",
    "response_format", "json_schema", "previous_response_id", "user", "assistant", "model", "tool", "enabled",
]  # fmt: skip


@settings(max_examples=examples(100), deadline=None)
@given(body=odd_bodies(STRICT_VOCABULARY, STRICT_VOCABULARY), wire=st.sampled_from(WIRES))
def test_property_any_json_object_is_checked_without_crashing(body: dict[str, Any], wire: str) -> None:
    messages = body.get("messages")
    history = messages if isinstance(messages, list) else None
    violation = check_request(wire, body, history=history, previous_items=history)
    assert violation is None or violation.rule is RULES[violation.rule.id]


# --- no false positives: what the real SDKs send for valid conversations ----------------------------


def check_record(record: RecordedRequest) -> Violation | None:
    """Run the rules on one recorded request, with the context an integrator has (thread history, stored response)."""
    assert record.provider in WIRES
    assert isinstance(record.body, dict)
    earlier = record.conversation[: len(record.conversation) - len(record.messages)]
    context: dict[str, Any] = {}
    thread = record.body.get("thread")
    if record.provider == "anthropic" and isinstance(thread, dict) and thread.get("type") == "continue":
        context["history"] = earlier
    if record.provider == "openai_responses" and record.body.get("previous_response_id"):
        context["previous_items"] = earlier
    return check_request(record.provider, record.body, **context)


def assert_none_refused(stub: ScriptTransport, count: int | None = None) -> None:
    assert stub.requests, "no traffic was recorded"
    if count is not None:
        assert len(stub.requests) == count
    for record in stub.requests:
        violation = check_record(record)
        assert violation is None, f"{record.summary()}: {violation}\n{json.dumps(record.body)[:2000]}"
    assert stub.overflow == 0


PARALLEL = {"tools": [{"name": "get_weather", "input": {"city": "Paris"}}, {"name": "get_weather", "input": {}}]}
THINK_TOOL = {"thinking": "I need the weather.", "tool": {"name": "get_weather", "input": {"city": "Paris"}}}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def anthropic_loop(
    stub: ScriptTransport, *, thinking: bool = False, stream: bool = False, **params: Any
) -> list[dict[str, Any]]:
    """A hand-written tool loop on the real anthropic SDK that passes every content block back."""
    client = anthropic_client(stub)
    messages: list[dict[str, Any]] = params.pop("messages", [{"role": "user", "content": "Weather in Paris?"}])
    extra: dict[str, Any] = {"thinking": {"type": "enabled", "budget_tokens": 1024}} if thinking else {}
    for _ in range(6):
        kwargs = {"model": "claude-test", "max_tokens": 2048, "tools": [WEATHER_TOOL], "messages": messages}
        if stream:
            with client.messages.stream(**kwargs, **extra, **params) as streamed:
                reply = streamed.get_final_message()
        else:
            reply = client.messages.create(**kwargs, **extra, **params)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        if reply.stop_reason != "tool_use":
            break
        results = [
            {"type": "tool_result", "tool_use_id": b.id, "content": f"Sunny in {b.input.get('city', '?')}"}
            for b in reply.content
            if b.type == "tool_use"
        ]
        messages.append({"role": "user", "content": [*results, {"type": "text", "text": "Thanks."}]})
    return messages


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_anthropic_text_parallel_tools_and_thinking_loops_are_accepted(stream: bool) -> None:
    stub = ScriptTransport([THINK_TOOL, {"thinking": "Both.", **PARALLEL}, {"thinking": "Done.", "text": "Sunny."}])
    anthropic_loop(stub, thinking=True, stream=stream)
    assert_none_refused(stub, 3)
    first_block = stub.requests[1].body["messages"][1]["content"][0]
    assert first_block["type"] == "thinking"
    assert first_block["signature"]
    stub = ScriptTransport([PARALLEL, "Done."])
    anthropic_loop(stub, stream=stream, system="Be brief.")
    assert_none_refused(stub, 2)


def test_anthropic_images_and_a_cached_system_prompt_are_accepted() -> None:
    stub = ScriptTransport(["A red dot.", "Yes."])
    client = anthropic_client(stub)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    system = [
        {"type": "text", "text": "You describe images.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Long context " * 50, "cache_control": {"type": "ephemeral", "ttl": "1h"}},
    ]
    content = [image, {"type": "text", "text": "What is this?", "cache_control": {"type": "ephemeral"}}]
    messages: list[Any] = [{"role": "user", "content": content}]
    reply = client.messages.create(model="claude-test", max_tokens=64, system=system, messages=messages)
    messages += [
        {"role": "assistant", "content": reply.content},
        {"role": "user", "content": [{"type": "text", "text": "Sure?", "cache_control": {"type": "ephemeral"}}]},
    ]
    client.messages.create(model="claude-test", max_tokens=64, system=system, messages=messages)
    assert_none_refused(stub, 2)


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"Sunny in {city}"


@pytest.mark.parametrize("thinking", [False, True], ids=["plain", "thinking"])
def test_the_anthropic_tool_runner_and_its_threads_are_accepted(thinking: bool) -> None:
    first = THINK_TOOL if thinking else {"tool": THINK_TOOL["tool"]}
    last = {"thinking": "Done.", "text": "Sunny."} if thinking else {"text": "Sunny."}
    stub = ScriptTransport([first, {"thinking": "More.", **PARALLEL} if thinking else PARALLEL, last])
    extra: dict[str, Any] = {"thinking": {"type": "enabled", "budget_tokens": 1024}} if thinking else {}
    runner = anthropic_client(stub).beta.messages.tool_runner(
        model="claude-test",
        max_tokens=2048,
        system="Be brief.",
        tools=[anthropic.beta_tool(get_weather)],
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        **extra,
    )
    assert runner.until_done().content[-1].text == "Sunny."
    assert_none_refused(stub, 3)
    if ANTHROPIC_MAJOR >= 1:  # anthropic 2.x threads: the later requests carry only the new messages
        assert stub.requests[2].body["thread"]["type"] == "continue"
        assert len(stub.requests[2].body["messages"]) == 1


@pytest.mark.skipif(not hasattr(anthropic.resources.Messages, "tool_runner"), reason="no messages.tool_runner")
def test_the_anthropic_non_beta_tool_runner_is_accepted() -> None:
    stub = ScriptTransport([{"tool": THINK_TOOL["tool"]}, "Sunny."])
    runner = anthropic_client(stub).messages.tool_runner(
        model="claude-test",
        max_tokens=256,
        tools=[anthropic.beta_tool(get_weather)],
        messages=[{"role": "user", "content": "Weather in Paris?"}],
    )
    runner.until_done()
    assert_none_refused(stub, 2)


def test_a_threaded_request_is_checked_against_the_thread() -> None:
    """The stub's own thread history, as the integrator passes it, makes a bad continuation refusable."""
    # strict=False: the transport would refuse the continuation itself (tests/test_strict.py); here the
    # engine is given the record's context by hand.
    stub = ScriptTransport([{"tool": THINK_TOOL["tool"]}, "Sunny."], strict=False)
    client = anthropic_client(stub)
    if ANTHROPIC_MAJOR < 1:
        pytest.skip("server-held threads are anthropic 2.x")
    params = {"model": "claude-test", "max_tokens": 64, "tools": [WEATHER_TOOL]}
    first = client.messages.create(
        **params, messages=[{"role": "user", "content": "Hi"}], extra_body={"thread": {"type": "create"}}
    )
    thread = {"type": "continue", "previous_message_id": first.id}
    client.messages.create(
        **params, messages=[{"role": "user", "content": "Forgot the tool."}], extra_body={"thread": thread}
    )
    violation = check_record(stub.requests[1])
    assert violation is not None
    assert violation.rule.id == "anthropic.tool-use-without-result"
    assert violation.param == "messages.0"


def openai_chat_loop(stub: ScriptTransport, *, stream: bool = False) -> None:
    client = openai_client(stub)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    messages: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}]
    for _ in range(5):
        kwargs: dict[str, Any] = {"model": "gpt-test", "messages": messages, "tools": tools, "temperature": 0.2}
        if stream:
            with client.chat.completions.stream(**kwargs, stream_options={"include_usage": True}) as streamed:
                message = streamed.get_final_completion().choices[0].message
        else:
            message = client.chat.completions.create(**kwargs, n=1).choices[0].message
        messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
        if not message.tool_calls:
            break
        messages += [{"role": "tool", "tool_call_id": c.id, "content": "Sunny"} for c in message.tool_calls]


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_openai_chat_tool_loops_are_accepted(stream: bool) -> None:
    stub = ScriptTransport([THINK_TOOL, PARALLEL, "Sunny."])
    openai_chat_loop(stub, stream=stream)
    assert_none_refused(stub, 3)


def test_openai_chat_structured_output_is_accepted() -> None:
    from pydantic import BaseModel

    class Card(BaseModel):
        title: str

    stub = ScriptTransport([{"text": '{"title": "x"}'}])
    parsed = openai_client(stub).chat.completions.parse(
        model="gpt-test", messages=[{"role": "user", "content": "A card"}], response_format=Card
    )
    assert parsed.choices[0].message.parsed == Card(title="x")
    assert stub.requests[0].body["response_format"]["type"] == "json_schema"
    assert_none_refused(stub, 1)


def openai_responses_loop(stub: ScriptTransport, *, store: bool) -> None:
    """A hand-written Responses tool loop: chained by `previous_response_id`, or stateless (items passed back)."""
    client = openai_client(stub)
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    items: list[Any] = [{"role": "user", "content": "Weather?"}]
    previous: str | None = None
    for _ in range(6):
        if store:
            response = client.responses.create(
                model="gpt-test", input=items, tools=tools, previous_response_id=previous, instructions="Be brief."
            )
            previous, items = response.id, []
        else:
            response = client.responses.create(model="gpt-test", input=items, tools=tools, store=False)
            items += [item.model_dump(exclude_none=True) for item in response.output]
        function_calls = [item for item in response.output if item.type == "function_call"]
        if not function_calls:
            break
        items += [{"type": "function_call_output", "call_id": c.call_id, "output": "Sunny"} for c in function_calls]


@pytest.mark.parametrize("store", [True, False], ids=["previous_response_id", "stateless"])
def test_openai_responses_tool_loops_are_accepted(store: bool) -> None:
    stub = ScriptTransport([THINK_TOOL, PARALLEL, "Sunny."])
    openai_responses_loop(stub, store=store)
    assert_none_refused(stub, 3)
    if store:
        assert stub.requests[2].body["previous_response_id"] == "resp_0001"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_openai_responses_tool_runner_is_accepted(stream: bool) -> None:
    import openai
    import pydantic

    if int(openai.__version__.split(".")[0]) < 3:
        pytest.skip("ResponsesToolRunner is new in openai 3")
    from openai.lib import responses_tool_runner as runners  # type: ignore[attr-defined,unused-ignore]

    class Weather(pydantic.BaseModel):
        city: str

    tool = openai.pydantic_responses_function_tool(Weather, name="weather")
    function = runners.RegisteredFunction.from_tool(tool, execute=lambda args: f"Sunny in {args.city}")
    stub = ScriptTransport([{"tool": {"name": "weather", "input": {"city": "Paris"}}}, "Sunny."])
    params = {"model": "gpt-test", "input": [{"role": "user", "content": "Weather in Paris?"}]}
    result = runners.ResponsesToolRunner(functions=[function]).run(openai_client(stub), params, stream=stream)
    assert result.output_text == "Sunny."
    assert_none_refused(stub, 2)


@pytest.fixture
def genai() -> Any:
    return pytest.importorskip("google.genai")


def gemini_client(stub: ScriptTransport) -> Any:
    from test_gemini import gemini_client as make

    return make(stub)


def test_gemini_automatic_function_calling_and_chats_are_accepted(genai: Any) -> None:
    from google.genai import types

    stub = ScriptTransport([PARALLEL, "Sunny.", "Also sunny.", {"tool": THINK_TOOL["tool"]}, "Done."])
    client = gemini_client(stub)
    config = types.GenerateContentConfig(tools=[get_weather], system_instruction="Be brief.", temperature=0.3)
    chat = client.chats.create(model="gemini-test", config=config)
    assert chat.send_message("Weather in Paris and Rome?").text == "Sunny."
    assert chat.send_message("And tomorrow?").text == "Also sunny."
    answer = client.models.generate_content(model="gemini-test", contents="Paris?", config=config)
    assert answer.text == "Done."
    assert_none_refused(stub, 5)
    # The SDK answered the two parallel calls in one function response turn.
    second = stub.requests[1].body["contents"]
    assert [len(c["parts"]) for c in second[1:3]] == [2, 2]


def test_gemini_images_and_a_manual_function_response_are_accepted(genai: Any) -> None:
    from google.genai import types

    stub = ScriptTransport([{"tool": THINK_TOOL["tool"]}, "A sunny dot."])
    client = gemini_client(stub)
    image = types.Part.from_bytes(data=b"\x89PNG\r\n\x1a\n", mime_type="image/png")
    declaration = types.FunctionDeclaration(name="get_weather", description="Weather.")
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = [types.Content(role="user", parts=[image, types.Part.from_text(text="Weather here?")])]
    reply = client.models.generate_content(model="gemini-test", contents=contents, config=config)
    call = reply.function_calls[0]
    contents += [
        reply.candidates[0].content,
        types.Content(role="user", parts=[types.Part.from_function_response(name=call.name, response={"r": "Sunny"})]),
    ]
    client.models.generate_content(model="gemini-test", contents=contents, config=config)
    assert_none_refused(stub, 2)


# --- a property: valid scripts through the real anthropic and openai SDKs are never refused ----------

TURNS = st.sampled_from(
    [
        {"text": "Sunny."},
        {"tool": {"name": "get_weather", "input": {"city": "Paris"}}},
        PARALLEL,
        {"text": "Looking.", "tools": [{"name": "get_weather", "input": {}}] * 3},
    ]
)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(TURNS, min_size=1, max_size=4),
    wire=st.sampled_from(
        ["anthropic", "anthropic-thinking", "openai_chat", "responses-chained", "responses-stateless"]
    ),
)
def test_property_valid_tool_loops_over_any_script_are_never_refused(turns: list[dict[str, Any]], wire: str) -> None:
    script = [*turns, {"text": "Done."}]
    if wire == "anthropic-thinking":  # with thinking enabled the model always starts with a signed thinking block
        script = [{"thinking": f"Step {i}.", **turn} for i, turn in enumerate(script)]
    stub = ScriptTransport(script)
    if wire == "openai_chat":
        openai_chat_loop(stub)
    elif wire.startswith("responses"):
        openai_responses_loop(stub, store=wire == "responses-chained")
    else:
        anthropic_loop(stub, thinking=wire == "anthropic-thinking")
    assert_none_refused(stub)


def test_async_clients_send_the_same_accepted_bodies() -> None:
    stub = ScriptTransport([PARALLEL, "Sunny."])

    async def main() -> None:
        client = anthropic_client(stub, is_async=True)
        messages: list[Any] = [{"role": "user", "content": "Weather?"}]
        reply = await client.messages.create(
            model="claude-test", max_tokens=64, tools=[WEATHER_TOOL], messages=messages
        )
        results = [
            {"type": "tool_result", "tool_use_id": b.id, "content": "Sunny"}
            for b in reply.content
            if b.type == "tool_use"
        ]
        messages += [{"role": "assistant", "content": reply.content}, {"role": "user", "content": results}]
        await client.messages.create(model="claude-test", max_tokens=64, tools=[WEATHER_TOOL], messages=messages)

    asyncio.run(main())
    assert_none_refused(stub, 2)


# --- the docs page ------------------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parent.parent / "docs" / "strict-requests.md"


@needs_current_sdks
def test_the_docs_page_examples_run() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        exec(compile(block, str(DOCS), "exec"), {"__name__": "__main__"})


def test_each_wires_checks_run_in_the_order_of_its_rules() -> None:
    """The check tables are built once at import; the first violation reported must follow the declared rules."""
    from wirescript.wires import _messages_rules
    from wirescript.wires.bedrock import rules as bedrock
    from wirescript.wires.gemini import rules as gemini
    from wirescript.wires.openai import rules as openai

    def order(table: Any) -> tuple[Any, ...]:
        return tuple(entry[0] for entry in table)

    assert order(_messages_rules._CHECKS) == tuple(r for r in _messages_rules.RULES if r.retired is None)
    # A check skipped for a body without the field it names refuses nothing without that field.
    for rule, check, needs in _messages_rules._CHECKS:
        refused = [case.bad for case in CASES if case.rule == rule.id and case.wire == "anthropic"]
        assert refused, rule.id
        for bad in refused if needs is not None else []:
            request = _messages_rules._Request(without(bad, needs), None, (), "2026-10-21", CLAUDE_MODELS)
            assert check(request) is None, (rule.id, needs)
    assert order(openai._CHAT_CHECKS) == openai.CHAT_RULES
    assert order(openai._RESPONSES_CHECKS) == openai.RESPONSES_RULES[:-1]  # the 404 is the wire's
    assert order(gemini._CHECKS) == gemini.RULES
    assert order(bedrock._CHECKS) == bedrock.CONVERSE_RULES
