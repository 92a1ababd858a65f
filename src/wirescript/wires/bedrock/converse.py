"""Bedrock Converse renderings of a turn, for the Bedrock wire.

Pure functions from a `Turn` to what `bedrock-runtime` answers: the Converse JSON, the ConverseStream
event-stream messages (named, so frame-level faults can count and drop them), an HTTP error as botocore
maps it to its modeled exceptions, and an in-stream exception message. Shapes follow botocore's service
model for bedrock-runtime (2023-09-30).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...script import ErrorSpec, Turn
from ...sse import json_dumps, json_string
from .._render import break_json, chunks, default_usage
from . import eventstream

__all__ = [
    "ERROR_TYPES",
    "STREAM_EXCEPTIONS",
    "bedrock_stop",
    "converse_body",
    "converse_stream",
    "error_response",
    "stream_exception",
]

ERROR_TYPES: Mapping[int, str] = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
"""The bedrock-runtime error shape botocore raises for each status (`x-amzn-errortype`)."""

STREAM_EXCEPTIONS = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    }
)
"""The exception members of ConverseStream's event stream."""

_STREAM_EXCEPTION_FOR = {
    "overloaded_error": "serviceUnavailableException",
    "rate_limit_error": "throttlingException",
    "invalid_request_error": "validationException",
    "api_error": "internalServerException",
}

_TO_BEDROCK_STOP = {"refusal": "content_filtered", "pause_turn": "end_turn"}

_JSON = "application/json"


def bedrock_stop(turn: Turn, stop: str | None = None) -> str:
    """The turn's stop reason in Bedrock's vocabulary (`end_turn`, `tool_use`, `content_filtered`, …).

    Args:
        turn: The scripted turn.
        stop: Its stop reason in the canonical vocabulary, as its wire translates it
            (`Wire.canonical_stop`); None: the turn's own, untranslated.

    Returns:
        A value of Converse's `StopReason`; one not known here passes through unchanged.

    """
    if stop is None:
        stop = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
    return _TO_BEDROCK_STOP.get(stop, stop)


def _tool_id(call_id: str | None, index: int, k: int) -> str:
    return call_id or f"tooluse_{index:04d}_{k}"


def _usage(turn: Turn, arguments: list[str] | None = None) -> dict[str, Any]:
    """The usage of a turn; `arguments`: its tool inputs as already encoded, so they are not encoded again."""
    encoded = arguments if arguments is not None else [json_dumps(c.input) for c in turn.tool_calls]
    chars = len(turn.text or "") + len(turn.thinking or "") + sum(map(len, encoded))
    input_tokens, output_tokens = default_usage(turn, chars)
    usage: dict[str, Any] = {
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "totalTokens": input_tokens + output_tokens,
    }
    scripted = turn.usage
    if scripted is not None and scripted.cache_read_input_tokens:
        usage["cacheReadInputTokens"] = scripted.cache_read_input_tokens
    if scripted is not None and scripted.cache_creation_input_tokens:
        usage["cacheWriteInputTokens"] = scripted.cache_creation_input_tokens
        hour = scripted.cache_creation_1h_input_tokens
        if hour is not None:  # the writes by ttl, 1 hour first (botocore: `cacheDetails`), when the split is known
            details = [("1h", hour), ("5m", scripted.cache_creation_input_tokens - hour)]
            usage["cacheDetails"] = [{"ttl": ttl, "inputTokens": n} for ttl, n in details if n]
    return usage


def converse_body(turn: Turn, index: int = 0, *, stop: str | None = None) -> dict[str, Any]:
    """The Converse response JSON for a turn: reasoning first, then text, then the tool calls.

    Args:
        turn: The scripted turn (not an error turn).
        index: The request's index, for deterministic tool-use ids and signatures.
        stop: The canonical stop reason, as its wire translates it (`bedrock_stop`).

    Returns:
        `{"output": {"message": …}, "stopReason", "usage", "metrics"}`.

    """
    content: list[dict[str, Any]] = []
    if turn.thinking is not None:
        content.append(
            {"reasoningContent": {"reasoningText": {"text": turn.thinking, "signature": _signature(turn, index)}}}
        )
    if turn.text is not None:
        content.append({"text": turn.text})
    for k, call in enumerate(turn.tool_calls):
        content.append({"toolUse": {"toolUseId": _tool_id(call.id, index, k), "name": call.name, "input": call.input}})
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": bedrock_stop(turn, stop),
        "usage": _usage(turn),
        "metrics": {"latencyMs": 1},
    }


def _signature(turn: Turn, index: int) -> str:
    """The reasoning block's signature: the turn's own, else a placeholder numbered by request."""
    return turn.thinking_signature or f"sig_{index:04d}"


