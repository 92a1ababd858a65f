"""The AWS event-stream framing (`application/vnd.amazon.eventstream`) Bedrock streams in.

Pure standard library: wirescript encodes the frames itself, and never imports botocore to do it.

One message is, in network byte order::

    total length (u32) | headers length (u32) | prelude CRC32 (u32)
    headers | payload | message CRC32 (u32)

The prelude CRC covers the first eight bytes; the message CRC covers everything before it,
prelude CRC included. Each header is a name (u8 length, UTF-8), a type byte and a value: true (0),
false (1), byte (2), short (3), integer (4), long (5), byte array (6, u16 length), string (7, u16
length), timestamp (8, int64 milliseconds since the epoch) or UUID (9, 16 bytes).

Bedrock sends three kinds of message, each with a helper here: `event` (`:message-type` event,
`:event-type`, `:content-type` application/json), `exception` (`:message-type` exception,
`:exception-type`), and `error` (`:message-type` error, `:error-code`, `:error-message`). `chunk` is
the event `invoke_model_with_response_stream` carries each model event in.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import functools
import json
import struct
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONTENT_TYPE",
    "MAX_HEADERS_LENGTH",
    "MAX_PAYLOAD_LENGTH",
    "Byte",
    "EventStreamError",
    "HeaderValue",
    "Integer",
    "Long",
    "Message",
    "Short",
    "chunk",
    "decode",
    "encode_headers",
    "encode_message",
    "error",
    "event",
    "exception",
    "iter_messages",
]

CONTENT_TYPE = "application/vnd.amazon.eventstream"
"""The `Content-Type` of an HTTP response whose body is a stream of these messages."""

MAX_HEADERS_LENGTH = 128 * 1024
"""The longest headers section botocore's decoder accepts (128 KiB)."""

MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024
"""The longest payload botocore's decoder accepts (24 MiB)."""

_PRELUDE = struct.Struct("!II")
_U32 = struct.Struct("!I")
_PRELUDE_LENGTH = 12
_CRC_LENGTH = 4
_MAX_VALUE_LENGTH = 0x7FFF  # byte arrays and strings: a u16 length, which the AWS spec keeps signed
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


class Byte(int):
    """An integer header value sent as a signed byte (type 2)."""


class Short(int):
    """An integer header value sent as a signed 16-bit integer (type 3)."""


class Integer(int):
    """An integer header value sent as a signed 32-bit integer (type 4), as a plain `int` that fits is."""


class Long(int):
    """An integer header value sent as a signed 64-bit integer (type 5), as a plain `int` too big for 32 bits is."""


HeaderValue = bool | int | bytes | str | _dt.datetime | uuid.UUID
"""What a header may hold: the Python type decides the wire type (see `encode_headers`)."""

_INT_TYPES: dict[type, tuple[int, str]] = {Byte: (2, "!b"), Short: (3, "!h"), Integer: (4, "!i"), Long: (5, "!q")}


class EventStreamError(ValueError):
    """A message that cannot be encoded, or bytes that do not decode as messages."""


def _crc32(data: bytes, value: int = 0) -> int:
    return binascii.crc32(data, value) & 0xFFFFFFFF


