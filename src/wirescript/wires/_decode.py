"""What wires read bodies with: JSON values of a known type, SSE bodies, and answers decoded as turns.

Private helpers of the wires in this package, provider-neutral; record mode's `Wire.decode` builds
its turns with `decoded_turn`, `decoded_error` and `decoded_usage`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import from_json

from ..sse import parse_sse

if TYPE_CHECKING:
    from .base import Wire

__all__ = [
    "as_dict",
    "as_float",
    "as_int",
    "as_list",
    "decoded_error",
    "decoded_stop",
    "decoded_turn",
    "decoded_usage",
    "is_event_stream",
    "json_body",
    "since_last_assistant",
    "sse_json",
]


def is_event_stream(headers: Mapping[str, str]) -> bool:
    """Whether a response's `content-type` (lower-case header names) says it is server-sent events."""
    return headers.get("content-type", "").lower().startswith("text/event-stream")


def json_body(body: bytes | str) -> Any:
    """A response body's JSON, or None when it is not JSON.

    Read by pydantic-core's `from_json` (record mode decodes every event of every stream it passes
    through: a third of the standard library's time); whatever it refuses, the standard library
    decides, as the records' bodies are read (`_record`): both read valid JSON to the same values.
    """
    try:
        return from_json(body)
    except ValueError:
        pass
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def sse_json(body: bytes) -> list[Any]:
    """The JSON data of each event of an SSE body, in order; events whose data is not JSON (`[DONE]`) left out."""
    events, _ = parse_sse(body.decode("utf-8", "replace"))
    return [data for event in events if (data := json_body(event.data)) is not None]


def decoded_stop(wire: Wire, native: Any, has_tool_calls: bool) -> str | None:
    """A native stop reason as a turn's `stop_reason`: canonical, and None when it is the default.

    The default (`tool_use` for a turn with tool calls, `end_turn` otherwise) is left out, so a
    recorded turn reads as one written by hand; a reason no wire knows is kept as it came.
    """
    if not isinstance(native, str) or not native:
        return None
    canonical = wire.stop_map.get(native, native)
    return None if canonical == ("tool_use" if has_tool_calls else "end_turn") else canonical


def decoded_turn(
    wire: Wire,
    *,
    thinking: Iterable[str] = (),
    thinking_signature: str | None = None,
    text: Iterable[str] = (),
    calls: Iterable[Mapping[str, Any]] = (),
    stop: Any = None,
    usage: Mapping[str, int] | None = None,
    server_tools: Iterable[Mapping[str, Any]] = (),
    citations: Iterable[Any] = (),
) -> dict[str, Any]:
    """A decoded answer as a turn dict: thinking, server tools, text (joined), citations, tool calls, stop and usage.

    Only what the answer had is set: no `thinking` key for an answer without reasoning, no
    `text` for one without text, `tool` for one call and `tools` for several. The signature is
    kept only with the one block of thinking it signs (`thinking_signature`).
    """
    turn: dict[str, Any] = {}
    thought = list(thinking)
    if thought:
        turn["thinking"] = "".join(thought)
        if thinking_signature and len(thought) == 1:
            turn["thinking_signature"] = thinking_signature
    ran = [dict(tool) for tool in server_tools]
    if ran:
        turn["server_tools"] = ran
    said = list(text)
    if said:
        turn["text"] = "".join(said)
    cited = list(citations)
    if cited and said:
        turn["citations"] = cited
    tool_calls = [dict(call) for call in calls]
    if len(tool_calls) == 1:
        turn["tool"] = tool_calls[0]
    elif tool_calls:
        turn["tools"] = tool_calls
    reason = decoded_stop(wire, stop, bool(tool_calls))
    if reason is not None:
        turn["stop_reason"] = reason
    if usage:
        turn["usage"] = dict(usage)
    return turn


def decoded_error(status: int, type_: Any = None, message: Any = None, code: Any = None) -> dict[str, Any]:
    """An error answer as an `error` turn: its status and, when they are strings, its type, message and code.

    No header is kept: a recording holds no header value (the `retry-after` a replay sends is its own).
    """
    error: dict[str, Any] = {"status": status}
    if isinstance(type_, str) and type_:
        error["type"] = type_
    if isinstance(message, str):
        error["message"] = message
    if isinstance(code, (str, int)) and not isinstance(code, bool) and str(code):
        error["code"] = str(code)
    return {"error": error}


def decoded_usage(**counts: Any) -> dict[str, int] | None:
    """A turn's `usage` from the counts an answer reported (non-negative ints only), or None when it reported none."""
    usage = {name: value for name, value in counts.items() if as_int(value) is not None and value >= 0}
    return usage or None


def as_int(value: Any) -> int | None:
    """An int field of a request body, or None when absent or of another type."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_float(value: Any) -> float | None:
    """A number field of a request body, or None when absent or of another type."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def as_dict(value: Any) -> dict[str, Any]:
    """An object field of a response body, or {} when absent or of another type."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A list field of a request body, or [] when absent or of another type."""
    return value if isinstance(value, list) else []


def since_last_assistant(messages: list[Any], roles: tuple[str, ...]) -> list[Any]:
    """The messages of one of `roles` after the last `assistant` message: a chat request's newest tool results.

    What `RecordedRequest.tool_results` holds on the wires whose tool results are messages of their own
    (Chat Completions' `tool` messages, Ollama's): the ones this request answers, not the conversation's.
    """
    found: list[Any] = []
    for message in reversed(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant":
            break
        if role in roles:
            found.append(message)
    found.reverse()
    return found
