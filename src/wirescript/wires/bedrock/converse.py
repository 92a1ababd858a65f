"""Bedrock Converse renderings of a turn, for the Bedrock wire.

Pure functions from a `Turn` to what `bedrock-runtime` answers: the Converse JSON, the ConverseStream
event-stream messages (named, so frame-level faults can count and drop them), an HTTP error as botocore
maps it to its modeled exceptions, and an in-stream exception message. Shapes follow botocore's service
model for bedrock-runtime (2023-09-30).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from json.encoder import encode_basestring
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from ..._exchange import CHUNK_BYTES
from ...script import ErrorSpec, Turn
from ...sse import json_dumps, json_string
from .._render import break_json, chunks, default_usage
from ..base import Frame, OneChunk
from . import eventstream

__all__ = [
    "ERROR_TYPES",
    "STREAM_EXCEPTIONS",
    "bedrock_stop",
    "converse_body",
    "converse_stream",
    "error_response",
    "stream_exception",
    "stream_frames",
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


def converse_json(turn: Turn, index: int = 0, *, stop: str | None = None) -> bytes:
    """`json_bytes(converse_body(turn, index, stop=stop))`: the Converse response's bytes.

    A text answer with the default usage (most answers) is its text, which JSON quotes as it is,
    between bytes that depend only on the stop reason and the token counts: those are kept (for up
    to `_TAILS_MOST` of them), so such an answer costs its text's encoding and a join.
    """
    text = turn.text
    if (
        text is None
        or turn.usage is not None
        or turn.thinking is not None
        or turn.tool is not None
        or turn.tools
        or len(encode_basestring(text)) != len(text) + 2  # a character JSON escapes
    ):
        return json_bytes(converse_body(turn, index, stop=stop))
    key = (bedrock_stop(turn, stop), *default_usage(turn, len(text)))  # what the rest holds: `_usage`'s counts
    tail = _TAILS.get(key)
    if tail is not None:
        try:
            return b"".join((_TEXT_HEAD, text.encode(), tail))
        except UnicodeEncodeError:  # a lone surrogate: `json_bytes` escapes the document
            return json_bytes(converse_body(turn, index, stop=stop))
    whole = json_bytes(converse_body(turn, index, stop=stop))
    start = _TEXT_HEAD + text.encode("utf-8", "surrogatepass")
    if whole.startswith(start) and len(_TAILS) < _TAILS_MOST:
        _TAILS[key] = whole[len(start) :]
    return whole


_TEXT_HEAD = b'{"output":{"message":{"role":"assistant","content":[{"text":"'
"""The start of a text answer's Converse JSON, up to its text."""
_TAILS: dict[tuple[str, int, int], bytes] = {}
"""The rest of a text answer's Converse JSON after its text, by (stop reason, input tokens, output tokens)."""
_TAILS_MOST = 256


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
    for frame in stream_frames(turn, index, malformed_tool_json=malformed_tool_json, stop=stop):
        yield frame.name, frame.data


def stream_frames(
    turn: Turn, index: int = 0, *, malformed_tool_json: bool = False, stop: str | None = None, joined: bool = False
) -> Iterator[Frame]:
    """`converse_stream`'s messages as the wire's frames; `joined`: each run of deltas in frames of about 8 KiB.

    The bytes are the same either way (`Wire.render`'s `joined`: nothing reads the events one by one).
    The messages that are the same in every answer (`messageStart`, a block's `contentBlockStop`,
    `messageStop` for a stop reason) are encoded once and kept; a delta's payload is the same JSON
    around its piece, framed with the least work per piece (`eventstream._Around`).
    """
    yield Frame("messageStart", _message_start())
    block = 0
    if turn.thinking is not None:
        yield from _deltas(block, "reasoning", turn.thinking, chunks(turn.thinking), joined)
        signature = {"reasoningContent": {"signature": _signature(turn, index)}}
        yield _event("contentBlockDelta", {"contentBlockIndex": block, "delta": signature})
        yield Frame("contentBlockStop", _block_stop(block))
        block += 1
    if turn.text is not None:
        yield from _deltas(block, "text", turn.text, chunks(turn.text) or [""], joined)
        yield Frame("contentBlockStop", _block_stop(block))
        block += 1
    arguments = [json_dumps(call.input) for call in turn.tool_calls]  # encoded once: streamed, and counted
    for k, (call, encoded) in enumerate(zip(turn.tool_calls, arguments, strict=True)):
        start = {"toolUse": {"toolUseId": _tool_id(call.id, index, k), "name": call.name}}
        yield _event("contentBlockStart", {"contentBlockIndex": block, "start": start})
        streamed = break_json(encoded) if malformed_tool_json else encoded
        yield from _deltas(block, "toolUse", streamed, chunks(streamed), joined)
        yield Frame("contentBlockStop", _block_stop(block))
        block += 1
    yield Frame("messageStop", _message_stop(bedrock_stop(turn, stop)))
    yield Frame("metadata", _metadata(turn, arguments))


