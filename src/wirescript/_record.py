"""The record builder: an httpx/httpx2 request becomes a `RecordedRequest`, through the libraries' public API.

It finds the wire that serves the request (by method, path and host), reads the headers, query,
credential and JSON body, and lets the wire parse the provider-level fields. Credentials are
redacted here, before anything is stored: the wires' credential headers and query names, the
generic ones (`authorization`, `cookie`, …) and any header whose name looks like a credential.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from pydantic_core import from_json

from ._cursor import Refusal
from .recorded import REDACTED, SENSITIVE_HEADERS, RecordedRequest, Secret, is_sensitive_header
from .script import Turn
from .wires import Addresses
from .wires.base import Parsed, Wire

__all__ = ["UNREADABLE", "Attempts", "Reading", "Vocabulary", "read_request"]

UNREADABLE = "wirescript.unreadable"
"""A request extension: why the request reached the stub only in part (the loopback server could not
build it as sent). Such a request is recorded as an `unreadable` problem and refused."""


class Vocabulary:
    """What the stub's wires call a credential, in headers and in the query, and the endpoints they serve.

    It also keeps one copy of each header the stub has seen, decoded: an SDK sends the same twenty
    headers with every request, so records share those strings instead of each holding its own (most
    of what a small record would cost), and each is decoded and classified once, not per request.
    """

    __slots__ = (
        "_pairs",
        "_secrets",
        "_texts",
        "addresses",
        "first",
        "headers",
        "query",
        "rest",
        "retry_headers",
        "walked",
        "wires",
    )

    def __init__(self, wires: Sequence[Wire], *, addresses: Addresses | None = None, first: int = 0) -> None:
        self.walked = tuple(wires)
        """The wires tried in order, each asked whether it `matches`."""
        self.addresses = addresses if addresses else None
        """The wires served by address (a stub's built-in host dialects), tried after the first `first`
        walked wires (routes, `wires=`) and before the others; None when there are none."""
        self.first = self.walked[:first]
        self.rest = self.walked[first:]
        self.wires = (*self.walked, *(addresses.wires if addresses else ()))
        self.headers = SENSITIVE_HEADERS.union(*(w.credential_headers for w in wires))
        self.query = frozenset(name.lower() for w in wires for name in w.credential_query) | {"api_key", "api-key"}
        self.retry_headers = tuple(dict.fromkeys(h.lower() for w in wires if (h := w.retry_count_header)))
        """The headers the wires' SDKs number their attempts in (`Wire.retry_count_header`), usually one."""
        self._pairs: dict[tuple[bytes, bytes], tuple[str, str, bool]] = {}
        """Per raw (name, value): the lower-cased name, the value and whether it is a credential."""
        self._texts: dict[str, str] = {}
        """One copy of each method and path seen (an SDK sends the same few with every request)."""
        self._secrets: dict[str, Secret] = {}
        """One `Secret` per API key seen (a client sends its one key with every request)."""

    def text(self, value: str) -> str:
        """The stub's one copy of a short, often repeated string (a method, a path): records share it."""
        return _one_copy(self._texts, value, str)

    def secret(self, key: str) -> Secret:
        """The stub's one `Secret` of `key`: every record of a client's requests shares it (it is immutable)."""
        return _one_copy(self._secrets, key, Secret)

    @property
    def endpoints(self) -> str:
        """The endpoints the wires serve, for the answer to one none of them does."""
        return ", ".join(w.endpoint for w in self.walked)

    def read_headers(self, headers: Any) -> tuple[dict[str, str], list[str]]:
        """The request's headers as `headers.items()` gives them, and the names whose values are credentials.

        Read through the public `raw` pairs: a pair seen before is looked up, not decoded again.
        Only ASCII pairs are kept (they decode alike in every encoding httpx falls back to); any
        other is decoded with the headers' own `encoding`, as `items()` does.
        """
        pairs = self._pairs
        found: dict[str, str] = {}
        secret: list[str] = []
        for raw in headers.raw:
            pair = pairs.get(raw)
            if pair is None:
                pair = self._decoded(raw, headers)
            name, value, is_secret = pair
            if name in found:  # a repeated header: joined, as `items()` joins it
                found[name] += f", {value}"
            else:
                found[name] = value
                if is_secret:
                    secret.append(name)
        return found, secret

    def _decoded(self, raw: tuple[bytes, bytes], headers: Any) -> tuple[str, str, bool]:
        raw_name, raw_value = raw
        ascii_pair = raw_name.isascii() and raw_value.isascii()
        encoding = "ascii" if ascii_pair else headers.encoding
        name = raw_name.lower().decode(encoding)  # as httpx lowers it: ASCII letters only
        pair = (name, raw_value.decode(encoding), name in self.headers or is_sensitive_header(name))
        if ascii_pair and len(raw_value) <= _SHARED_LONGEST and len(self._pairs) < _SHARED_MOST:
            self._pairs[raw] = pair  # longer values are ids and tokens, rarely repeated
        return pair


_Shared = TypeVar("_Shared")


def _one_copy(cache: dict[str, _Shared], key: str, make: Callable[[str], _Shared]) -> _Shared:
    """`cache`'s value for `key`, made and kept on first sight when the key is short and there is room."""
    found = cache.get(key)
    if found is None:
        found = make(key)
        if len(key) <= _SHARED_LONGEST and len(cache) < _SHARED_MOST:
            cache[key] = found
    return found


_SHARED_MOST = 4096
"""How many distinct headers a stub keeps one decoded copy of."""
_SHARED_LONGEST = 128
"""The longest header value shared (longer ones are ids and tokens, rarely repeated)."""

_FIELDS_SET = set(RecordedRequest.model_fields)
"""The fields a record is built with: all of them, so every record can share one such set."""


@dataclass(slots=True)
class Reading:
    """What a request says: its record, the wire that serves it, and why it cannot be served, if so."""

    record: RecordedRequest
    wire: Wire | None
    """The wire that serves it, or None."""
    answerer: Wire | None
    """The wire whose error envelope a refusal is answered in: the serving wire, or one whose host it is."""
    refusal: Refusal | None


def read_request(request: Any, vocabulary: Vocabulary) -> Reading:
    """Read `request` into a record (index 0: the stub numbers it under its lock)."""
    method: str = vocabulary.text(request.method)
    url = request.url
    path: str = vocabulary.text(url.path)
    host: str = url.host
    headers, secret_headers = vocabulary.read_headers(request.headers)
    raw_query = url.query
    query = (
        dict(parse_qsl(raw_query.decode("ascii", "replace") if isinstance(raw_query, bytes) else str(raw_query)))
        if raw_query
        else {}
    )
    content: bytes = request.content
    addresses = vocabulary.addresses
    if addresses is None:
        wire = next((w for w in vocabulary.walked if w.matches(method, path, host=host)), None)
    else:  # the given wires, then the host dialect at this address (one dict look-up), then the defaults
        wire = next((w for w in vocabulary.first if w.matches(method, path, host=host)), None)
        if wire is None:
            wire = addresses.find(method, path, host, url)
        if wire is None:
            wire = next((w for w in vocabulary.rest if w.matches(method, path, host=host)), None)
    body, body_error = _parse_body(content, headers.get("content-encoding", ""))
    parsed: Parsed | None = None
    refusal: Refusal | None = None
    unreadable = getattr(request, "extensions", {}).get(UNREADABLE)
    if unreadable is not None:
        refusal = Refusal("unreadable", str(unreadable))
    elif wire is None:
        refusal = Refusal(
            "unknown_endpoint",
            f"no wire serves this endpoint (known: {vocabulary.endpoints}). Nothing was consumed from the script.",
        )
    elif not isinstance(body, dict) and not _bodiless(wire, method, content):
        refusal = Refusal(
            "unreadable",
            f"the body is not a JSON object ({body_error or 'not an object'}); nothing was consumed from the script.",
        )
    else:
        try:
            parsed = wire.parse(body if isinstance(body, dict) else {}, path)  # a turnless GET has no body
        except Exception as exc:  # a wire's bug must be loud, not a retried "Connection error."
            refusal = Refusal(
                "unreadable",
                f"the {wire.name} wire could not parse the body ({type(exc).__name__}: {exc}); "
                "nothing was consumed from the script.",
            )
    # The serving wire reads its own credential first; a key sent any other wire's way is still the key.
    api_key = wire.api_key(headers, query) if wire is not None else None
    if api_key is None:
        api_key = next((k for w in vocabulary.wires if (k := w.api_key(headers, query)) is not None), None)
    # Every field is given, from values of the declared types (the parsers guarantee them), so the record is
    # built without validating them again, and all records share the one set of fields given.
    record = RecordedRequest.model_construct(
        _FIELDS_SET,
        index=0,
        provider=wire.name if wire is not None else None,
        method=method,
        path=path,
        query=_redacted(query, vocabulary.query) if query else query,
        headers=_without(headers, secret_headers),
        content=content,
        body=body,
        body_error=body_error,
        api_key=vocabulary.secret(api_key) if api_key is not None else None,
        retry_count=_retry_count(headers, vocabulary.retry_headers),
        turn_index=None,
        queue=None,
        answered_by=None,
        problem=None,
        path_params={},
        **_fields(parsed),
    )
    answerer = wire if wire is not None else next((w for w in vocabulary.wires if w.claims(host)), None)
    return Reading(record, wire if parsed is not None else None, answerer, refusal)


def _bodiless(wire: Wire, method: str, content: bytes) -> bool:
    """Whether `wire` serves a request whose body is not a JSON object: a route, or a side endpoint's GET."""
    return wire.turnless and (wire.any_body or (method == "GET" and not content))


class Attempts:
    """Derives `retry_count` for requests that carry no retry-count header (google-genai, litellm, …).

    A retry is what the stub can see: the next request to the same method and URL, with the same
    body bytes, after one this stub answered with an error its wire calls retryable
    (`Wire.retryable`, unless the scripted headers say `x-should-retry: false`) or with a
    connection fault before the response (`disconnect_after: 0`, `timeout_after: 0`). It counts one
    more than that request; any other request counts 0. So an identical request repeated after a
    success, a refusal or a non-retryable error is never labelled a retry, and neither is one sent
    after another request to the same endpoint came in between. What it cannot see: a retry that
    changes the body (a new id or timestamp in it), a client's own retry after an error the wire
    does not call retryable, a retry overtaken by another request to the same endpoint (all counted
    0), and a read timeout from `delay` or `first_byte_delay` (the stub does not know the client's
    timeout when it decides the turn). A request that carries the header keeps the header's count.
    """

    __slots__ = ("_failed",)

    def __init__(self) -> None:
        self._failed: dict[tuple[str, str], tuple[bytes, int]] = {}
        """Per method and URL: the body and count of the last request, when it was answered with a retryable failure."""

    def arrive(self, request: Any, record: RecordedRequest) -> tuple[str, str] | None:
        """Set a header-less record's `retry_count` (under the stub's lock); the key to pass to `answered`."""
        if record.retry_count is not None:
            return None
        key = (record.method, str(request.url))
        failed = self._failed.pop(key, None)
        record.retry_count = failed[1] + 1 if failed is not None and failed[0] == record.content else 0
        return key

    def answered(self, key: tuple[str, str], record: RecordedRequest, decision: object, wire: Wire | None) -> None:
        """Remember `record` when `decision` (its turn, or a refusal) answers it with a retryable failure."""
        if wire is None or not isinstance(decision, Turn) or not _retryable(decision, wire):
            return
        if len(self._failed) >= _FAILED_MOST:  # never retried: forget the oldest
            del self._failed[next(iter(self._failed))]
        self._failed[key] = (record.content, record.retry_count or 0)


_FAILED_MOST = 1024
"""How many retryable failures a stub remembers while it waits for their retries."""


def _retryable(turn: Turn, wire: Wire) -> bool:
    if turn.error is not None:
        should = {k.lower(): v for k, v in (turn.error.headers or {}).items()}.get("x-should-retry")
        return should == "true" or (should != "false" and turn.error.status in wire.retryable)
    fault = turn.fault
    return fault is not None and 0 in (fault.disconnect_after, fault.timeout_after)


def _fields(parsed: Parsed | None) -> dict[str, Any]:
    if parsed is None:  # no wire read it: fresh empty values, so records share nothing mutable
        return {
            "model": None,
            "system": None,
            "messages": [],
            "conversation": [],
            "tools": [],
            "tool_names": [],
            "tool_results": [],
            "all_tool_results": [],
            "stream": False,
            "max_tokens": None,
            "temperature": None,
        }
    return {
        "model": parsed.model,
        "system": parsed.system,
        "messages": parsed.messages,
        "conversation": parsed.conversation if parsed.conversation is not None else parsed.messages,
        "tools": parsed.tools,
        "tool_names": parsed.tool_names,
        "tool_results": parsed.tool_results,
        "all_tool_results": parsed.tool_results if parsed.all_tool_results is None else parsed.all_tool_results,
        "stream": parsed.stream,
        "max_tokens": parsed.max_tokens,
        "temperature": parsed.temperature,
    }


def _without(headers: dict[str, str], secret: list[str]) -> dict[str, str]:
    """`headers` with the values of the `secret` names redacted (in place; the order is kept)."""
    for name in secret:
        headers[name] = REDACTED
    return headers


def _redacted(values: dict[str, str], secret: frozenset[str]) -> dict[str, str]:
    """`values` with the value of every credential name redacted (in place, in order): in `secret`, or like one."""
    names: Iterable[str] = [n for n in values if (low := n.lower()) in secret or is_sensitive_header(low)]
    for name in names:
        values[name] = REDACTED
    return values


def _parse_body(content: bytes, encoding: str = "") -> tuple[Any, str | None]:
    """The JSON of a request body (gzip and deflate bodies decompressed), or why there is none."""
    if not content:
        return None, "empty body"
    coding = encoding.strip().lower()
    if coding in ("gzip", "x-gzip", "deflate"):
        try:
            content = _decompressed(content, coding)
        except (zlib.error, _TooLarge) as exc:
            return None, f"the body says content-encoding: {coding}, but it cannot be decompressed ({exc})"
    try:
        # pydantic-core reads a body in a third of the time, and keeps one copy of each short string
        # (the keys every message repeats) for all records. Whatever it cannot read, the standard
        # library decides, with its own encodings and errors: both read valid JSON to the same values.
        return from_json(content), None
    except ValueError:
        pass
    try:
        return json.loads(content), None
    except ValueError as exc:  # UnicodeDecodeError included
        if coding and coding != "identity" and coding not in ("gzip", "x-gzip", "deflate"):
            return None, (
                f"the body is {coding}-compressed (content-encoding: {coding}); "
                "wirescript decompresses gzip and deflate only"
            )
        return None, f"not JSON: {exc}"
    except RecursionError:  # raised out of the transport, the SDK would retry it as a connection error
        return None, "not JSON that can be read: nested deeper than Python's recursion limit"


MAX_DECOMPRESSED = 256 * 1024 * 1024
"""The most bytes a compressed request body may expand to (256 MiB): a zip bomb is refused, not read."""


class _TooLarge(Exception):
    pass


def _decompressed(content: bytes, coding: str) -> bytes:
    # gzip: a gzip header; deflate: zlib-wrapped as the RFC says, or raw as some clients send it.
    if coding == "deflate" and content[:1] != b"\x78":
        wbits = -zlib.MAX_WBITS
    else:
        wbits = zlib.MAX_WBITS | (16 if coding != "deflate" else 0)
    inflater = zlib.decompressobj(wbits)
    data = inflater.decompress(content, MAX_DECOMPRESSED)
    if inflater.unconsumed_tail:
        raise _TooLarge(f"it expands beyond {MAX_DECOMPRESSED:,} bytes")
    return data


def _retry_count(headers: dict[str, str], names: tuple[str, ...]) -> int | None:
    """The attempt number the client sent in one of `names`, or None (then `Attempts` derives it)."""
    for name in names:
        value = headers.get(name)
        if value is not None:
            return _int(value)
    return None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
