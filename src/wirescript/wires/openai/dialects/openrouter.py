"""OpenRouter (`openrouter.ai/api/v1`): `gen-` ids, the provider it routed to, and errors inside a 200 stream."""

from __future__ import annotations

from typing import Any

from ....recorded import RecordedRequest
from ....script import ErrorSpec, StreamError
from ....sse import encode_event, json_dumps
from ..._render import RETRYABLE, alphanumeric, error_message, retry_headers
from ...base import Frame, Rendered
from ..chat import ChatShape
from ..common import CREATED, DEFAULT_MODEL, JSON_HEADERS, request_id
from .base import ChatDialect, Quirk

__all__ = ["OpenRouterWire"]

_STREAMING = "openrouter.ai/docs/api/reference/streaming"
_ERRORS = "openrouter.ai/docs/api/reference/errors-and-debugging"

GEN_IDS = Quirk(
    "openrouter.gen-ids",
    "answer",
    "Completion ids start with `gen-`.",
    f'{_STREAMING} (chunk example `"id": "gen-xxx"`; the generation id is also the `X-Generation-Id` header)',
)
PROVIDER = Quirk(
    "openrouter.provider-field",
    "answer",
    "Every completion and chunk names the `provider` that served it; finishing choices carry `native_finish_reason`.",
    f"{_ERRORS} (the mid-stream error chunk's `provider` and `choices[].native_finish_reason` fields)",
)
PROCESSING = Quirk(
    "openrouter.processing-comments",
    "answer",
    "Streams may carry SSE comments `: OPENROUTER PROCESSING` (sent first here).",
    f"{_STREAMING}: 'OpenRouter occasionally sends comments to prevent connection timeouts. These comments look "
    "like: : OPENROUTER PROCESSING'",
)
MID_STREAM = Quirk(
    "openrouter.mid-stream-error",
    "answer",
    "An error after the stream started is a data chunk with a top-level `error` {code, message} and a choice with "
    '`finish_reason: "error"`, inside the HTTP 200 stream (a scripted `fault.stream_error`).',
    f"{_ERRORS} ('Mid-Stream Errors': 'The HTTP status remains 200 OK since headers were already sent'); "
    "github.com/damianvtran/local-operator/issues/223",
)
ERRORS = Quirk(
    "openrouter.error-envelope",
    "answer",
    'Errors are `{"error": {"code": <the HTTP status>, "message"}}`.',
    f"{_ERRORS} ('type ErrorResponse = {{ error: {{ code: number; message: string; metadata? }} }}')",
)

PROVIDER_NAME = "OpenAI"
"""The upstream `provider` its answers name (OpenRouter names the provider that served the model)."""

_COMMENT = b": OPENROUTER PROCESSING\n\n"


def _id(record: RecordedRequest) -> str:
    return f"gen-{CREATED + record.index}-{alphanumeric(f'openrouter:{record.index}', 20)}"


def _decorate(body: dict[str, Any], where: str, record: RecordedRequest) -> None:
    body["provider"] = PROVIDER_NAME
    if where in ("completion", "finish"):
        for choice in body["choices"]:
            choice["native_finish_reason"] = choice["finish_reason"]


def _prelude(head: dict[str, Any], record: RecordedRequest) -> list[bytes]:
    return [_COMMENT]


class OpenRouterWire(ChatDialect):
    """OpenRouter's `openrouter.ai/api/v1/chat/completions`."""

    name = "openrouter"
    label = "OpenRouter Chat Completions (POST /api/v1/chat/completions)"
    hosts = ("openrouter.ai",)
    addresses = ("openrouter.ai",)
    quirks = (GEN_IDS, PROVIDER, PROCESSING, MID_STREAM, ERRORS)

    def shaped(self, active: frozenset[str]) -> ChatShape:
        """`gen-` ids, the provider, the processing comment."""
        return ChatShape(completion_id=_id, decorate=_decorate, prelude=_prelude)

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"error": {"code": <status>, "message"}}` with the status."""
        body = {"error": {"code": spec.status, "message": error_message(spec)}}
        headers = {**JSON_HEADERS, **request_id(record), **retry_headers(spec, RETRYABLE)}
        return Rendered(spec.status, headers, json_dumps(body).encode())

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """The mid-stream error chunk: top-level `error`, a choice finishing with `error`, in the 200 stream."""
        data = {
            "id": _id(record),
            "object": "chat.completion.chunk",
            "created": CREATED + record.index,
            "model": record.model or DEFAULT_MODEL,
            "provider": PROVIDER_NAME,
            "error": {"code": spec.type, "message": spec.message},
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error", "native_finish_reason": None}],
        }
        return Frame("error", encode_event(None, json_dumps(data)))
