"""Anthropic Messages API: `POST /v1/messages`, JSON or SSE."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .._text import text_of
from ..recorded import RecordedRequest
from ..script import ErrorSpec, StreamError, Turn
from ..sse import PIECE, encode_deltas, encode_event, json_dumps
from .base import (
    Frame,
    Parsed,
    Rendered,
    Wire,
    as_float,
    as_int,
    as_list,
    break_json,
    canonical_stop,
    chunks,
    decoded_error,
    decoded_turn,
    decoded_usage,
    default_usage,
    error_message,
    is_event_stream,
    json_body,
    retry_headers,
    sse_json,
)

__all__ = ["ANTHROPIC_ERROR_TYPES", "AnthropicWire"]

ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""The documented `error.type` for each status; other 4xx are `invalid_request_error`, other 5xx `api_error`."""

_SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
_JSON_HEADERS = {"content-type": "application/json"}


def _error_type(status: int) -> str:
    return ANTHROPIC_ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")


class AnthropicWire(Wire):
    """Anthropic Messages, including anthropic 2.x's server-held message threads.

    A threaded request (`thread: {"type": "continue", ...}`) sends only the new messages; the
    wire remembers each thread's conversation, tools and system prompt, so the record still shows
    the whole conversation the model was given.
    """

    name = "anthropic"
    endpoint = "POST …/v1/messages"
    credential_headers = ("x-api-key",)
    hosts = ("api.anthropic.com",)
    events = frozenset(
        {
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        }
    )

    def __init__(self) -> None:
        self._threads: dict[str, tuple[list[Any], list[Any], str | None]] = {}
        self._threads_lock = threading.Lock()

    def matches(self, method: str, path: str, *, host: str = "") -> bool:
        """`POST …/v1/messages` (the beta endpoint's `?beta=true` included), on any host."""
        return method == "POST" and path.endswith("/v1/messages")

    @staticmethod
    def tool_result_text(result: Mapping[str, Any]) -> str | None:
        """A `tool_result` block's `content`: a string, or its text blocks joined."""
        if result.get("type") != "tool_result":
            return None
        return text_of(result.get("content")) or ""

    def parse(self, body: Any, path: str) -> Parsed:
        """Model, system, messages, tools and tool_result blocks of a Messages request."""
        messages = as_list(body.get("messages"))
        tools = as_list(body.get("tools"))
        return Parsed(
            model=body.get("model") if isinstance(body.get("model"), str) else None,
            system=text_of(body.get("system"), sep="\n"),
            messages=messages,
            tools=tools,
            tool_names=[t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)],
            tool_results=[
                block
                for m in messages
                if isinstance(m, dict) and isinstance(m.get("content"), list)
                for block in m["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"
            ],
            stream=body.get("stream") is True,
            max_tokens=as_int(body.get("max_tokens")),
            temperature=as_float(body.get("temperature")),
        )

    def resolve(self, record: RecordedRequest) -> None:
        """Fill in a continued thread's earlier conversation, tools and system prompt."""
        thread = record.body.get("thread") if isinstance(record.body, dict) else None
        if not isinstance(thread, dict) or thread.get("type") != "continue":
            return
        with self._threads_lock:
            known = self._threads.get(str(thread.get("previous_message_id")))
        if known is None:
            return
        conversation, tools, system = known
        record.conversation = [*conversation, *record.messages]
        if "tools" not in record.body:
            record.tools = tools
            record.tool_names = [t["name"] for t in tools if isinstance(t, dict) and "name" in t]
        if "system" not in record.body:
            record.system = system

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """A Message as JSON, or the documented SSE event sequence when the request streams."""
        msg_id = f"msg_{record.index:04d}"
        blocks = self._blocks(turn, record.index)
        if isinstance(record.body, dict) and "thread" in record.body:
            with self._threads_lock:
                self._threads[msg_id] = (
                    [*record.conversation, {"role": "assistant", "content": blocks}],
                    record.tools,
                    record.system,
                )
        # Each tool input is encoded once: its length counts towards usage, and a stream sends it.
        arguments = [json_dumps(call.input) for call in turn.tool_calls]
        chars = len(turn.text or "") + len(turn.thinking or "") + sum(map(len, arguments))
        input_tokens, output_tokens = default_usage(turn, chars)
        usage = _usage(
            input_tokens,
            _opt(turn, "cache_creation_input_tokens"),
            _opt(turn, "cache_read_input_tokens"),
            output_tokens,
        )
        message = _message(msg_id, record.model or "claude-wirescript", blocks, canonical_stop(turn), usage)
        request_id = f"req_{record.index:04d}"
        if not record.stream:
            return Rendered(200, {**_JSON_HEADERS, "request-id": request_id}, json_dumps(message).encode())
        return Rendered(
            200,
            {**_SSE_HEADERS, "request-id": request_id},
            frames=_stream(message, arguments, malformed_tool_json, joined),
        )

    @staticmethod
    def _blocks(turn: Turn, index: int) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if turn.thinking is not None:
            blocks.append({"type": "thinking", "thinking": turn.thinking, "signature": f"sig_{index:04d}"})
        if turn.text is not None:
            blocks.append({"type": "text", "text": turn.text})
        for k, call in enumerate(turn.tool_calls):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id or f"toolu_{index:04d}_{k}",
                    "name": call.name,
                    "input": call.input,
                }
            )
        return blocks

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """`{"type": "error", "error": {"type", "message"}}` with the status and a `request-id`."""
        error: dict[str, Any] = {
            "type": spec.type or _error_type(spec.status),
            "message": error_message(spec),
        }
        if spec.code is not None:
            error["details"] = {"error_code": spec.code}
        headers = {**_JSON_HEADERS, "request-id": f"req_{record.index:04d}", **retry_headers(spec, self.retryable)}
        return Rendered(spec.status, headers, json_dumps({"type": "error", "error": error}).encode())

    def decode(self, status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
        """A Message (JSON or its SSE events) or an error envelope as a turn.

        Thinking blocks give their text (a turn has no field for the signature, which a replay
        renders afresh); `redacted_thinking` and server tool blocks are left out. An `error` event
        inside a stream becomes the turn's `fault.stream_error`, after what was streamed before it.
        """
        if status >= 400:
            data = json_body(body)
            error = data.get("error") if isinstance(data, dict) else None
            error = error if isinstance(error, dict) else {}
            details = error.get("details")
            code = details.get("error_code") if isinstance(details, dict) else None
            return decoded_error(status, error.get("type"), error.get("message"), code)
        if not is_event_stream(headers):
            message = json_body(body)
            if not isinstance(message, dict) or message.get("type") != "message":
                return None
            return _decoded(self, as_list(message.get("content")), message.get("stop_reason"), message.get("usage"))
        return _decode_stream(self, body)

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """`event: error` with the error envelope."""
        data = {"type": "error", "error": {"type": spec.type, "message": spec.message}}
        return Frame("error", encode_event("error", json_dumps(data)))


def _opt(turn: Turn, name: str) -> int:
    value = getattr(turn.usage, name, None) if turn.usage else None
    return value or 0


def _usage(input_tokens: Any, cache_creation: Any, cache_read: Any, output_tokens: Any) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": cache_read,
        "output_tokens": output_tokens,
    }


