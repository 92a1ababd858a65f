"""Ollama's OpenAI-compatible `/v1/chat/completions` (its native `/api/chat` is `wirescript.wires.ollama`)."""

from __future__ import annotations

from typing import Any

from ....recorded import RecordedRequest
from ....script import ErrorSpec, ToolCall
from ....sse import json_dumps
from ..._render import RETRYABLE, alphanumeric, error_message, retry_headers
from ...base import Rendered
from ..chat import ChatShape
from ..common import JSON_HEADERS, request_id
from .base import ChatDialect, Quirk

__all__ = ["OllamaChatWire"]

_SOURCE = "github.com/ollama/ollama openai/openai.go"

REASONING = Quirk(
    "ollama.reasoning-field",
    "answer",
    "Thinking is sent as `reasoning` (in `message` and stream deltas), not `reasoning_content`.",
    f"{_SOURCE} (`Message.Reasoning`, json tag `reasoning`; commit 735c41f9 'openai: always provide reasoning', "
    "v0.11.4)",
)
CALL_IDS = Quirk(
    "ollama.tool-call-ids",
    "answer",
    "Tool-call ids are `call_` and 8 lower-case letters or digits.",
    "github.com/ollama/ollama server/routes.go `toolCallId()` ('call_' + 8 of [a-z0-9])",
)
FINGERPRINT = Quirk(
    "ollama.system-fingerprint",
    "answer",
    'Every completion and chunk carries `system_fingerprint: "fp_ollama"`.',
    f'{_SOURCE} (`SystemFingerprint: "fp_ollama"` in ToChatCompletion and every chunk)',
)
FINISH_STOP = Quirk(
    "ollama.stream-finish-stop",
    "answer",
    'A stream that carries tool calls ends with `finish_reason: "stop"`, not `tool_calls`.',
    "github.com/ollama/ollama/pull/7963 'openai: finish_reason as tool_calls for streaming with tools' (the fix, "
    "first in v0.5.12); github.com/BerriAI/litellm/issues/12481",
    versions="<0.5.12",
)
SAME_INDEX = Quirk(
    "ollama.parallel-calls-index-0",
    "answer",
    "Streamed parallel tool calls all carry `index: 0`: an app accumulating by index merges them into one call.",
    "github.com/ollama/ollama/issues/15457 (observed on 0.20.2 and 0.20.4), fixed by "
    "github.com/ollama/ollama/pull/15467 (first in v0.20.6); github.com/vercel/ai/pull/14277",
    versions=">=0.20.2,<0.20.6",
)
ERRORS = Quirk(
    "ollama.error-types",
    "answer",
    'Errors are `{"error": {"message", "type", "param": null, "code": null}}` with type '
    "`invalid_request_error` (400), `not_found_error` (404) or `api_error`.",
    f"{_SOURCE} `NewError`",
)


def _call_id(call: ToolCall, index: int, k: int) -> str:
    return call.id or f"call_{alphanumeric(f'ollama:{index}:{k}', 8, '0123456789abcdefghijklmnopqrstuvwxyz')}"


def _fingerprint(body: dict[str, Any], where: str, record: RecordedRequest) -> None:
    body["system_fingerprint"] = "fp_ollama"


class OllamaChatWire(ChatDialect):
    """Ollama's `/v1/chat/completions` (default address `localhost:11434`).

    Versioned: `OllamaChatWire(version="0.5.11")` ends tool-call streams with `stop`,
    `version="0.20.4"` streams parallel calls all at `index: 0`.
    """

    name = "ollama"
    label = "Ollama's OpenAI-compatible Chat Completions (POST /v1/chat/completions)"
    addresses = ("localhost:11434", "127.0.0.1:11434")
    quirks = (REASONING, CALL_IDS, FINGERPRINT, FINISH_STOP, SAME_INDEX, ERRORS)

    def shaped(self, active: frozenset[str]) -> ChatShape:
        """Its reasoning field, ids and fingerprint; the stream's finish and indexes where its version has them."""
        return ChatShape(
            reasoning_key="reasoning",
            call_id=_call_id,
            streamed_tool_finish="stop" if FINISH_STOP.id in active else None,
            same_index=SAME_INDEX.id in active,
            decorate=_fingerprint,
        )

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"error": {"message", "type", "param": null, "code": null}}`, its type from the status."""
        kind = spec.type or {400: "invalid_request_error", 404: "not_found_error"}.get(spec.status, "api_error")
        body = {"error": {"message": error_message(spec), "type": kind, "param": None, "code": spec.code}}
        headers = {**JSON_HEADERS, **request_id(record), **retry_headers(spec, RETRYABLE)}
        return Rendered(spec.status, headers, json_dumps(body).encode())