def json_bytes(value: Any) -> bytes:
    """`json_dumps(value).encode()`: pydantic-core's UTF-8 as it is, without a round trip through `str`."""
    try:
        return to_json(value)
    except PydanticSerializationError:  # a lone surrogate: `json_dumps` escapes the document to ASCII
        return json_dumps(value).encode()


def _event(name: str, payload: Mapping[str, Any]) -> Frame:
    return Frame(name, eventstream.event(name, json_bytes(payload)))


@functools.cache
def _message_start() -> bytes:
    return eventstream.event("messageStart", json_bytes({"role": "assistant"}))


@functools.lru_cache(maxsize=64)
def _block_stop(block: int) -> bytes:
    return eventstream.event("contentBlockStop", json_bytes({"contentBlockIndex": block}))


@functools.lru_cache(maxsize=64)
def _message_stop(reason: str) -> bytes:
    return eventstream.event("messageStop", json_bytes({"stopReason": reason}))


_DELTA_OF = {
    "text": {"text": ""},
    "reasoning": {"reasoningContent": {"text": ""}},
    "toolUse": {"toolUse": {"input": ""}},
}
"""Each kind of delta, with the `""` its pieces go in."""

_JOINED_BYTES = 8 * 1024
"""About how many bytes of deltas a joined frame carries."""