def _message(msg_id: str, model: str, content: Any, stop_reason: str | None, usage: Any) -> dict[str, Any]:
    """A Message: the JSON answer, and (empty, without a stop reason) the `message_start` event's."""
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def _ev(name: str, data: dict[str, Any]) -> Frame:
    return Frame(name, encode_event(name, json_dumps(data)))


def _stream(message: dict[str, Any], arguments: list[str], malformed_tool_json: bool, joined: bool) -> Iterator[Frame]:
    """The documented event sequence of a Message.

    `message_start` (no content, no stop reason, an output count of 1), `ping`, each block's start,
    deltas and stop, `message_delta` (the stop reason and output count), `message_stop`.
    """
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield _ev("message_start", {"type": "message_start", "message": start})
    yield Frame("ping", _PING)
    calls = iter(arguments)
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "thinking":
            yield _ev("content_block_start", _start(index, {"type": "thinking", "thinking": "", "signature": ""}))
            yield from _pieces(index, "thinking_delta", "thinking", chunks(block["thinking"]), joined)
            yield _ev(
                "content_block_delta",
                _delta(index, {"type": "signature_delta", "signature": block["signature"]}),
            )
        elif kind == "text":
            yield _ev("content_block_start", _start(index, {"type": "text", "text": ""}))
            yield from _pieces(index, "text_delta", "text", chunks(block["text"]), joined)
        else:
            yield _ev("content_block_start", _start(index, {**block, "input": {}}))
            args = next(calls)
            if malformed_tool_json:
                args = break_json(args)
            yield from _pieces(index, "input_json_delta", "partial_json", chunks(args, 32), joined)
        yield _ev("content_block_stop", {"type": "content_block_stop", "index": index})
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    yield _ev("message_delta", delta)
    yield Frame("message_stop", _MESSAGE_STOP)


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


