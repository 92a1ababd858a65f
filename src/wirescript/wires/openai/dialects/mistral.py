"""Mistral's Chat Completions (`api.mistral.ai`): 9-character tool-call ids, and its flat error envelope."""

from __future__ import annotations

import re
from typing import Any

from ....recorded import RecordedRequest
from ....script import ErrorSpec, ToolCall
from ....sse import json_dumps
from ..._render import RETRYABLE, alphanumeric, error_message, retry_headers
from ..._rules import Rule, Violation, dicts
from ...base import Rendered
from ..chat import ChatShape
from ..common import JSON_HEADERS, openai_error_type, request_id
from .base import ChatDialect, Quirk

__all__ = ["MistralWire"]

CALL_ID_RULE = Rule(
    "mistral.tool-call-id-format",
    "mistral",
    "A tool-call id (an assistant message's `tool_calls[].id`, a tool message's `tool_call_id`) that is not "
    "9 characters of a-z, A-Z, 0-9.",
    'Observed: 400 {"object": "error", "message": "Tool call id was <id> but must be a-z, A-Z, 0-9, with a '
    'length of 9.", "type": "invalid_request_error"} (github.com/langchain-ai/langchain/pull/24668, '
    'github.com/jackmpcollins/magentic/issues/276, 2024), now with "type": "invalid_function_call", '
    '"code": "3280" (github.com/openclaw/openclaw/issues/57672, '
    "github.com/arterm-sedov/cmw-platform-agent docs/MISTRAL_TOOL_CALL_ID_FIX.md)",
    code="3280",
)
CALL_IDS = Quirk(
    "mistral.tool-call-ids",
    "answer",
    "Tool-call ids are 9 characters of a-z, A-Z, 0-9 (`9HxEI5Kcl`).",
    "The ids its refusal demands (mistral.tool-call-id-format); observed minted ids such as '9HxEI5Kcl' "
    "(github.com/arterm-sedov/cmw-platform-agent docs/MODEL_SWITCHING_SOLUTION.md)",
)
ERRORS = Quirk(
    "mistral.error-envelope",
    "answer",
    'Errors are flat: `{"object": "error", "message", "type", "param", "code"}`, not under `error`.',
    "Observed bodies in github.com/langchain-ai/langchain/pull/24668 and github.com/openclaw/openclaw/issues/57672",
)
ID_FORMAT = Quirk.refusal(CALL_ID_RULE)

_VALID_ID = re.compile(r"[a-zA-Z0-9]{9}")


def _call_id(call: ToolCall, index: int, k: int) -> str:
    return call.id or alphanumeric(f"mistral:{index}:{k}", 9)


class MistralWire(ChatDialect):
    """Mistral's `api.mistral.ai/v1/chat/completions`."""

    name = "mistral"
    label = "Mistral Chat Completions (POST /v1/chat/completions)"
    hosts = ("api.mistral.ai",)
    addresses = ("api.mistral.ai",)
    quirks = (CALL_IDS, ERRORS, ID_FORMAT)

    def shaped(self, active: frozenset[str]) -> ChatShape:
        """Its 9-character tool-call ids."""
        return ChatShape(call_id=_call_id)

    def refuse(self, rule: Rule, body: dict[str, Any]) -> Violation | None:
        """A tool-call id of another format, in the order the messages carry them."""
        for i, message in dicts(body.get("messages")):
            ids = [call.get("id") for _, call in dicts(message.get("tool_calls"))]
            if message.get("role") == "tool":
                ids.append(message.get("tool_call_id"))
            for found in ids:
                if isinstance(found, str) and not _VALID_ID.fullmatch(found):
                    text = f"Tool call id was {found} but must be a-z, A-Z, 0-9, with a length of 9."
                    return Violation(rule, text, f"messages.[{i}]")
        return None

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"object": "error", "message", "type", "param", "code"}` with the status."""
        return _flat(
            spec.status,
            error_message(spec),
            spec.type or openai_error_type(spec.status),
            spec.code,
            record,
            retry_headers(spec, RETRYABLE),
        )

    def strict_error(self, violation: Violation, message: str, record: RecordedRequest) -> Rendered:
        """A refusal in its flat envelope (`invalid_function_call` for a tool-call id), never retried."""
        kind = "invalid_function_call" if violation.rule is CALL_ID_RULE else "invalid_request_error"
        rendered = _flat(violation.rule.status, message, kind, violation.rule.code, record, {})
        rendered.headers["x-should-retry"] = "false"
        return rendered


def _flat(
    status: int, message: str, kind: str, code: str | None, record: RecordedRequest, extra: dict[str, str]
) -> Rendered:
    body = {"object": "error", "message": message, "type": kind, "param": None, "code": code}
    return Rendered(status, {**JSON_HEADERS, **request_id(record), **extra}, json_dumps(body).encode())
