"""Server-sent events: the frame encoder the wires use and the parser the validators use."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["SSEEvent", "encode_event", "json_dumps", "json_string", "parse_sse"]


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# What `json.dumps(value, separators=(",", ":"), ensure_ascii=False)` builds on every call: one
# encoder serves every call instead (it keeps no state between calls, so threads may share it).
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"))
_SURROGATE = re.compile("[\ud800-\udfff]")
# What those two encoders call for a str (`JSONEncoder.encode`'s own shortcut), called directly.
_encode_string = json.encoder.encode_basestring
_encode_string_ascii = json.encoder.encode_basestring_ascii

# `JSONEncoder.encode` builds the C accelerator's encoder afresh for every call, which costs more
# than encoding a small event. Without circular-reference markers that encoder keeps no state, so
# one is built here and shared; the output is the same text (the stdlib builds it with the same
# arguments). Values never hold a cycle: turns are checked at construction and requests are parsed
# JSON. Where the accelerator is missing, the encoder above does the work.
_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    _make_encoder(None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    if _make_encoder is not None
    else None
)


def _encode(value: Any) -> str:
    if _C_ENCODE is None or isinstance(value, str):  # a str: the encoder's own one-call path
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def json_dumps(value: Any) -> str:
    """Compact, key-order-preserving JSON, as the providers send it.

    Text is sent as UTF-8, except when it holds a lone surrogate (which UTF-8 cannot carry, and which
    a request may send as a JSON escape that the answer echoes): then the whole document is escaped
    to ASCII, which decodes to the same value.
    """
    text = _encode(value)
    if not text.isascii() and _SURROGATE.search(text) is not None:
        return _ASCII_ENCODER.encode(value)
    return text


def json_string(text: str) -> str:
    """`json_dumps(text)` for a string, without going through the encoder: what each streamed piece costs."""
    encoded = _encode_string(text)
    if not encoded.isascii() and _SURROGATE.search(encoded) is not None:
        return _encode_string_ascii(text)
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


@dataclass(frozen=True, slots=True)
class SSEEvent:
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