@functools.lru_cache(maxsize=64)
def _delta_messages(block: int, kind: str) -> tuple[eventstream._Around, int]:
    """The `contentBlockDelta` messages of a block's pieces, and how many of them make a joined frame."""
    head, _, tail = json_dumps({"contentBlockIndex": block, "delta": _DELTA_OF[kind]}).partition('""')
    around = eventstream._framer("event", "contentBlockDelta").around(head.encode(), tail.encode())
    size = len(around.messages(["12345678"], json_string)[0])
    return around, max(1, _JOINED_BYTES // size)


def _deltas(block: int, kind: str, text: str, pieces: list[str], joined: bool) -> Iterator[Frame]:
    """`_event("contentBlockDelta", {"contentBlockIndex": block, "delta": …})` for each piece of `text`, in `kind`.

    The same bytes, with the JSON around the piece (the delta's one `""`) encoded once: most of a stream's
    messages. A text without a lone surrogate (UTF-8 carries all of it) has each piece quoted as
    `json_string` would, without looking for one piece by piece; joined, a text JSON quotes as it is
    is framed from slices of its bytes (`eventstream._Around.plain`).
    """
    around, step = _delta_messages(block, kind)
    if not joined:
        quote = encode_basestring if text.isascii() or _utf8(text) else json_string
        for message in around.messages(pieces, quote):
            yield Frame("contentBlockDelta", message)
        return
    for first in range(0, len(pieces), step):
        parts: list[bytes] = []
        _delta_parts(parts, around, text, pieces, first, first + step)
        yield Frame("contentBlockDelta", b"".join(parts))


def _delta_parts(
    parts: list[bytes], around: eventstream._Around, text: str, pieces: list[str], first: int, last: int
) -> None:
    """The messages of `pieces[first:last]` (the pieces of `text`, as `chunks` cuts them) into `parts`."""
    if text.isascii() and _plain(text):  # each piece is a slice of the text's bytes, quoted as it is
        size = len(pieces[0])
        around.plain(parts, text[first * size : last * size].encode(), size)
        return
    quote = encode_basestring if text.isascii() or _utf8(text) else json_string
    parts += around.messages(pieces[first:last], quote)


def _text_parts(parts: list[bytes], around: eventstream._Around, text: str, *, empty: str | None = None) -> None:
    """The messages of `text`'s pieces as `chunks` cuts them (`[empty]` for none, when given) into `parts`.

    A text JSON quotes as it is is framed from slices of its bytes (pieces of `chunks`' size: at
    most 8 characters, half the text when shorter), its pieces never made.
    """
    length = len(text)
    if length and text.isascii() and len(encode_basestring(text)) == length + 2:
        around.plain(parts, text.encode(), max(1, min(8, length // 2)))
        return
    pieces = chunks(text) or ([empty] if empty is not None else [])
    if pieces:
        _delta_parts(parts, around, text, pieces, 0, len(pieces))


def _plain(text: str) -> bool:
    """Whether JSON quotes the text as it is (no quote, backslash or control character in it), and it is not empty."""
    return len(encode_basestring(text)) == len(text) + 2 and bool(text)


_ONE_CHUNK_CHARS = 1024
"""The most text (reasoning, text and tool input together) `one_chunk` renders at once: a stream of about a
hundred deltas, about one chunk (`CHUNK_BYTES`); a longer one is rendered as it is read."""


def one_chunk(
    turn: Turn, index: int = 0, *, stop: str | None = None, malformed_tool_json: bool = False
) -> OneChunk | None:
    """`stream_frames(…, joined=True)`'s bytes rendered at once, as the one chunk a short stream is sent in.

    No generator and no frame per message: the messages go into one list, joined once. None for a
    stream that is not one chunk after all (`CHUNK_BYTES`: a long answer, text that escapes long),
    which `stream_frames` renders as it is read; and for one that fails to render, which fails
    there as it always did (the core reports it while streaming).
    """
    text, thinking, calls = turn.text, turn.thinking, turn.tool_calls
    chars = (len(text) if text else 0) + (len(thinking) if thinking else 0)
    if chars > _ONE_CHUNK_CHARS:
        return None
    try:
        arguments = [json_dumps(call.input) for call in calls] if calls else []
        if arguments and chars + sum(map(len, arguments)) > _ONE_CHUNK_CHARS:
            return None
        parts = [_message_start()]
        block = 0
        if thinking is not None:
            _text_parts(parts, _delta_messages(block, "reasoning")[0], thinking)
            delta = {"contentBlockIndex": block, "delta": {"reasoningContent": {"signature": _signature(turn, index)}}}
            parts += (eventstream.event("contentBlockDelta", json_bytes(delta)), _block_stop(block))
            block += 1
        if text is not None:
            _text_parts(parts, _delta_messages(block, "text")[0], text, empty="")
            parts.append(_block_stop(block))
            block += 1
        for k, (call, encoded) in enumerate(zip(calls, arguments, strict=True)):
            start = {
                "contentBlockIndex": block,
                "start": {"toolUse": {"toolUseId": _tool_id(call.id, index, k), "name": call.name}},
            }
            parts.append(eventstream.event("contentBlockStart", json_bytes(start)))
            streamed = break_json(encoded) if malformed_tool_json else encoded
            _text_parts(parts, _delta_messages(block, "toolUse")[0], streamed)
            parts.append(_block_stop(block))
            block += 1
        parts += (_message_stop(bedrock_stop(turn, stop)), _metadata(turn, arguments))
    except Exception:  # what fails here fails in `stream_frames` too, where it always failed
        return None
    body = b"".join(parts)
    if len(body) >= CHUNK_BYTES:  # not one chunk after all: as it is read
        return None
    return OneChunk(body, len(body), "messageStart", "")


_METADATA: dict[tuple[int, int], bytes] = {}
"""The `metadata` message of each (input, output) token counts with no cache counts, encoded once."""
_METADATA_MOST = 256


def _metadata(turn: Turn, arguments: list[str]) -> bytes:
    """The `metadata` message: the turn's usage and the metrics (kept for plain counts: a few per test suite)."""
    usage = _usage(turn, arguments)
    if len(usage) != 3:  # cache counts too
        return eventstream.event("metadata", json_bytes({"usage": usage, "metrics": {"latencyMs": 1}}))
    key = (usage["inputTokens"], usage["outputTokens"])
    found = _METADATA.get(key)
    if found is None:
        found = eventstream.event("metadata", json_bytes({"usage": usage, "metrics": {"latencyMs": 1}}))
        if len(_METADATA) < _METADATA_MOST:
            _METADATA[key] = found
    return found


def _utf8(text: str) -> bool:
    """Whether UTF-8 carries `text` (it holds no lone surrogate)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


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
    return name, eventstream.exception(name, json_bytes({"message": message}))
