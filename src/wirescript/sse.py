"""Server-sent events: the frame encoder the wires use and the parser the validators use."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from pydantic_core import PydanticSerializationError, to_json

__all__ = [
    "PIECE",
    "SEQUENCE",
    "SSEEvent",
    "delta_template",
    "encode_deltas",
    "encode_event",
    "encode_pieces",
    "json_dumps",
    "json_event",
    "json_string",
    "parse_sse",
]


_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"))
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_dumps(value: Any) -> str:
    """Compact, key-order-preserving JSON, as the providers send it.

    Text is sent as UTF-8, except when it holds a lone surrogate (which UTF-8 cannot carry, and which
    a request may send as a JSON escape that the answer echoes): then the whole document is escaped
    to ASCII, which decodes to the same value. Encoded by pydantic-core's `to_json` (a third of the
    standard library's cost for an event: most of what an answer costs to render), whose strings
    are escaped as `json.dumps(..., ensure_ascii=False)` escapes them. It also carries what JSON
    has no type for (a date, a set, bytes), so `value` must hold JSON values only: the wires render
    turns, checked when the script is built, and a route's handler body is checked before it comes here.
    """
    try:
        return to_json(value).decode()
    except PydanticSerializationError:  # a lone surrogate (the standard library fails on anything else)
        return _ASCII_ENCODER.encode(value)


def json_string(text: str) -> str:
    """`json_dumps(text)` for a string: what each streamed piece costs."""
    encoded = json.encoder.encode_basestring(text)
    if not encoded.isascii() and _SURROGATE.search(encoded) is not None:
        return json.encoder.encode_basestring_ascii(text)
    return encoded


def encode_event(event: str | None, data: str) -> bytes:
    """One SSE frame: an optional `event:` line, one `data:` line per line of data, a blank line."""
    head = f"event: {event}\n" if event else ""
    if "\n" in data:
        data = data.replace("\r\n", "\n")
        body = "".join(f"data: {line}\n" for line in data.split("\n"))
    else:
        body = f"data: {data}\n"
    return f"{head}{body}\n".encode()


def json_event(event: str, data: Any) -> bytes:
    """`encode_event(event, json_dumps(data))`: an SSE frame of JSON data (one `data:` line: JSON has no line break).

    The bytes `to_json` gives are the frame's data as they are, with no round trip through text.
    """
    try:
        return f"event: {event}\ndata: ".encode() + to_json(data) + b"\n\n"
    except PydanticSerializationError:  # a lone surrogate: escaped to ASCII, as `json_dumps` does
        return f"event: {event}\ndata: {_ASCII_ENCODER.encode(data)}\n\n".encode()


PIECE = "\x00wirescript-piece\x00"
"""The placeholder `encode_deltas` puts each delta's text in."""
SEQUENCE = "\x00wirescript-sequence\x00"
"""The placeholder `encode_deltas` puts each event's sequence number in (OpenAI Responses)."""

_JOINED_CHARS = 8 * 1024
"""About how long a joined chunk of delta events is."""


def encode_deltas(
    event: str | None,
    data: Any,
    pieces: Sequence[str],
    *,
    joined: bool = False,
    numbers: Iterator[int] | None = None,
) -> Iterator[bytes]:
    """The SSE frames of a run of deltas: `encode_event(event, json_dumps(data))` with each piece put in.

    `data` is the event's JSON data with `PIECE` where each piece goes (once) and, when `numbers`
    is given, `SEQUENCE` where the next number goes. The data around the pieces is encoded once, so
    a delta costs one string encoding: for a long answer, most of what wirescript spends on a
    stream. The bytes are exactly those of encoding every event whole. `joined`: nothing reads the
    events one by one (an unfaulted stream read in chunks), so consecutive events travel as one
    chunk of about 8 KiB, built in one pass.
    """
    prefix = f"event: {event}\ndata: " if event else "data: "
    try:
        text = to_json(data).decode()
    except PydanticSerializationError:  # a lone surrogate: each event is encoded whole, below
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if not text.isascii():
        # Rare (a non-ASCII model name): a lone surrogate anywhere would escape the whole event.
        yield from _whole(prefix, text, pieces, numbers)
        return
    if numbers is not None:
        head, piece_first, middle, tail = _around_two(text)
        for piece in pieces:
            first, second = (json_string(piece), next(numbers)) if piece_first else (next(numbers), json_string(piece))
            yield f"{prefix}{head}{first}{middle}{second}{tail}\n\n".encode()
        return
    head, _, tail = text.partition(_PIECE_JSON)
    yield from encode_pieces((f"{prefix}{head}", f"{tail}\n\n"), pieces, joined=joined)


