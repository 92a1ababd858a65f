"""The Wire protocol and what every wire shares: pure functions, no HTTP library."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..recorded import RecordedRequest
from ..script import ErrorSpec, StreamError, Turn
from ..sse import _SURROGATE, _encode_string, json_dumps, json_string
from ..sse import _encode as encode_utf8

__all__ = [
    "PIECE",
    "RETRYABLE",
    "Frame",
    "Parsed",
    "Rendered",
    "Wire",
    "canonical_stop",
    "chunks",
    "default_usage",
    "delta_frames",
    "pieces_template",
    "retry_headers",
]

RETRYABLE = frozenset({408, 409, 429}) | frozenset(range(500, 600))
"""The statuses the provider SDKs retry."""

DEFAULT_INPUT_TOKENS = 10


@dataclass(slots=True)
class Frame:
    """One SSE frame of a streamed answer, with the name faults refer to it by.

    In a joined rendering (`Wire.render(..., joined=True)`), one frame may carry several consecutive
    events of the same name: nothing then looks at events one by one.
    """

    name: str
    """The event name (`message_start`, `[DONE]`, `response.completed`, `chunk`, …)."""
    data: bytes
    """The encoded frame."""


@dataclass(slots=True)
class Rendered:
    """A response, independent of any HTTP library."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    frames: Iterator[Frame] | None = None
    """For a streamed answer: the frames, produced lazily as they are read."""


@dataclass(slots=True)
class Parsed:
    """The provider-level fields of a request."""

    model: str | None = None
    system: str | None = None
    messages: list[Any] = field(default_factory=list)
    conversation: list[Any] | None = None
    tools: list[Any] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)
    tool_results: list[Any] = field(default_factory=list)
    stream: bool = False
    max_tokens: int | None = None
    temperature: float | None = None


class Wire:
    """One provider API: recognise its requests, parse them, render turns and errors.

    A wire instance belongs to one transport, so any state it keeps (conversation threads) is
    private to that stub.
    """

    name: ClassVar[str]
    """The provider id recorded as `RecordedRequest.provider`."""
    endpoint: ClassVar[str]
    """The endpoint it serves, for messages (`POST …/v1/messages`)."""
    events: ClassVar[frozenset[str]] = frozenset()
    """The names of the frames its streamed answers send: what `Fault.drop` may name."""
    malformed_tool_json_applies_to_json: ClassVar[bool] = False
    """Whether `Fault.malformed_tool_json` can damage a JSON (non-streamed) answer too: OpenAI's
    `arguments` string, Gemini's `MALFORMED_FUNCTION_CALL`. Anthropic's tool input is an object."""

    def matches(self, method: str, path: str) -> bool:
        """Whether this wire answers the request."""
        raise NotImplementedError

    def parse(self, body: Any, path: str) -> Parsed:
        """Extract the provider-level fields from a JSON body (a dict when the wire is called)."""
        raise NotImplementedError

    def resolve(self, record: RecordedRequest) -> None:
        """Complete a record from the wire's state (called under the stub's lock)."""

    def render(
        self, turn: Turn, record: RecordedRequest, *, malformed_tool_json: bool = False, joined: bool = False
    ) -> Rendered:
        """Render a successful turn, streamed or not as the request asked.

        `joined`: the frames will only be concatenated (an unfaulted stream, read in chunks), so a
        wire may join runs of deltas into frames of several events; the bytes are the same.
        """
        raise NotImplementedError

    def error(self, spec: ErrorSpec, record: RecordedRequest) -> Rendered:
        """Render an error turn in the provider's error shape."""
        raise NotImplementedError

    def stream_error(self, spec: StreamError, record: RecordedRequest) -> Frame:
        """The provider's in-stream error event."""
        raise NotImplementedError

    def unscripted(self, message: str, record: RecordedRequest) -> Rendered:
        """The loud answer to a request with no scripted turn: a non-retryable error carrying `message`."""
        rendered = self.error(ErrorSpec(status=400, message=message, code="wirescript_unscripted"), record)
        rendered.headers["x-should-retry"] = "false"
        return rendered


