"""What the two OpenAI wires share: the error shape, ids, token counts and tool arguments.

A private helper module, not a wire: both `openai_chat` and `openai_responses` import it, so
neither wire imports the other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..._text import text_of
from ...recorded import RecordedRequest
from ...script import ErrorSpec, ToolCall, Turn
from ...sse import json_dumps
from .._decode import as_int, decoded_error, json_body
from .._render import RETRYABLE, break_json, default_usage, error_message, retry_headers
from .._rules import Violation, json_type
from ..base import Rendered

__all__ = [
    "COMPATIBLE_HOSTS",
    "CREATED",
    "DEFAULT_MODEL",
    "HOSTS",
    "JSON_HEADERS",
    "OPENAI_ERROR_TYPES",
    "RETRY_COUNT_HEADER",
    "SSE_HEADERS",
    "STOP_REASONS",
    "SYSTEM_ROLES",
    "TokenCounts",
    "arguments",
    "call_id",
    "decoded_openai_error",
    "join_system",
    "openai_error",
    "openai_error_type",
    "openai_usage",
    "request_id",
    "strict_error",
    "system_text",
    "token_counts",
    "tool_input",
    "type_message",
]

OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "service_unavailable_error",
}
"""The `error.type` OpenAI sends for each status; other 4xx are `invalid_request_error`, other 5xx `server_error`.

OpenAI reports a bad key (401) and an unknown model (404) as `invalid_request_error` with a
specific `code` (`invalid_api_key`, `model_not_found`); script `code` to send one.
"""

CREATED = 1_700_000_000
"""The `created` timestamp of request 0; request n is created n seconds later (deterministic)."""

DEFAULT_MODEL = "gpt-wirescript"
"""The model named in a response when the request named none."""

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
"""OpenAI's `finish_reason` values a turn may script, as the canonical stop reasons they stand for."""

HOSTS = ("api.openai.com", "*.openai.azure.com")
"""OpenAI's hosts and Azure OpenAI's (`<resource>.openai.azure.com`)."""

COMPATIBLE_HOSTS = ("api.groq.com", "api.mistral.ai", "api.deepseek.com", "openrouter.ai")
"""Hosts of OpenAI-compatible APIs that serve Chat Completions as OpenAI does."""

RETRY_COUNT_HEADER = "x-stainless-retry-count"
"""Where the openai SDK numbers its attempts."""

# A tuple, not a set: a request may carry any JSON there, and membership in a tuple never hashes it.
SYSTEM_ROLES = ("system", "developer")
"""The message roles that carry instructions, as `RecordedRequest.system` reads them."""

JSON_HEADERS = {"content-type": "application/json"}
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}


def openai_error_type(status: int) -> str:
    """The default `error.type` for an HTTP status."""
    return OPENAI_ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")


def request_id(record: RecordedRequest) -> dict[str, str]:
    """The `x-request-id` header (the SDK's `_request_id` and `APIStatusError.request_id`)."""
    return {"x-request-id": f"req_{record.index:04d}"}


def openai_error(spec: ErrorSpec, record: RecordedRequest, *, param: str | None = None) -> Rendered:
    """`{"error": {"message", "type", "param", "code"}}` with the status, `x-request-id` and retry headers."""
    error = {
        "message": error_message(spec),
        "type": spec.type or openai_error_type(spec.status),
        "param": param,
        "code": spec.code,
    }
    headers = {**JSON_HEADERS, **request_id(record), **retry_headers(spec, RETRYABLE)}
    return Rendered(spec.status, headers, json_dumps({"error": error}).encode())


def strict_error(violation: Violation, message: str, record: RecordedRequest) -> Rendered:
    """OpenAI's error for a request a strict rule refuses: its `param` and (where observed) its `code`, not retried."""
    spec = ErrorSpec(status=violation.rule.status, message=message, code=violation.rule.code)
    rendered = openai_error(spec, record, param=violation.param)
    rendered.headers["x-should-retry"] = "false"
    return rendered