def delta_template(event: str | None, data: Any) -> tuple[str, str] | None:
    """What `encode_deltas(event, data, ...)` puts around each piece, to encode pieces with `encode_pieces`.

    None when the data is not ASCII (or holds a lone surrogate): `encode_deltas` encodes those events whole.
    A wire whose delta data is the same in every answer keeps its template instead of encoding it each time.
    """
    prefix = f"event: {event}\ndata: " if event else "data: "
    try:
        text = to_json(data).decode()
    except PydanticSerializationError:
        return None
    if not text.isascii():
        return None
    head, _, tail = text.partition(_PIECE_JSON)
    return f"{prefix}{head}", f"{tail}\n\n"


def encode_pieces(template: tuple[str, str], pieces: Sequence[str], *, joined: bool = False) -> Iterator[bytes]:
    """The frames of a run of deltas from their `delta_template`: the bytes `encode_deltas` gives."""
    before, after = template
    if not joined:
        for piece in pieces:
            yield f"{before}{json_string(piece)}{after}".encode()
        return
    if len(pieces) == 1:  # a one-delta answer: no batching
        yield f"{before}{json_string(pieces[0])}{after}".encode()
        return
    step = max(1, _JOINED_CHARS // (len(before) + len(after) + 16))
    for start in range(0, len(pieces), step):
        yield "".join([f"{before}{json_string(piece)}{after}" for piece in pieces[start : start + step]]).encode()


_PIECE_JSON = json.dumps(PIECE)
_SEQUENCE_JSON = json.dumps(SEQUENCE)


def _around_two(text: str) -> tuple[str, bool, str, str]:
    """The JSON around a piece and a sequence number: (head, whether the piece comes first, middle, tail)."""
    piece_first = text.index(_PIECE_JSON) < text.index(_SEQUENCE_JSON)
    first, second = (_PIECE_JSON, _SEQUENCE_JSON) if piece_first else (_SEQUENCE_JSON, _PIECE_JSON)
    head, _, rest = text.partition(first)
    middle, _, tail = rest.partition(second)
    return head, piece_first, middle, tail


def _whole(prefix: str, text: str, pieces: Sequence[str], numbers: Iterator[int] | None) -> Iterator[bytes]:
    """Each delta event as `json_dumps` encodes it whole, for data that is not ASCII.

    `text` is the data as the UTF-8 encoder writes it, so with a piece put in it is that encoder's
    text for the whole event; `json_dumps` sends that unless it holds a lone surrogate.
    """
    for piece in pieces:
        filled = text.replace(_PIECE_JSON, json.encoder.encode_basestring(piece), 1)
        if numbers is not None:
            filled = filled.replace(_SEQUENCE_JSON, str(next(numbers)), 1)
        if _SURROGATE.search(filled) is not None:
            filled = _ASCII_ENCODER.encode(json.loads(filled))
        yield f"{prefix}{filled}\n\n".encode()


class SSEEvent(NamedTuple):
    """A parsed SSE event."""

    event: str | None
    """The `event:` field, or None when the frame had none."""
    data: str
    """The `data:` lines joined with newlines."""
    line: int
    """The line number (1-based) where the event started."""


def parse_sse(body: bytes | str) -> tuple[list[SSEEvent], str]:
    """Parse an SSE body into events, following the WHATWG rules.

    Returns the complete events and the text of an unterminated trailing event (empty when the
    body ends with a blank line), which a client would silently drop.
    """
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    events: list[SSEEvent] = []
    event: str | None = None
    data: list[str] = []
    start = 0
    pending: list[str] = []
    lines = text.split("\n")
    terminated = text.endswith("\n")
    if terminated:
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if line == "":
            if data or event is not None:
                events.append(SSEEvent(event, "\n".join(data), start))
            event, data, pending = None, [], []
            continue
        if not pending:
            start = number
        pending.append(line)
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    return events, "\n".join(pending)