def _utf8(name: str, text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: UTF-8 cannot carry it
        raise EventStreamError(f"header {name!r}: {text!r} is not encodable as UTF-8") from None


def _encode_value(name: str, value: HeaderValue) -> bytes:
    if isinstance(value, bool):  # before int: a bool is an int
        return b"\x00" if value else b"\x01"
    if isinstance(value, int):
        found = _INT_TYPES.get(type(value))
        if found is None:  # a plain int (or a subclass of its own): the narrowest of the two that fits
            found = (4, "!i") if -(2**31) <= value < 2**31 else (5, "!q")
        type_byte, fmt = found
        try:
            return bytes([type_byte]) + struct.pack(fmt, value)
        except struct.error:
            raise EventStreamError(f"header {name!r}: {value} does not fit its integer type") from None
    if isinstance(value, bytes | str):
        raw, type_byte = (value, 6) if isinstance(value, bytes) else (_utf8(name, value), 7)
        if len(raw) > _MAX_VALUE_LENGTH:
            raise EventStreamError(f"header {name!r}: value of {len(raw)} bytes, the most is {_MAX_VALUE_LENGTH}")
        return bytes([type_byte]) + struct.pack("!H", len(raw)) + raw
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise EventStreamError(f"header {name!r}: a timestamp needs a time zone")
        millis = (value - _EPOCH) // _dt.timedelta(milliseconds=1)
        return b"\x08" + struct.pack("!q", millis)
    if isinstance(value, uuid.UUID):
        return b"\x09" + value.bytes
    raise EventStreamError(f"header {name!r}: no event-stream type for {type(value).__name__}")


def encode_headers(headers: Mapping[str, HeaderValue]) -> bytes:
    """The headers section of a message, in the mapping's order.

    The Python type of each value decides its wire type: `True`/`False` (types 0/1), `Byte`,
    `Short`, `Integer` and `Long` (2-5), a plain `int` as an integer when it fits 32 bits and a
    long otherwise, `bytes` as a byte array (6), `str` as a UTF-8 string (7), an aware `datetime`
    as a timestamp in milliseconds (8) and a `uuid.UUID` (9).

    Args:
        headers: Header names (1-255 UTF-8 bytes) and their values.

    Returns:
        The encoded headers.

    Raises:
        EventStreamError: A name or value the framing cannot carry.

    """
    parts: list[bytes] = []
    for name, value in headers.items():
        raw_name = _utf8(name, name)
        if not 0 < len(raw_name) < 256:
            raise EventStreamError(f"header name {name!r}: {len(raw_name)} bytes, it takes 1 to 255")
        parts.append(bytes([len(raw_name)]) + raw_name + _encode_value(name, value))
    return b"".join(parts)


def encode_message(headers: Mapping[str, HeaderValue], payload: bytes = b"") -> bytes:
    """One complete event-stream message: prelude, headers, payload and both CRC32s.

    Args:
        headers: The message's headers, encoded as `encode_headers` does.
        payload: The message's payload.

    Returns:
        The message, byte for byte as an AWS service frames it.

    Raises:
        EventStreamError: Headers or a payload longer than botocore's decoder accepts, or a header
            the framing cannot carry.

    """
    raw_headers = encode_headers(headers)
    if len(raw_headers) > MAX_HEADERS_LENGTH:
        raise EventStreamError(f"headers of {len(raw_headers)} bytes, the most is {MAX_HEADERS_LENGTH}")
    return _framed(raw_headers, payload)


def _framed(raw_headers: bytes, payload: bytes) -> bytes:
    """The message around headers already encoded (and within bounds) and a payload."""
    if len(payload) > MAX_PAYLOAD_LENGTH:
        raise EventStreamError(f"a payload of {len(payload)} bytes, the most is {MAX_PAYLOAD_LENGTH}")
    total = _PRELUDE_LENGTH + len(raw_headers) + len(payload) + _CRC_LENGTH
    prelude = _PRELUDE.pack(total, len(raw_headers))
    head = prelude + _U32.pack(binascii.crc32(prelude))
    message_crc = binascii.crc32(payload, binascii.crc32(raw_headers, binascii.crc32(head)))
    return b"".join((head, raw_headers, payload, _U32.pack(message_crc)))


_STARTS_KEPT = 512
"""How many payload lengths a `_Framer` keeps the start of a message for (a stream's deltas take a handful)."""


class _Framer:
    """The messages of one header block (an event type's, an exception type's), its headers encoded once.

    All a message holds besides its payload depends on the payload's length only: the prelude, its
    CRC32, the headers, and the running CRC32 over them, which the message CRC32 goes on from. So
    they are worked out once per length (and kept, for up to `_STARTS_KEPT` lengths), and a message
    costs a CRC32 over its payload and a join. The bytes are exactly `_framed(raw, payload)`'s.
    """

    __slots__ = ("_starts", "raw")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self._starts: dict[int, tuple[bytes, int]] = {}

    def _start(self, length: int, before: bytes = b"") -> tuple[bytes, int]:
        """The bytes of a message up to `before` (included) for a payload of `length` bytes, and their CRC32."""
        if length > MAX_PAYLOAD_LENGTH:
            raise EventStreamError(f"a payload of {length} bytes, the most is {MAX_PAYLOAD_LENGTH}")
        raw = self.raw
        prelude = _PRELUDE.pack(_PRELUDE_LENGTH + len(raw) + length + _CRC_LENGTH, len(raw))
        head = b"".join((prelude, _U32.pack(binascii.crc32(prelude)), raw, before))
        return head, binascii.crc32(head)

    def message(self, payload: bytes) -> bytes:
        """One message around `payload`."""
        length = len(payload)
        start = self._starts.get(length)
        if start is None:
            start = self._start(length)
            if len(self._starts) < _STARTS_KEPT:
                self._starts[length] = start
        head, crc = start
        return b"".join((head, payload, _U32.pack(binascii.crc32(payload, crc))))

    def around(self, before: bytes, after: bytes) -> _Around:
        """The messages whose payloads are `before`, a piece, and `after` (see `_Around`)."""
        return _Around(self, before, after)


class _Around:
    """The messages of one header block whose payload is the same JSON around a string (a stream's deltas).

    Each is `event(type, before + quote(piece).encode() + after)` byte for byte: the start of the
    message up to the piece, and its CRC32, are worked out once per encoded piece's length (and kept,
    for up to `_STARTS_KEPT` lengths), so a piece costs its encoding, two CRC32s and a join.
    """

    __slots__ = ("_after", "_before", "_framer", "_quoted", "_starts")

    def __init__(self, framer: _Framer, before: bytes, after: bytes) -> None:
        self._framer = framer
        self._before = before
        self._after = after
        self._starts: dict[int, tuple[bytes, int]] = {}
        self._quoted: dict[int, tuple[bytes, int]] = {}
        """`plain`'s starts, by the piece's length: up to the piece, its opening quote included."""

    def messages(self, pieces: Iterable[str], quote: Callable[[str], str]) -> list[bytes]:
        """The message of each piece, its payload `before + quote(piece).encode() + after`."""
        starts, after, pack, crc32 = self._starts, self._after, _U32.pack, binascii.crc32
        around = len(self._before) + len(after)
        out = []
        for piece in pieces:
            middle = quote(piece).encode()
            length = len(middle)
            start = starts.get(length)
            if start is None:
                start = self._framer._start(around + length, self._before)
                if len(starts) < _STARTS_KEPT:
                    starts[length] = start
            head, crc = start
            out.append(b"".join((head, middle, after, pack(crc32(after, crc32(middle, crc))))))
        return out

    def plain(self, parts: list[bytes], raw: bytes, size: int) -> None:
        """`messages` of a text JSON quotes as it is (`"` around it, nothing escaped), in pieces of `size` characters.

        `raw` is the text's bytes, one byte a character (ASCII): each piece is a slice of it, and
        its message, `before + b'"' + piece + b'"' + after`, goes into `parts` as four byte strings
        (the start up to the piece, its opening quote included, is worked out once per piece length),
        for the caller to join once: no quoting, no encoding and no join per piece. The bytes are
        `b"".join(self.messages(pieces, quote))`'s for the same pieces.
        """
        pack, crc32 = _U32.pack, binascii.crc32
        tail = b'"' + self._after
        add = parts.extend
        whole = len(raw) - len(raw) % size  # where the last, shorter piece begins (if any)
        if whole:  # every piece but that one has `size` bytes: one start for all of them
            head, crc = self._quoted_start(size)
            for at in range(0, whole, size):
                piece = raw[at : at + size]
                add((head, piece, tail, pack(crc32(tail, crc32(piece, crc)))))
        if whole < len(raw):
            piece = raw[whole:]
            head, crc = self._quoted_start(len(piece))
            add((head, piece, tail, pack(crc32(tail, crc32(piece, crc)))))

    def _quoted_start(self, length: int) -> tuple[bytes, int]:
        """The start of a message up to a piece of `length` bytes, its opening quote included, and its CRC32."""
        start = self._quoted.get(length)
        if start is None:
            around = len(self._before) + len(self._after) + 2
            start = self._framer._start(around + length, self._before + b'"')
            if len(self._quoted) < _STARTS_KEPT:
                self._quoted[length] = start
        return start


@functools.lru_cache(maxsize=256)
def _framer(kind: str, name: str) -> _Framer:
    """The framer of an `event` or `exception` message: the same three headers for every message of a type."""
    if kind == "event":
        return _Framer(
            encode_headers({":event-type": name, ":content-type": "application/json", ":message-type": "event"})
        )
    return _Framer(
        encode_headers({":exception-type": name, ":content-type": "application/json", ":message-type": "exception"})
    )


def _json_payload(payload: bytes | Mapping[str, Any]) -> bytes:
    if isinstance(payload, bytes):
        return payload
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def event(event_type: str, payload: bytes | Mapping[str, Any] = b"") -> bytes:
    """An `event` message, as Bedrock frames each streamed event.

    Args:
        event_type: The `:event-type` header: `messageStart`, `contentBlockDelta`, `chunk`, ….
        payload: The JSON payload: bytes as they are, or a mapping encoded as compact UTF-8 JSON.

    Returns:
        The encoded message.

    """
    return _framer("event", event_type).message(_json_payload(payload))


def chunk(data: bytes) -> bytes:
    """A `chunk` event of `invoke_model_with_response_stream`: `{"bytes": base64(data)}`.

    For an Anthropic model, `data` is the JSON of one Messages stream event (`message_start`, …).

    Args:
        data: The model's own bytes for one event.

    Returns:
        The encoded message.

    """
    return event("chunk", {"bytes": base64.b64encode(data).decode("ascii")})


def exception(exception_type: str, payload: bytes | Mapping[str, Any] = b"") -> bytes:
    """An `exception` message: a modeled error in the stream (botocore raises `EventStreamError`).

    Args:
        exception_type: The `:exception-type` header, a member of the operation's stream shape:
            `modelStreamErrorException`, `throttlingException`, `validationException`,
            `internalServerException`, `serviceUnavailableException`, ….
        payload: The JSON payload, usually `{"message": …}`: bytes as they are, or a mapping.

    Returns:
        The encoded message.

    """
    return _framer("exception", exception_type).message(_json_payload(payload))


def error(error_code: str, error_message: str = "") -> bytes:
    """An `error` message: an unmodeled error, carried in headers with an empty payload.

    Args:
        error_code: The `:error-code` header (botocore's `Error.Code`).
        error_message: The `:error-message` header (botocore's `Error.Message`).

    Returns:
        The encoded message.

    """
    headers = {":error-code": error_code, ":error-message": error_message, ":message-type": "error"}
    return encode_message(headers)


@dataclass(frozen=True, slots=True)
class Message:
    """One decoded message."""

    headers: dict[str, HeaderValue]
    """The headers, in wire order; integers as plain `int`, timestamps as aware `datetime`."""
    payload: bytes
    """The payload."""


def _decode_headers(data: bytes) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    at = 0
    try:
        while at < len(data):
            size = data[at]
            name = data[at + 1 : at + 1 + size].decode()
            at += 1 + size
            kind = data[at]
            at += 1
            value: HeaderValue
            if kind in (0, 1):
                value = kind == 0
            elif kind in (2, 3, 4, 5, 8):
                fmt = {2: "!b", 3: "!h", 4: "!i", 5: "!q", 8: "!q"}[kind]
                (number,) = struct.unpack_from(fmt, data, at)
                at += struct.calcsize(fmt)
                value = _EPOCH + _dt.timedelta(milliseconds=number) if kind == 8 else number
            elif kind in (6, 7):
                (length,) = struct.unpack_from("!H", data, at)
                raw = data[at + 2 : at + 2 + length]
                if len(raw) != length:
                    raise EventStreamError("a header value runs past the headers section")
                at += 2 + length
                value = raw if kind == 6 else raw.decode()
            elif kind == 9:
                if at + 16 > len(data):
                    raise EventStreamError("a UUID header runs past the headers section")
                value = uuid.UUID(bytes=data[at : at + 16])
                at += 16
            else:
                raise EventStreamError(f"header {name!r}: unknown type {kind}")
            if name in headers:
                raise EventStreamError(f"duplicate header {name!r}")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise EventStreamError(f"malformed headers: {exc}") from None
    return headers


def iter_messages(data: bytes) -> Iterator[Message]:
    """Decode a whole stream, checking both CRCs of every message.

    Args:
        data: Concatenated messages.

    Yields:
        Each message in turn.

    Raises:
        EventStreamError: A CRC mismatch, a length out of bounds, or bytes left over that do not make
            a whole message.

    """
    at = 0
    while at < len(data):
        if len(data) - at < _PRELUDE_LENGTH:
            raise EventStreamError(f"{len(data) - at} bytes left over, too few for a prelude")
        total, headers_length = _PRELUDE.unpack_from(data, at)
        (prelude_crc,) = _U32.unpack_from(data, at + 8)
        if _crc32(data[at : at + 8]) != prelude_crc:
            raise EventStreamError(f"prelude CRC mismatch at byte {at}")
        payload_length = total - headers_length - _PRELUDE_LENGTH - _CRC_LENGTH
        if headers_length > MAX_HEADERS_LENGTH or not 0 <= payload_length <= MAX_PAYLOAD_LENGTH:
            raise EventStreamError(f"lengths out of bounds at byte {at}")
        if len(data) - at < total:
            raise EventStreamError(f"a message of {total} bytes cut after {len(data) - at}")
        (message_crc,) = _U32.unpack_from(data, at + total - _CRC_LENGTH)
        if _crc32(data[at : at + total - _CRC_LENGTH]) != message_crc:
            raise EventStreamError(f"message CRC mismatch at byte {at}")
        headers_end = at + _PRELUDE_LENGTH + headers_length
        headers = _decode_headers(data[at + _PRELUDE_LENGTH : headers_end])
        yield Message(headers, data[headers_end : at + total - _CRC_LENGTH])
        at += total


def decode(data: bytes) -> list[Message]:
    """Every message of a whole stream (see `iter_messages`).

    Args:
        data: Concatenated messages.

    Returns:
        The messages, in order.

    Raises:
        EventStreamError: Bytes that are not exactly a sequence of whole, intact messages.

    """
    return list(iter_messages(data))