def call_id(call: ToolCall, index: int, k: int) -> str:
    """The scripted call id, else `call_<request>_<k>`."""
    return call.id or f"call_{index:04d}_{k}"


def arguments(call: ToolCall, malformed: bool) -> str:
    """The call's arguments as the JSON string OpenAI sends; broken JSON when `malformed`."""
    args = json_dumps(call.input)
    return break_json(args) if malformed else args


class TokenCounts(NamedTuple):
    """A turn's token counts in OpenAI's terms: reasoning tokens are part of `output`, cached ones of `input`.

    A named tuple: built once per answer, where a frozen dataclass costs a `setattr` per field.
    """

    input: int
    output: int
    reasoning: int
    cached: int
    cache_write: int

    @property
    def total(self) -> int:
        """Input plus output tokens."""
        return self.input + self.output


def token_counts(turn: Turn, args: list[str]) -> TokenCounts:
    """The turn's token counts: scripted values, else wirescript's deterministic defaults.

    Reasoning tokens default to one per four characters of thinking, within the output count.
    """
    chars = len(turn.text or "") + len(turn.thinking or "") + (sum(map(len, args)) if args else 0)
    input_tokens, output_tokens = default_usage(turn, chars)
    usage = turn.usage
    thinking = len(turn.thinking or "")
    return TokenCounts(
        input_tokens,
        output_tokens,
        min(output_tokens, max(1, math.ceil(thinking / 4))) if thinking else 0,
        (usage.cache_read_input_tokens if usage else None) or 0,
        (usage.cache_creation_input_tokens if usage else None) or 0,
    )


def system_text(messages: list[Any]) -> list[str | None]:
    """The text of each system and developer message, for `join_system`."""
    return [
        text_of(m.get("content"), sep="\n")
        for m in messages
        if isinstance(m, Mapping) and m.get("role") in SYSTEM_ROLES
    ]


def join_system(parts: list[str | None]) -> str | None:
    """System prompt pieces (instructions, system and developer messages) joined by newlines, or None."""
    present = [p for p in parts if p]
    return "\n".join(present) if present else None


def type_message(key: str, value: Any, kinds: tuple[str, ...]) -> str:
    """OpenAI's words for a field of the wrong JSON type: `Invalid type for 'n': expected an integer, …`."""
    expected = " or ".join(_article(kind) for kind in kinds)
    got = json_type(value)
    shown = "decimal" if got == "number" else got
    return f"Invalid type for '{key}': expected {expected}, but got {_article(shown)} instead."


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def decoded_openai_error(status: int, body: bytes) -> dict[str, Any]:
    """`{"error": {"message", "type", "code"}}` as an `error` turn."""
    data = json_body(body)
    error = data.get("error") if isinstance(data, dict) else None
    error = error if isinstance(error, dict) else {}
    return decoded_error(status, error.get("type"), error.get("message"), error.get("code"))


def tool_input(arguments: Any) -> dict[str, Any] | None:
    """A function call's `arguments` string as a tool input object, or None when it is not a JSON object."""
    if arguments in (None, ""):
        return {}
    value = json_body(arguments) if isinstance(arguments, str) else None
    return value if isinstance(value, dict) else None


def openai_usage(usage: Any, input_name: str, output_name: str, details_name: str) -> dict[str, Any]:
    """The token counts of an OpenAI `usage` object, by the names its API uses, as `decoded_usage` arguments."""
    if not isinstance(usage, dict):
        return {}
    details = usage.get(details_name)
    details = details if isinstance(details, dict) else {}
    return {
        "input_tokens": as_int(usage.get(input_name)),
        "output_tokens": as_int(usage.get(output_name)),
        "cache_read_input_tokens": as_int(details.get("cached_tokens")) or None,
        "cache_creation_input_tokens": as_int(details.get("cache_write_tokens")) or None,
    }