def chunks(text: str, most: int = 8) -> list[str]:
    """Split text for streaming: several pieces whenever it has two or more characters.

    Pieces are at most `most` characters long and cut at fixed positions, mid-word included, so
    a consumer that assumes whole words per delta is caught.
    """
    if not text:
        return []
    size = max(1, min(most, len(text) // 2))
    return [text[i : i + size] for i in range(0, len(text), size)]


def default_usage(turn: Turn, output_chars: int) -> tuple[int, int]:
    """The (input, output) token counts for a turn: scripted values, else deterministic defaults."""
    usage = turn.usage
    input_tokens = usage.input_tokens if usage and usage.input_tokens is not None else DEFAULT_INPUT_TOKENS
    if usage and usage.output_tokens is not None:
        output_tokens = usage.output_tokens
    else:
        output_tokens = max(1, math.ceil(output_chars / 4))
    return input_tokens, output_tokens


_TO_CANONICAL = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "refusal",
}


def canonical_stop(turn: Turn) -> str:
    """The turn's stop reason in Anthropic's vocabulary (`end_turn`, `tool_use`, `max_tokens`, …).

    OpenAI and Gemini names are translated; unknown values pass through unchanged.
    """
    if turn.stop_reason is None:
        return "tool_use" if turn.tool_calls else "end_turn"
    return _TO_CANONICAL.get(turn.stop_reason, turn.stop_reason)


def retry_headers(spec: ErrorSpec) -> dict[str, str]:
    """Headers for an error response: the scripted ones, plus `retry-after-ms: 1` when retryable.

    The SDKs honour a server delay only when it is positive (0 falls back to their backoff of
    0.375 s or more), so 1 ms lets their real retry loop run without sleeping.
    """
    headers = {k.lower(): v for k, v in (spec.headers or {}).items()}
    if spec.status in RETRYABLE and "retry-after" not in headers and "retry-after-ms" not in headers:
        headers["retry-after-ms"] = "1"
    return headers


def text_blocks(value: Any) -> str | None:
    """A system prompt given as a string or as a list of text blocks, as one string."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(b["text"] for b in value if isinstance(b, Mapping) and isinstance(b.get("text"), str))
    return None


def as_int(value: Any) -> int | None:
    """An int field of a request body, or None when absent or of another type."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_float(value: Any) -> float | None:
    """A number field of a request body, or None when absent or of another type."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def as_list(value: Any) -> list[Any]:
    """A list field of a request body, or [] when absent or of another type."""
    return value if isinstance(value, list) else []


PIECE = "\x00wirescript-piece\x00"
"""A placeholder for the varying parts of a streamed event, to split its JSON around (see `pieces_template`)."""

_PIECE_JSON = json_dumps(PIECE)


def pieces_template(data: Any, slots: int) -> list[str] | None:
    """The compact JSON of `data` split around its `slots` `PIECE` placeholders, or None when unsafe.

    Joining the parts with each slot's value encoded by `json_dumps` gives the bytes `json_dumps`
    gives for the whole event, so a delta costs one string encoding. Only when the rest of the event
    is ASCII: then `json_dumps` escaping a document to ASCII (for a lone surrogate in a piece) leaves
    the rest unchanged. Otherwise (a non-ASCII model name, say), or when the placeholder turns up in
    the data itself, None: encode each event whole.
    """
    text = encode_utf8(data)
    if not text.isascii():
        return None
    parts = text.split(_PIECE_JSON)
    return parts if len(parts) == slots + 1 else None


_JOINED_BYTES = 8 * 1024
"""About how long a joined frame of deltas is (the transport sends chunks of about 16 KiB)."""


def delta_frames(
    name: str, event: str | None, before: str, after: str, pieces: Sequence[str], *, joined: bool
) -> Iterator[Frame]:
    """The frames of a run of deltas: for each piece, the SSE event whose data is `before + json(piece) + after`.

    `before` and `after` come from `pieces_template` (compact, ASCII, one line), so each frame is
    what `encode_event(event, json_dumps(<the whole event>))` gives, at the cost of one string
    encoding. Joined, consecutive events travel as one frame of about `_JOINED_BYTES`, built in one
    pass, and a piece with a lone surrogate (escaped to ASCII as `json_dumps` escapes it) sends its
    group down the careful path.
    """
    prefix = f"event: {event}\ndata: {before}" if event else f"data: {before}"
    suffix = f"{after}\n\n"
    if not joined:
        for piece in pieces:
            yield Frame(name, f"{prefix}{json_string(piece)}{suffix}".encode())
        return
    step = max(1, _JOINED_BYTES // (len(prefix) + len(suffix) + 16))
    encode = _encode_string
    for start in range(0, len(pieces), step):
        group = pieces[start : start + step]
        text = "".join([prefix + encode(piece) + suffix for piece in group])
        if not text.isascii() and _SURROGATE.search(text) is not None:
            text = "".join([prefix + json_string(piece) + suffix for piece in group])
        yield Frame(name, text.encode())