def converse_stream(
    turn: Turn, index: int = 0, *, malformed_tool_json: bool = False, stop: str | None = None
) -> Iterator[tuple[str, bytes]]:
    """The ConverseStream messages for a turn, each with its event name, produced lazily.

    Text and reasoning blocks begin with their first delta (the model has no start event for them);
    a tool call opens with `contentBlockStart` and streams its input JSON in several pieces.

    Args:
        turn: The scripted turn (not an error turn).
        index: The request's index, for deterministic tool-use ids and signatures.
        malformed_tool_json: Stream each tool call's input as text that is not JSON (`Fault.malformed_tool_json`).
        stop: The canonical stop reason, as its wire translates it (`bedrock_stop`).

    Yields:
        `(event name, encoded message)`, from `messageStart` to `metadata`.

    """

    def event(name: str, payload: Mapping[str, Any]) -> tuple[str, bytes]:
        return name, eventstream.event(name, json_dumps(payload).encode())

    def deltas(block: int, delta: Mapping[str, Any], pieces: list[str]) -> Iterator[tuple[str, bytes]]:
        """`event("contentBlockDelta", {"contentBlockIndex": block, "delta": delta})` for each piece in `delta`.

        The same bytes, with the JSON around the piece (`delta`'s one `""`) encoded once: most of a stream's messages.
        """
        head, _, tail = json_dumps({"contentBlockIndex": block, "delta": delta}).partition('""')
        before, after = head.encode(), tail.encode()
        for piece in pieces:
            payload = b"".join((before, json_string(piece).encode(), after))
            yield "contentBlockDelta", eventstream.event("contentBlockDelta", payload)

    yield event("messageStart", {"role": "assistant"})
    block = 0
    if turn.thinking is not None:
        yield from deltas(block, {"reasoningContent": {"text": ""}}, chunks(turn.thinking))
        signature = {"reasoningContent": {"signature": _signature(turn, index)}}
        yield event("contentBlockDelta", {"contentBlockIndex": block, "delta": signature})
        yield event("contentBlockStop", {"contentBlockIndex": block})
        block += 1
    if turn.text is not None:
        yield from deltas(block, {"text": ""}, chunks(turn.text) or [""])
        yield event("contentBlockStop", {"contentBlockIndex": block})
        block += 1
    arguments = [json_dumps(call.input) for call in turn.tool_calls]  # encoded once: streamed, and counted
    for k, (call, encoded) in enumerate(zip(turn.tool_calls, arguments, strict=True)):
        start = {"toolUse": {"toolUseId": _tool_id(call.id, index, k), "name": call.name}}
        yield event("contentBlockStart", {"contentBlockIndex": block, "start": start})
        pieces = chunks(break_json(encoded) if malformed_tool_json else encoded)
        yield from deltas(block, {"toolUse": {"input": ""}}, pieces)
        yield event("contentBlockStop", {"contentBlockIndex": block})
        block += 1
    yield event("messageStop", {"stopReason": bedrock_stop(turn, stop)})
    yield event("metadata", {"usage": _usage(turn, arguments), "metrics": {"latencyMs": 1}})


def error_response(spec: ErrorSpec, index: int = 0) -> tuple[int, dict[str, str], bytes]:
    """An HTTP error as bedrock-runtime sends it, which botocore raises as the modeled exception.

    Args:
        spec: The scripted error; `type` names the exception (`ThrottlingException`, …), else the status picks it.
        index: The request's index, for the request id.

    Returns:
        The status, the headers (`x-amzn-errortype` is what botocore reads the code from) and the JSON body.

    """
    name = spec.type or ERROR_TYPES.get(spec.status, str(spec.status))
    message = spec.message if spec.message is not None else f"wirescript: scripted {spec.status} error"
    headers = {
        "Content-Type": _JSON,
        "x-amzn-requestid": f"req-{index:04d}",
        "x-amzn-errortype": f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/",
        **(spec.headers or {}),
    }
    return spec.status, headers, json_dumps({"message": message}).encode()


def stream_exception(error_type: str, message: str) -> tuple[str, bytes]:
    """An exception message inside a ConverseStream, which botocore raises as `EventStreamError`.

    Args:
        error_type: A ConverseStream exception member (`throttlingException`, …) or an Anthropic error type
            (`overloaded_error` becomes `serviceUnavailableException`; anything else unknown,
            `modelStreamErrorException`).
        message: The error message.

    Returns:
        `(exception name, encoded message)`.

    """
    name = error_type if error_type in STREAM_EXCEPTIONS else _STREAM_EXCEPTION_FOR.get(error_type, "")
    name = name or "modelStreamErrorException"
    return name, eventstream.exception(name, json_dumps({"message": message}).encode())