_PING = encode_event("ping", json_dumps({"type": "ping"}))
_MESSAGE_STOP = encode_event("message_stop", json_dumps({"type": "message_stop"}))


def _pieces(index: int, kind: str, key: str, pieces: Sequence[str], joined: bool) -> Iterator[Frame]:
    """The `content_block_delta` frames of a block, one per piece (several per frame when `joined`)."""
    data = _delta(index, {"type": kind, key: PIECE})
    for chunk in encode_deltas("content_block_delta", data, pieces, joined=joined):
        yield Frame("content_block_delta", chunk)


def _decoded(wire: Wire, blocks: list[Any], stop: Any, usage: Any) -> dict[str, Any]:
    """A Message's content blocks, stop reason and usage as a turn."""
    blocks = [b for b in blocks if isinstance(b, dict)]
    counts = usage if isinstance(usage, dict) else {}
    return decoded_turn(
        wire,
        thinking=[b["thinking"] for b in blocks if b.get("type") == "thinking" and isinstance(b.get("thinking"), str)],
        text=[b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)],
        calls=[
            {"id": b["id"], "name": b["name"], "input": b["input"] if isinstance(b.get("input"), dict) else {}}
            for b in blocks
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str)
        ],
        stop=stop,
        usage=decoded_usage(
            input_tokens=counts.get("input_tokens"),
            output_tokens=counts.get("output_tokens"),
            cache_read_input_tokens=counts.get("cache_read_input_tokens") or None,
            cache_creation_input_tokens=counts.get("cache_creation_input_tokens") or None,
        ),
    )


def _decode_stream(wire: Wire, body: bytes) -> dict[str, Any] | None:
    """The SSE events of a Message, put back together as `anthropic`'s stream accumulator does."""
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    stop: Any = None
    failure: dict[str, Any] | None = None
    started = False
    for data in sse_json(body):
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            started = True
            usage.update(data["message"].get("usage") or {})
        elif kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            block = dict(data["content_block"])
            if block.get("type") == "tool_use":
                block["partial"] = ""
            blocks[as_int(data.get("index")) or 0] = block
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            target = blocks.get(as_int(data.get("index")) or 0)
            if target is not None:
                _apply_delta(target, data["delta"])
        elif kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and "stop_reason" in delta:
                stop = delta["stop_reason"]
            usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
        elif kind == "error" and isinstance(data.get("error"), dict):
            error = data["error"]
            failure = {"type": error.get("type") or "api_error", "message": str(error.get("message", ""))}
    if not started:
        return None
    ordered = [blocks[i] for i in sorted(blocks)]
    for block in ordered:
        if block.get("type") == "tool_use":
            partial = block.pop("partial")
            try:
                block["input"] = json.loads(partial) if partial else block.get("input") or {}
            except ValueError:
                return None  # arguments that are not JSON cannot be a turn's tool input
    turn = _decoded(wire, ordered, stop, usage)
    if failure is not None:
        turn.pop("stop_reason", None)
        turn["fault"] = {"stream_error": failure}
    return turn


def _apply_delta(block: dict[str, Any], delta: dict[str, Any]) -> None:
    kind = delta.get("type")
    if kind == "text_delta" and isinstance(delta.get("text"), str):
        block["text"] = str(block.get("text", "")) + delta["text"]
    elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
        block["thinking"] = str(block.get("thinking", "")) + delta["thinking"]
    elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
        block["partial"] = str(block.get("partial", "")) + delta["partial_json"]
