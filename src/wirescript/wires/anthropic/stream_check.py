"""Envelope validators for SSE streams, strict where the SDKs are lenient.

The anthropic SDK silently accepts a stream with no `message_stop`, a body cut mid-event and
truncated tool JSON (it yields `input == {}`). A test that hand-writes SSE, or a fault that should
have been noticed, slips through. These validators reject such streams with a message naming the
event, its line and what was expected.
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import StreamValidationError
from ...sse import parse_sse
from .wire import AnthropicWire

__all__ = ["validate_anthropic_stream"]

_ANTHROPIC_EVENTS = AnthropicWire.events | {"error"}
_DELTA_BLOCKS = {
    "text_delta": ("text",),
    "citations_delta": ("text",),
    "input_json_delta": ("tool_use", "server_tool_use", "mcp_tool_use"),
    "thinking_delta": ("thinking",),
    "signature_delta": ("thinking",),
}


def validate_anthropic_stream(body: bytes | str, *, allow_error: bool = False) -> dict[str, Any]:
    """Check an Anthropic Messages SSE body against the documented envelope; return the final Message.

    The envelope is `message_start`, then (`content_block_start`, deltas, `content_block_stop`) per
    block with indexes 0, 1, 2…, then `message_delta` and `message_stop`; `ping` may appear anywhere.
    Tool input fragments must join into a JSON object.

    Args:
        body: The raw response body.
        allow_error: Accept a stream that ends with an `error` event (an in-stream API error).

    Raises:
        StreamValidationError: The first violation, naming the event number, its line and what was expected.

    """
    events, tail = parse_sse(body)
    if tail.strip():
        raise StreamValidationError(
            f"the body ends inside an event (no blank line after {tail.splitlines()[0]!r}); "
            "the SDK drops such an event without an error"
        )
    message: dict[str, Any] | None = None
    open_block: int | None = None
    partial_json: dict[int, list[str]] = {}
    stopped = False
    delta_seen = False
    for number, event in enumerate(events):
        where = f"event {number} (line {event.line})"
        if event.event is None:
            raise StreamValidationError(
                f"{where}: data without an `event:` line; the anthropic SDK silently drops it: {event.data[:60]!r}"
            )
        if stopped:
            raise StreamValidationError(f"{where}: {event.event!r} after message_stop; message_stop must be last")
        if event.event not in _ANTHROPIC_EVENTS:
            raise StreamValidationError(f"{where}: unknown event {event.event!r}")
        try:
            data = json.loads(event.data)
        except ValueError as exc:
            raise StreamValidationError(f"{where}: data is not JSON ({exc}): {event.data[:60]!r}") from None
        if not isinstance(data, dict) or data.get("type") != event.event:
            got = data.get("type") if isinstance(data, dict) else type(data).__name__
            raise StreamValidationError(f"{where}: data type {got!r} does not match `event: {event.event}`")
        kind = event.event
        if kind == "ping":
            continue
        if kind == "error":
            if not allow_error:
                raise StreamValidationError(f"{where}: the stream carries an API error: {data.get('error')!r}")
            return {"type": "error", "error": data.get("error")}
        if message is None:
            if kind != "message_start":
                raise StreamValidationError(f"{where}: expected message_start first, got {kind!r}")
            message = _check_start(data, where)
            continue
        if kind == "message_start":
            raise StreamValidationError(f"{where}: a second message_start")
        if kind == "content_block_start":
            index = data.get("index")
            expected = len(message["content"])
            if open_block is not None:
                raise StreamValidationError(f"{where}: block {index} starts before block {open_block} stopped")
            if delta_seen:
                raise StreamValidationError(f"{where}: content_block_start after message_delta")
            if index != expected:
                raise StreamValidationError(
                    f"{where}: block index {index!r}, expected {expected} (indexes run 0, 1, 2…)"
                )
            block = data.get("content_block")
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise StreamValidationError(f"{where}: content_block must be an object with a type")
            message["content"].append(dict(block))
            open_block = index
        elif kind == "content_block_delta":
            index = data.get("index")
            if index != open_block:
                raise StreamValidationError(f"{where}: delta for block {index!r}, but the open block is {open_block!r}")
            assert isinstance(index, int)
            _apply_delta(message["content"][index], data.get("delta"), partial_json, index, where)
        elif kind == "content_block_stop":
            index = data.get("index")
            if index != open_block:
                raise StreamValidationError(f"{where}: stop for block {index!r}, but the open block is {open_block!r}")
            if index in partial_json:
                _finish_json(message["content"][index], "".join(partial_json.pop(index)), where)
            open_block = None
        elif kind == "message_delta":
            if open_block is not None:
                raise StreamValidationError(f"{where}: message_delta while block {open_block} is still open")
            delta = data.get("delta")
            if not isinstance(delta, dict) or "stop_reason" not in delta:
                raise StreamValidationError(f"{where}: message_delta needs delta.stop_reason")
            message.update({k: v for k, v in delta.items() if k in ("stop_reason", "stop_sequence")})
            usage = data.get("usage")
            if isinstance(usage, dict):
                message["usage"].update({k: v for k, v in usage.items() if v is not None})
            delta_seen = True
        elif kind == "message_stop":
            if not delta_seen:
                raise StreamValidationError(f"{where}: message_stop before any message_delta (no stop_reason)")
            stopped = True
    if message is None:
        raise StreamValidationError("the stream has no message_start (is it empty, or data-only?)")
    if open_block is not None:
        raise StreamValidationError(f"the stream ends while block {open_block} is open (cut mid-stream?)")
    if not delta_seen:
        raise StreamValidationError("the stream ends without message_delta (no stop_reason; cut mid-stream?)")
    if not stopped:
        raise StreamValidationError("the stream ends without message_stop; the SDK would not notice")
    return message


def _check_start(data: dict[str, Any], where: str) -> dict[str, Any]:
    message = data.get("message")
    if not isinstance(message, dict):
        raise StreamValidationError(f"{where}: message_start needs a `message` object")
    for name in ("id", "model", "role"):
        if not isinstance(message.get(name), str):
            raise StreamValidationError(f"{where}: message_start.message.{name} must be a string")
    if not isinstance(message.get("content"), list) or message["content"]:
        raise StreamValidationError(f"{where}: message_start.message.content must be an empty list")
    usage = message.get("usage")
    if not isinstance(usage, dict) or not all(isinstance(usage.get(k), int) for k in ("input_tokens", "output_tokens")):
        raise StreamValidationError(
            f"{where}: message_start.message.usage needs integer input_tokens and output_tokens"
        )
    return {**message, "content": [], "usage": dict(usage)}


def _apply_delta(block: dict[str, Any], delta: Any, partial_json: dict[int, list[str]], index: int, where: str) -> None:
    if not isinstance(delta, dict) or delta.get("type") not in _DELTA_BLOCKS:
        raise StreamValidationError(f"{where}: unknown delta {delta!r}")
    kind = delta["type"]
    if block["type"] not in _DELTA_BLOCKS[kind]:
        raise StreamValidationError(f"{where}: {kind} cannot apply to a {block['type']!r} block")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + _str(delta, "text", where)
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + _str(delta, "thinking", where)
    elif kind == "signature_delta":
        block["signature"] = _str(delta, "signature", where)
    elif kind == "input_json_delta":
        partial_json.setdefault(index, []).append(_str(delta, "partial_json", where))
    elif kind == "citations_delta":
        citation = delta.get("citation")
        if not isinstance(citation, dict) or not isinstance(citation.get("type"), str):
            raise StreamValidationError(f"{where}: delta.citation must be an object with a type")
        block["citations"] = [*(block.get("citations") or []), citation]


def _str(delta: dict[str, Any], name: str, where: str) -> str:
    value = delta.get(name)
    if not isinstance(value, str):
        raise StreamValidationError(f"{where}: delta.{name} must be a string")
    return value


def _finish_json(block: dict[str, Any], text: str, where: str) -> None:
    if text == "":
        return
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise StreamValidationError(
            f"{where}: the tool input fragments of block {block.get('name')!r} are not valid JSON "
            f"({exc}): {text[:80]!r}"
        ) from None
    if not isinstance(value, dict):
        raise StreamValidationError(f"{where}: tool input must be a JSON object, got {type(value).__name__}")
    block["input"] = value
